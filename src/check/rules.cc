// `gpuplan check`: the pitfall rules of the guides (docs/check.md). Every number a finding
// quotes comes from the library's prediction path: EvaluateTraining and BestTrainLayout for
// memory, step time and communication; SizeHost/CheckHost for the host; EstimateLlmServing /
// EstimateForwardThroughput and PlanServing for serving.
#include "gpuplan/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "base/strings.h"
#include "check/check_internal.h"
#include "gpuplan/job.h"
#include "gpuplan/plan.h"
#include "gpuplan/serve.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/sizing.h"

namespace gpuplan {

using check_internal::Resolve;
using check_internal::Resolved;
using check_internal::ShapeTraining;
using check_internal::TrainShape;
using check_internal::UsdPerHour;
using internal::Join;

// ---------------------------------------------------------------------------------------------
// Rules.

namespace {

// A3's "small card": under the 64 GiB class (RTX 4090 24 GB, A100 40 GB, L40S 48 GB), where
// training is forced into recompute or accumulation that an 80 GB-class card avoids.
constexpr Bytes kSmallCardLimit = GiB(64);

double Pct(double x) { return 100.0 * x; }

Seconds ExposedComm(const StepTime& s) { return s.tp_comm + s.dp_comm + s.pp_comm + s.ep_comm; }

double CommShare(const StepTime& s) { return s.total.value() > 0 ? ExposedComm(s) / s.total : 0.0; }

std::string HwName(const Resolved& r, int nodes) {
  const std::string shape = fmt::format("{} x {}", r.gpus(), r.acc->id);
  const std::string per = r.custom ? "custom " + shape : r.inst.instance_type + " (" + shape + ")";
  return nodes > 1 ? fmt::format("{} x {}", nodes, per) : per;
}

class Rules {
 public:
  Rules(const Setup& s, const Catalog& cat, const Calibration& cal, const Resolved& r)
      : s_(s), cat_(cat), cal_(cal), r_(r) {}

  std::vector<Finding> Run() {
    if (s_.train) Training(*s_.train);
    if (s_.serve) Serving(*s_.serve);
    std::stable_sort(out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
      return static_cast<int>(a.severity) < static_cast<int>(b.severity);
    });
    return std::move(out_);
  }

 private:
  void Add(Severity sev, std::string rule, std::string message, std::string fix) {
    out_.push_back({sev, std::move(rule), std::move(message), std::move(fix)});
  }

  HardwareView Hw(const InstanceType& inst) const {
    return HardwareFromInstance(inst, *r_.acc, s_.nodes);
  }

  // ---- training --------------------------------------------------------------------------
  void Training(const SetupTraining& t) {
    auto shape_r = ShapeTraining(t, r_.gpus() * s_.nodes);
    if (!shape_r) return;  // ValidateSetup reports it
    const TrainShape sh = *shape_r;
    const HardwareView hw = Hw(r_.inst);
    const TrainEval ev = EvaluateTraining(t.model, sh.par, sh.opt, sh.job, hw, cal_, s_.headroom);
    const double cap = r_.acc->memory.value();
    const double used = ev.memory.Total().value();
    const MemoryBreakdown& m = ev.memory;
    const std::string terms = fmt::format(
        "weights {:.1f} + master {:.1f} + grads {:.1f} + optimizer {:.1f} + activations {:.1f} "
        "+ logits {:.1f} + runtime {:.1f} GiB",
        ToGiB(m.weights), ToGiB(m.master_weights), ToGiB(m.gradients),
        ToGiB(m.optimizer + m.adapter), ToGiB(m.activations), ToGiB(m.logits),
        ToGiB(m.cuda_context + m.nccl_buffers + m.allocator_slack));
    const std::string layout =
        fmt::format("tp {} pp {} dp {} ZeRO-{} micro-batch {} x {} tokens, recompute {}", sh.par.tp,
                    sh.par.pp, sh.par.dp, sh.par.zero_stage, sh.opt.micro_batch, sh.opt.seq_len,
                    RecomputeName(sh.opt.recompute));
    // B5: memory over the headroom.
    if (used > s_.headroom * cap) {
      Add(used > cap ? Severity::kError : Severity::kWarning, "B5-memory-headroom",
          fmt::format("predicted {:.1f} GiB per GPU ({}) is {:.0f}% of the {:.0f} GiB {}{}; "
                      "guide B5: real use runs 20-30% above theory, stay under {:.0f}% "
                      "({:.1f} GiB) [{}]",
                      ToGiB(ev.memory.Total()), terms, Pct(used / cap), ToGiB(r_.acc->memory),
                      r_.acc->id, used > cap ? ": it does not fit" : "", Pct(s_.headroom),
                      ToGiB(r_.acc->memory) * s_.headroom, layout),
          "shard model states (ZeRO-3 / FSDP), recompute activations, lower the micro-batch, "
          "or use a larger-memory GPU (`gpuplan memory` shows each term)");
    }
    if (!ev.step.valid) {
      Add(Severity::kError, "layout-invalid",
          "the layout cannot run: " + ev.step.reason + " [" + layout + "]",
          "change tp/pp/micro_batch (`gpuplan plan train` finds a layout)");
      return;
    }
    const double share = CommShare(ev.step);
    PcieOnly(t, sh, ev, share);
    MultiNode(ev);
    SpotCheckpoint(ev);
    SmallCard(t, sh, ev);
    SmallBatch(t, sh, ev);
    Host(t);
  }

  // A12 / B8: multi-GPU training over PCIe only.
  void PcieOnly(const SetupTraining&, const TrainShape& sh, const TrainEval& ev, double share) {
    const IntraNodeLink l = r_.inst.intra_node_link;
    if (r_.gpus() <= 1 || (l != IntraNodeLink::kPcie && l != IntraNodeLink::kNone)) return;
    if (sh.par.gpus() <= 1) return;
    InstanceType nv = r_.inst;
    nv.intra_node_link = IntraNodeLink::kNvlink;
    const TrainEval alt =
        EvaluateTraining(s_.train->model, sh.par, sh.opt, sh.job, Hw(nv), cal_, s_.headroom);
    const double alt_share = CommShare(alt.step);
    std::string nvlink =
        alt.step.valid && std::abs(alt_share - share) > 0.005
            ? fmt::format("; with NVLink on the same GPUs it would be {:.0f}%", Pct(alt_share))
            : fmt::format("; {} has no NVLink, so an NVLink GPU is the fix", r_.acc->id);
    Add(share >= 0.3 ? Severity::kError : Severity::kWarning, "A12-pcie-multi-gpu",
        fmt::format("{} GPUs train over PCIe only ({:.0f} GB/s per GPU): exposed communication "
                    "is {:.0f}% of the {:.2f} s step{} (guide A12: ~40% on PCIe vs ~15% on "
                    "NVLink for 8 x A100 on a 6.7B model)",
                    sh.par.gpus(), Hw(r_.inst).intra_bw.value() / 1e9, Pct(share),
                    ev.step.total.value(), nvlink),
        "train multi-GPU on NVLink/NVSwitch machines (p4d/p5, ND A100/H100, A3) (guide B8)");
  }

  // A13 / B8: multi-node without RDMA, nodes in different zones.
  void MultiNode(const TrainEval& ev) {
    if (s_.nodes <= 1) return;
    if (r_.inst.inter_node_fabric == InterNodeFabric::kNone) {
      const double gbit =
          (r_.inst.inter_node_bw ? *r_.inst.inter_node_bw : r_.inst.network).value() / 1e9;
      Add(Severity::kError, "A13-multi-node-rdma",
          fmt::format(
              "{} nodes without RDMA (EFA/InfiniBand/RoCE): gradients cross {} TCP; "
              "exposed data-parallel communication is {:.0f}% of the {:.2f} s step "
              "(guide A13, B8)",
              s_.nodes,
              gbit > 0 ? fmt::format("{:.0f} Gbit/s", gbit) : std::string("an unspecified network"),
              Pct(ev.step.dp_comm / ev.step.total), ev.step.total.value()),
          "use instances with RDMA (EFA, InfiniBand, RoCE) in one placement group, or train on "
          "one node");
    }
    std::vector<std::string> zones;
    for (const auto& z : s_.zones) {
      if (std::find(zones.begin(), zones.end(), z) == zones.end()) zones.push_back(z);
    }
    if (zones.size() > 1) {
      Add(Severity::kError, "A13-same-zone",
          fmt::format("{} nodes spread over {} zones ({}): cross-zone latency is far above the "
                      "5 us the guide asks for, and cross-zone traffic is billed (guide A13, B8: "
                      "no cross-zone training)",
                      s_.nodes, zones.size(), Join(zones)),
          "place all nodes in one availability zone and one placement group");
    } else if (zones.empty()) {
      Add(Severity::kInfo, "A13-same-zone",
          fmt::format("{} nodes, zones not given: they must share one availability zone "
                      "(guide A13: latency under 5 us)",
                      s_.nodes),
          "list the zones (`zones: [us-east-1a]`) to have this checked");
    }
  }

  // A15: spot without checkpointing.
  void SpotCheckpoint(const TrainEval& ev) {
    if (!s_.spot) return;
    if (s_.checkpoint_interval_hours && *s_.checkpoint_interval_hours > 0) return;
    const double rate = cal_.Get("spot_interruptions_per_node_hour", 0.02) * s_.nodes;
    std::string run = ev.job_seconds > 0
                          ? fmt::format("; over the {:.0f} h run that is {:.1f} interruptions",
                                        ev.job_seconds / 3600, rate * ev.job_seconds / 3600)
                          : std::string();
    Add(Severity::kError, "A15-spot-checkpoint",
        fmt::format("spot capacity without checkpoints: at {:.3f} interruptions per hour for {} "
                    "node(s) (calibration spot_interruptions_per_node_hour), each one loses the "
                    "run so far{} (guide A15)",
                    rate, s_.nodes, run),
        "checkpoint every ~1 h (or 1000 steps) to local NVMe, sync to object storage, and "
        "resume on restart (`checkpoint_every: 1h`); or use on-demand");
  }

  // A3: a small card forced into recompute / accumulation when a larger card is cheaper.
  void SmallCard(const SetupTraining& t, const TrainShape& sh, const TrainEval& ev) {
    if (!ev.fits || ev.step.samples_per_s <= 0 || !r_.price_usd) return;
    if (r_.acc->memory >= kSmallCardLimit) return;
    bool forced_recompute = false, forced_accum = false;
    if (sh.opt.recompute != Recompute::kNone) {
      TrainMemoryOptions o = sh.opt;
      o.recompute = Recompute::kNone;
      forced_recompute =
          !EvaluateTraining(t.model, sh.par, o, sh.job, Hw(r_.inst), cal_, s_.headroom).fits;
    }
    if (sh.accumulation > 1) {
      TrainMemoryOptions o = sh.opt;
      o.micro_batch *= 2;
      o.num_microbatches = std::max(1, sh.accumulation / 2);
      forced_accum =
          !EvaluateTraining(t.model, sh.par, o, sh.job, Hw(r_.inst), cal_, s_.headroom).fits;
    }
    if (!forced_recompute && !forced_accum) return;
    const double tokens_per_sample = sh.opt.seq_len;
    const double my_cost =
        *r_.price_usd * s_.nodes / 3600.0 / (ev.step.samples_per_s * tokens_per_sample) * 1e6;
    // Candidates: one machine of a GPU with >= 1.5x the memory and no more GPUs in all.
    struct Key {
      std::string acc;
      int count;
      IntraNodeLink intra;
      bool operator<(const Key& o) const {
        return std::tie(acc, count, intra) < std::tie(o.acc, o.count, o.intra);
      }
    };
    std::map<Key, std::pair<const InstanceType*, double>> cheapest;
    for (const auto& i : cat_.instances) {
      if (i.is_cpu_only() || i.accelerator_count > r_.gpus() * s_.nodes) continue;
      if (i.accelerator.rfind("Inferentia", 0) == 0) continue;
      const Accelerator* a = cat_.FindAccelerator(i.accelerator);
      if (a == nullptr || a->memory.value() < 1.5 * r_.acc->memory.value()) continue;
      auto p = UsdPerHour(cat_, i, s_.spot);
      if (!p) continue;
      Key k{i.accelerator, i.accelerator_count, i.intra_node_link};
      auto it = cheapest.find(k);
      if (it == cheapest.end() || *p < it->second.second) cheapest[k] = {&i, *p};
    }
    TrainMemoryOptions base = sh.opt;
    base.notes = false;
    TrainJob job = sh.job;
    double best_cost = my_cost;
    std::string best_desc;
    for (const auto& [k, v] : cheapest) {
      const Accelerator& a = *cat_.FindAccelerator(k.acc);
      const HardwareView hw = HardwareFromInstance(*v.first, a, 1);
      auto choice = BestTrainLayout(t.model, base, job, hw, cal_, s_.headroom, LayoutConstraints{});
      if (!choice || choice->eval.step.samples_per_s <= 0) continue;
      const double c =
          v.second / 3600.0 / (choice->eval.step.samples_per_s * tokens_per_sample) * 1e6;
      if (c < best_cost) {
        best_cost = c;
        best_desc = fmt::format(
            "{} {} ({} x {}, {:.0f} GiB each, micro-batch {}, recompute {}) at ${:.2f}/h",
            v.first->cloud, v.first->instance_type, k.count, k.acc, ToGiB(a.memory),
            choice->opt.micro_batch, RecomputeName(choice->opt.recompute), v.second);
      }
    }
    if (best_desc.empty() || best_cost > 0.9 * my_cost) return;
    Add(Severity::kWarning, "A3-small-gpu-forced",
        fmt::format("{} GiB {} needs {}{}{} to fit; this setup costs ${:.2f} per 1M training "
                    "tokens ({:.0f} tokens/s at ${:.2f}/h), while {} would cost ${:.2f} "
                    "({:.0f}% less) (guide A3: one A100 80GB out-produces 4 x RTX 4090)",
                    ToGiB(r_.acc->memory), r_.acc->id,
                    forced_recompute ? fmt::format("{} recompute", RecomputeName(sh.opt.recompute))
                                     : std::string(),
                    forced_recompute && forced_accum ? " and " : "",
                    forced_accum ? fmt::format("gradient accumulation x{} at micro-batch {}",
                                               sh.accumulation, sh.opt.micro_batch)
                                 : std::string(),
                    my_cost, ev.step.samples_per_s * tokens_per_sample, *r_.price_usd * s_.nodes,
                    best_desc, best_cost, Pct(1 - best_cost / my_cost)),
        "train on the larger-memory GPU; keep small cards for development and serving");
  }

  // B17: the micro-batch is too small for the GPU (a larger one fits and is faster).
  void SmallBatch(const SetupTraining& t, const TrainShape& sh, const TrainEval& ev) {
    if (ev.step.tokens_per_s_per_gpu <= 0) return;
    double best = ev.step.tokens_per_s_per_gpu;
    double best_mfu = ev.step.mfu;
    int best_mb = sh.opt.micro_batch;
    for (int f = 2; f <= 16; f *= 2) {
      if (sh.accumulation % f != 0) break;  // same global batch
      TrainMemoryOptions o = sh.opt;
      o.micro_batch = sh.opt.micro_batch * f;
      o.num_microbatches = sh.accumulation / f;
      o.notes = false;
      const TrainEval e =
          EvaluateTraining(t.model, sh.par, o, sh.job, Hw(r_.inst), cal_, s_.headroom);
      if (!e.fits || !e.step.valid) break;
      if (e.step.tokens_per_s_per_gpu > best) {
        best = e.step.tokens_per_s_per_gpu;
        best_mfu = e.step.mfu;
        best_mb = o.micro_batch;
      }
    }
    if (best < 1.15 * ev.step.tokens_per_s_per_gpu) return;
    Add(Severity::kWarning, "B17-small-batch",
        fmt::format("micro-batch {} x {} tokens leaves the {} underused: {:.0f} tokens/s per GPU "
                    "at {:.0f}% MFU; micro-batch {} (same global batch {}, still within the "
                    "{:.0f}% memory headroom) reaches {:.0f} tokens/s at {:.0f}% MFU (+{:.0f}%) "
                    "(guide B17: too-small batch)",
                    sh.opt.micro_batch, sh.opt.seq_len, r_.acc->id, ev.step.tokens_per_s_per_gpu,
                    Pct(ev.step.mfu), best_mb, sh.job.global_batch, Pct(s_.headroom), best,
                    Pct(best_mfu), Pct(best / ev.step.tokens_per_s_per_gpu - 1)),
        fmt::format("raise micro_batch to {} and lower gradient accumulation to match", best_mb));
  }

  // A9 / B6 / B7 and the host: storage kind and bandwidth, RAM for the dataset, CPU cores.
  void Host(const SetupTraining& t) {
    SizingInput in;
    in.training = true;
    in.gpus_per_node = r_.gpus();
    in.nodes = s_.nodes;
    in.gpu_memory = r_.acc->memory;
    in.model_files = InferenceWeightBytes(t.model, t.precision, std::nullopt, 1, 1);
    in.dataset = t.dataset;
    in.token_input = t.model.is_transformer() && t.model.arch != ModelArch::kVit;
    const HostNeeds guide_b = SizeHost(SizingPolicy::kGuideB, in);
    std::optional<StorageKind> kind = s_.hardware.storage;
    if (!kind && !r_.custom && r_.inst.local_nvme.value() > 0) kind = StorageKind::kNvme;
    const std::optional<BytesPerSec> bw = s_.hardware.storage_bw;
    const std::string need_bw = fmt::format("{} GPUs per node x 2 GB/s = {:.0f} GB/s", r_.gpus(),
                                            guide_b.storage_bw.value() / 1e9);
    if (kind == StorageKind::kHdd || kind == StorageKind::kNetwork) {
      const bool hdd = kind == StorageKind::kHdd;
      Add(hdd ? Severity::kError : Severity::kWarning, "A9-B6-training-storage",
          fmt::format("training reads from {} storage{}; the GPUs need {} (guide B7); {}",
                      StorageKindName(*kind),
                      bw ? fmt::format(" at {:.1f} GB/s", bw->value() / 1e9) : std::string(),
                      need_bw,
                      hdd ? "guide B6: an HDD (~100 MB/s) cannot feed GPUs"
                          : "guide A9: network storage gives 1-2 GB/s vs ~7 GB/s per local "
                            "NVMe drive"),
          "stage the dataset on local NVMe (RAID0 for bandwidth); keep network storage for "
          "checkpoint sync and serving");
    }
    if (bw) {
      if (*bw < guide_b.storage_bw) {
        Add(Severity::kWarning, "B7-storage-bandwidth",
            fmt::format("storage delivers {:.1f} GB/s; guide B7 asks for {}", bw->value() / 1e9,
                        need_bw),
            "add NVMe drives in RAID0 or cache the dataset locally");
      }
    } else {
      Add(Severity::kInfo, "B7-storage-bandwidth",
          fmt::format("storage bandwidth not given; guide B7 asks for {}", need_bw),
          "set hardware.storage_gbps to have it checked");
    }
    const bool ram_known = r_.inst.ram.value() > 0;
    if (ram_known && t.dataset.value() > 0) {
      // The dataset term of B6 alone: SizeHost's guide-B RAM with no GPU memory term.
      SizingInput data_only = in;
      data_only.gpu_memory = Bytes(0);
      const Bytes need = SizeHost(SizingPolicy::kGuideB, data_only).ram;
      if (r_.inst.ram < need) {
        Add(Severity::kWarning, "B6-ram-dataset",
            fmt::format("{:.0f} GB RAM per node is under 1.5 x the {:.0f} GB dataset ({:.0f} GB): "
                        "the page cache cannot hold it and data loading swaps (guide B6)",
                        ToGB(r_.inst.ram), ToGB(t.dataset), ToGB(need)),
            "use a host with more RAM, shard the dataset across nodes, or stream it from "
            "local NVMe with a bounded prefetch");
      }
    }
    // CPU cores and RAM for the GPUs (gpuplan's default sizing policy, docs/sizing.md).
    const HostNeeds needs = SizeHost(SizingPolicy::kDefault, in);
    for (const HostFinding& f : CheckHost(needs, r_.inst)) {
      if (f.ok) continue;
      if (f.item == "cpu" && r_.inst.vcpus > 0) {
        Add(Severity::kWarning, "A4-host-cpu", f.text + " (guide A4: GPUs x 8-12 cores)",
            "pick a host with more cores, or fewer data-loader workers per GPU");
      } else if (f.item == "ram" && ram_known) {
        Add(Severity::kWarning, "A5-host-ram", f.text + " (guides A5/B6)",
            "pick a host with more RAM");
      }
    }
  }

  // ---- serving ---------------------------------------------------------------------------
  void Serving(const SetupServing& v) {
    const ComputeDevice dev = DeviceFromAccelerator(*r_.acc, cal_, r_.inst.intra_node_link);
    ServePerf perf;
    int tp = 1;
    if (v.model.is_decoder_llm()) {
      for (tp = 1; tp <= r_.gpus(); tp *= 2) {
        ServeSetup ss;
        ss.weight_precision = v.precision;
        ss.tp = tp;
        perf = EstimateLlmServing(v.model, ss, dev, v.input_len, v.output_len, 0, cal_);
        if (perf.fits) break;
      }
    } else {
      perf = EstimateForwardThroughput(v.model, v.precision, dev, v.input_len, 256, cal_);
    }
    if (!perf.fits || perf.samples_per_s <= 0) {
      Add(Severity::kError, "B5-memory-headroom",
          fmt::format("{} does not fit for serving on {} GPUs of {}: {}", v.model.name, r_.gpus(),
                      r_.acc->id, perf.why),
          "use more or larger GPUs per replica, or quantize the weights (int8/int4)");
      return;
    }
    tp = std::min(tp, r_.gpus());
    const int replicas = r_.gpus() / tp * s_.nodes;
    const double capacity = perf.samples_per_s * replicas;
    const double util = v.qps / capacity;
    const std::string cap_text = fmt::format(
        "{} replica(s) of {} GPU(s) carry {:.1f} req/s ({:.2f} req/s each at batch {}); the "
        "peak of {:.2f} req/s uses {:.0f}%",
        replicas, tp, capacity, perf.samples_per_s, perf.batch, v.qps, Pct(util));
    if (util > 1) {
      Add(Severity::kError, "serve-capacity", cap_text + ": the setup cannot carry the load",
          "add replicas or nodes (`gpuplan plan infer` sizes the fleet)");
    }
    TrainingInstanceServing(v, cap_text);
    if (v.load == LoadPattern::kVariable && !v.autoscaling) {
      Add(Severity::kWarning, "B12-autoscaling",
          fmt::format("variable load served by a fixed fleet: {}; off-peak the same GPUs idle "
                      "and are billed (guide B12: autoscaling saves 40-60%)",
                      cap_text),
          "autoscale (Kubernetes HPA: GPU utilization target 60%, scale-down window 300 s, at "
          "most 20% per 60 s; `gpuplan emit` writes one)");
    }
  }

  // B1: a training-class instance (NVLink/NVSwitch + RDMA fabric) serving a load that a much
  // cheaper deployment carries.
  void TrainingInstanceServing(const SetupServing& v, const std::string& cap_text) {
    if (r_.custom || !r_.price_usd) return;
    const IntraNodeLink l = r_.inst.intra_node_link;
    const bool training_class = (l == IntraNodeLink::kNvlink || l == IntraNodeLink::kNvswitch) &&
                                r_.inst.inter_node_fabric != InterNodeFabric::kNone;
    if (!training_class) return;
    ServeJobSpec job;
    job.model = v.model;
    job.weight_precision = v.precision;
    job.qps = v.qps;
    job.input_len = v.input_len;
    job.output_len = v.output_len;
    job.clouds = {r_.inst.cloud};
    job.top = 1;
    auto res = PlanServing(job, cat_, cal_);
    if (!res || res->plans.empty() || !res->plans.front().cost_per_hour) return;
    const ServePlan& p = res->plans.front();
    const double mine = *r_.price_usd * s_.nodes;
    const double best = *p.cost_per_hour;
    if (mine < 2 * best) return;
    Add(Severity::kWarning, "B1-training-instance-serving",
        fmt::format("{} is a training-class machine ({} + {}) at ${:.2f}/h (${:.0f}/month) for "
                    "serving: {}; {} x {} ({} x {} GPU(s)) carries the load at ${:.2f}/h "
                    "(${:.0f}/month, {:.1f}x cheaper) (guide B1: 50k vs <8k USD/month)",
                    HwName(r_, s_.nodes), IntraNodeLinkName(l),
                    InterNodeFabricName(r_.inst.inter_node_fabric), mine, mine * 730, cap_text,
                    p.instances, p.instance->instance_type, p.replicas, p.tp, best, best * 730,
                    mine / best),
        "serve on inference instances (`gpuplan plan infer`); keep the training machine for "
        "training");
  }

  const Setup& s_;
  const Catalog& cat_;
  const Calibration& cal_;
  const Resolved& r_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> CheckSetup(const Setup& setup, const Catalog& catalog,
                                const Calibration& cal) {
  if (Status st = ValidateSetup(setup, catalog); !st) {
    return {Finding{Severity::kError, "setup-invalid", st.error().ToString(),
                    "fix the setup file (docs/check.md)"}};
  }
  const Resolved r = *Resolve(setup, catalog);
  return Rules(setup, catalog, cal, r).Run();
}

}  // namespace gpuplan
