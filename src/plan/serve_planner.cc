// Serving planner. Per hardware shape (serve_eval.cc, evaluated once per plan call): each
// tensor-parallel width that holds the weights and one request's KV; the largest concurrency
// whose TPOT/TTFT meet the SLOs. Per instance row: replicas to carry the load at the target
// utilisation, instances to host the replicas, prices, host RAM and disk; then ranking, and
// warnings for the plans that are kept.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpuplan/pitfalls.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/sizing.h"
#include "plan/planner_internal.h"
#include "plan/serve_eval.h"

namespace gpuplan {

using serve_internal::CpuInstanceDevice;
using serve_internal::EvaluateGpuShape;
using serve_internal::EvaluateLayout;
using serve_internal::LayoutEval;
using serve_internal::ServeConstants;
using serve_internal::ShapeEval;
using serve_internal::ShapeKey;

namespace {

bool In(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Training chips the serving planner does not place: Trainium (Inferentia serves) and TPUs.
bool NotServedOn(const std::string& acc) {
  return acc.rfind("Trainium", 0) == 0 || acc.rfind("TPU", 0) == 0;
}

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

std::string ServingRuntime(const ModelSpec& model, const InstanceType& inst, const Accelerator* acc,
                           Engine engine) {
  if (inst.is_cpu_only()) {
    if (model.arch == ModelArch::kEncoderDecoder) {
      return model.is_audio_model() ? "whisper.cpp / CTranslate2 (faster-whisper)" : "CTranslate2";
    }
    return model.is_decoder_llm() ? "llama.cpp" : "ONNX Runtime / OpenVINO";
  }
  if (acc && acc->AwsNeuron()) {
    if (!model.is_decoder_llm()) return "AWS Neuron (torch-neuronx)";
    // TGI and transformers run on Neuron through Hugging Face's optimum-neuron; vLLM through
    // NxD Inference.
    return engine == Engine::kTgi            ? "TGI on AWS Neuron (optimum-neuron)"
           : engine == Engine::kTransformers ? "transformers on AWS Neuron (optimum-neuron)"
                                             : "vLLM on AWS Neuron (NxD Inference)";
  }
  if (!model.generates_tokens()) return "Triton + TensorRT";
  return EngineName(engine);
}

namespace {

// Formats the warnings (and runtime) of one plan of `job`.
void AddServeWarnings(const ServeJobSpec& job, const Catalog& catalog, const Calibration& cal,
                      ServePlan& p);

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
  // Only the guide plan chosen below is shown: its warnings are formatted alone.
  auto res = PlanServingImpl(g, catalog, cal, rate, /*warnings=*/false);
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
  AddServeWarnings(g, catalog, cal, out.guide_plans.back());
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

namespace {

// The default host policy's input for one node of a serving plan: RAM stages the node's
// weights (its replicas' copies, or its pipeline stage's share) plus one engine worker per GPU.
SizingInput ServeHostInput(const ServePlan& p, const Accelerator* acc, Bytes stage_weights) {
  const bool cpu_inst = p.instance->is_cpu_only();
  SizingInput hin;
  hin.training = false;
  hin.explain = false;  // the planner reads the numbers; CheckHost words its own findings
  hin.gpus_per_node = cpu_inst ? 0 : p.replicas_per_instance * p.tp;
  hin.nodes = 1;
  if (acc) hin.gpu_memory = acc->memory;
  hin.model_files = stage_weights * (cpu_inst ? 1 : p.replicas_per_instance);
  return hin;
}

// The weights one node holds per copy: the whole model, or its pipeline stage's share.
Bytes StageWeights(const ServeJobSpec& job, double params_total, int pp) {
  const double bits =
      job.quant ? job.quant->EffectiveBits() : 8 * BytesPerElement(job.weight_precision);
  return Bytes(params_total * bits / 8 / pp);
}

// SizeHost's numbers (no rationale) for the planner's distinct inputs, once per plan call.
class HostNeedsCache {
 public:
  const HostNeeds& Get(const SizingInput& in) {
    for (const auto& e : entries_) {
      if (e.gpus == in.gpus_per_node && e.gpu_memory == in.gpu_memory &&
          e.model_files == in.model_files)
        return e.needs;
    }
    entries_.push_back(
        {in.gpus_per_node, in.gpu_memory, in.model_files, SizeHost(SizingPolicy::kDefault, in)});
    return entries_.back().needs;
  }

 private:
  struct Entry {
    int gpus;
    Bytes gpu_memory, model_files;
    HostNeeds needs;
  };
  std::vector<Entry> entries_;
};

// The warnings of a plan that is kept (the top plans after ranking): formatted here rather than
// for every candidate.
void AddServeWarnings(const ServeJobSpec& job, const Catalog& catalog, const ServeConstants& k,
                      double params_total, HostNeedsCache* host_needs, ServePlan& p) {
  const InstanceType& inst = *p.instance;
  const ModelSpec& m = job.model;
  const bool llm = m.generates_tokens();
  const bool cpu_inst = inst.is_cpu_only();
  const int tp = p.tp, pp = p.pp;
  if (llm && p.perf.kv_tokens < 20000 && !cpu_inst) {
    p.warnings.push_back(
        fmt::format("only {} tokens of KV cache per replica: consider fp8/int8 weights, "
                    "--kv-precision fp8, "
                    "or more GPUs per replica",
                    p.perf.kv_tokens));
  }
  const Accelerator* acc = cpu_inst ? nullptr : catalog.FindAccelerator(inst.accelerator);
  p.runtime = ServingRuntime(m, inst, acc, job.engine);
  if (acc && acc->AwsNeuron()) {
    p.warnings.push_back(
        "Inferentia/Trainium run the AWS Neuron SDK, not CUDA: the model is "
        "compiled for Neuron first (" +
        p.runtime +
        "), and only the "
        "architectures Neuron supports run");
  }
  const Bytes weights = StageWeights(job, params_total, pp);
  if (p.host_inadequate) {
    const SizingInput hin = ServeHostInput(p, catalog.FindAccelerator(inst.accelerator), weights);
    HostNeeds own;
    const HostNeeds& needs =
        host_needs ? host_needs->Get(hin) : (own = SizeHost(SizingPolicy::kDefault, hin));
    for (const HostFinding& f : CheckHost(needs, inst)) {
      if (f.item == "ram" && !f.ok) {
        p.warnings.push_back("host " + f.text +
                             " (weights staged in RAM while loading, plus "
                             "the engine workers)");
      }
    }
  }
  if (p.local_disk_enough && !*p.local_disk_enough) {
    p.warnings.push_back(fmt::format(
        "disk: the engine image and the weights need {:.0f} GB per node (default sizing: "
        "200 GB for the OS and container images{}, plus a downloaded and a converted copy "
        "of {:.0f} GB of weights); this shape has {}: launch it with a boot or network "
        "volume of at least {:.0f} GB (block storage is billed apart, not in this price)",
        p.disk_needed.value() / 1e9, p.runtime == "vllm" ? ", the vLLM image alone 28.6 GB" : "",
        weights.value() / 1e9,
        inst.local_nvme.value() > 0
            ? fmt::format("{:.0f} GB of local NVMe", inst.local_nvme.value() / 1e9)
            : std::string("no local NVMe"),
        p.disk_needed.value() / 1e9));
  }
  if (auto f = MarketplaceRule(inst, p.instances)) p.warnings.push_back(f->message);
  if (pp > 1) {
    const BytesPerSec stage_link(inst.inter_node_bw->value() / 8 *
                                 k.Fabric(inst.inter_node_fabric));
    const double micro = std::ceil(p.batch / static_cast<double>(pp));  // as the estimator
    const double hop_ms = (k.stage_latency.value() +
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
}

void AddServeWarnings(const ServeJobSpec& job, const Catalog& catalog, const Calibration& cal,
                      ServePlan& p) {
  AddServeWarnings(job, catalog, ServeConstants(cal),
                   static_cast<double>(CountParams(job.model).total), nullptr, p);
}

}  // namespace

Result<ServePlanResult> PlanServingImpl(const ServeJobSpec& job, const Catalog& catalog,
                                        const Calibration& cal, std::optional<double> rate,
                                        bool warnings) {
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
  for (size_t c = 0; c < job.clouds.size(); ++c) {
    if (auto st = catalog.CheckCloud(job.clouds[c], fmt::format("--clouds[{}]", c)); !st)
      return st.error();
  }
  auto resolved = catalog.ResolveRegions(job.regions, "--regions", job.clouds);
  if (!resolved) return resolved.error();
  const std::vector<std::string>& regions = *resolved;  // the catalog's spelling of each
  const ModelSpec& m = job.model;
  const bool llm = m.generates_tokens();
  const ServeConstants k(cal);
  const double params_total = static_cast<double>(CountParams(m).total);
  std::vector<ShapeEval> shapes;  // evaluated hardware shapes (tens per catalog)
  HostNeedsCache host_needs;
  std::vector<ServePlan> all;
  int skipped_suspect = 0, skipped_marketplace = 0;
  int offers = 0, llm_cpu_offers = 0;  // priced rows the filters keep (why nothing is planned)
  // Accelerators the engine cannot serve these weights on, each with why.
  std::vector<std::pair<std::string, std::string>> no_kernels;
  for (const auto& inst : catalog.instances) {
    if (!job.clouds.empty() && !In(job.clouds, inst.cloud)) continue;
    if (!regions.empty() && !In(regions, inst.region)) continue;
    const bool cpu_inst = inst.is_cpu_only();
    if (cpu_inst && (!job.allow_cpu || inst.cpu.empty())) continue;
    if (!cpu_inst && (!job.allow_gpu || (!gpu_ids.empty() && !In(gpu_ids, inst.accelerator))))
      continue;
    std::optional<double> price = inst.price_on_demand;
    if (!price) continue;
    if (SkipOffer(inst, job.include_suspect, job.marketplace, skipped_suspect, skipped_marketplace))
      continue;
    ++offers;
    if (cpu_inst && llm) ++llm_cpu_offers;
    ShapeKey key;
    const Cpu* cpu = nullptr;
    const Accelerator* acc = nullptr;
    if (cpu_inst) {
      cpu = catalog.FindCpu(inst.cpu);
      if (!cpu) continue;
      if (llm) continue;  // LLM serving on CPUs is not planned (llama.cpp-class speeds)
      key.hw = cpu;
      key.count = inst.vcpus;
    } else {
      acc = catalog.FindAccelerator(inst.accelerator);
      if (!acc) continue;
      if (NotServedOn(acc->id)) continue;
      {
        std::string why = EngineCannotServe(job.engine, *acc, job.weight_precision, job.quant);
        if (!why.empty()) {
          if (std::none_of(no_kernels.begin(), no_kernels.end(),
                           [&](const auto& x) { return x.first == acc->id; }))
            no_kernels.emplace_back(acc->id, std::move(why));
          continue;
        }
      }
      key.hw = acc;
      key.count = inst.accelerator_count;
      key.intra = inst.intra_node_link;
      key.fabric = inst.inter_node_fabric;
      if (inst.inter_node_bw) key.inter_bw = inst.inter_node_bw->value();
    }
    auto found = std::find_if(shapes.begin(), shapes.end(),
                              [&](const ShapeEval& s) { return s.key == key; });
    if (found == shapes.end()) {
      ShapeEval se;
      se.key = key;
      if (cpu_inst) {
        se.layouts.push_back(EvaluateLayout(job, CpuInstanceDevice(inst, *cpu, cal), {0, 1},
                                            se.stage_link, k.stage_latency, cal));
      } else {
        EvaluateGpuShape(job, inst, DeviceFromAccelerator(*acc, cal, inst.intra_node_link), k, cal,
                         se);
      }
      shapes.push_back(std::move(se));
      found = shapes.end() - 1;
    }
    for (const LayoutEval& le : found->layouts) {
      const int tp = le.layout.tp, pp = le.layout.pp;
      ++out.evaluated;
      if (le.best_cap <= 0) continue;
      const double best_cap = le.best_cap;
      ServePlan p;
      p.instance = &inst;
      p.tp = tp;
      p.pp = pp;
      p.replicas_per_instance = cpu_inst || pp > 1 ? 1 : inst.accelerator_count / tp;
      p.perf = le.best;
      p.batch = le.best_b;
      p.capacity_qps = best_cap;
      p.planned_utilization = le.utilization;
      // At least one replica serves any load, however light.
      const double replicas = std::max(1.0, std::ceil(job.qps / best_cap - 1e-9));
      if (replicas > 100000) continue;  // beyond any single deployment; reported in the notes
      p.replicas = static_cast<int>(replicas);
      p.instances = pp > 1 ? p.replicas * pp
                           : (p.replicas + p.replicas_per_instance - 1) / p.replicas_per_instance;
      p.utilization = job.qps / (p.replicas * le.best.samples_per_s);
      p.ttft_p99_ms = le.ttft;
      p.tpot_p99_ms = le.tpot;
      p.e2e_p99_ms = le.e2e;
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
      {  // Host RAM and disk by the default policy; the warnings come with the kept plans.
        const Bytes weights = StageWeights(job, params_total, pp);
        SizingInput hin =
            ServeHostInput(p, cpu_inst ? catalog.FindAccelerator(inst.accelerator) : acc, weights);
        p.host_inadequate = !RamAdequate(host_needs.Get(hin), inst);
        // Disk: the replicas on one node share one copy of the files.
        hin.model_files = weights;
        p.disk_needed = host_needs.Get(hin).system_disk;
        if (inst.local_nvme_known) p.local_disk_enough = inst.local_nvme >= p.disk_needed;
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
  // Offers the engine cannot serve these weights on, one note per reason.
  for (const auto& g : GroupByWhy(no_kernels)) {
    out.notes.push_back(fmt::format("{}: not planned with {} ({})", fmt::join(g.ids, ", "),
                                    EngineName(job.engine), g.why));
  }
  const bool only_format_skips = out.evaluated == 0 && !no_kernels.empty();
  if (all.empty() && offers == 0) {
    // Nothing was evaluated: say which filter left no offer, not that the SLOs failed.
    std::string where;
    if (!job.clouds.empty()) where += fmt::format(" on {}", fmt::join(job.clouds, "/"));
    if (!regions.empty()) where += fmt::format(" in {}", fmt::join(regions, "/"));
    if (!gpu_ids.empty()) {
      std::vector<std::string> rented;  // accelerators the same clouds and regions do price
      for (const auto& inst : catalog.instances) {
        if ((!job.clouds.empty() && !In(job.clouds, inst.cloud)) ||
            (!regions.empty() && !In(regions, inst.region)) || inst.is_cpu_only() ||
            !inst.price_on_demand || In(rented, inst.accelerator) ||
            NotServedOn(inst.accelerator)) {
          continue;
        }
        rented.push_back(inst.accelerator);
      }
      std::sort(rented.begin(), rented.end());
      out.notes.push_back(fmt::format(
          "no priced catalog offer{} has {}: nothing was evaluated; drop --gpus, or choose one "
          "the catalog rents{}: {}",
          where, fmt::join(gpu_ids, ", "), where, fmt::join(rented, ", ")));
    } else {
      out.notes.push_back(fmt::format(
          "no priced catalog offer{}: nothing was evaluated; widen --clouds / --regions", where));
    }
  } else if (all.empty() && offers == llm_cpu_offers) {
    out.notes.push_back(
        fmt::format("{} serving on CPUs is not planned (llama.cpp-class speeds): serve it on "
                    "GPUs; CPUs are planned for encoders, ViTs and CNNs",
                    m.is_decoder_llm() ? "LLM" : "token-by-token (encoder-decoder)"));
  } else if (all.empty() && !only_format_skips) {
    out.notes.push_back(
        "no deployment meets the SLOs with the allowed hardware (or the load needs "
        "more than 100,000 replicas); relax the SLOs, allow more GPUs per replica, "
        "or quantize");
  }
  if (!all.empty() && all.front().planned_utilization < job.target_utilization - 1e-9) {
    out.notes.push_back(fmt::format(
        "the top plan is sized at {:.0f}% utilisation, below the {:.0f}% target: at the target, "
        "queueing would push the p99 latency past the SLO, so it runs more replicas, each less "
        "loaded",
        100 * all.front().planned_utilization, 100 * job.target_utilization));
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
  if (static_cast<int>(all.size()) > std::max(1, job.top))
    all.resize(static_cast<size_t>(std::max(1, job.top)));
  {
    std::vector<const InstanceType*> ranked;
    for (const auto& p : all) ranked.push_back(p.instance);
    AddOfferNotes(ranked, skipped_suspect, skipped_marketplace, out.notes);
  }
  if (warnings) {
    for (ServePlan& p : all) AddServeWarnings(job, catalog, k, params_total, &host_needs, p);
  }
  out.plans = std::move(all);
  return out;
}

}  // namespace gpuplan
