// The HPA arithmetic against hand-worked sequences derived from the controller's rules
// (kubernetes/kubernetes pkg/controller/podautoscaler: replica_calculator.go
// calcPlainMetricReplicas/groupPods; horizontal.go stabilizeRecommendationWithBehaviors,
// convertDesiredReplicasWithBehaviorRate, calculateScale{Up,Down}Limit*; the v2 API defaults).
// Each rule has its own test; the arithmetic is worked in the comment above each expectation.
#include <gtest/gtest.h>

#include <vector>

#include "gpuplan/simulate.h"

namespace gpuplan {
namespace {

std::vector<HpaPod> Ready(std::vector<double> values) {
  std::vector<HpaPod> v;
  for (double x : values) v.push_back({false, x});
  return v;
}
void AddMissing(std::vector<HpaPod>& v, int n) {
  for (int i = 0; i < n; ++i) v.push_back({false, std::nullopt});
}
void AddPending(std::vector<HpaPod>& v, int n) {
  for (int i = 0; i < n; ++i) v.push_back({true, std::nullopt});
}

// ---- replica calculator -----------------------------------------------------------------

TEST(HpaReplicaCalc, InsideToleranceKeepsCurrent) {
  // ratio = mean 10.5 / target 10 = 1.05; |1 - 1.05| <= 0.1 -> currentReplicas.
  EXPECT_EQ(HpaMetricReplicas(3, Ready({10.5, 10.5, 10.5}), 10), 3);
  // 0.95 on the low side: also kept.
  EXPECT_EQ(HpaMetricReplicas(3, Ready({9.5, 9.5, 9.5}), 10), 3);
}

TEST(HpaReplicaCalc, OutsideToleranceCeilRatioTimesReady) {
  // ratio 1.2 -> ceil(1.2 x 3) = ceil(3.6) = 4.
  EXPECT_EQ(HpaMetricReplicas(3, Ready({12, 12, 12}), 10), 4);
  // ratio 0.5 -> ceil(0.5 x 4) = 2.
  EXPECT_EQ(HpaMetricReplicas(4, Ready({5, 5, 5, 5}), 10), 2);
  // A wider tolerance (0.25) keeps 3 at ratio 1.2.
  EXPECT_EQ(HpaMetricReplicas(3, Ready({12, 12, 12}), 10, 0.25), 3);
  // The desired count uses ready pods, not currentReplicas: 2 ready at ratio 1.5 -> 3.
  EXPECT_EQ(HpaMetricReplicas(5, Ready({15, 15}), 10), 3);
}

TEST(HpaReplicaCalc, MissingPodsCountAsZeroOnScaleUp) {
  // 1 ready pod at 11.5 (ratio 1.15 -> would scale to ceil(1.15) = 2), 1 missing counted as 0:
  // new ratio = 11.5 / 2 / 10 = 0.575 < 1 while the first was > 1 -> direction change -> keep 2.
  auto pods = Ready({11.5});
  AddMissing(pods, 1);
  EXPECT_EQ(HpaMetricReplicas(2, pods, 10), 2);
  // 2 ready at 40 (ratio 4), 2 missing: new ratio = 80 / 4 / 10 = 2 -> ceil(2 x 4) = 8.
  auto pods2 = Ready({40, 40});
  AddMissing(pods2, 2);
  EXPECT_EQ(HpaMetricReplicas(4, pods2, 10), 8);
}

TEST(HpaReplicaCalc, MissingPodsCountAtTargetOnScaleDown) {
  // 2 ready at 2 (ratio 0.2), 2 missing at target 10: new ratio = (2 + 2 + 10 + 10) / 4 / 10 =
  // 0.6 -> ceil(0.6 x 4) = ceil(2.4) = 3 (not ceil(0.2 x 2) = 1).
  auto pods = Ready({2, 2});
  AddMissing(pods, 2);
  EXPECT_EQ(HpaMetricReplicas(4, pods, 10), 3);
  // 1 ready at 8 (ratio 0.8), 1 missing at 10: new ratio 0.9 -> inside tolerance -> keep 2.
  auto pods2 = Ready({8});
  AddMissing(pods2, 1);
  EXPECT_EQ(HpaMetricReplicas(2, pods2, 10), 2);
}

TEST(HpaReplicaCalc, PendingPodsIgnoredOnScaleDown) {
  // 2 ready at 5 (ratio 0.5), 2 pending: not rebalanced (ratio < 1) -> ceil(0.5 x 2) = 1.
  auto pods = Ready({5, 5});
  AddPending(pods, 2);
  EXPECT_EQ(HpaMetricReplicas(4, pods, 10), 1);
}

TEST(HpaReplicaCalc, PendingPodsCountAsZeroOnScaleUp) {
  // 2 ready at 21 (ratio 2.1 -> alone ceil(4.2) = 5); 2 pending counted as 0 on a scale-up:
  // new ratio = 42 / 4 / 10 = 1.05 -> inside tolerance -> keep 4.
  auto pods = Ready({21, 21});
  AddPending(pods, 2);
  EXPECT_EQ(HpaMetricReplicas(4, pods, 10), 4);
  EXPECT_EQ(HpaMetricReplicas(2, Ready({21, 21}), 10), 5);
  // 2 ready at 40, 1 pending: mean = 80000 / 3 = 26666 milli (integer division, as
  // GetMetricUtilizationRatio) -> ratio 2.6666 -> ceil(2.6666 x 3) = ceil(7.9998) = 8.
  auto pods2 = Ready({40, 40});
  AddPending(pods2, 1);
  EXPECT_EQ(HpaMetricReplicas(3, pods2, 10), 8);
}

TEST(HpaReplicaCalc, NoMetricsKeepsCurrent) {
  std::vector<HpaPod> pods;
  AddPending(pods, 2);
  AddMissing(pods, 1);
  EXPECT_EQ(HpaMetricReplicas(3, pods, 10), 3);
}

// ---- controller: bounds, stabilisation, behavior ----------------------------------------

TEST(HpaController, MinMaxBounds) {
  HpaController c(2, 10, DefaultHpaBehavior());
  EXPECT_EQ(c.Reconcile(0, 12, 12), 10);  // current above max -> max
  HpaController c2(2, 10, DefaultHpaBehavior());
  EXPECT_EQ(c2.Reconcile(0, 1, 1), 2);  // current below min -> min
  HpaController c3(1, 10, DefaultHpaBehavior());
  EXPECT_EQ(c3.Reconcile(0, 0, 5), 0);  // 0 replicas with min 1: scaling disabled
  HpaController c4(1, 10, DefaultHpaBehavior());
  EXPECT_EQ(c4.Reconcile(0, 8, 50), 10);  // desired above max -> max (rate limit 16 > 10)
}

TEST(HpaController, DefaultScaleUpIsMaxOfFourPodsAndDoubling) {
  // Pods 4 / 15 s and Percent 100 / 15 s, selectPolicy Max, no window:
  // t=0: max(1+4, ceil(1x2)) = 5; t=15 (the t=0 event is not after now-15): max(9, 10) = 10;
  // t=30: max(14, 20) = 20.
  HpaController c(1, 100, DefaultHpaBehavior());
  int r = 1;
  r = c.Reconcile(0, r, 20);
  EXPECT_EQ(r, 5);
  r = c.Reconcile(15, r, 20);
  EXPECT_EQ(r, 10);
  r = c.Reconcile(30, r, 20);
  EXPECT_EQ(r, 20);
}

TEST(HpaController, ScaleUpEventsInsideThePeriodCount) {
  // Pods 2 per 60 s: t=0 1 -> 3; t=15: period start = 3 - 2 = 1 -> limit 3 -> stays 3;
  // t=60: the t=0 event is outside (not after 0) -> 3 + 2 = 5.
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_up.policies = {{HpaPolicyType::kPods, 2, 60}};
  HpaController c(1, 100, b);
  int r = c.Reconcile(0, 1, 10);
  EXPECT_EQ(r, 3);
  r = c.Reconcile(15, r, 10);
  EXPECT_EQ(r, 3);
  r = c.Reconcile(45, r, 10);
  EXPECT_EQ(r, 3);
  r = c.Reconcile(60, r, 10);
  EXPECT_EQ(r, 5);
}

TEST(HpaController, SelectPolicyMinTakesTheSmallerChange) {
  // Min of {1+4, 1x2} = 2; then min(6, 4) = 4; min(8, 8) = 8; min(12, 16) = 12; then 16; 20.
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_up.select = HpaSelect::kMin;
  HpaController c(1, 100, b);
  std::vector<int> seq;
  int r = 1;
  for (int k = 0; k < 6; ++k) {
    r = c.Reconcile(15.0 * k, r, 20);
    seq.push_back(r);
  }
  EXPECT_EQ(seq, (std::vector<int>{2, 4, 8, 12, 16, 20}));
}

TEST(HpaController, SelectPolicyDisabledNeverScalesThatWay) {
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_down.select = HpaSelect::kDisabled;
  b.scale_down.stabilization_window_s = 0;
  HpaController c(1, 100, b);
  EXPECT_EQ(c.Reconcile(0, 5, 1), 5);
  EXPECT_EQ(c.Reconcile(600, 5, 1), 5);
  // Scale-up still works.
  EXPECT_EQ(c.Reconcile(615, 5, 7), 7);
  HpaBehavior u = DefaultHpaBehavior();
  u.scale_up.select = HpaSelect::kDisabled;
  HpaController c2(1, 100, u);
  EXPECT_EQ(c2.Reconcile(0, 2, 9), 2);
}

TEST(HpaController, PercentScaleDownPerPeriodTruncates) {
  // Percent 20 per 60 s, no window: t=0 int(10 x 0.8) = 8; t=15..45 the start of the period is
  // 8 + 2 = 10 -> limit 8 -> stays 8; t=60: start 8 -> int(6.4) = 6.
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_down.stabilization_window_s = 0;
  b.scale_down.policies = {{HpaPolicyType::kPercent, 20, 60}};
  HpaController c(1, 100, b);
  std::vector<int> seq;
  int r = 10;
  for (int t : {0, 15, 30, 45, 60}) {
    r = c.Reconcile(t, r, 1);
    seq.push_back(r);
  }
  EXPECT_EQ(seq, (std::vector<int>{8, 8, 8, 8, 6}));
}

TEST(HpaController, PodsScaleDownPerPeriod) {
  // Pods 1 per 30 s: 5 -> 4 at t=0, stays 4 at t=15, 3 at t=30, 3 at t=45, 2 at t=60.
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_down.stabilization_window_s = 0;
  b.scale_down.policies = {{HpaPolicyType::kPods, 1, 30}};
  HpaController c(1, 100, b);
  std::vector<int> seq;
  int r = 5;
  for (int t : {0, 15, 30, 45, 60}) {
    r = c.Reconcile(t, r, 1);
    seq.push_back(r);
  }
  EXPECT_EQ(seq, (std::vector<int>{4, 4, 3, 3, 2}));
}

TEST(HpaController, ScaleDownSelectMaxVersusMin) {
  // Policies Pods 1 and Percent 50 per 15 s from 10: Max (largest change) -> min(9, 5) = 5;
  // Min (smallest change) -> max(9, 5) = 9.
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_down.stabilization_window_s = 0;
  b.scale_down.policies = {{HpaPolicyType::kPods, 1, 15}, {HpaPolicyType::kPercent, 50, 15}};
  HpaController mx(1, 100, b);
  EXPECT_EQ(mx.Reconcile(0, 10, 1), 5);
  b.scale_down.select = HpaSelect::kMin;
  HpaController mn(1, 100, b);
  EXPECT_EQ(mn.Reconcile(0, 10, 1), 9);
}

TEST(HpaController, DownStabilizationWindowClampsToTheWindowMax) {
  // Default 300 s window: the initial recommendation (5 at t=0) and the t=0 sample hold the
  // count at 5 while they are in the window; at t=300 they are not after the cutoff (0), the
  // window holds only 2s -> 2 (Percent 100 lets it go at once).
  HpaController c(1, 100, DefaultHpaBehavior());
  int r = c.Reconcile(0, 5, 5);
  EXPECT_EQ(r, 5);
  for (int t = 15; t < 300; t += 15) {
    r = c.Reconcile(t, r, 2);
    ASSERT_EQ(r, 5) << "t=" << t;
  }
  r = c.Reconcile(300, r, 2);
  EXPECT_EQ(r, 2);
}

TEST(HpaController, StabilizationClampsBetweenWindowMinAndMax) {
  // Down window 60 s: recommendations 8 (t=0), 3 (t=15), 6 (t=30) from current 8:
  // t=15: window max = 8 -> 8; t=30: max(8, 3, 6) = 8 -> 8; t=45: max(8,3,6,4) = 8;
  // t=60: samples after 0: 3, 6, 4, 4 -> clamp 8 into [.., 6] -> 6.
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_down.stabilization_window_s = 60;
  HpaController c(1, 100, b);
  int r = c.Reconcile(0, 8, 8);
  EXPECT_EQ(r, 8);
  r = c.Reconcile(15, r, 3);
  EXPECT_EQ(r, 8);
  r = c.Reconcile(30, r, 6);
  EXPECT_EQ(r, 8);
  r = c.Reconcile(45, r, 4);
  EXPECT_EQ(r, 8);
  r = c.Reconcile(60, r, 4);
  EXPECT_EQ(r, 6);
}

TEST(HpaController, UpStabilizationWindowTakesTheWindowMin) {
  // Up window 60 s: initial 2 at t=0 keeps the window min at 2 until it leaves (t=60); then the
  // min of the samples (6) -> 6 (rate limit max(2+4, 4) = 6).
  HpaBehavior b = DefaultHpaBehavior();
  b.scale_up.stabilization_window_s = 60;
  HpaController c(1, 100, b);
  int r = c.Reconcile(0, 2, 6);
  EXPECT_EQ(r, 2);
  for (int t = 15; t < 60; t += 15) {
    r = c.Reconcile(t, r, 6);
    ASSERT_EQ(r, 2) << "t=" << t;
  }
  r = c.Reconcile(60, r, 6);
  EXPECT_EQ(r, 6);
}

TEST(HpaDefaults, MatchTheApiDefaults) {
  const HpaBehavior b = DefaultHpaBehavior();
  EXPECT_EQ(b.scale_up.stabilization_window_s, 0);
  EXPECT_EQ(b.scale_down.stabilization_window_s, 300);
  ASSERT_EQ(b.scale_up.policies.size(), 2u);
  EXPECT_EQ(b.scale_up.policies[0].type, HpaPolicyType::kPods);
  EXPECT_EQ(b.scale_up.policies[0].value, 4);
  EXPECT_EQ(b.scale_up.policies[1].type, HpaPolicyType::kPercent);
  EXPECT_EQ(b.scale_up.policies[1].value, 100);
  ASSERT_EQ(b.scale_down.policies.size(), 1u);
  EXPECT_EQ(b.scale_down.policies[0].period_s, 15);
  EXPECT_EQ(b.scale_up.select, HpaSelect::kMax);
}

}  // namespace
}  // namespace gpuplan
