// The serving simulator: a fluid replay of a load trace through a fleet of replicas of one
// serving plan, one step per second, under an autoscaling policy (hpa + KEDA, kpa, saturation,
// schedule with CPU fallback, static). Pods pass through node provisioning, image pull and
// weight load (billed from launch, serving when ready). Latency at a load comes from the
// serving planner's ServeLoadCurve; docs/simulate.md describes every rule.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "gpuplan/estimate.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/simulate.h"
#include "simulate/simulate_internal.h"

namespace gpuplan {
namespace {
// Replicas x intervals one simulation may follow (a few seconds on one core).
constexpr double kMaxReplicaIntervals = 2e7;
}  // namespace

namespace {

using simulate_internal::CheckOptions;
using simulate_internal::PricePerReplicaHour;
using simulate_internal::ReplicasFor;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Pod {
  double launch_t;
  double started_t;  // node + image done: Running (loading weights, no metrics yet)
  double ready_t;
};

// One platform's pods (GPU or CPU).
struct Fleet {
  std::vector<Pod> pods;
  ColdStart cold;
  double price_s = 0;  // per replica-second
  int ready = 0, pending = 0, loading = 0;
  void Count(double t) {
    ready = pending = loading = 0;
    for (const auto& p : pods) {
      if (t >= p.ready_t) {
        ++ready;
      } else if (t >= p.started_t) {
        ++loading;
      } else {
        ++pending;
      }
    }
  }
  // Deployment controller: launch or delete pods to match `desired` (ReplicaSet deletion order:
  // not-ready before ready, newest first).
  int Apply(double t, int desired) {
    const int n = static_cast<int>(pods.size());
    if (desired > n) {
      for (int i = n; i < desired; ++i) {
        pods.push_back({t, t + cold.node_s + cold.image_s, t + cold.Total()});
      }
      return desired - n;
    }
    if (desired < n) {
      std::stable_sort(pods.begin(), pods.end(), [&](const Pod& a, const Pod& b) {
        const bool ar = t >= a.ready_t, br = t >= b.ready_t;
        if (ar != br) return ar;         // ready first (kept)
        return a.launch_t < b.launch_t;  // older first (kept)
      });
      pods.resize(static_cast<size_t>(std::max(0, desired)));
      return desired - n;
    }
    return 0;
  }
  void Start(int n) {
    for (int i = 0; i < n; ++i) pods.push_back({-1e9, -1e9, -1e9});
  }
};

struct Context {
  const ServeJobSpec* job;
  const LoadTrace* trace;
  const SimulationOptions* opt;
  ServePlan gpu_plan;
  std::optional<ServePlan> cpu_plan;
  ServeLoadCurve gpu_curve, cpu_curve;
  double cap_target = 0;   // GPU replica capacity at the plan's planned utilisation
  double util_target = 0;  // that utilisation: the job's target, or lower to meet an SLO
  int static_replicas = 0;
  int max_replicas = 0;
  ColdStart gpu_cold, cpu_cold;
  double gpu_price_h = 0, cpu_price_h = 0;
  std::vector<int> hour_gpu;  // schedule: GPU replicas per hour of day
  std::vector<int> hour_cpu;  // schedule: CPU replicas per hour of day
  std::vector<bool> hour_on_cpu;
  double in_tokens = 0, out_tokens = 0;
};

double HourOfDay(const Context& c, double t) {
  return std::fmod(c.trace->start_of_day_s + t, 86400.0) / 3600.0;
}

PolicyResult Run(const Context& c, ScalingPolicyKind kind) {
  const LoadTrace& tr = *c.trace;
  const SimulationOptions& o = *c.opt;
  const ServeJobSpec& job = *c.job;
  PolicyResult r;
  r.policy = kind;
  Fleet gpu, cpu;
  gpu.cold = c.gpu_cold;
  cpu.cold = c.cpu_cold;
  gpu.price_s = c.gpu_price_h / 3600.0;
  cpu.price_s = c.cpu_price_h / 3600.0;
  const int min_r = o.min_replicas;
  const int max_r = c.max_replicas;
  const bool keda = kind == ScalingPolicyKind::kHpa && min_r == 0;
  HpaController hpa(std::max(1, min_r), max_r, o.behavior);

  auto schedule_gpu = [&](double t) {
    const int h = static_cast<int>(HourOfDay(c, t)) % 24;
    return c.hour_on_cpu[static_cast<size_t>(h)] ? 0 : c.hour_gpu[static_cast<size_t>(h)];
  };
  auto schedule_cpu = [&](double t) {
    const int h = static_cast<int>(HourOfDay(c, t)) % 24;
    return c.hour_on_cpu[static_cast<size_t>(h)] ? c.hour_cpu[static_cast<size_t>(h)] : 0;
  };

  // Initial fleet: ready for the first interval's load.
  const double rps0 = tr.rps.front();
  int desired_gpu = 0, desired_cpu = 0;
  switch (kind) {
    case ScalingPolicyKind::kStatic:
      desired_gpu = c.static_replicas;
      break;
    case ScalingPolicyKind::kSchedule:
      desired_gpu = schedule_gpu(0);
      desired_cpu = schedule_cpu(0);
      break;
    default:
      desired_gpu = std::clamp(ReplicasFor(rps0, c.cap_target), min_r, max_r);
      if (min_r == 0 && rps0 > o.keda_activation_rps && desired_gpu == 0) desired_gpu = 1;
  }
  gpu.Start(desired_gpu);
  cpu.Start(desired_cpu);

  const double dt = o.step_s;
  const double end = tr.DurationS();
  const auto steps = static_cast<long>(std::ceil(end / dt));
  double backlog = 0;         // requests waiting beyond the ready capacity
  double last_active = 0;     // KEDA
  double sat_low_since = -1;  // saturation: start of the current low-usage stretch
  // KPA windows: per-step observed concurrency in a ring buffer.
  const int stable_n = std::max(1, static_cast<int>(o.kpa_stable_window_s / dt));
  const int panic_n = std::max(1, static_cast<int>(o.kpa_panic_window_s / dt));
  std::vector<double> ring(static_cast<size_t>(stable_n), 0.0);
  double stable_sum = 0, panic_sum = 0;
  long ring_pos = 0;
  double panic_time = -1;
  int max_panic_pods = 0;
  // KPA target concurrency per pod: the in-flight requests (Little's law) of a replica at its
  // planned capacity, so KPA and HPA aim at the same operating point.
  const double kpa_target =
      std::max(1.0, c.cap_target * EvaluateServeAtLoad(c.gpu_curve, c.cap_target).e2e_p99_ms / 1e3);

  // Latency cache: (rps, ready capacity) -> values.
  double cache_rps = -1, cache_cap = -1;
  double cache_ttft = 0, cache_tpot = 0, cache_e2e = 0;
  double last_e2e_s = 0;

  SimInterval cur;
  size_t interval = static_cast<size_t>(-1);
  int samples = 0;
  auto flush = [&]() {
    if (samples == 0) return;
    const double n = samples;
    cur.ready_gpu /= n;
    cur.ready_cpu /= n;
    cur.billed_gpu /= n;
    cur.billed_cpu /= n;
    cur.utilization /= n;
    cur.queue_delay_s /= n;
    r.timeline.push_back(cur);
  };
  double prev_desired_gpu = desired_gpu;

  for (long s = 0; s < steps; ++s) {
    const double t = static_cast<double>(s) * dt;
    const auto i = static_cast<size_t>(t / tr.interval_s);
    if (i >= tr.rps.size()) break;
    if (i != interval) {
      flush();
      cur = SimInterval{};
      cur.t_s = static_cast<double>(i) * tr.interval_s;
      cur.rps = tr.rps[i];
      interval = i;
      samples = 0;
    }
    const double rps = tr.rps[i];
    gpu.Count(t);
    cpu.Count(t);
    const double cap = gpu.ready * c.gpu_curve.max_rps + cpu.ready * c.cpu_curve.max_rps;
    // In-flight requests (Little's law with the current end-to-end latency) plus the backlog.
    const double inflight = rps * last_e2e_s + backlog;
    const int ready_all = gpu.ready + cpu.ready;

    // ---- the policy decides -----------------------------------------------------------
    const long ti = s * o.step_s;
    switch (kind) {
      case ScalingPolicyKind::kStatic:
        break;
      case ScalingPolicyKind::kHpa: {
        if (keda && ti % o.keda_polling_s == 0) {
          const bool active = rps > o.keda_activation_rps;
          if (active) last_active = t;
          if (active && desired_gpu == 0) desired_gpu = 1;
          if (!active && desired_gpu > 0 && t - last_active >= o.keda_cooldown_s) desired_gpu = 0;
        }
        if (ti % o.hpa_sync_s == 0 && s > 0) {
          std::vector<HpaPod> util_pods, rps_pods;
          const double util = cap > 0 ? std::min(1.0, rps / cap) : 0;  // GPU busy fraction
          const double per_pod = gpu.ready > 0 ? rps / gpu.ready : 0;
          for (const auto& p : gpu.pods) {
            HpaPod a, b;
            a.pending = b.pending = t < p.started_t;
            if (t >= p.ready_t) {
              a.metric = util;
              b.metric = per_pod;
            }
            util_pods.push_back(a);
            rps_pods.push_back(b);
          }
          const int cur_r = desired_gpu;
          int want = std::max(HpaMetricReplicas(cur_r, util_pods, c.util_target, o.tolerance),
                              HpaMetricReplicas(cur_r, rps_pods, c.cap_target, o.tolerance));
          desired_gpu = hpa.Reconcile(t, cur_r, want);
        }
        break;
      }
      case ScalingPolicyKind::kKpa: {
        const double v = inflight;
        const auto slot = static_cast<size_t>(ring_pos % stable_n);
        stable_sum += v - ring[slot];
        const auto old_panic = static_cast<size_t>((ring_pos - panic_n + stable_n * 2) % stable_n);
        panic_sum += v - (ring_pos >= panic_n ? ring[old_panic] : 0.0);
        ring[slot] = v;
        ++ring_pos;
        if (ti % o.kpa_tick_s == 0 && s > 0) {
          const double stable =
              stable_sum / static_cast<double>(std::min<long>(ring_pos, stable_n));
          const double panic = panic_sum / static_cast<double>(std::min<long>(ring_pos, panic_n));
          const double ready_pods = std::max(1, gpu.ready);
          const double max_up = std::ceil(o.kpa_max_scale_up_rate * ready_pods);
          const double max_down = std::floor(ready_pods / o.kpa_max_scale_down_rate);
          const double dspc = std::ceil(stable / kpa_target);
          const double dppc = std::ceil(panic / kpa_target);
          const int stable_pods = static_cast<int>(std::min(std::max(dspc, max_down), max_up));
          const int panic_pods = static_cast<int>(std::min(std::max(dppc, max_down), max_up));
          const bool over = dppc / ready_pods >= o.kpa_panic_threshold;
          if (over) {
            panic_time = t;
          } else if (panic_time >= 0 && panic_time + o.kpa_stable_window_s < t) {
            panic_time = -1;
            max_panic_pods = 0;
          }
          int want = stable_pods;
          if (panic_time >= 0) {
            max_panic_pods = std::max(max_panic_pods, panic_pods);
            want = std::max(max_panic_pods, desired_gpu);  // never scale down while panicking
          }
          if (stable <= 0 && min_r == 0) want = 0;  // scale to zero when idle
          desired_gpu = std::clamp(want, min_r, max_r);
        }
        break;
      }
      case ScalingPolicyKind::kSaturation: {
        if (ti % o.sat_period_s == 0 && s > 0) {
          const double batch = std::max(1, c.gpu_plan.batch);
          const double kv =
              gpu.ready > 0 ? std::min(1.0, inflight / gpu.ready / batch) : (rps > 0 ? 1.0 : 0.0);
          const double waiting = std::max(0.0, inflight - gpu.ready * batch);
          const double queue = gpu.ready > 0 ? waiting / gpu.ready : waiting;
          int want = desired_gpu;
          if (kv > o.sat_kv_up || queue > o.sat_queue_up) {
            const double mid = 0.5 * (o.sat_kv_up + o.sat_kv_down);
            const int by_kv = static_cast<int>(std::ceil(std::max(1, gpu.ready) * kv / mid));
            const int by_queue = gpu.ready + static_cast<int>(std::ceil(waiting / batch));
            want = std::max({desired_gpu, by_kv, by_queue, gpu.ready + 1});
            sat_low_since = -1;
          } else if (kv < o.sat_kv_down && queue <= 0) {
            if (sat_low_since < 0) sat_low_since = t;
            if (t - sat_low_since >= o.sat_down_window_s) {
              want = desired_gpu - 1;
              sat_low_since = t;
            }
          } else {
            sat_low_since = -1;
          }
          desired_gpu = std::clamp(want, min_r, max_r);
        }
        break;
      }
      case ScalingPolicyKind::kSchedule: {
        // Pre-warm: the next hour's fleet starts one cold start ahead; scale down on the hour.
        desired_gpu = std::max(schedule_gpu(t), schedule_gpu(t + c.gpu_cold.Total()));
        desired_cpu = std::max(schedule_cpu(t), schedule_cpu(t + c.cpu_cold.Total()));
        break;
      }
    }
    if (desired_gpu > prev_desired_gpu) ++r.scale_ups;
    if (desired_gpu < prev_desired_gpu) ++r.scale_downs;
    prev_desired_gpu = desired_gpu;
    gpu.Apply(t, desired_gpu);
    cpu.Apply(t, desired_cpu);

    // ---- serve this step ----------------------------------------------------------------
    const double arrivals = rps * dt;
    const double served_cap = cap * dt;
    backlog = std::max(0.0, backlog + arrivals - served_cap);
    double wait = 0;
    if (backlog > 0) {
      if (cap > 0) {
        wait = backlog / cap;
      } else {
        double next = kInf;
        for (const auto& p : gpu.pods) next = std::min(next, p.ready_t - t);
        for (const auto& p : cpu.pods) next = std::min(next, p.ready_t - t);
        wait = std::isfinite(next) ? std::max(0.0, next) : 3600.0;
      }
    }
    if (rps != cache_rps || cap != cache_cap) {
      cache_rps = rps;
      cache_cap = cap;
      cache_ttft = cache_tpot = cache_e2e = 0;
      if (cap > 0) {
        const double u = rps / cap;
        auto add = [&](const ServeLoadCurve& cv, int n) {
          if (n <= 0 || cv.rps.empty()) return;
          const ServeAtLoad a = EvaluateServeAtLoad(cv, std::min(u, 1.0) * cv.max_rps);
          cache_ttft = std::max(cache_ttft, a.ttft_p99_ms);
          cache_tpot = std::max(cache_tpot, a.tpot_p99_ms);
          cache_e2e = std::max(cache_e2e, a.e2e_p99_ms);
        };
        add(c.gpu_curve, gpu.ready);
        add(c.cpu_curve, cpu.ready);
      } else {
        const ServeAtLoad a = EvaluateServeAtLoad(c.gpu_curve, 0);
        cache_ttft = a.ttft_p99_ms;
        cache_tpot = a.tpot_p99_ms;
        cache_e2e = a.e2e_p99_ms;
      }
    }
    last_e2e_s = cache_e2e / 1e3 + wait;
    const double ttft = cache_ttft + wait * 1e3;
    const double e2e = cache_e2e + wait * 1e3;
    bool violation;
    if (job.ttft_p99_ms || job.tpot_p99_ms || job.e2e_p99_ms) {
      violation = (job.ttft_p99_ms && ttft > *job.ttft_p99_ms) ||
                  (job.tpot_p99_ms && cache_tpot > *job.tpot_p99_ms) ||
                  (job.e2e_p99_ms && e2e > *job.e2e_p99_ms);
    } else {
      violation = rps > cap + 1e-12;  // no SLO: the load exceeded the ready capacity
    }
    if (!(rps > 0) && backlog <= 0) violation = false;

    const int billed_g = static_cast<int>(gpu.pods.size());
    const int billed_c = static_cast<int>(cpu.pods.size());
    const double cost = (billed_g * gpu.price_s + billed_c * cpu.price_s) * dt;
    cur.ready_gpu += gpu.ready;
    cur.ready_cpu += cpu.ready;
    cur.billed_gpu += billed_g;
    cur.billed_cpu += billed_c;
    cur.utilization += cap > 0 ? rps / cap : (rps > 0 ? 1.0 : 0.0);
    cur.queue_delay_s += wait;
    cur.ttft_p99_ms = std::max(cur.ttft_p99_ms, ttft);
    cur.tpot_p99_ms = std::max(cur.tpot_p99_ms, cache_tpot);
    cur.e2e_p99_ms = std::max(cur.e2e_p99_ms, e2e);
    cur.slo_violation = cur.slo_violation || violation;
    if (violation && (billed_g > gpu.ready || billed_c > cpu.ready))
      cur.violation_while_starting = true;
    cur.cost += cost;
    ++samples;

    r.cost_total += cost;
    r.gpu_replica_hours += billed_g * dt / 3600;
    r.cpu_replica_hours += billed_c * dt / 3600;
    r.ready_replica_hours += ready_all * dt / 3600;
    r.peak_billed = std::max(r.peak_billed, static_cast<double>(billed_g + billed_c));
    r.max_queue_delay_s = std::max(r.max_queue_delay_s, wait);
    // Cost decomposition against the static fleet (GPU price units).
    const int need = ReplicasFor(rps, c.cap_target);
    r.cold_start_overhead +=
        ((billed_g - gpu.ready) * gpu.price_s + (billed_c - cpu.ready) * cpu.price_s) * dt;
    r.saving_scale_down += (c.static_replicas - need) * gpu.price_s * dt;
    r.overshoot_cost +=
        (gpu.ready * gpu.price_s + cpu.ready * cpu.price_s - need * gpu.price_s) * dt;
  }
  flush();
  const double days = end / 86400.0;
  for (const auto& iv : r.timeline) {
    const double req = iv.rps * tr.interval_s;
    r.requests += req;
    if (iv.slo_violation) {
      ++r.slo_violation_intervals;
      r.slo_violation_requests += req;
      if (iv.violation_while_starting) ++r.slo_violation_while_starting;
    }
  }
  r.tokens = 0;
  for (size_t k = 0; k < tr.rps.size(); ++k) {
    const double in =
        k < tr.input_tokens.size() && tr.input_tokens[k] > 0 ? tr.input_tokens[k] : job.input_len;
    const double out = k < tr.output_tokens.size() && tr.output_tokens[k] > 0 ? tr.output_tokens[k]
                                                                              : job.output_len;
    r.tokens += tr.rps[k] * tr.interval_s * (in + out);
  }
  r.cost_per_day = days > 0 ? r.cost_total / days : 0;
  r.cost_per_month = r.cost_per_day * 730.0 / 24.0;
  r.cost_per_1k_requests = r.requests > 0 ? r.cost_total / r.requests * 1000 : 0;
  r.cost_per_1m_tokens = r.tokens > 0 ? r.cost_total / r.tokens * 1e6 : 0;
  // The autoscaling policy as simulated (for deployment files).
  SimulatedAutoscaling& a = r.autoscaling;
  a.policy = kind;
  a.min_replicas = kind == ScalingPolicyKind::kStatic ? c.static_replicas : min_r;
  a.max_replicas = kind == ScalingPolicyKind::kStatic ? c.static_replicas : max_r;
  a.target_gpu_utilization = c.util_target;
  a.target_requests_per_s_per_pod = c.cap_target;
  a.target_concurrency_per_pod = kpa_target;
  a.behavior = o.behavior;
  a.tolerance = o.tolerance;
  a.sync_period_s = o.hpa_sync_s;
  a.keda = keda;
  a.keda_activation_rps = o.keda_activation_rps;
  a.keda_polling_s = o.keda_polling_s;
  a.keda_cooldown_s = o.keda_cooldown_s;
  if (kind == ScalingPolicyKind::kSchedule) {
    a.hourly_replicas = c.hour_gpu;
    a.hourly_on_cpu = c.hour_on_cpu;
    for (int h = 0; h < 24; ++h) {
      if (c.hour_on_cpu[static_cast<size_t>(h)]) r.cpu_hours.push_back(h);
    }
  }
  return r;
}

std::vector<double> HourlyPeaks(const LoadTrace& tr) {
  std::vector<double> h(24, 0.0);
  for (size_t k = 0; k < tr.rps.size(); ++k) {
    const double t = tr.start_of_day_s + (static_cast<double>(k) + 0.5) * tr.interval_s;
    const auto hour = static_cast<size_t>(std::fmod(t, 86400.0) / 3600.0) % 24;
    h[hour] = std::max(h[hour], tr.rps[k]);
  }
  return h;
}

}  // namespace

Result<SimulationResult> Simulate(const ServeJobSpec& job_in, const Catalog& catalog,
                                  const Calibration& cal, const LoadTrace& trace,
                                  const SimulationOptions& opt, std::optional<double> rate) {
  if (auto st = CheckOptions(opt); !st) return st.error();
  if (trace.rps.empty())
    return MakeError(ErrorCode::kInvalidArgument, "--trace", "the trace has no intervals");
  if (!(trace.interval_s >= 1))
    return MakeError(ErrorCode::kInvalidArgument, "--trace", "intervals must be >= 1 s");
  const double peak = trace.PeakRps();
  if (!(peak > 0)) {
    return MakeError(ErrorCode::kInvalidArgument, "--trace",
                     "the trace has no load (every interval is 0 req/s)");
  }
  SimulationResult res;
  res.prices_as_of = catalog.PricesAsOf();
  res.peak_rps = peak;
  res.mean_rps = trace.MeanRps();
  res.days = trace.DurationS() / 86400.0;
  ServeJobSpec job = job_in;
  // Token lengths from the trace when it has them (request-weighted means).
  {
    double n = 0, in = 0, out = 0;
    for (size_t k = 0;
         k < trace.rps.size() && k < trace.input_tokens.size() && k < trace.output_tokens.size();
         ++k) {
      n += trace.rps[k];
      in += trace.rps[k] * trace.input_tokens[k];
      out += trace.rps[k] * trace.output_tokens[k];
    }
    if (n > 0 && in > 0 && job.model.is_decoder_llm()) {
      job.input_len = std::max(1, static_cast<int>(std::lround(in / n)));
      job.output_len = std::max(1, static_cast<int>(std::lround(out / n)));
      if (auto x = ExceedsContext(job.model, static_cast<long long>(job.input_len) + job.output_len,
                                  fmt::format("the trace's mean request ({} in + {} out tokens)",
                                              job.input_len, job.output_len),
                                  "the trace's token lengths")) {
        return MakeError(ErrorCode::kInvalidArgument, "--trace", x->message, x->fix);
      }
      res.notes.push_back(fmt::format(
          "token lengths from the trace: {} in / {} out per request (request-weighted means)",
          job.input_len, job.output_len));
    }
  }
  Context c;
  c.job = &job;
  c.trace = &trace;
  c.opt = &opt;
  ServeJobSpec g = job;
  g.qps = peak;
  g.allow_cpu = false;
  g.allow_gpu = true;
  g.top = 1;
  auto plan = PlanServing(g, catalog, cal, rate);
  if (!plan) return plan.error();
  if (plan->plans.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--model",
        fmt::format("no GPU deployment of {} meets the SLOs at the trace's peak {:.3g} req/s",
                    job.model.name, peak),
        "relax the SLOs, allow more GPUs (--gpus) or quantize");
  }
  c.gpu_plan = plan->plans.front();
  c.gpu_curve = BuildServeLoadCurve(job, c.gpu_plan, catalog, cal);
  if (c.gpu_curve.rps.empty())
    return MakeError(ErrorCode::kInternal, "simulate", "the serving curve of the plan is empty");
  c.cap_target = c.gpu_plan.capacity_qps;
  c.util_target =
      c.gpu_plan.planned_utilization > 0 ? c.gpu_plan.planned_utilization : job.target_utilization;
  c.static_replicas = std::max(1, ReplicasFor(peak, c.cap_target));
  c.max_replicas = opt.max_replicas > 0 ? opt.max_replicas : std::max(2, 2 * c.static_replicas);
  {
    // The simulation follows every replica through every interval: bound that work so a
    // run answers in seconds (docs/simulate.md). Per-replica costs scale linearly, so a
    // scaled-down load says the same per request.
    const double replicas =
        std::max({static_cast<double>(c.max_replicas), static_cast<double>(opt.min_replicas),
                  static_cast<double>(c.static_replicas)});
    const double work = replicas * static_cast<double>(trace.rps.size());
    if (work > kMaxReplicaIntervals) {
      const bool synthetic = trace.source.rfind("synthetic", 0) == 0;
      const char* field = opt.min_replicas >= c.max_replicas && opt.min_replicas > c.static_replicas
                              ? "--min-replicas"
                          : opt.max_replicas > 0 && opt.max_replicas > 2 * c.static_replicas
                              ? "--max-replicas"
                          : synthetic ? "--peak-rps"
                                      : "--trace";
      return MakeError(
          ErrorCode::kInvalidArgument, field,
          fmt::format("the run would follow up to {:.0f} replicas over {} intervals ({:.2g} "
                      "replica-intervals, more than the limit of {:.0e})",
                      replicas, trace.rps.size(), work, kMaxReplicaIntervals),
          "simulate fewer days, or scale the load (and --min/--max-replicas) down: cost per "
          "request and the saving do not depend on the scale");
    }
  }
  if (c.max_replicas < c.static_replicas) {
    res.notes.push_back(fmt::format(
        "--max-replicas {} is below the {} replicas the peak needs: the peak will miss its SLOs",
        c.max_replicas, c.static_replicas));
  }
  const Precision wp = job.weight_precision;
  const double weight_bytes = InferenceWeightBytes(job.model, wp, job.quant, 1, 1).value();
  // A multi-node replica's nodes load their own pipeline stage's weights in parallel.
  c.gpu_cold = EstimateColdStart(*c.gpu_plan.instance, weight_bytes / std::max(1, c.gpu_plan.pp),
                                 opt.cold_start);
  c.gpu_price_h = PricePerReplicaHour(c.gpu_plan);
  // Schedule: each hour of day sized for its peak over the trace; CPU where cheaper (B14).
  const std::vector<double> hourly = HourlyPeaks(trace);
  c.hour_gpu.assign(24, 0);
  c.hour_cpu.assign(24, 0);
  c.hour_on_cpu.assign(24, false);
  const bool want_schedule = std::find(opt.policies.begin(), opt.policies.end(),
                                       ScalingPolicyKind::kSchedule) != opt.policies.end();
  if (want_schedule) {
    auto dn = PlanDayNight(job, catalog, cal, hourly, rate);
    if (!dn) return dn.error();
    for (int h = 0; h < 24; ++h) {
      const auto& hp = dn->hours[static_cast<size_t>(h)];
      c.hour_gpu[static_cast<size_t>(h)] =
          hourly[static_cast<size_t>(h)] > 0
              ? std::max(1, ReplicasFor(hourly[static_cast<size_t>(h)], c.cap_target))
              : std::max(0, opt.min_replicas);
      if (opt.schedule_cpu_fallback && hp.on_cpu) {
        // The CPU deployment for the lowest-load CPU hour's type is reused for every CPU hour.
        if (!c.cpu_plan) {
          ServeJobSpec cj = job;
          cj.qps = std::max(1e-3, hp.load_rps);
          cj.allow_cpu = true;
          cj.allow_gpu = false;
          cj.top = 1;
          auto cp = PlanServing(cj, catalog, cal, rate);
          if (cp && !cp->plans.empty()) c.cpu_plan = cp->plans.front();
        }
        if (c.cpu_plan) {
          c.hour_on_cpu[static_cast<size_t>(h)] = true;
          c.hour_cpu[static_cast<size_t>(h)] =
              std::max(1, ReplicasFor(hourly[static_cast<size_t>(h)], c.cpu_plan->capacity_qps));
        }
      }
    }
    if (c.cpu_plan) {
      c.cpu_curve = BuildServeLoadCurve(job, *c.cpu_plan, catalog, cal);
      c.cpu_cold = EstimateColdStart(*c.cpu_plan->instance, weight_bytes, opt.cold_start);
      c.cpu_price_h = PricePerReplicaHour(*c.cpu_plan);
    }
  }
  res.plan = c.gpu_plan;
  res.cpu_plan = c.cpu_plan;
  res.cold_start = c.gpu_cold;
  res.cpu_cold_start = c.cpu_cold;
  res.static_replicas = c.static_replicas;

  std::vector<ScalingPolicyKind> kinds = opt.policies;
  if (std::find(kinds.begin(), kinds.end(), ScalingPolicyKind::kStatic) == kinds.end()) {
    kinds.push_back(ScalingPolicyKind::kStatic);
  }
  for (auto k : kinds) res.policies.push_back(Run(c, k));
  const PolicyResult* st = nullptr;
  for (const auto& p : res.policies) {
    if (p.policy == ScalingPolicyKind::kStatic) st = &p;
  }
  for (auto& p : res.policies) {
    p.saving_vs_static = st->cost_total - p.cost_total;
    if (p.policy == ScalingPolicyKind::kSchedule && !p.cpu_hours.empty()) {
      // The same schedule on GPUs only, for the CPU hours' saving.
      SimulationOptions gpu_only = opt;
      gpu_only.schedule_cpu_fallback = false;
      Context c2 = c;
      c2.opt = &gpu_only;
      c2.hour_on_cpu.assign(24, false);
      const PolicyResult g2 = Run(c2, ScalingPolicyKind::kSchedule);
      p.cpu_saving_per_day = g2.cost_per_day - p.cost_per_day;
    }
  }
  if (c.gpu_cold.Total() > 600) {
    res.notes.push_back(fmt::format(
        "cold start {:.0f} s: scale-ups lag the load by over 10 minutes", c.gpu_cold.Total()));
  }
  return res;
}

}  // namespace gpuplan
