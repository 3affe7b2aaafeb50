// Serving evaluation of one hardware shape: the compute device, the layouts, the best
// concurrency of each under the SLOs (queueing: the p99 wait of an M/M/c queue at the planned
// utilisation, approximated per replica as -ln(0.01) * S * rho / (c * (1 - rho)) with S the
// service time, docs/model.md); and the load curves `simulate` and `tco` evaluate a kept plan on.
#include "plan/serve_eval.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplan {

double FabricEfficiency(InterNodeFabric f, const Calibration& cal) {
  switch (f) {
    case InterNodeFabric::kInfiniband:
      return cal.Get("link_efficiency.infiniband", 0.85);
    case InterNodeFabric::kEfa:
    case InterNodeFabric::kGpuDirectTcpx:
      return cal.Get("link_efficiency.efa", 0.75);
    case InterNodeFabric::kRoce:
    case InterNodeFabric::kErdma:
      return cal.Get("link_efficiency.roce", 0.8);
    case InterNodeFabric::kNone:
      break;
  }
  return cal.Get("link_efficiency.tcp", 0.45);
}

namespace serve_internal {

double QueueP99(double service_s, double rho, int servers) {
  if (rho <= 0) return 0;
  rho = std::min(rho, 0.99);
  return -std::log(0.01) * service_s * rho / (std::max(1, servers) * (1 - rho));
}

ComputeDevice CpuInstanceDevice(const InstanceType& inst, const Cpu& cpu, const Calibration& cal) {
  const double per_core = cpu.threads > 0 ? static_cast<double>(cpu.threads) / cpu.cores : 2.0;
  const int cores = std::max(1, static_cast<int>(inst.vcpus / per_core));
  const int sockets = std::max(1, (cores + cpu.cores - 1) / cpu.cores);
  return DeviceFromCpu(cpu, sockets, cores, cal);
}

}  // namespace serve_internal

ServeSetup ServeSetupFor(const ServeJobSpec& job, int tp) {
  ServeSetup su;
  su.weight_precision = job.weight_precision;
  su.quant = job.quant;
  su.kv_precision = job.kv_precision;
  su.tp = tp;
  su.engine = job.engine;
  su.host_overlap = EngineOverlapsHostWork(job.engine, "");  // the current release
  su.eager = job.engine == Engine::kTransformers;            // HF generate, eager
  su.beams = job.beams;
  su.max_new_tokens = job.max_output_len;
  return su;
}

namespace serve_internal {

namespace {

// The layout at one planned utilisation `rho`: every concurrency that meets the SLOs, the one
// with the most capacity kept (for encoders, the smallest batch that needs at most a tenth more
// replicas at the job's load than the best: docs/model.md 11).
LayoutEval EvaluateLayoutAt(const ServeJobSpec& job, const ComputeDevice& dev, ServeLayout layout,
                            BytesPerSec stage_link, Seconds stage_latency, const Calibration& cal,
                            double rho) {
  const ModelSpec& m = job.model;
  LayoutEval out;
  out.layout = layout;
  out.utilization = rho;
  const int tp = layout.tp, pp = layout.pp;
  if (m.generates_tokens()) {
    const ServeSetup su = ServeSetupFor(job, tp);
    auto estimate = [&](int b) {
      return pp > 1 ? EstimateLlmServingPipelined(m, su, dev, pp, stage_link, stage_latency,
                                                  job.input_len, job.output_len, b, cal)
                    : EstimateLlmServing(m, su, dev, job.input_len, job.output_len, b, cal);
    };
    const ServePerf cap = estimate(0);
    out.fits = cap.fits;
    if (!cap.fits) return out;
    struct Point {
      ServePerf r;
      double cap = 0, ttft = 0, tpot = 0, e2e = 0;
      bool ttft_ok = true, service_ok = true;  // service: TPOT and e2e
    };
    auto at = [&](int b) {
      Point p;
      p.r = estimate(b);
      p.cap = p.r.samples_per_s * rho;
      if (!BatchesContinuously(su.engine)) {
        // Static batches of b (Hugging Face generate): a request waits for the batch in
        // progress (at p99 nearly all of it), then runs its own from prompts to last token;
        // within a batch every step decodes all b sequences. BatchedServeP99, the encoders' rule.
        const double batch_s = StaticBatchSeconds(p.r, job.output_len, job.output_len).value();
        p.ttft = (batch_s + QueueP99(batch_s, rho, b) + p.r.ttft.value()) * 1e3;
        p.tpot = p.r.decode_step.value() * 1e3;
        p.e2e = BatchedServeP99(batch_s, rho, b, /*cpu=*/false) * 1e3;
      } else {
        // SLO checks at this concurrency, queueing included for TTFT.
        const double q = QueueP99(p.r.prefill.value(), rho, b);
        // b requests in flight on a continuous-batching engine: the prompts of the requests
        // that replace finished ones share the steps (InFlightTpot), as at the saturated point.
        // The SLO is a p99 over requests: the in-flight mean times its spread (TpotP99).
        const Seconds step = InFlightTpot(p.r.ttft, p.r.decode_step, job.output_len);
        p.tpot = TpotP99(step, cal).value() * 1e3;
        // With others in flight a new request waits for the running step (p99: all of it) and
        // for the step that carries its prompt.
        const double first =
            b > 1 ? FirstTokenLatency(p.r.prefill, step, 1.0).value() : p.r.prefill.value();
        p.ttft = (first + q) * 1e3;
        p.e2e = p.ttft + p.tpot * std::max(0, job.output_len - 1);
      }
      p.ttft_ok = !job.ttft_p99_ms || p.ttft <= *job.ttft_p99_ms;
      p.service_ok = (!job.tpot_p99_ms || p.tpot <= *job.tpot_p99_ms) &&
                     (!job.e2e_p99_ms || p.e2e <= *job.e2e_p99_ms);
      return p;
    };
    auto keep = [&](Point& p, int b) {
      if (!p.ttft_ok || !p.service_ok || p.cap <= out.best_cap) return;
      out.best_cap = p.cap;
      out.best = std::move(p.r);
      out.best_b = b;
      out.ttft = p.ttft;
      out.tpot = p.tpot;
      out.e2e = p.e2e;
    };
    std::vector<int> batches;
    for (int b = 1; b < cap.batch; b *= 2) batches.push_back(b);
    batches.push_back(std::max(1, cap.batch));  // the KV-bound maximum
    int last_ok = 0;  // the largest concurrency so far whose TPOT and e2e meet the SLOs
    for (int b : batches) {
      Point p = at(b);
      // TTFT's queueing term falls as concurrency grows: a miss here may pass further up.
      if (!p.ttft_ok) out.queue_limited = true;
      if (!p.service_ok) {
        // TPOT and e2e grow with the concurrency: the largest one that meets them lies between
        // the last doubling that did and this one. Bisect for it (the doubling grid alone would
        // stop at half of it and plan up to twice the replicas).
        if (job.e2e_p99_ms && p.e2e > *job.e2e_p99_ms) out.queue_limited = true;
        int lo = last_ok, hi = b;
        while (lo > 0 && hi - lo > 1) {
          const int mid = lo + (hi - lo) / 2;
          Point pm = at(mid);
          if (pm.service_ok) {
            lo = mid;
            keep(pm, mid);
          } else {
            hi = mid;
          }
        }
        break;
      }
      last_ok = b;
      keep(p, b);
    }
  } else {
    out.fits = true;
    const Precision pr = job.weight_precision;
    std::vector<LayoutEval> ok;  // the batches that meet the SLO, in increasing size
    for (int b = 1; b <= 256; b *= 2) {
      ServePerf r =
          EstimateRequest(m, pr, dev, b, std::max(1, job.input_len), cal, true, job.diffusion);
      // b requests are in service at once: c = b in the M/M/c wait. On a CPU they are b
      // independent streams; on an accelerator one batch, so a request that arrives while a
      // batch runs waits for it (at p99 nearly a whole batch time) before its own starts.
      const double t_e2e = BatchedServeP99(r.e2e.value(), rho, b, dev.cpu) * 1e3;
      if (job.e2e_p99_ms && t_e2e > *job.e2e_p99_ms) {
        out.queue_limited = true;
        break;
      }
      LayoutEval e = out;
      e.best_cap = r.samples_per_s * rho;
      e.best = std::move(r);
      e.best_b = b;
      e.e2e = t_e2e;
      e.ttft = t_e2e;
      ok.push_back(std::move(e));
    }
    // The fewest replicas the job's load needs, then the smallest batch that needs at most a
    // tenth more: a bigger batch adds its whole service time to every request and buys little
    // once the replica count stops falling (25 instead of 26 four-core replicas of BERT-large at
    // batch 128 instead of 8 is a 40 s p99 instead of 4.6 s).
    auto replicas = [&](double cap) { return std::ceil(job.qps / cap - 1e-9); };
    double fewest = std::numeric_limits<double>::infinity();
    for (const auto& e : ok) fewest = std::min(fewest, replicas(e.best_cap));
    const double enough = std::max(fewest, std::floor(fewest * 1.1));
    for (auto& e : ok) {
      if (replicas(e.best_cap) <= enough) return std::move(e);
    }
  }
  return out;
}

}  // namespace

LayoutEval EvaluateLayout(const ServeJobSpec& job, const ComputeDevice& dev, ServeLayout layout,
                          BytesPerSec stage_link, Seconds stage_latency, const Calibration& cal) {
  LayoutEval out =
      EvaluateLayoutAt(job, dev, layout, stage_link, stage_latency, cal, job.target_utilization);
  // Queueing is what a latency SLO may miss by: more replicas, each less loaded, wait less. Lower
  // the planned utilisation step by step (x0.75, down to a tenth of the target) until a
  // concurrency meets the SLOs; the service time itself does not change with it, so a layout
  // that only missed TPOT (no queueing term) is not retried.
  const bool slo = job.ttft_p99_ms || job.tpot_p99_ms || job.e2e_p99_ms;
  for (double rho = job.target_utilization * 0.75;
       slo && out.fits && out.best_cap <= 0 && out.queue_limited &&
       rho >= job.target_utilization * 0.1;
       rho *= 0.75) {
    out = EvaluateLayoutAt(job, dev, layout, stage_link, stage_latency, cal, rho);
  }
  return out;
}

void EvaluateGpuShape(const ServeJobSpec& job, const InstanceType& inst, const ComputeDevice& dev,
                      const ServeConstants& k, const Calibration& cal, ShapeEval& se) {
  const ModelSpec& m = job.model;
  const bool llm = m.generates_tokens();
  for (int tp : {1, 2, 4, 8}) {
    if (tp > inst.accelerator_count || inst.accelerator_count % tp != 0) continue;
    if (tp > 1 && m.heads > 0 && m.heads % tp != 0) continue;
    if (tp > 1 && !llm) continue;
    se.layouts.push_back(EvaluateLayout(job, dev, {tp, 1}, se.stage_link, k.stage_latency, cal));
  }
  if (m.is_decoder_llm() && !se.layouts.empty() &&
      inst.inter_node_fabric != InterNodeFabric::kNone && inst.inter_node_bw &&
      inst.accelerator_count >= 2) {
    const bool one_node = std::any_of(se.layouts.begin(), se.layouts.end(),
                                      [](const LayoutEval& l) { return l.fits; });
    se.stage_link = BytesPerSec(inst.inter_node_bw->value() / 8 * k.Fabric(inst.inter_node_fabric));
    const int tp = se.layouts.back().layout.tp;
    for (int pp = 2; !one_node && pp <= kMaxServeNodesPerReplica && pp <= m.layers; ++pp) {
      if (EstimateLlmServingPipelined(m, ServeSetupFor(job, tp), dev, pp, se.stage_link,
                                      k.stage_latency, job.input_len, job.output_len, 0, cal)
              .fits) {
        se.layouts.push_back(
            EvaluateLayout(job, dev, {tp, pp}, se.stage_link, k.stage_latency, cal));
        break;
      }
    }
  }
}

}  // namespace serve_internal

using serve_internal::CpuInstanceDevice;
using serve_internal::QueueP99;

double ServeQueueP99(double service_s, double rho, int servers) {
  return QueueP99(service_s, rho, servers);
}

double BatchedServeP99(double service_s, double rho, int batch, bool cpu) {
  const double in_flight = !cpu && batch > 1 ? service_s : 0;
  return service_s + in_flight + QueueP99(service_s, rho, batch);
}

double MaxUtilizationWithin(double bound_s, double service_s, int batch, bool cpu, int pooled) {
  if (service_s <= 0) return 0.99;
  const double slack = bound_s - BatchedServeP99(service_s, 0, batch, cpu);
  if (slack <= 0) return 0;
  // QueueP99 = -ln(0.01) S rho / (c (1 - rho)) <= slack  <=>  rho <= x / (1 + x), with c the
  // batch slots of every replica that one queue feeds.
  const double c = static_cast<double>(std::max(1, batch)) * std::max(1, pooled);
  const double x = slack * c / (-std::log(0.01) * service_s);
  return std::min(0.99, x / (1 + x));
}

ServePerf BatchedServerCapacity(const ModelSpec& m, Precision p, const ComputeDevice& dev,
                                int seq_len, double bound_s, int max_batch, const Calibration& cal,
                                bool fused, const DiffusionSampling& sampling, int pooled) {
  ServePerf best;
  best.samples_per_s = 0;
  for (int b = 1; b <= std::max(1, max_batch); b *= 2) {
    ServePerf r = EstimateRequest(m, p, dev, b, seq_len, cal, fused, sampling);
    const double rho = MaxUtilizationWithin(bound_s, r.e2e.value(), b, dev.cpu, pooled);
    if (rho <= 0) break;  // larger batches take longer still
    if (r.samples_per_s * rho > best.samples_per_s) {
      r.samples_per_s *= rho;
      best = r;
    }
  }
  return best;
}

ServeLoadCurve BuildServeLoadCurve(const ServeJobSpec& job, const ServePlan& plan,
                                   const Catalog& catalog, const Calibration& cal) {
  ServeLoadCurve c;
  const ModelSpec& m = job.model;
  c.llm = m.generates_tokens();
  c.output_len = job.output_len;
  if (plan.instance == nullptr) return c;
  const InstanceType& inst = *plan.instance;
  ComputeDevice dev;
  if (inst.is_cpu_only()) {
    const Cpu* cpu = catalog.FindCpu(inst.cpu);
    if (cpu == nullptr) return c;
    dev = CpuInstanceDevice(inst, *cpu, cal);
  } else {
    const Accelerator* acc = catalog.FindAccelerator(inst.accelerator);
    if (acc == nullptr) return c;
    dev = DeviceFromAccelerator(*acc, cal, inst.intra_node_link);
  }
  c.tpot_p99_over_mean = TpotP99(Seconds(1), cal).value();
  std::vector<int> batches;
  for (int b = 1; b < plan.batch; b *= 2) batches.push_back(b);
  batches.push_back(std::max(1, plan.batch));
  for (int b : batches) {
    ServePerf r = c.llm && plan.pp > 1 && inst.inter_node_bw
                      ? EstimateLlmServingPipelined(
                            m, ServeSetupFor(job, plan.tp), dev, plan.pp,
                            BytesPerSec(inst.inter_node_bw->value() / 8 *
                                        FabricEfficiency(inst.inter_node_fabric, cal)),
                            Seconds(cal.Get("link_latency_us.inter", 15) * 1e-6), job.input_len,
                            job.output_len, b, cal)
                  : c.llm ? EstimateLlmServing(m, ServeSetupFor(job, plan.tp), dev, job.input_len,
                                               job.output_len, b, cal)
                          : EstimateRequest(m, job.weight_precision, dev, b,
                                            std::max(1, job.input_len), cal, true, job.diffusion);
    if (!(r.samples_per_s > 0)) continue;
    if (!c.rps.empty() && r.samples_per_s <= c.rps.back()) continue;  // keep the curve increasing
    c.batch.push_back(b);
    c.rps.push_back(r.samples_per_s);
    c.prefill_s.push_back(c.llm ? r.prefill.value() : r.e2e.value());
    c.tpot_s.push_back(c.llm ? InFlightTpot(r.ttft, r.decode_step, c.output_len).value() : 0.0);
  }
  c.max_rps = c.rps.empty() ? 0 : c.rps.back();
  c.servers = c.llm ? std::max(1, plan.batch) : 1;
  return c;
}

ServeAtLoad EvaluateServeAtLoad(const ServeLoadCurve& c, double rps) {
  ServeAtLoad out;
  if (c.rps.empty() || !(c.max_rps > 0)) return out;
  rps = std::max(0.0, rps);
  out.utilization = rps / c.max_rps;
  // The smallest concurrency point whose throughput carries the load; linear in between.
  size_t k = 0;
  while (k + 1 < c.rps.size() && c.rps[k] < rps) ++k;
  double prefill = c.prefill_s[k], tpot = c.tpot_s[k];
  if (k > 0 && rps < c.rps[k]) {
    const double f = (rps - c.rps[k - 1]) / (c.rps[k] - c.rps[k - 1]);
    prefill = c.prefill_s[k - 1] + f * (c.prefill_s[k] - c.prefill_s[k - 1]);
    tpot = c.tpot_s[k - 1] + f * (c.tpot_s[k] - c.tpot_s[k - 1]);
  }
  const double q = QueueP99(prefill, out.utilization, c.servers);
  const double first = c.llm && c.batch[k] > 1
                           ? FirstTokenLatency(Seconds(prefill), Seconds(tpot), 1.0).value()
                           : prefill;
  out.ttft_p99_ms = (first + q) * 1e3;
  out.tpot_p99_ms = tpot * c.tpot_p99_over_mean * 1e3;
  out.e2e_p99_ms =
      c.llm ? out.ttft_p99_ms + out.tpot_p99_ms * std::max(0, c.output_len - 1) : out.ttft_p99_ms;
  return out;
}

}  // namespace gpuplan
