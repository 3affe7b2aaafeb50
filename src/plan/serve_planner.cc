// Serving planner. Per instance: each tensor-parallel width that holds the weights and one
// request's KV; the largest concurrency whose TPOT/TTFT meet the SLOs; replicas to carry the
// load at the target utilisation; instances to host the replicas. Queueing: the p99 wait of an
// M/M/c queue at the planned utilisation, approximated per replica as
// -ln(0.01) * S * rho / (c * (1 - rho)) with S the service time (documented in docs/model.md).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/serve_planner.h"
#include "gpuplan/sizing.h"
#include "plan/planner_internal.h"

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

bool IsNeuron(const std::string& acc) {
  return acc.rfind("Inferentia", 0) == 0 || acc.rfind("Trainium", 0) == 0;
}

// Achievable fraction of the node fabric's line rate (the calibration's link_efficiency.*).
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

// One serving layout of an instance: tensor parallel within a node, pipeline stages across
// nodes (pp = nodes per replica).
struct ServeLayout {
  int tp = 1;
  int pp = 1;
};

constexpr int kMaxServeNodesPerReplica = 8;

// Keeps the cheapest of the plans that differ only by region; lists the others' regions.
void CollapseRegions(std::vector<ServePlan>& plans) {
  std::vector<ServePlan> kept;
  for (auto& p : plans) {
    auto same = std::find_if(kept.begin(), kept.end(), [&](const ServePlan& k) {
      return k.instance->cloud == p.instance->cloud &&
             k.instance->instance_type == p.instance->instance_type && k.tp == p.tp && k.pp == p.pp;
    });
    if (same == kept.end()) {
      kept.push_back(std::move(p));
    } else if (p.instance->region != same->instance->region &&
               !In(same->also_regions, p.instance->region)) {
      same->also_regions.push_back(p.instance->region);
    }
  }
  plans = std::move(kept);
}

}  // namespace

std::string ServingRuntime(const ModelSpec& model, const InstanceType& inst, Engine engine) {
  if (inst.is_cpu_only()) {
    return model.is_decoder_llm() ? "llama.cpp" : "ONNX Runtime / OpenVINO";
  }
  if (IsNeuron(inst.accelerator)) {
    return model.is_decoder_llm() ? "vLLM on AWS Neuron (NxD Inference)"
                                  : "AWS Neuron (torch-neuronx)";
  }
  if (!model.is_decoder_llm()) return "Triton + TensorRT";
  return EngineName(engine);
}

namespace {

struct ServeGuideRule {
  std::string text;
  std::vector<std::string> gpus;
  int tp = 0;  // GPUs per replica the rule names; 0 = any
};

std::optional<ServeGuideRule> ServeGuideRuleFor(const ServeJobSpec& job) {
  if (!job.model.is_decoder_llm()) return std::nullopt;
  const double b = static_cast<double>(CountParams(job.model).total) / 1e9;
  if (b >= 5 && b < 10 && job.qps < 10) {
    return ServeGuideRule{"guide A2: serving a 7B model at under 10 QPS -> L40S or RTX 4090",
                          {"L40S", "RTX-4090"},
                          0};
  }
  if (b >= 10 && b < 20) {
    return ServeGuideRule{
        "guide B16: serving a 13B-class model -> A10G at peak (CPUs for the "
        "baseline), vLLM continuous batching",
        {"A10G"},
        0};
  }
  if (b >= 60 && b < 100) {
    return ServeGuideRule{
        "guide A2: serving a 70B model at high concurrency -> 2 x A100 + vLLM "
        "(PagedAttention)",
        {"A100-SXM4-80GB", "A100-PCIe-80GB", "A100-SXM4-40GB", "A100-PCIe-40GB"},
        2};
  }
  return std::nullopt;
}

void AddServeGuideComparison(const ServeJobSpec& job, const Catalog& catalog,
                             const Calibration& cal, std::optional<double> rate,
                             ServePlanResult& out) {
  auto rule = ServeGuideRuleFor(job);
  if (!rule) return;
  out.guide_rule = rule->text;
  ServeJobSpec g = job;
  g.gpus.clear();
  for (const auto& id : rule->gpus) {
    if (catalog.FindAccelerator(id)) g.gpus.push_back(id);
  }
  g.allow_cpu = false;
  g.allow_gpu = true;
  g.top = 50;
  auto res = PlanServingImpl(g, catalog, cal, rate);
  const ServePlan* gp = nullptr;
  if (res) {
    for (const ServePlan& p : res->plans) {
      if (rule->tp == 0 || p.tp == rule->tp) {
        gp = &p;
        break;
      }
    }
  }
  if (gp == nullptr) {
    out.guide_comparison =
        "verdict: no deployment following the guide's rule meets this load and "
        "these SLOs in the catalog";
    return;
  }
  out.guide_plans.push_back(*gp);
  if (out.plans.empty()) return;
  const ServePlan& top = out.plans.front();
  if (std::find(rule->gpus.begin(), rule->gpus.end(), top.instance->accelerator) !=
          rule->gpus.end() &&
      (rule->tp == 0 || top.tp == rule->tp)) {
    out.guide_comparison = "verdict: agrees: gpuplan's cheapest deployment is the rule's choice";
    return;
  }
  out.guide_comparison = fmt::format(
      "verdict: differs: the rule's cheapest deployment ({} replica(s) of {} x {} on {} {}) costs "
      "{:.1f}x gpuplan's per month, by the same serving model at current catalog prices",
      gp->replicas, gp->tp, gp->instance->accelerator, gp->instance->cloud,
      gp->instance->instance_type, gp->cost_per_month / top.cost_per_month);
}

}  // namespace

Result<ServePlanResult> PlanServing(const ServeJobSpec& job, const Catalog& catalog,
                                    const Calibration& cal, std::optional<double> rate) {
  auto res = PlanServingImpl(job, catalog, cal, rate);
  if (res) AddTrainingClassWarnings(job, catalog, cal, rate, *res);
  if (res && job.with_guide && job.allow_gpu)
    AddServeGuideComparison(job, catalog, cal, rate, *res);
  return res;
}

Result<ServePlanResult> PlanServingImpl(const ServeJobSpec& job, const Catalog& catalog,
                                        const Calibration& cal, std::optional<double> rate) {
  ServePlanResult out;
  out.prices_as_of = catalog.PricesAsOf();
  if (!(job.qps > 0)) {
    return MakeError(ErrorCode::kInvalidArgument, "--qps",
                     fmt::format("must be > 0, got {}", job.qps));
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
  int skipped_suspect = 0;
  for (const auto& inst : catalog.instances) {
    if (!job.clouds.empty() && !In(job.clouds, inst.cloud)) continue;
    if (!job.regions.empty() && !In(job.regions, inst.region)) continue;
    const bool cpu_inst = inst.is_cpu_only();
    if (cpu_inst && (!job.allow_cpu || inst.cpu.empty())) continue;
    if (!cpu_inst && (!job.allow_gpu || (!gpu_ids.empty() && !In(gpu_ids, inst.accelerator))))
      continue;
    std::optional<double> price = inst.price_on_demand;
    if (!price) continue;
    if (!inst.suspect_reason.empty() && !job.include_suspect) {
      ++skipped_suspect;
      continue;
    }
    std::vector<ServeLayout> layouts;
    ComputeDevice dev;
    BytesPerSec stage_link;  // node fabric per direction, achievable (pipeline stages)
    if (cpu_inst) {
      const Cpu* cpu = catalog.FindCpu(inst.cpu);
      if (!cpu) continue;
      dev = CpuInstanceDevice(inst, *cpu, cal);
      if (llm) continue;  // LLM serving on CPUs is not planned (llama.cpp-class speeds)
      layouts = {{0, 1}};
    } else {
      const Accelerator* acc = catalog.FindAccelerator(inst.accelerator);
      if (!acc) continue;
      if (acc->id.rfind("Trainium", 0) == 0 || acc->id.rfind("TPU", 0) == 0) continue;
      dev = DeviceFromAccelerator(*acc, cal, inst.intra_node_link);
      for (int tp : {1, 2, 4, 8}) {
        if (tp > inst.accelerator_count || inst.accelerator_count % tp != 0) continue;
        if (tp > 1 && m.heads > 0 && m.heads % tp != 0) continue;
        if (tp > 1 && !llm) continue;
        layouts.push_back({tp, 1});
      }
      // A model that fits no single node of this shape: tp over the whole node, pipeline stages
      // across the fewest nodes that hold it, over the node fabric (vLLM multi-node serving).
      if (llm && !layouts.empty() && inst.inter_node_fabric != InterNodeFabric::kNone &&
          inst.inter_node_bw && inst.accelerator_count >= 2) {
        const bool one_node =
            std::any_of(layouts.begin(), layouts.end(), [&](const ServeLayout& l) {
              return EstimateLlmServing(m, SetupFor(job, l.tp), dev, job.input_len, job.output_len,
                                        0, cal)
                  .fits;
            });
        stage_link = BytesPerSec(inst.inter_node_bw->value() / 8 *
                                 FabricEfficiency(inst.inter_node_fabric, cal));
        const int tp = layouts.back().tp;
        for (int pp = 2; !one_node && pp <= kMaxServeNodesPerReplica && pp <= m.layers; ++pp) {
          if (EstimateLlmServingPipelined(m, SetupFor(job, tp), dev, pp, stage_link,
                                          Seconds(cal.Get("link_latency_us.inter", 15) * 1e-6),
                                          job.input_len, job.output_len, 0, cal)
                  .fits) {
            layouts.push_back({tp, pp});
            break;
          }
        }
      }
    }
    const Seconds stage_latency(cal.Get("link_latency_us.inter", 15) * 1e-6);
    for (const ServeLayout& layout : layouts) {
      const int tp = layout.tp, pp = layout.pp;
      ++out.evaluated;
      ServePlan p;
      p.instance = &inst;
      p.tp = tp;
      p.pp = pp;
      p.replicas_per_instance = cpu_inst || pp > 1 ? 1 : inst.accelerator_count / tp;
      ServePerf best;
      double best_cap = 0;
      int best_b = 0;
      double ttft = 0, tpot = 0, e2e = 0;
      if (llm) {
        const ServeSetup su = SetupFor(job, tp);
        auto estimate = [&](int b) {
          return pp > 1 ? EstimateLlmServingPipelined(m, su, dev, pp, stage_link, stage_latency,
                                                      job.input_len, job.output_len, b, cal)
                        : EstimateLlmServing(m, su, dev, job.input_len, job.output_len, b, cal);
        };
        ServePerf cap = estimate(0);
        if (!cap.fits) continue;
        std::vector<int> batches;
        for (int b = 1; b < cap.batch; b *= 2) batches.push_back(b);
        batches.push_back(std::max(1, cap.batch));  // the KV-bound maximum
        for (int b : batches) {
          ServePerf r = estimate(b);
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
      p.instances = pp > 1 ? p.replicas * pp
                           : (p.replicas + p.replicas_per_instance - 1) / p.replicas_per_instance;
      p.utilization = job.qps / (p.replicas * best.samples_per_s);
      p.ttft_p99_ms = ttft;
      p.tpot_p99_ms = tpot;
      p.e2e_p99_ms = e2e;
      const double hourly =
          catalog.Convert(*price, inst.currency, job.currency, rate) * p.instances;
      p.cost_per_hour = hourly;
      if (inst.price_reserved_1y) {
        p.cost_per_hour_reserved =
            catalog.Convert(*inst.price_reserved_1y, inst.currency, job.currency, rate) *
            p.instances;
      }
      const double rank_hourly =
          job.reserved && p.cost_per_hour_reserved ? *p.cost_per_hour_reserved : hourly;
      p.cost_per_month = rank_hourly * 730;
      p.cost_per_1k_requests = rank_hourly / (job.qps * 3600) * 1000;
      if (job.output_len > 0) {
        p.cost_per_1m_output_tokens = rank_hourly / (job.qps * job.output_len * 3600) * 1e6;
      }
      if (llm && best.kv_tokens < 20000 && !cpu_inst) {
        p.warnings.push_back(
            fmt::format("only {} tokens of KV cache per replica: consider fp8/int8 weights, "
                        "--kv-precision fp8, "
                        "or more GPUs per replica",
                        best.kv_tokens));
      }
      p.runtime = ServingRuntime(m, inst, job.engine);
      if (!cpu_inst && IsNeuron(inst.accelerator)) {
        p.warnings.push_back(
            "Inferentia/Trainium run the AWS Neuron SDK, not CUDA: the model is "
            "compiled for Neuron first (" +
            p.runtime +
            "), and only the "
            "architectures Neuron supports run");
      }
      {  // Host: RAM stages the instance's weights when loading, plus one engine worker per GPU.
        const double bits =
            job.quant ? job.quant->EffectiveBits() : 8 * BytesPerElement(job.weight_precision);
        SizingInput hin;
        hin.training = false;
        hin.gpus_per_node = cpu_inst ? 0 : p.replicas_per_instance * tp;
        hin.nodes = 1;
        if (const Accelerator* a = catalog.FindAccelerator(inst.accelerator))
          hin.gpu_memory = a->memory;
        // The weights one node holds: its replicas' copies, or its pipeline stage's share.
        const Bytes weights(static_cast<double>(CountParams(m).total) * bits / 8 / pp);
        hin.model_files = weights * (cpu_inst ? 1 : p.replicas_per_instance);
        const HostNeeds needs = SizeHost(SizingPolicy::kDefault, hin);
        for (const HostFinding& f : CheckHost(needs, inst)) {
          if (f.item == "ram" && !f.ok) {
            p.host_inadequate = true;
            p.warnings.push_back("host " + f.text +
                                 " (weights staged in RAM while loading, plus "
                                 "the engine workers)");
          }
        }
        // Disk: the replicas on one node share one copy of the files.
        hin.model_files = weights;
        p.disk_needed = SizeHost(SizingPolicy::kDefault, hin).system_disk;
        if (inst.local_nvme_known) {
          p.local_disk_enough = inst.local_nvme >= p.disk_needed;
          if (!*p.local_disk_enough) {
            p.warnings.push_back(fmt::format(
                "disk: the engine image and the weights need {:.0f} GB per node (default sizing: "
                "200 GB for the OS and container images{}, plus a downloaded and a converted copy "
                "of {:.0f} GB of weights); this shape has {}: launch it with a boot or network "
                "volume of at least {:.0f} GB (block storage is billed apart, not in this price)",
                p.disk_needed.value() / 1e9,
                p.runtime == "vllm" ? ", the vLLM image alone 28.6 GB" : "", weights.value() / 1e9,
                inst.local_nvme.value() > 0
                    ? fmt::format("{:.0f} GB of local NVMe", inst.local_nvme.value() / 1e9)
                    : std::string("no local NVMe"),
                p.disk_needed.value() / 1e9));
          }
        }
      }
      if (pp > 1) {
        const double micro = std::ceil(p.batch / static_cast<double>(pp));  // as the estimator
        const double hop_ms = (stage_latency.value() +
                               micro * static_cast<double>(m.hidden) * 2.0 / stage_link.value()) *
                              1e3;
        p.warnings.push_back(fmt::format(
            "multi-node replica: the model fits no single {} node, so each replica spans {} nodes "
            "(tensor parallel {} within a node x pipeline parallel {} across nodes over {}; vLLM "
            "--pipeline-parallel-size {} on a Ray cluster of the nodes); each token crosses {} "
            "node hop(s) of {:.2f} ms; the GPUs per replica are {} x {}",
            inst.instance_type, pp, tp, pp, InterNodeFabricName(inst.inter_node_fabric), pp, pp - 1,
            hop_ms, pp, tp));
      }
      all.push_back(std::move(p));
    }
  }
  std::sort(all.begin(), all.end(), [](const ServePlan& a, const ServePlan& b) {
    if (a.host_inadequate != b.host_inadequate) return !a.host_inadequate;
    if (a.cost_per_month != b.cost_per_month) return a.cost_per_month < b.cost_per_month;
    if (a.instance->cloud != b.instance->cloud) return a.instance->cloud < b.instance->cloud;
    if (a.instance->instance_type != b.instance->instance_type)
      return a.instance->instance_type < b.instance->instance_type;
    if (a.instance->region != b.instance->region) return a.instance->region < b.instance->region;
    if (a.tp != b.tp) return a.tp < b.tp;
    return a.pp < b.pp;
  });
  if (all.empty()) {
    out.notes.push_back(
        "no deployment meets the SLOs with the allowed hardware (or the load needs "
        "more than 100,000 replicas); relax the SLOs, allow more GPUs per replica, "
        "or quantize");
  }
  if (!job.by_region) CollapseRegions(all);
  if (job.reserved && !all.empty() && !all.front().cost_per_hour_reserved) {
    const InstanceType& top = *all.front().instance;
    out.notes.push_back(fmt::format(
        "--reserved: the top plan ({} {} in {}) has no 1-year reserved or committed-use price in "
        "the catalog; its cost is the on-demand price",
        top.cloud, top.instance_type, top.region));
  }
  if (job.reserved) {
    const auto without = std::count_if(
        all.begin(), all.end(), [](const ServePlan& p) { return !p.cost_per_hour_reserved; });
    if (without > 0) {
      out.notes.push_back(fmt::format(
          "--reserved: {} of {} plans have no 1-year reserved price in the catalog and are ranked "
          "by their on-demand price",
          without, all.size()));
    }
  }
  if (!all.empty() && all.front().pp > 1) {
    out.notes.push_back(fmt::format(
        "the top plan spans {} nodes per replica (pipeline parallel across nodes): `gpuplan emit` "
        "does not write multi-node serving files yet",
        all.front().pp));
  }
  if (!all.empty() && !all.front().local_disk_enough) {
    out.notes.push_back(fmt::format(
        "disk: local NVMe is not recorded for {}; the engine image and the weights need {:.0f} GB "
        "per node: set the boot volume (or a network volume) to at least that at launch",
        all.front().instance->instance_type, all.front().disk_needed.value() / 1e9));
  }
  if (skipped_suspect) {
    out.notes.push_back(fmt::format(
        "{} catalog row(s) skipped: their source marks the price as suspect or anomalous "
        "(--include-suspect ranks them)",
        skipped_suspect));
  }
  if (static_cast<int>(all.size()) > std::max(1, job.top))
    all.resize(static_cast<size_t>(std::max(1, job.top)));
  out.plans = std::move(all);
  return out;
}

double ServeQueueP99(double service_s, double rho, int servers) {
  return QueueP99(service_s, rho, servers);
}

ServeLoadCurve BuildServeLoadCurve(const ServeJobSpec& job, const ServePlan& plan,
                                   const Catalog& catalog, const Calibration& cal) {
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
    ServePerf r = c.llm && plan.pp > 1 && inst.inter_node_bw
                      ? EstimateLlmServingPipelined(
                            m, SetupFor(job, plan.tp), dev, plan.pp,
                            BytesPerSec(inst.inter_node_bw->value() / 8 *
                                        FabricEfficiency(inst.inter_node_fabric, cal)),
                            Seconds(cal.Get("link_latency_us.inter", 15) * 1e-6), job.input_len,
                            job.output_len, b, cal)
                  : c.llm ? EstimateLlmServing(m, SetupFor(job, plan.tp), dev, job.input_len,
                                               job.output_len, b, cal)
                          : EstimateForward(m, job.weight_precision, dev, b,
                                            std::max(1, job.input_len), cal, true);
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
  out.e2e_p99_ms =
      c.llm ? out.ttft_p99_ms + out.tpot_p99_ms * std::max(0, c.output_len - 1) : out.ttft_p99_ms;
  return out;
}

}  // namespace gpuplan
