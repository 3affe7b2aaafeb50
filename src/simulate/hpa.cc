// Kubernetes Horizontal Pod Autoscaler (autoscaling/v2) arithmetic, as the controller in
// kubernetes/kubernetes pkg/controller/podautoscaler implements it:
//  - replica_calculator.go: calcPlainMetricReplicas and groupPods (per-pod metrics);
//  - horizontal.go: reconcileAutoscaler (min/max), normalizeDesiredReplicasWithBehaviors,
//    stabilizeRecommendationWithBehaviors, convertDesiredReplicasWithBehaviorRate,
//    calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors,
//    getReplicasChangePerPeriod;
//  - pkg/apis/autoscaling/v2/defaults.go: the default behavior.
// Each rule has a hand-worked test in tests/simulate/hpa_test.cc; docs/simulate.md section 2.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "gpuplan/simulate.h"

namespace gpuplan {

HpaBehavior DefaultHpaBehavior() {
  HpaBehavior b;
  b.scale_up.stabilization_window_s = 0;
  b.scale_up.select = HpaSelect::kMax;
  b.scale_up.policies = {{HpaPolicyType::kPods, 4, 15}, {HpaPolicyType::kPercent, 100, 15}};
  b.scale_down.stabilization_window_s = 300;
  b.scale_down.select = HpaSelect::kMax;
  b.scale_down.policies = {{HpaPolicyType::kPercent, 100, 15}};
  return b;
}

const char* HpaSelectName(HpaSelect s) {
  switch (s) {
    case HpaSelect::kMax:
      return "Max";
    case HpaSelect::kMin:
      return "Min";
    case HpaSelect::kDisabled:
      return "Disabled";
  }
  return "Max";
}

int HpaMetricReplicas(int current, const std::vector<HpaPod>& pods, double target,
                      double tolerance) {
  // Metric values travel as milli-units (resource.Quantity MilliValue) and
  // GetMetricUtilizationRatio averages them with integer division: mean = total / n (int64).
  auto milli = [](double v) { return static_cast<std::int64_t>(std::llround(v * 1000.0)); };
  const std::int64_t target_m = milli(target);
  // groupPods: pending pods are "ignored" (their samples dropped); running pods without a sample
  // are "missing"; the rest are ready and counted.
  std::int64_t ready = 0, ignored = 0, missing = 0;
  std::int64_t sum = 0;
  for (const auto& p : pods) {
    if (p.pending) {
      ++ignored;
    } else if (!p.metric) {
      ++missing;
    } else {
      ++ready;
      sum += milli(*p.metric);
    }
  }
  if (ready == 0 || target_m <= 0) return current;  // "did not receive metrics for any ready pods"
  auto ratio = [&](std::int64_t total, std::int64_t n) {
    return static_cast<double>(total / n) / static_cast<double>(target_m);
  };
  const double usage = ratio(sum, ready);
  const bool rebalance_ignored = ignored > 0 && usage > 1.0;
  if (!rebalance_ignored && missing == 0) {
    if (std::fabs(1.0 - usage) <= tolerance) return current;
    return static_cast<int>(std::ceil(usage * static_cast<double>(ready)));
  }
  // Missing pods: at target on a scale-down, 0 otherwise; ignored (pending) pods: 0 when
  // rebalancing a scale-up.
  std::int64_t new_sum = sum;
  std::int64_t counted = ready;
  if (missing > 0) {
    if (usage < 1.0) new_sum += target_m * missing;
    counted += missing;
  }
  if (rebalance_ignored) counted += ignored;
  const double new_usage = ratio(new_sum, counted);
  if (std::fabs(1.0 - new_usage) <= tolerance || (usage < 1.0 && new_usage > 1.0) ||
      (usage > 1.0 && new_usage < 1.0)) {
    return current;
  }
  return static_cast<int>(std::ceil(new_usage * static_cast<double>(counted)));
}

HpaController::HpaController(int min_replicas, int max_replicas, HpaBehavior behavior)
    : min_(min_replicas), max_(max_replicas), behavior_(std::move(behavior)) {}

int HpaController::ChangeInPeriod(const std::vector<Event>& ev, double now_s, int period_s) const {
  // getReplicasChangePerPeriod: events strictly after now - period.
  const double cutoff = now_s - period_s;
  int n = 0;
  for (const auto& e : ev) {
    if (e.t > cutoff) n += e.change;
  }
  return n;
}

int HpaController::Stabilize(double now_s, int current, int desired) {
  // stabilizeRecommendationWithBehaviors: the scale-up window keeps the minimum of the
  // recommendations in it, the scale-down window the maximum; the current count is clamped
  // into [up, down]. The unstabilised recommendation is then recorded.
  int up = desired, down = desired;
  const double up_cutoff = now_s - behavior_.scale_up.stabilization_window_s;
  const double down_cutoff = now_s - behavior_.scale_down.stabilization_window_s;
  int old = -1;
  for (size_t i = 0; i < recs_.size(); ++i) {
    if (recs_[i].t > up_cutoff) up = std::min(up, recs_[i].replicas);
    if (recs_[i].t > down_cutoff) down = std::max(down, recs_[i].replicas);
    if (recs_[i].t < up_cutoff && recs_[i].t < down_cutoff) old = static_cast<int>(i);
  }
  int rec = current;
  if (rec < up) rec = up;
  if (rec > down) rec = down;
  if (old >= 0) {
    recs_[static_cast<size_t>(old)] = {now_s, desired};
  } else {
    recs_.push_back({now_s, desired});
  }
  return rec;
}

int HpaController::RateLimit(double now_s, int current, int desired) const {
  // convertDesiredReplicasWithBehaviorRate.
  if (desired > current) {
    const auto& r = behavior_.scale_up;
    int limit;
    if (r.select == HpaSelect::kDisabled) {
      limit = current;
    } else {
      // calculateScaleUpLimitWithScalingRules: Max picks the largest proposal, Min the smallest.
      limit = r.select == HpaSelect::kMin ? INT_MAX : INT_MIN;
      for (const auto& p : r.policies) {
        const int start = current - ChangeInPeriod(up_, now_s, p.period_s) +
                          ChangeInPeriod(down_, now_s, p.period_s);
        const int proposed = p.type == HpaPolicyType::kPods
                                 ? start + p.value
                                 : static_cast<int>(std::ceil(start * (1 + p.value / 100.0)));
        limit = r.select == HpaSelect::kMin ? std::min(limit, proposed) : std::max(limit, proposed);
      }
      if (r.policies.empty()) limit = current;
    }
    if (limit < current) limit = current;
    const int max_allowed = std::min(max_, limit);
    return std::min(desired, max_allowed);
  }
  if (desired < current) {
    const auto& r = behavior_.scale_down;
    int limit;
    if (r.select == HpaSelect::kDisabled) {
      limit = current;
    } else {
      // calculateScaleDownLimitWithBehaviors: Max picks the largest change (lowest count).
      limit = r.select == HpaSelect::kMin ? INT_MIN : INT_MAX;
      for (const auto& p : r.policies) {
        // periodStartReplicas = current - added + deleted within the period.
        const int start = current - ChangeInPeriod(up_, now_s, p.period_s) +
                          ChangeInPeriod(down_, now_s, p.period_s);
        const int proposed = p.type == HpaPolicyType::kPods
                                 ? start - p.value
                                 : static_cast<int>(start * (1 - p.value / 100.0));
        limit = r.select == HpaSelect::kMin ? std::max(limit, proposed) : std::min(limit, proposed);
      }
      if (r.policies.empty()) limit = current;
    }
    if (limit > current) limit = current;
    const int min_allowed = std::max(min_, limit);
    return std::max(desired, min_allowed);
  }
  return desired;
}

int HpaController::Reconcile(double now_s, int current, int metric_desired) {
  // recordInitialRecommendation: the first sync records the current count.
  if (recs_.empty()) recs_.push_back({now_s, current});
  int desired;
  if (current > max_) {
    desired = max_;
  } else if (current == 0 && min_ != 0) {
    return current;  // scaling is disabled while the target has 0 replicas
  } else if (current < min_) {
    desired = min_;
  } else {
    desired = Stabilize(now_s, current, std::max(0, metric_desired));
    desired = RateLimit(now_s, current, desired);
  }
  if (desired > current) up_.push_back({now_s, desired - current});
  if (desired < current) down_.push_back({now_s, current - desired});  // removed, positive
  // Forget events older than the longest policy period (markScaleEventsOutdated).
  int longest = 0;
  for (const auto& p : behavior_.scale_up.policies) longest = std::max(longest, p.period_s);
  for (const auto& p : behavior_.scale_down.policies) longest = std::max(longest, p.period_s);
  auto stale = [&](const Event& e) { return e.t <= now_s - longest; };
  up_.erase(std::remove_if(up_.begin(), up_.end(), stale), up_.end());
  down_.erase(std::remove_if(down_.begin(), down_.end(), stale), down_.end());
  return desired;
}

}  // namespace gpuplan
