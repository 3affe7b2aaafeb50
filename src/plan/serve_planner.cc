// Serving planner. Per instance: each tensor-parallel width that holds the weights and one
// request's KV; the largest concurrency whose TPOT/TTFT meet the SLOs; replicas to carry the
// load at the target utilisation; instances to host the replicas. Queueing: the p99 wait of an
// M/M/c queue at the planned utilisation, approximated per replica as
// -ln(0.01) * S * rho / (c * (1 - rho)) with S the service time (documented in docs/model.md).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/serve_planner.h"

namespace gpuplan {

namespace {

bool In(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

double QueueP99(double service_s, double rho, int servers) {
  if (rho <= 0) return 0;
  rho = std::min(rho, 0.99);
  return -std::log(0.01) * service_s * rho / (std::max(1, servers) * (1 - rho));
}

// The compute device of a CPU instance: vCPUs are hardware threads, so cores = vCPUs x
// cores/threads of the CPU (Graviton and some EPYC shapes have no SMT); large shapes span two
// sockets.
ComputeDevice CpuInstanceDevice(const InstanceType& inst, const Cpu& cpu, const Calibration& cal) {
  const double per_core = cpu.threads > 0 ? static_cast<double>(cpu.threads) / cpu.cores : 2.0;
  const int cores = std::max(1, static_cast<int>(inst.vcpus / per_core));
  const int sockets = std::max(1, (cores + cpu.cores - 1) / cpu.cores);
  return DeviceFromCpu(cpu, sockets, cores, cal);
}

ServeSetup SetupFor(const ServeJobSpec& job, int tp) {
  ServeSetup su;
  su.weight_precision = job.weight_precision;
  su.quant = job.quant;
  su.kv_precision = job.kv_precision;
  su.tp = tp;
  su.engine = job.engine;
  return su;
}

}  // namespace

Result<ServePlanResult> PlanServing(const ServeJobSpec& job, const Catalog& catalog,
                                    const Calibration& cal, std::optional<double> rate) {
  ServePlanResult out;
  out.prices_as_of = catalog.PricesAsOf();
  if (!(job.qps > 0)) {
    return MakeError(ErrorCode::kInvalidArgument, "--qps", fmt::format("must be > 0, got {}", job.qps));
  }
  std::vector<std::string> gpu_ids;
  for (size_t k = 0; k < job.gpus.size(); ++k) {
    auto a = catalog.ResolveAccelerator(job.gpus[k], fmt::format("--gpus[{}]", k));
    if (!a) return a.error();
    gpu_ids.push_back((*a)->id);
  }
  const ModelSpec& m = job.model;
  const bool llm = m.is_decoder_llm();
  std::vector<ServePlan> all;
  for (const auto& inst : catalog.instances) {
    if (!job.clouds.empty() && !In(job.clouds, inst.cloud)) continue;
    if (!job.regions.empty() && !In(job.regions, inst.region)) continue;
    const bool cpu_inst = inst.is_cpu_only();
    if (cpu_inst && (!job.allow_cpu || inst.cpu.empty())) continue;
    if (!cpu_inst && (!job.allow_gpu || (!gpu_ids.empty() && !In(gpu_ids, inst.accelerator)))) continue;
    std::optional<double> price = inst.price_on_demand;
    if (!price) continue;
    std::vector<int> tps;
    ComputeDevice dev;
    if (cpu_inst) {
      const Cpu* cpu = catalog.FindCpu(inst.cpu);
      if (!cpu) continue;
      dev = CpuInstanceDevice(inst, *cpu, cal);
      if (llm) continue;  // LLM serving on CPUs is not planned (llama.cpp-class speeds)
      tps = {0};
    } else {
      const Accelerator* acc = catalog.FindAccelerator(inst.accelerator);
      if (!acc) continue;
      if (acc->id.rfind("Trainium", 0) == 0 || acc->id.rfind("TPU", 0) == 0) continue;
      dev = DeviceFromAccelerator(*acc, cal, inst.intra_node_link);
      for (int tp : {1, 2, 4, 8}) {
        if (tp > inst.accelerator_count || inst.accelerator_count % tp != 0) continue;
        if (tp > 1 && m.heads > 0 && m.heads % tp != 0) continue;
        if (tp > 1 && !llm) continue;
        tps.push_back(tp);
      }
    }
    for (int tp : tps) {
      ++out.evaluated;
      ServePlan p;
      p.instance = &inst;
      p.tp = tp;
      p.replicas_per_instance = cpu_inst ? 1 : inst.accelerator_count / tp;
      ServePerf best;
      double best_cap = 0;
      int best_b = 0;
      double ttft = 0, tpot = 0, e2e = 0;
      if (llm) {
        const ServeSetup su = SetupFor(job, tp);
        ServePerf cap = EstimateLlmServing(m, su, dev, job.input_len, job.output_len, 0, cal);
        if (!cap.fits) continue;
        std::vector<int> batches;
        for (int b = 1; b < cap.batch; b *= 2) batches.push_back(b);
        batches.push_back(std::max(1, cap.batch));  // the KV-bound maximum
        for (int b : batches) {
          ServePerf r = EstimateLlmServing(m, su, dev, job.input_len, job.output_len, b, cal);
          double c = r.samples_per_s * job.target_utilization;
          // SLO checks at this concurrency, queueing included for TTFT.
          double q = QueueP99(r.prefill.value(), job.target_utilization, b);
          double t_ttft = (r.prefill.value() + q) * 1e3;
          double t_tpot = r.tpot.value() * 1e3;
          double t_e2e = t_ttft + t_tpot * std::max(0, job.output_len - 1);
          // TTFT's queueing term falls as concurrency grows: a miss here may pass further up.
          if (job.ttft_p99_ms && t_ttft > *job.ttft_p99_ms) continue;
          if (job.tpot_p99_ms && t_tpot > *job.tpot_p99_ms) break;
          if (job.e2e_p99_ms && t_e2e > *job.e2e_p99_ms) break;
          if (c > best_cap) {
            best_cap = c;
            best = r;
            best_b = b;
            ttft = t_ttft;
            tpot = t_tpot;
            e2e = t_e2e;
          }
        }
      } else {
        const Precision pr = job.weight_precision;
        for (int b = 1; b <= 256; b *= 2) {
          ServePerf r = EstimateForward(m, pr, dev, b, std::max(1, job.input_len), cal, true);
          double c = r.samples_per_s * job.target_utilization;
          double q = QueueP99(r.e2e.value(), job.target_utilization, 1);
          double t_e2e = (r.e2e.value() + q) * 1e3;
          if (job.e2e_p99_ms && t_e2e > *job.e2e_p99_ms) break;
          if (c > best_cap) {
            best_cap = c;
            best = r;
            best_b = b;
            e2e = t_e2e;
            ttft = t_e2e;
          }
        }
      }
      if (best_cap <= 0) continue;
      p.perf = best;
      p.batch = best_b;
      p.capacity_qps = best_cap;
      const double replicas = std::ceil(job.qps / best_cap - 1e-9);
      if (replicas > 100000) continue;  // beyond any single deployment; reported in the notes
      p.replicas = static_cast<int>(replicas);
      p.instances = (p.replicas + p.replicas_per_instance - 1) / p.replicas_per_instance;
      p.utilization = job.qps / (p.replicas * best.samples_per_s);
      p.ttft_p99_ms = ttft;
      p.tpot_p99_ms = tpot;
      p.e2e_p99_ms = e2e;
      const double hourly = catalog.Convert(*price, inst.currency, job.currency, rate) * p.instances;
      p.cost_per_hour = hourly;
      if (inst.price_reserved_1y) {
        p.cost_per_hour_reserved =
            catalog.Convert(*inst.price_reserved_1y, inst.currency, job.currency, rate) * p.instances;
      }
      const double rank_hourly = job.reserved && p.cost_per_hour_reserved ? *p.cost_per_hour_reserved : hourly;
      p.cost_per_month = rank_hourly * 730;
      p.cost_per_1k_requests = rank_hourly / (job.qps * 3600) * 1000;
      if (job.output_len > 0) {
        p.cost_per_1m_output_tokens = rank_hourly / (job.qps * job.output_len * 3600) * 1e6;
      }
      if (llm && best.kv_tokens < 20000 && !cpu_inst) {
        p.warnings.push_back(fmt::format(
            "only {} tokens of KV cache per replica: consider fp8/int8 weights, --kv-precision fp8, "
            "or more GPUs per replica", best.kv_tokens));
      }
      if (!cpu_inst && inst.inter_node_fabric != InterNodeFabric::kNone && inst.accelerator_count >= 8 &&
          p.instances == 1 && p.utilization < 0.3) {
        p.warnings.push_back("a training-class instance (8 GPUs + RDMA fabric) serving a light load: "
                             "a smaller instance is usually cheaper (guide B1)");
      }
      all.push_back(std::move(p));
    }
  }
  std::sort(all.begin(), all.end(), [](const ServePlan& a, const ServePlan& b) {
    if (a.cost_per_month != b.cost_per_month) return a.cost_per_month < b.cost_per_month;
    if (a.instance->cloud != b.instance->cloud) return a.instance->cloud < b.instance->cloud;
    if (a.instance->instance_type != b.instance->instance_type) return a.instance->instance_type < b.instance->instance_type;
    if (a.instance->region != b.instance->region) return a.instance->region < b.instance->region;
    return a.tp < b.tp;
  });
  if (all.empty()) {
    out.notes.push_back("no deployment meets the SLOs with the allowed hardware (or the load needs "
                        "more than 100,000 replicas); relax the SLOs, allow more GPUs per replica, "
                        "or quantize");
  }
  if (static_cast<int>(all.size()) > std::max(1, job.top)) all.resize(static_cast<size_t>(std::max(1, job.top)));
  out.plans = std::move(all);
  return out;
}

double ServeQueueP99(double service_s, double rho, int servers) { return QueueP99(service_s, rho, servers); }

ServeLoadCurve BuildServeLoadCurve(const ServeJobSpec& job, const ServePlan& plan, const Catalog& catalog,
                                   const Calibration& cal) {
  ServeLoadCurve c;
  const ModelSpec& m = job.model;
  c.llm = m.is_decoder_llm();
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
  std::vector<int> batches;
  for (int b = 1; b < plan.batch; b *= 2) batches.push_back(b);
  batches.push_back(std::max(1, plan.batch));
  for (int b : batches) {
    ServePerf r = c.llm ? EstimateLlmServing(m, SetupFor(job, plan.tp), dev, job.input_len, job.output_len, b, cal)
                        : EstimateForward(m, job.weight_precision, dev, b, std::max(1, job.input_len), cal, true);
    if (!(r.samples_per_s > 0)) continue;
    if (!c.rps.empty() && r.samples_per_s <= c.rps.back()) continue;  // keep the curve increasing
    c.batch.push_back(b);
    c.rps.push_back(r.samples_per_s);
    c.prefill_s.push_back(c.llm ? r.prefill.value() : r.e2e.value());
    c.tpot_s.push_back(c.llm ? r.tpot.value() : 0.0);
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
  out.ttft_p99_ms = (prefill + q) * 1e3;
  out.tpot_p99_ms = tpot * 1e3;
  out.e2e_p99_ms = c.llm ? out.ttft_p99_ms + out.tpot_p99_ms * std::max(0, c.output_len - 1) : out.ttft_p99_ms;
  return out;
}

}  // namespace gpuplan
