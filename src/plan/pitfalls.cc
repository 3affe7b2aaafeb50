// The guides' pitfall rules for training (include/gpuplan/pitfalls.h): the one rule set that
// the training planner's warnings and `gpuplan check` share. Every number a finding quotes is
// one the caller evaluated (EvaluateTraining, CheckHost); the rules add no arithmetic of their
// own beyond shares and the named thresholds.
#include "gpuplan/pitfalls.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "info";
}

namespace {

double Pct(double x) { return 100.0 * x; }

double Share(Seconds part, const StepTime& s) { return s.total.value() > 0 ? part / s.total : 0.0; }

// Exposed tensor- and data-parallel communication: the collectives that cross the node's GPU
// link on every step (A12's "communication overhead").
double TpDpShare(const StepTime& s) { return Share(s.tp_comm + s.dp_comm, s); }

double AllCommShare(const StepTime& s) {
  return Share(s.tp_comm + s.dp_comm + s.pp_comm + s.ep_comm, s);
}

bool IsLora(TrainMethod m) { return m == TrainMethod::kLora || m == TrainMethod::kQlora; }

// What one token or sample of the job's input occupies on disk, and how that is known.
struct InputForm {
  double bytes = 0;
  bool per_token = true;
  std::string basis;
};

// Tokenised text is read as token ids: Megatron's indexed datasets store uint16 ids for
// vocabularies under 65,500 and int32 otherwise (megatron/core/datasets/indexed_dataset.py,
// DType.optimal_dtype). Images are read as JPEG: ImageNet-1k's 1,281,167 training images take
// about 140 GB, ~110 KB each (the ILSVRC2012 train tar).
constexpr double kJpegBytesPerImage = 110e3;

InputForm InputFormFor(const TrainJobSpec& job) {
  InputForm f;
  if (job.dataset.value() > 0 && job.tokens > 0) {
    f.bytes = job.dataset.value() / job.tokens;
    f.basis = fmt::format("dataset {:.0f} GB / {:.3g} tokens = {:.3g} B per token",
                          ToGB(job.dataset), job.tokens, f.bytes);
    return f;
  }
  if (job.dataset.value() > 0 && job.samples > 0) {
    f.bytes = job.dataset.value() / job.samples;
    f.per_token = false;
    f.basis = fmt::format("dataset {:.0f} GB / {:.3g} samples = {:.3g} KB per sample",
                          ToGB(job.dataset), job.samples, f.bytes / 1e3);
    return f;
  }
  if (job.model.is_transformer() && job.model.arch != ModelArch::kVit) {
    const bool small = job.model.vocab > 0 && job.model.vocab < 65500;
    f.bytes = small ? 2 : 4;
    f.basis = fmt::format("tokenised text, {} B token ids (vocabulary {})", small ? 2 : 4,
                          job.model.vocab);
    return f;
  }
  f.bytes = kJpegBytesPerImage;
  f.per_token = false;
  f.basis = "JPEG images, ~110 KB each (ImageNet-1k average)";
  return f;
}

}  // namespace

Bytes TrainingCheckpointBytes(const TrainJobSpec& job) {
  if (IsLora(job.method)) {
    return Bytes(
        static_cast<double>(LoraParams(job.model, job.lora_rank, LoraTargets::kAllLinear)) * 16);
  }
  return Bytes(static_cast<double>(CountParams(job.model).total) * 16.0);
}

SizingInput TrainingSizingInput(const TrainJobSpec& job, const InstanceType& inst,
                                const Accelerator& acc, int nodes, const Parallelism& par,
                                const TrainEval& eval) {
  SizingInput in;
  in.training = true;
  in.gpus_per_node = inst.accelerator_count;
  in.nodes = nodes;
  in.gpu_memory = acc.memory;
  in.model_files = Bytes(static_cast<double>(CountParams(job.model).total) * 2.0);
  in.checkpoint = TrainingCheckpointBytes(job);
  in.dataset = job.dataset;
  in.host_offload_per_gpu = eval.memory.host_offload;
  const InputForm form = InputFormFor(job);
  in.token_input = form.per_token;
  // Input rate: bytes per sample (or token) of the dataset on disk, or of the data's form when
  // the job does not give its size, times the step's rate.
  if (eval.step.valid) {
    if (form.per_token) {
      in.data_feed = BytesPerSec(form.bytes * eval.step.tokens_per_s_per_gpu * par.gpus() / nodes);
    } else {
      in.data_feed = BytesPerSec(form.bytes * eval.step.samples_per_s / nodes);
    }
    in.data_feed_basis = form.basis;
    if (nodes > 1 && eval.step.total.value() > 0) {
      const StepTime& st = eval.step;
      in.exposed_comm_share = (st.dp_comm + st.pp_comm + st.ep_comm).value() / st.total.value();
    }
  }
  return in;
}

std::string SmallCardForcedBy(const TrainFacts& f, const TrainJob& job, const Calibration& cal) {
  if (f.accelerator->memory >= kSmallCardLimit || !f.eval->fits) return {};
  const HardwareView hw = HardwareFromInstance(*f.instance, *f.accelerator, f.nodes);
  bool recompute = false, accumulation = false;
  if (f.opt.recompute != Recompute::kNone) {
    TrainMemoryOptions o = f.opt;
    o.recompute = Recompute::kNone;
    o.notes = false;
    recompute = !EvaluateTraining(*f.model, f.par, o, job, hw, cal, f.headroom).fits;
  }
  const int accum = f.opt.num_microbatches;
  if (accum > 1) {
    TrainMemoryOptions o = f.opt;
    o.micro_batch *= 2;
    o.num_microbatches = std::max(1, accum / 2);
    o.notes = false;
    accumulation = !EvaluateTraining(*f.model, f.par, o, job, hw, cal, f.headroom).fits;
  }
  std::string by;
  if (recompute) by = fmt::format("{} recompute", RecomputeName(f.opt.recompute));
  if (recompute && accumulation) by += " and ";
  if (accumulation) {
    by += fmt::format("gradient accumulation x{} at micro-batch {}", accum, f.opt.micro_batch);
  }
  return by;
}

std::optional<Finding> MemoryHeadroomRule(const TrainFacts& f) {
  const Bytes usable = f.accelerator->Usable();
  const Bytes used = f.eval->memory.Total();
  const double frac = used / usable;
  if (frac <= f.headroom * kHeadroomWarnFraction) return std::nullopt;
  const MemoryBreakdown& m = f.eval->memory;
  const std::string terms = fmt::format(
      "weights {:.1f} + master {:.1f} + grads {:.1f} + optimizer {:.1f} + activations {:.1f} "
      "+ logits {:.1f} + runtime {:.1f} GiB",
      ToGiB(m.weights), ToGiB(m.master_weights), ToGiB(m.gradients), ToGiB(m.optimizer + m.adapter),
      ToGiB(m.activations), ToGiB(m.logits),
      ToGiB(m.cuda_context + m.nccl_buffers + m.allocator_slack));
  const char* where = frac > 1 ? "it does not fit" : frac > f.headroom ? "over" : "close to";
  // The fixes this layout has not taken yet.
  std::vector<std::string> fixes;
  if (f.par.dp > 1 && f.par.zero_stage < 3)
    fixes.emplace_back("shard model states (ZeRO-3 / FSDP)");
  if (f.opt.recompute != Recompute::kFull) fixes.emplace_back("recompute activations");
  if (f.opt.micro_batch > 1) fixes.emplace_back("lower the micro-batch");
  if ((f.opt.optimizer == Optimizer::kAdamW || f.opt.optimizer == Optimizer::kAdam) &&
      m.optimizer.value() > 0.2 * used.value()) {
    fixes.emplace_back("an 8-bit optimizer (adamw-8bit)");
  }
  std::string fix;
  for (const auto& x : fixes) fix += x + ", ";
  fix += (fixes.empty() ? "use " : "or use ") +
         std::string("a larger-memory GPU (`gpuplan memory` shows each term)");
  return Finding{
      frac > 1 ? Severity::kError : Severity::kWarning, "B5-memory-headroom",
      fmt::format("memory at {:.0f}% of the GPU, {} the {:.0f}% headroom rule (B5): {:.1f} GiB "
                  "per GPU ({}) of {:.1f} GiB usable on {}; real use runs 20-30% above theory",
                  Pct(frac), frac > 1 ? fmt::format("{}; over", where) : where, Pct(f.headroom),
                  ToGiB(used), terms, ToGiB(usable), f.accelerator->id),
      fix};
}

std::optional<Finding> PcieMultiGpuRule(const TrainFacts& f, std::optional<double> nvlink_share) {
  const IntraNodeLink l = f.instance->intra_node_link;
  if (f.instance->accelerator_count <= 1) return std::nullopt;
  if (l != IntraNodeLink::kPcie && l != IntraNodeLink::kNone) return std::nullopt;
  if (f.par.tp <= 1 && f.par.dp <= 1) return std::nullopt;
  const double share = TpDpShare(f.eval->step);
  if (share < kMaterialCommShare) return std::nullopt;
  std::string nvlink = "; NVLink machines cut it";
  if (nvlink_share && std::abs(*nvlink_share - share) > 0.005) {
    nvlink = fmt::format("; with NVLink on the same GPUs it would be {:.0f}%", Pct(*nvlink_share));
  } else if (nvlink_share) {
    nvlink = fmt::format("; {} has no NVLink, so an NVLink GPU is the fix", f.accelerator->id);
  }
  return Finding{
      share >= kSevereCommShare ? Severity::kError : Severity::kWarning, "A12-pcie-multi-gpu",
      fmt::format("multi-GPU training over PCIe only: exposed communication is {:.0f}% of the "
                  "step{} (guide A12, B8: ~40% on PCIe vs ~15% on NVLink for 8 x A100 on a 6.7B "
                  "model)",
                  Pct(share), nvlink),
      "train multi-GPU on NVLink/NVSwitch machines (p4d/p5, ND A100/H100, A3) (guide B8)"};
}

std::optional<Finding> MultiNodeRdmaRule(const TrainFacts& f) {
  if (f.nodes <= 1 || f.instance->inter_node_fabric != InterNodeFabric::kNone) return std::nullopt;
  const InstanceType& i = *f.instance;
  const double gbit = (i.inter_node_bw ? *i.inter_node_bw : i.network).value() / 1e9;
  return Finding{
      Severity::kError, "A13-multi-node-rdma",
      fmt::format(
          "{} nodes without RDMA (EFA/InfiniBand/RoCE): gradients cross {} TCP; exposed "
          "data-parallel communication is {:.0f}% of the {:.2f} s step (guide A13, B8)",
          f.nodes,
          gbit > 0 ? fmt::format("{:.0f} Gbit/s", gbit) : std::string("an unspecified network"),
          Pct(Share(f.eval->step.dp_comm, f.eval->step)), f.eval->step.total.value()),
      "use instances with RDMA (EFA, InfiniBand, RoCE) in one placement group, or train on one "
      "node"};
}

std::optional<Finding> SameZoneRule(const TrainFacts& f) {
  if (f.nodes <= 1) return std::nullopt;
  std::vector<std::string> zones;
  for (const auto& z : f.zones) {
    if (std::find(zones.begin(), zones.end(), z) == zones.end()) zones.push_back(z);
  }
  if (zones.size() == 1) return std::nullopt;
  if (zones.empty()) {
    return Finding{Severity::kInfo, "A13-same-zone",
                   "multi-node: place all nodes in one availability zone / placement group "
                   "(guide A13: latency under 5 us)",
                   "place all nodes in one availability zone and one placement group "
                   "(`gpuplan check` checks the zones a setup lists: `zones: [us-east-1a]`)"};
  }
  return Finding{
      Severity::kError, "A13-same-zone",
      fmt::format("{} nodes spread over {} zones ({}): cross-zone latency is far above the 5 us "
                  "the guide asks for, and cross-zone traffic is billed (guide A13, B8: no "
                  "cross-zone training)",
                  f.nodes, zones.size(), fmt::join(zones, ", ")),
      "place all nodes in one availability zone and one placement group"};
}

std::optional<Finding> SpotCheckpointRule(const TrainFacts& f, const Calibration& cal) {
  if (!f.spot || f.checkpoint_interval_hours > 0) return std::nullopt;
  const double rate = cal.Get("spot_interruptions_per_node_hour", 0.02) * f.nodes;
  const double hours = f.eval->job_seconds / 3600;
  return Finding{
      Severity::kError, "A15-spot-checkpoint",
      fmt::format("spot without checkpoints: at {:.3f} interruptions per hour for {} node(s) "
                  "(calibration spot_interruptions_per_node_hour), an interruption loses the run "
                  "so far{} (guide A15)",
                  rate, f.nodes,
                  hours > 0 ? fmt::format("; over the {:.0f} h run that is {:.1f} interruptions",
                                          hours, rate * hours)
                            : std::string()),
      "checkpoint every ~1 h (or 1000 steps) to local NVMe, sync to object storage, and resume "
      "on restart (`checkpoint_every: 1h`); or use on-demand"};
}

std::optional<Finding> DatasetRamRule(const TrainFacts& f) {
  const Bytes ram = f.instance->ram;
  if (ram.value() <= 0 || f.dataset.value() <= 0) return std::nullopt;
  // The dataset term of B6 alone: SizeHost's guide-B RAM with no GPU memory term.
  SizingInput in;
  in.training = true;
  in.gpus_per_node = f.instance->accelerator_count;
  in.nodes = f.nodes;
  in.dataset = f.dataset;
  const Bytes need = SizeHost(SizingPolicy::kGuideB, in).ram;
  if (ram >= need) return std::nullopt;
  // Without the page cache every epoch re-reads the dataset from storage. That costs nothing
  // when the node's storage reads faster than the step consumes data (the host check's
  // storage_bw item, with its rate known): then B6's rule is not a pitfall here.
  const auto storage = std::find_if(f.host.begin(), f.host.end(),
                                    [](const HostFinding& h) { return h.item == "storage_bw"; });
  if (storage != f.host.end() && storage->needed > 0 && storage->has >= storage->needed)
    return std::nullopt;
  return Finding{
      Severity::kWarning, "B6-ram-dataset",
      fmt::format("dataset {:.0f} GB needs {:.0f} GB of RAM per node to cache (1.5 x, guide B6); "
                  "the node has {:.0f} GB: the page cache cannot hold it, so every epoch re-reads "
                  "it from storage{}",
                  ToGB(f.dataset), ToGB(need), ToGB(ram),
                  storage == f.host.end() || storage->needed <= 0 ? std::string()
                  : storage->ok
                      // The host check's "unknown": the catalog has no local-storage figure.
                      ? fmt::format(" at the {:.1f} GB/s the data loaders need; this shape's "
                                    "local storage is not recorded (network storage reads about "
                                    "{:.1f} GB/s): check that it streams that rate",
                                    storage->needed, storage->has)
                      : fmt::format(" at the {:.1f} GB/s the data loaders need, more than the "
                                    "node's storage reads (about {:.1f} GB/s)",
                                    storage->needed, storage->has)),
      "stream the dataset from local NVMe with a bounded prefetch, shard it across nodes, or use "
      "a host with more RAM"};
}

std::optional<Finding> JpegDecodeRule(const TrainFacts& f, const Calibration& cal) {
  const bool images = f.model->arch == ModelArch::kCnn || f.model->arch == ModelArch::kVit;
  const StepTime& s = f.eval->step;
  if (!images || !s.valid || s.samples_per_s <= 0 || f.instance->vcpus <= 0) return std::nullopt;
  const double per_core = cal.Get("jpeg_decode_images_per_core_s", 150);
  const double per_node = s.samples_per_s / f.nodes;
  const double cores = per_node / per_core;
  const double has = f.instance->vcpus / 2.0;
  if (cores <= has) return std::nullopt;
  return Finding{
      Severity::kWarning, "B17-jpeg-decode",
      fmt::format("JPEG decode of {:.0f} images/s per node needs about {:.0f} host cores at "
                  "{:.0f} images/s per core; the instance has {:.0f}: the GPUs will wait on data. "
                  "Decode on the GPU with NVIDIA DALI (nvJPEG) or train from preprocessed "
                  "(pre-decoded, resized) data (guide B17: low GPU utilisation, check data "
                  "loading)",
                  per_node, cores, per_core, has),
      "decode on the GPU with NVIDIA DALI (nvJPEG) or train from preprocessed (pre-decoded, "
      "resized) data"};
}

std::optional<Finding> ExposedCommunicationRule(const TrainFacts& f) {
  const double share = AllCommShare(f.eval->step);
  if (share < kSevereCommShare) return std::nullopt;
  return Finding{Severity::kWarning, "A12-exposed-communication",
                 fmt::format("exposed communication is {:.0f}% of each step (tensor {:.0f}%, "
                             "data {:.0f}%, pipeline {:.0f}%, expert {:.0f}%) (guide A12)",
                             Pct(share), Pct(Share(f.eval->step.tp_comm, f.eval->step)),
                             Pct(Share(f.eval->step.dp_comm, f.eval->step)),
                             Pct(Share(f.eval->step.pp_comm, f.eval->step)),
                             Pct(Share(f.eval->step.ep_comm, f.eval->step))),
                 "a faster link (NVLink within a node, RDMA between nodes), fewer nodes, or a "
                 "layout that communicates less (lower tp, ZeRO stage 1-2 instead of 3)"};
}

std::optional<Finding> PipelineBubbleRule(const TrainFacts& f) {
  const StepTime& st = f.eval->step;
  const double share = Share(st.bubble, st);
  if (f.par.pp <= 1 || share < kSevereBubbleShare) return std::nullopt;
  return Finding{
      Severity::kWarning, "pipeline-bubble",
      fmt::format("the pipeline bubble is {:.0f}% of each step: {} stages run {} micro-batch(es) "
                  "per step, so (pp - 1) / micro-batches of the step idles (Narayanan et al. 2021)",
                  Pct(share), f.par.pp, st.num_microbatches),
      fmt::format("give each pipeline at least {} micro-batches per step (a larger global batch, "
                  "or fewer data-parallel replicas), or fewer pipeline stages or GPUs",
                  4 * f.par.pp)};
}

const char* HostRuleId(const std::string& item) {
  if (item == "cpu") return "A4-host-cpu";
  if (item == "ram") return "A5-host-ram";
  if (item == "system_disk" || item == "data_disk") return "A6-host-disk";
  if (item == "storage_bw") return "A9-host-storage-read";
  if (item == "network") return "B8-host-network";
  return "host";
}

std::vector<Finding> HostRules(const TrainFacts& f) {
  std::vector<Finding> out;
  for (const HostFinding& h : f.host) {
    if (h.ok || h.waived) continue;
    if (h.item == "cpu" && f.instance->vcpus <= 0) continue;        // not known
    if (h.item == "ram" && f.instance->ram.value() <= 0) continue;  // not known
    // No RDMA fabric between nodes is A13-multi-node-rdma's finding, with the step's numbers.
    if (h.item == "network" && f.instance->inter_node_fabric == InterNodeFabric::kNone) continue;
    std::string fix = "pick a host with more of it (docs/sizing.md)";
    if (h.item == "cpu") fix = "pick a host with more cores, or fewer data-loader workers per GPU";
    if (h.item == "ram") fix = "pick a host with more RAM";
    out.push_back({Severity::kWarning, HostRuleId(h.item), h.text, std::move(fix)});
  }
  return out;
}

std::optional<Finding> SmallCardRule(const TrainFacts& f, const std::string& forced_by,
                                     const std::optional<LargerCard>& larger) {
  if (forced_by.empty() || !larger || larger->own_cost <= 0) return std::nullopt;
  if (larger->memory.value() < kLargerCardMemoryRatio * f.accelerator->memory.value()) {
    return std::nullopt;
  }
  if (larger->cost > (1 - kLargerCardMinSaving) * larger->own_cost) return std::nullopt;
  return Finding{
      Severity::kWarning, "A3-small-gpu-forced",
      fmt::format("{:.0f} GiB {} needs {} to fit; this setup costs {:.2f} {}, while {} would "
                  "cost {:.2f} ({:.0f}% less) (guide A3: one A100 80GB out-produces 4 x RTX 4090)",
                  ToGiB(f.accelerator->memory), f.accelerator->id, forced_by, larger->own_cost,
                  larger->cost_unit, larger->description, larger->cost,
                  Pct(1 - larger->cost / larger->own_cost)),
      "train on the larger-memory GPU; keep small cards for development and serving"};
}

bool IsTrainingClass(const InstanceType& inst) {
  const IntraNodeLink l = inst.intra_node_link;
  return (l == IntraNodeLink::kNvlink || l == IntraNodeLink::kNvswitch) &&
         inst.inter_node_fabric != InterNodeFabric::kNone;
}

std::optional<Finding> TrainingInstanceServingRule(const InstanceType& inst,
                                                   const std::string& setup, double own_per_hour,
                                                   const std::string& load,
                                                   const std::optional<CheaperServing>& cheaper,
                                                   const std::string& currency) {
  if (!IsTrainingClass(inst) || !cheaper || cheaper->per_hour <= 0) return std::nullopt;
  if (own_per_hour < kServingCostRatio * cheaper->per_hour) return std::nullopt;
  return Finding{
      Severity::kWarning, "B1-training-instance-serving",
      fmt::format("{} is a training-class machine ({} + {}) at {:.2f} {}/h ({:.0f}/month) for "
                  "serving{}; {} carries the load at {:.2f} {}/h ({:.0f}/month, {:.1f}x cheaper) "
                  "(guide B1: 50k vs <8k USD/month)",
                  setup, IntraNodeLinkName(inst.intra_node_link),
                  InterNodeFabricName(inst.inter_node_fabric), own_per_hour, currency,
                  own_per_hour * 730, load.empty() ? "" : ": " + load, cheaper->description,
                  cheaper->per_hour, currency, cheaper->per_hour * 730,
                  own_per_hour / cheaper->per_hour),
      "serve on inference instances (`gpuplan plan infer`); keep the training machine for "
      "training"};
}

std::optional<Finding> MarketplaceRule(const InstanceType& inst, int machines) {
  if (!IsMarketplace(inst)) return std::nullopt;
  return Finding{
      Severity::kWarning, "marketplace-listing",
      fmt::format("{} {} is a marketplace listing, not the provider's own SKU: the host set its "
                  "price (as of {}) and may change or withdraw it, the capacity is that host's "
                  "machines ({} needed), and no provider SLA covers their uptime",
                  inst.cloud, inst.instance_type,
                  inst.as_of.empty() ? "an undated snapshot" : inst.as_of, machines),
      "before launch, check the listing's current price and the host's reliability score, and "
      "keep checkpoints and weights on storage off the host; `gpuplan plan` with "
      "--no-marketplace (constraints.marketplace: false) ranks the providers' own rows only"};
}

std::vector<Finding> TrainingPitfalls(const TrainFacts& f, const Calibration& cal,
                                      std::optional<double> nvlink_share) {
  std::vector<Finding> out;
  auto add = [&](std::optional<Finding> x) {
    if (x) out.push_back(std::move(*x));
  };
  add(MemoryHeadroomRule(f));
  if (f.eval->step.valid) {
    add(PcieMultiGpuRule(f, nvlink_share));
    add(MultiNodeRdmaRule(f));
  }
  // The general communication rule speaks only when no link rule above explains the share.
  const bool link_rule = std::any_of(out.begin(), out.end(), [](const Finding& x) {
    return x.rule == "A12-pcie-multi-gpu" || x.rule == "A13-multi-node-rdma";
  });
  add(SameZoneRule(f));
  add(MarketplaceRule(*f.instance, f.nodes));
  add(SpotCheckpointRule(f, cal));
  add(DatasetRamRule(f));
  if (f.eval->step.valid) {
    add(JpegDecodeRule(f, cal));
    if (!link_rule) add(ExposedCommunicationRule(f));
    add(PipelineBubbleRule(f));
  }
  for (Finding& h : HostRules(f)) out.push_back(std::move(h));
  return out;
}

}  // namespace gpuplan
