// `gpuplan simulate`: replays a load trace through a serving plan under an autoscaling policy
// and reports what the day (or week) costs, how many replicas were ready and billed, and when
// latency SLOs were missed. Per-replica capacity and TTFT/TPOT at a load come from the serving
// planner (serve_planner.h: ServeLoadCurve), never from a second serving model. The policies:
//  - hpa: Kubernetes autoscaling/v2 as pkg/controller/podautoscaler implements it (replica
//    calculator, tolerance, missing and pending pods, stabilisation windows, behavior policies),
//    with KEDA's 0 <-> 1 activation and cooldown in front of it when min replicas is 0;
//  - kpa: Knative's stable/panic windows; saturation: KV-cache usage and queue thresholds;
//  - schedule: replicas by hour of day, with the guides' CPU fallback at night (B14);
//  - static: provisioned for the peak, for comparison.
// docs/simulate.md has every rule with its source; pure functions, deterministic (seeded).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/perf.h"
#include "gpuplan/result.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {

// ---- Load traces ---------------------------------------------------------------------------

// A load as a series of equal intervals: the mean arrival rate of each, and (when the trace has
// them) the mean prompt and output tokens per request. Token vectors are empty when unknown.
struct LoadTrace {
  double interval_s = 60;
  std::vector<double> rps;
  std::vector<double> input_tokens;  // per request, mean over the interval (0 = no request)
  std::vector<double> output_tokens;
  double start_of_day_s = 0;  // time of day of the first interval (seconds after midnight)
  std::string source;         // "file.csv (per-minute CSV)", "synthetic diurnal seed 1", ...

  double PeakRps() const;
  double MeanRps() const;
  double DurationS() const { return interval_s * static_cast<double>(rps.size()); }
};

// Per-minute CSV: header `minute,rps[,input_tokens,output_tokens]`, one row per minute from 0
// upwards without gaps. Errors name "label:LINE:column".
Result<LoadTrace> ParseMinuteCsv(std::string_view text, std::string_view label);
// Azure LLM inference trace 2023 (github.com/Azure/AzurePublicDataset, CC-BY-4.0):
// `TIMESTAMP,ContextTokens,GeneratedTokens`, one request per row, timestamps
// "YYYY-MM-DD HH:MM:SS.fffffff", binned into `interval_s` intervals from the first request.
Result<LoadTrace> ParseAzureLlmTrace(std::string_view text, std::string_view label,
                                     double interval_s = 60);
// Mooncake / Dynamo JSONL (github.com/kvcache-ai/Mooncake FAST25-release): one JSON object per
// line with `timestamp` (ms from the start), `input_length`, `output_length`.
Result<LoadTrace> ParseMooncakeTrace(std::string_view text, std::string_view label,
                                     double interval_s = 60);
// Detects the format from the first non-blank line and parses it.
Result<LoadTrace> ParseTrace(std::string_view text, std::string_view label);
// Reads a file and parses it (kIo when it cannot be read).
Result<LoadTrace> ReadTraceFile(const std::string& path);

// A seeded synthetic load: a diurnal curve peaking at `peak_hour`, falling to
// `trough_fraction` x peak at night, weekends at `weekend_factor`, multiplicative noise and
// `bursts_per_day` bursts of `burst_factor` x load lasting `burst_minutes`. Deterministic in the
// seed on every platform (splitmix64, no std distributions).
struct SyntheticTraceOptions {
  int days = 1;
  double interval_s = 60;
  double peak_rps = 10;
  double trough_fraction = 0.1;
  double peak_hour = 14;
  double weekend_factor = 0.6;  // day 5 and 6 of each week (the trace starts on a Monday)
  double noise = 0.05;          // +- fraction, uniform
  double bursts_per_day = 0;
  double burst_factor = 2;
  double burst_minutes = 10;
  std::uint64_t seed = 1;
};
Result<LoadTrace> SyntheticTrace(const SyntheticTraceOptions& o);

// ---- Kubernetes HPA (autoscaling/v2) -------------------------------------------------------

enum class HpaPolicyType { kPods, kPercent };
enum class HpaSelect { kMax, kMin, kDisabled };
struct HpaScalingPolicy {
  HpaPolicyType type = HpaPolicyType::kPercent;
  int value = 100;
  int period_s = 15;
};
struct HpaScalingRules {
  int stabilization_window_s = 0;
  HpaSelect select = HpaSelect::kMax;
  std::vector<HpaScalingPolicy> policies;
};
struct HpaBehavior {
  HpaScalingRules scale_up, scale_down;
};
// The API defaults (k8s.io/kubernetes pkg/apis/autoscaling/v2/defaults.go): scale up with no
// stabilisation, max of {Pods 4, Percent 100} per 15 s; scale down with a 300 s window, Percent
// 100 per 15 s.
HpaBehavior DefaultHpaBehavior();
const char* HpaSelectName(HpaSelect s);

// One pod as the replica calculator sees it: Pending (not started: node, image) or Running,
// with or without a metric sample (a pod loading weights exposes none yet).
struct HpaPod {
  bool pending = false;
  std::optional<double> metric;
};

// replica_calculator.go calcPlainMetricReplicas for one per-pod metric with target `target`:
// pending pods ignored (counted as 0 when the ratio asks to scale up), pods without a metric
// counted as 0 on scale-up and at target on scale-down, tolerance band, no change of direction.
// `pods` with no metric at all: returns current_replicas (the controller errors and skips).
int HpaMetricReplicas(int current_replicas, const std::vector<HpaPod>& pods, double target,
                      double tolerance = 0.1);

// horizontal.go's reconcile for one HPA: min/max bounds, then the stabilisation clamp between
// the window's min (scale-up window) and max (scale-down window) recommendations, then the
// behavior rate limits (Pods/Percent per period, selectPolicy). Keeps the controller's history
// (recommendations, scale events) between calls; `now_s` must not decrease.
class HpaController {
 public:
  HpaController(int min_replicas, int max_replicas, HpaBehavior behavior);
  // `current` = the scale target's spec.replicas; `metric_desired` = the max over metrics of
  // HpaMetricReplicas. Returns the replicas to set (== current when nothing changes).
  int Reconcile(double now_s, int current, int metric_desired);
  int min_replicas() const { return min_; }
  int max_replicas() const { return max_; }

 private:
  struct Rec {
    double t;
    int replicas;
  };
  struct Event {
    double t;
    int change;
  };
  int Stabilize(double now_s, int current, int desired);
  int RateLimit(double now_s, int current, int desired) const;
  int ChangeInPeriod(const std::vector<Event>& ev, double now_s, int period_s) const;
  int min_, max_;
  HpaBehavior behavior_;
  std::vector<Rec> recs_;
  std::vector<Event> up_, down_;
};

// ---- The simulation ------------------------------------------------------------------------

enum class ScalingPolicyKind { kHpa, kKpa, kSaturation, kSchedule, kStatic };
const char* ScalingPolicyName(ScalingPolicyKind k);
std::optional<ScalingPolicyKind> ParseScalingPolicy(std::string_view s);

// Pod start-up: node provisioning, image pull and weight load. Billed from launch; serving
// only when ready. Constants and sources: docs/simulate.md section 3.
struct ColdStartOptions {
  double node_provision_s = 120;
  double image_bytes = 12e9;                 // vllm/vllm-openai image, ~12 GB (vllm issue #27154)
  double pull_efficiency = 0.5;              // of the instance's network bandwidth
  double nvme_read_bytes_per_s = 2e9;        // local NVMe (one drive, sequential)
  double network_disk_bytes_per_s = 0.25e9;  // network block volume (gp3-class) without NVMe
  double unknown_network_bytes_per_s = 1.25e9;  // 10 Gbit/s when the catalog row has no figure
};
struct ColdStart {
  double node_s = 0, image_s = 0, weights_s = 0;
  double Total() const { return node_s + image_s + weights_s; }
};
// The three terms for one replica of `weight_bytes` on `inst`.
ColdStart EstimateColdStart(const InstanceType& inst, double weight_bytes,
                            const ColdStartOptions& o);

struct SimulationOptions {
  std::vector<ScalingPolicyKind> policies = {ScalingPolicyKind::kHpa, ScalingPolicyKind::kStatic};
  int min_replicas = 1;  // 0 puts KEDA's activation/cooldown in front of the HPA
  int max_replicas = 0;  // 0 = twice the static peak fleet
  // HPA
  HpaBehavior behavior = DefaultHpaBehavior();
  double tolerance = 0.1;
  int hpa_sync_s = 15;
  // KEDA (min_replicas == 0): activation above this load, back to 0 after the cooldown.
  double keda_activation_rps = 0;
  int keda_polling_s = 30;
  int keda_cooldown_s = 300;
  // KPA (Knative defaults: config-autoscaler)
  int kpa_tick_s = 2;
  int kpa_stable_window_s = 60;
  int kpa_panic_window_s = 6;        // 10% of the stable window
  double kpa_panic_threshold = 2.0;  // 200%
  double kpa_max_scale_up_rate = 1000;
  double kpa_max_scale_down_rate = 2;
  // Saturation (LLM-aware): per ready replica
  double sat_kv_up = 0.8, sat_kv_down = 0.3;
  double sat_queue_up = 2;  // waiting requests per replica
  int sat_period_s = 15, sat_down_window_s = 300;
  // Schedule: each hour of day sized for that hour's peak over the trace; CPU where cheaper.
  bool schedule_cpu_fallback = true;
  ColdStartOptions cold_start;
  int step_s = 1;  // simulation step
};

// The autoscaling policy as simulated, for deployment files (emit k8s renders it as an HPA,
// a KEDA ScaledObject, or a CronJob-style schedule).
struct SimulatedAutoscaling {
  ScalingPolicyKind policy = ScalingPolicyKind::kHpa;
  int min_replicas = 1, max_replicas = 1;
  // The per-pod metric targets the HPA used (the max over them decides).
  double target_gpu_utilization = 0.6;       // fraction of the replica's maximum throughput
  double target_requests_per_s_per_pod = 0;  // capacity at the target utilisation
  double target_concurrency_per_pod = 0;     // KPA target (in-flight requests)
  HpaBehavior behavior;
  double tolerance = 0.1;
  int sync_period_s = 15;
  bool keda = false;
  double keda_activation_rps = 0;
  int keda_polling_s = 30, keda_cooldown_s = 300;
  std::vector<int> hourly_replicas;  // schedule: GPU replicas per hour of day (24)
  std::vector<bool> hourly_on_cpu;   // schedule: hours served by CPU replicas
};

// One output interval (the trace's interval).
struct SimInterval {
  double t_s = 0;
  double rps = 0;
  double ready_gpu = 0, ready_cpu = 0;    // mean over the interval
  double billed_gpu = 0, billed_cpu = 0;  // mean over the interval (launching pods included)
  double utilization = 0;                 // load / ready capacity (max throughput), capped at 1+
  double queue_delay_s = 0;               // mean wait of the backlog (requests over capacity)
  double ttft_p99_ms = 0, tpot_p99_ms = 0, e2e_p99_ms = 0;
  bool slo_violation = false;
  bool violation_while_starting = false;  // a violating step had replicas still starting
  double cost = 0;
};

struct PolicyResult {
  ScalingPolicyKind policy = ScalingPolicyKind::kHpa;
  std::vector<SimInterval> timeline;
  double cost_total = 0, cost_per_day = 0, cost_per_month = 0;
  double cost_per_1k_requests = 0, cost_per_1m_tokens = 0;
  double requests = 0, tokens = 0;
  double gpu_replica_hours = 0, cpu_replica_hours = 0;
  double ready_replica_hours = 0;
  double peak_billed = 0;
  int slo_violation_intervals = 0;
  double slo_violation_requests = 0;     // requests arriving in violating intervals
  int slo_violation_while_starting = 0;  // violating intervals with replicas still starting
  int scale_ups = 0, scale_downs = 0;
  double max_queue_delay_s = 0;
  // Where the difference with the static fleet comes from (cost units).
  double saving_vs_static = 0;     // static cost - this cost
  double saving_scale_down = 0;    // fewer replicas than static while demand was low
  double cold_start_overhead = 0;  // billed while launching (not ready)
  double overshoot_cost = 0;       // ready replicas beyond what the load needed at target
  std::vector<int> cpu_hours;      // hours of day with CPU replicas serving (schedule)
  double cpu_saving_per_day = 0;   // vs the same schedule on GPUs only
  SimulatedAutoscaling autoscaling;
};

struct SimulationResult {
  ServePlan plan;  // the GPU deployment the replicas copy (sized at the trace peak)
  std::optional<ServePlan> cpu_plan;
  ColdStart cold_start, cpu_cold_start;
  int static_replicas = 0;
  double peak_rps = 0, mean_rps = 0, days = 0;
  std::vector<PolicyResult> policies;  // in the order asked; static always present
  std::vector<std::string> notes;
  std::string prices_as_of;
};

// Replays `trace` through `job` (sized at the trace peak with PlanServing, the cheapest
// deployment unless `job` restricts it) under each policy. Errors: an empty trace, a job no
// deployment can serve, bad options.
Result<SimulationResult> Simulate(const ServeJobSpec& job, const Catalog& catalog,
                                  const Calibration& cal, const LoadTrace& trace,
                                  const SimulationOptions& opt,
                                  std::optional<double> cny_per_usd = std::nullopt);

// ---- Day/night (B14): each hour of day on GPUs or CPUs ---------------------------------------

struct HourPlan {
  double load_rps = 0;
  int gpu_replicas = 0;  // replicas of the peak GPU plan for this hour's load
  double gpu_cost_per_hour = 0;
  std::optional<double> cpu_cost_per_hour;  // cheapest CPU deployment for this load, if any
  int cpu_replicas = 0;
  std::string cpu_instance;
  bool on_cpu = false;
  double gpu_utilization = 0;  // load / (replicas x max throughput) on GPUs
};
struct DayNightPlan {
  ServePlan gpu_peak;                 // the GPU deployment for the peak hour
  std::vector<HourPlan> hours;        // 24
  double static_gpu_per_day = 0;      // the peak fleet all day
  double autoscaled_gpu_per_day = 0;  // GPU replicas following the hourly load
  double mixed_per_day = 0;           // each hour on the cheaper platform
  int cpu_hours = 0;
  double cpu_saving_per_day = 0;  // autoscaled GPU - mixed (0 when no hour runs on CPU)
};
// `hourly_rps` has 24 values (hour 0..23). GPU hours reuse the peak plan's instance (a fleet
// scales its replica count, not its instance type); CPU hours take the cheapest CPU deployment
// meeting the SLOs (none for LLMs: gpuplan does not plan LLM serving on CPUs).
Result<DayNightPlan> PlanDayNight(const ServeJobSpec& job, const Catalog& catalog,
                                  const Calibration& cal, const std::vector<double>& hourly_rps,
                                  std::optional<double> cny_per_usd = std::nullopt);

// ---- Rendering helpers (src/report/simulate_report.cc) -------------------------------------

// The timeline of every policy as CSV: policy,t_s,minute,rps,ready_gpu,ready_cpu,billed_gpu,
// billed_cpu,utilization,queue_delay_s,ttft_p99_ms,tpot_p99_ms,e2e_p99_ms,slo_violation,cost.
std::string SimulationCsv(const SimulationResult& r);
// A self-contained SVG: load (left axis) and billed/ready replicas of each policy (right axis)
// over the trace. Deterministic text; no scripts.
std::string SimulationSvg(const SimulationResult& r);

}  // namespace gpuplan
