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
#include "gpuplan/pitfalls.h"
#include "gpuplan/plan.h"
#include "gpuplan/quant_preset.h"
#include "gpuplan/serve.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/sizing.h"

namespace gpuplan {

using check_internal::Resolve;
using check_internal::Resolved;
using check_internal::ShapeTraining;
using check_internal::TrainShape;
using check_internal::UsdPerHour;

// ---------------------------------------------------------------------------------------------
// Rules.

namespace {

double Pct(double x) { return 100.0 * x; }

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

  // ---- training ----------------------------------------------------------------------------
  void Training(const SetupTraining& t) {
    auto shape_r = ShapeTraining(t, r_.gpus() * s_.nodes);
    if (!shape_r) return;  // ValidateSetup reports it
    // The GPU has no tensor path for the training precision, or no bitsandbytes for QLoRA: no
    // layout runs it (TrainingUnsupported, as the planner skips it).
    if (const auto no = TrainingUnsupported(*r_.acc, t.precision, t.fp4_gemms, t.method)) {
      Add(Severity::kError, no->precision ? "train-precision" : "train-qlora-backend",
          fmt::format("{} cannot train this job: {}", r_.acc->id, no->why),
          no->instead + " on this accelerator, or rent one that runs the job as written");
      return;
    }
    const TrainShape sh = *shape_r;
    const HardwareView hw = Hw(r_.inst);
    const TrainEval ev = EvaluateTraining(t.model, sh.par, sh.opt, sh.job, hw, cal_, s_.headroom);
    // The facts the shared rules read (pitfalls.h): the same rules a plan's warnings come from.
    TrainJobSpec spec;
    spec.model = t.model;
    spec.method = t.method;
    spec.precision = t.precision;
    spec.fp4_gemms = t.fp4_gemms;
    spec.dataset = t.dataset;
    TrainFacts f;
    f.model = &t.model;
    f.method = t.method;
    f.instance = &r_.inst;
    f.accelerator = r_.acc;
    f.nodes = s_.nodes;
    f.par = sh.par;
    f.opt = sh.opt;
    f.eval = &ev;
    f.headroom = s_.headroom;
    f.spot = s_.spot;
    f.checkpoint_interval_hours = s_.checkpoint_interval_hours.value_or(0);
    f.dataset = t.dataset;
    f.zones = s_.zones;
    const SizingInput in = TrainingSizingInput(spec, r_.inst, *r_.acc, s_.nodes, sh.par, ev);
    f.host = CheckHost(SizeHost(SizingPolicy::kDefault, in), r_.inst);
    if (const std::optional<BytesPerSec> declared = s_.hardware.storage_bw) {
      // The setup states its storage's read bandwidth: the host check (and B6, which reads it)
      // judges that figure, not the one assumed from the storage kind.
      for (HostFinding& h : f.host) {
        if (h.item != "storage_bw") continue;
        h.has = declared->value() / 1e9;
        h.ok = h.has >= h.needed;
        h.text = fmt::format(
            "needs {} storage read, the setup declares {:.1f} GB/s: {}",
            ReadRateText(BytesPerSec(h.needed * 1e9)), h.has,
            h.ok ? "ok"
                 : "too slow: input will starve the GPUs; stage the data on local NVMe or use a "
                   "parallel file system");
      }
    }
    for (Finding& x : TrainingPitfalls(f, cal_, NvlinkShare(sh, ev))) out_.push_back(std::move(x));
    if (!ev.step.valid) {
      const std::string layout =
          fmt::format("tp {} pp {} dp {} ZeRO-{} micro-batch {} x {} tokens, recompute {}",
                      sh.par.tp, sh.par.pp, sh.par.dp, sh.par.zero_stage, sh.opt.micro_batch,
                      sh.opt.seq_len, RecomputeName(sh.opt.recompute));
      Add(Severity::kError, "layout-invalid",
          "the layout cannot run: " + ev.step.reason + " [" + layout + "]",
          "change tp/pp/cp/ep/micro_batch (`gpuplan plan train` finds a layout)");
      return;
    }
    // The setup names its framework and it does not run the layout as written (the
    // planner's FrameworkSupports; memory above is the generic layout's).
    if (t.framework != TrainFramework::kGeneric &&
        !FrameworkSupports(t.framework, sh.par, sh.opt) && AnyFrameworkSupports(sh.par, sh.opt)) {
      const auto other = FrameworkFor(TrainFramework::kGeneric, sh.par, sh.opt);
      Add(Severity::kWarning, "layout-framework",
          fmt::format("{} does not run this layout as written (tp {} pp {} ZeRO-{}, recompute "
                      "{}){}",
                      TrainFrameworkName(t.framework), sh.par.tp, sh.par.pp, sh.par.zero_stage,
                      RecomputeName(sh.opt.recompute),
                      other ? fmt::format("; {} does", TrainFrameworkName(*other)) : ""),
          "change the layout to one the framework runs (`gpuplan plan train --framework " +
              std::string(TrainFrameworkName(t.framework)) + "` finds one), or switch framework");
    }
    // A layout no framework runs as written (FrameworkSupports): the step time and memory
    // above are for a run nobody can launch.
    if (!AnyFrameworkSupports(sh.par, sh.opt)) {
      Add(Severity::kWarning, "layout-no-framework",
          fmt::format("no framework runs this layout as written (tp {} pp {} ZeRO-{}, recompute "
                      "{}): Megatron-Core shards at most the optimizer (ZeRO-1); FSDP, DeepSpeed "
                      "and the HF Trainer checkpoint whole layers (no selective recompute) and "
                      "DeepSpeed pipelines only with ZeRO 0-1; torchtitan shards fully (ZeRO-3) "
                      "or not at all",
                      sh.par.tp, sh.par.pp, sh.par.zero_stage, RecomputeName(sh.opt.recompute)),
          "e.g. full recompute with ZeRO-2/3 (FSDP, DeepSpeed), ZeRO <= 1 with selective "
          "recompute (Megatron-Core) or ZeRO-3 with it (torchtitan); `gpuplan plan train` "
          "finds a layout a framework runs");
    }
    SmallCard(t, sh, ev, f);
    SmallBatch(t, sh, ev);
    Storage(in);
  }

  // A12's comparison: the same layout's exposed TP+DP share with NVLink on the same GPUs, for
  // a multi-GPU PCIe (or linkless) node.
  std::optional<double> NvlinkShare(const TrainShape& sh, const TrainEval& ev) const {
    const IntraNodeLink l = r_.inst.intra_node_link;
    if (r_.gpus() <= 1 || (l != IntraNodeLink::kPcie && l != IntraNodeLink::kNone)) return {};
    if (!ev.step.valid || sh.par.gpus() <= 1) return {};
    InstanceType nv = r_.inst;
    nv.intra_node_link = IntraNodeLink::kNvlink;
    const TrainEval alt =
        EvaluateTraining(s_.train->model, sh.par, sh.opt, sh.job, Hw(nv), cal_, s_.headroom);
    if (!alt.step.valid || alt.step.total.value() <= 0) return {};
    return (alt.step.tp_comm + alt.step.dp_comm) / alt.step.total;
  }

  // A3: the small card's setup against the cheapest rental of a larger card that trains the
  // same batch (BestTrainLayout on one machine of it, no more GPUs in all), per 1M tokens.
  void SmallCard(const SetupTraining& t, const TrainShape& sh, const TrainEval& ev,
                 const TrainFacts& f) {
    if (!ev.fits || ev.step.samples_per_s <= 0 || !r_.price_usd) return;
    const std::string forced_by = SmallCardForcedBy(f, sh.job, cal_);
    if (forced_by.empty()) return;
    const double tokens_per_sample = sh.opt.seq_len;
    const double my_cost =
        *r_.price_usd * s_.nodes / 3600.0 / (ev.step.samples_per_s * tokens_per_sample) * 1e6;
    // Candidates: one machine of a GPU with enough more memory and no more GPUs in all.
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
      const Accelerator* a = cat_.FindAccelerator(i.accelerator);
      if (a == nullptr || a->InferenceOnly() ||
          a->memory.value() < kLargerCardMemoryRatio * r_.acc->memory.value()) {
        continue;
      }
      auto p = UsdPerHour(cat_, i, s_.spot);
      if (!p) continue;
      Key k{i.accelerator, i.accelerator_count, i.intra_node_link};
      auto it = cheapest.find(k);
      if (it == cheapest.end() || *p < it->second.second) cheapest[k] = {&i, *p};
    }
    TrainMemoryOptions base = sh.opt;
    base.notes = false;
    std::optional<LargerCard> best;
    for (const auto& [k, v] : cheapest) {
      const Accelerator& a = *cat_.FindAccelerator(k.acc);
      const HardwareView hw = HardwareFromInstance(*v.first, a, 1);
      auto choice =
          BestTrainLayout(t.model, base, sh.job, hw, cal_, s_.headroom, LayoutConstraints{});
      if (!choice || choice->eval.step.samples_per_s <= 0) continue;
      const double c =
          v.second / 3600.0 / (choice->eval.step.samples_per_s * tokens_per_sample) * 1e6;
      if (!best || c < best->cost) {
        best = LargerCard{
            fmt::format("{} {} ({} x {}, {:.0f} GiB each, micro-batch {}, recompute {}) at "
                        "${:.2f}/h",
                        v.first->cloud, v.first->instance_type, k.count, k.acc, ToGiB(a.memory),
                        choice->opt.micro_batch, RecomputeName(choice->opt.recompute), v.second),
            a.memory, c, my_cost,
            fmt::format("USD per 1M training tokens ({:.0f} tokens/s at ${:.2f}/h)",
                        ev.step.samples_per_s * tokens_per_sample, *r_.price_usd * s_.nodes)};
      }
    }
    if (auto a3 = SmallCardRule(f, forced_by, best)) out_.push_back(std::move(*a3));
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

  // A9 / B6 / B7: the storage the setup declares (kind and bandwidth), which a plan does not
  // know. RAM, CPU cores and the other host items are the shared rules (HostRules).
  // The need is guide B7's own figure (GPUs x 2 GB/s), shown with a verdict: where the setup's
  // declared bandwidth streams what this job's loaders read (the step's data rate x 2 for
  // bursts, as SizeHost sizes it), the guide's figure is not needed and the finding is a note.
  void Storage(SizingInput in) {
    const double job_bw = 2.0 * in.data_feed.value();
    in.data_feed = BytesPerSec(0);
    const HostNeeds guide_b = SizeHost(SizingPolicy::kGuideB, in);
    std::optional<StorageKind> kind = s_.hardware.storage;
    if (!kind && !r_.custom && r_.inst.local_nvme.value() > 0) kind = StorageKind::kNvme;
    const std::optional<BytesPerSec> bw = s_.hardware.storage_bw;
    const std::string need_bw = fmt::format("{} GPUs per node x 2 GB/s = {:.0f} GB/s", r_.gpus(),
                                            guide_b.storage_bw.value() / 1e9);
    // The job's own rate is known and the declared storage keeps up with it.
    const bool keeps_up = job_bw > 0 && bw && bw->value() >= job_bw;
    const std::string verdict =
        keeps_up ? fmt::format(
                       "; this job's loaders read {} (the step's data rate x 2), "
                       "which the declared {:.1f} GB/s streams: the guide's figure is not "
                       "needed here",
                       ReadRateText(BytesPerSec(job_bw)), bw->value() / 1e9)
                 : std::string();
    if (kind == StorageKind::kHdd || kind == StorageKind::kNetwork) {
      const bool hdd = kind == StorageKind::kHdd;
      Add(keeps_up ? Severity::kInfo
          : hdd    ? Severity::kError
                   : Severity::kWarning,
          "A9-B6-training-storage",
          fmt::format("training reads from {} storage{}; the GPUs need {} (guide B7); {}{}",
                      StorageKindName(*kind),
                      bw ? fmt::format(" at {:.1f} GB/s", bw->value() / 1e9) : std::string(),
                      need_bw,
                      hdd ? "guide B6: an HDD (~100 MB/s) cannot feed GPUs"
                          : "guide A9: network storage gives 1-2 GB/s vs ~7 GB/s per local "
                            "NVMe drive",
                      verdict),
          "stage the dataset on local NVMe (RAID0 for bandwidth); keep network storage for "
          "checkpoint sync and serving");
    }
    if (bw) {
      if (*bw < guide_b.storage_bw) {
        Add(keeps_up ? Severity::kInfo : Severity::kWarning, "B7-storage-bandwidth",
            fmt::format("storage delivers {:.1f} GB/s; guide B7 asks for {}{}", bw->value() / 1e9,
                        need_bw, verdict),
            "add NVMe drives in RAID0 or cache the dataset locally");
      }
    } else {
      Add(Severity::kInfo, "B7-storage-bandwidth",
          fmt::format("storage bandwidth not given; guide B7 asks for {}", need_bw),
          "set hardware.storage_gbps to have it checked");
    }
  }

  // ---- serving ---------------------------------------------------------------------------
  // The setup's serving job as the planner states one (the planner's defaults where it is
  // silent): one ServeSetup for the capacity here and for B1's search.
  ServeJobSpec ServeJobOf(const SetupServing& v) const {
    ServeJobSpec job;
    job.model = v.model;
    job.weight_precision = v.precision;
    job.quant = v.quant;
    job.kv_precision = v.kv_precision.value_or(DefaultKvPrecision(v.precision));
    job.engine = v.engine;
    job.qps = v.qps;
    job.input_len = v.input_len;
    job.output_len = v.output_len;
    return job;
  }

  // The planner's engine setup at `tp`, with the setup's own memory fraction when it gives one.
  static ServeSetup SetupAt(const SetupServing& v, const ServeJobSpec& job, int tp) {
    ServeSetup su = ServeSetupFor(job, tp);
    if (v.memory_fraction) su.memory_fraction = *v.memory_fraction;
    return su;
  }

  void Serving(const SetupServing& v) {
    const ServeJobSpec job = ServeJobOf(v);
    // A training setup on the same machine reports it already (TrainingPitfalls).
    if (!s_.train && !r_.custom) {
      if (auto m = MarketplaceRule(r_.inst, s_.nodes)) out_.push_back(std::move(*m));
    }
    // The engine has no kernels for the weights there.
    if (const std::string why = EngineCannotServe(v.engine, *r_.acc, v.precision, v.quant);
        !why.empty()) {
      Add(Severity::kError, "serve-weight-format",
          fmt::format("{} weights of {} cannot be served on {} with {}: {}",
                      v.quant ? v.quant->method : std::string(PrecisionName(v.precision)),
                      v.model.name, r_.acc->id, EngineName(v.engine), why),
          "serve 16-bit weights on this GPU, or a GPU whose kernels run this format");
    }
    const ComputeDevice dev = DeviceFromAccelerator(*r_.acc, cal_, r_.inst.intra_node_link);
    ServePerf perf;
    int tp = 1;
    if (v.model.is_decoder_llm() && v.tp) {
      // The setup's own tensor-parallel size: it fits there or it does not.
      tp = *v.tp;
      perf =
          EstimateLlmServing(v.model, SetupAt(v, job, tp), dev, v.input_len, v.output_len, 0, cal_);
      if (!perf.fits) {
        Add(Severity::kError, "B5-memory-headroom",
            fmt::format("{} does not fit for serving at tp {} on {}: {}", v.model.name, tp,
                        r_.acc->id, perf.why),
            "raise tp, quantize the weights (int8/int4), or use larger GPUs "
            "(`gpuplan memory --infer` shows who holds it)");
        return;
      }
    } else if (v.model.is_decoder_llm()) {
      for (tp = 1; tp <= r_.gpus(); tp *= 2) {
        perf = EstimateLlmServing(v.model, SetupAt(v, job, tp), dev, v.input_len, v.output_len, 0,
                                  cal_);
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
    MaxModelLen(v, perf, tp);
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

  // vLLM refuses to start when one sequence of max_model_len tokens (by default the model's
  // whole context) does not fit the KV cache it has left ("To serve at least one request with
  // the model's max seq len ..., ... KV cache is needed, which is larger than the available KV
  // cache memory"): Llama-3.1-8B's 128K context on a 24 GB GPU. Sliding-window models are left
  // out (their KV per sequence is the window's).
  void MaxModelLen(const SetupServing& v, const ServePerf& perf, int tp) {
    if (v.engine != Engine::kVllm || !v.model.is_decoder_llm() || v.model.sliding_layers > 0 ||
        perf.kv_tokens <= 0)
      return;
    const int len = v.max_model_len.value_or(v.model.max_positions);
    if (len <= 0 || perf.kv_tokens >= len) return;
    Add(Severity::kError, "serve-max-model-len",
        fmt::format("vLLM will not start: one sequence of max_model_len {} tokens{} needs more "
                    "KV cache than the {} tokens left per replica at tp {} on {}",
                    len, v.max_model_len ? "" : " (the default: the model's context length)",
                    perf.kv_tokens, tp, r_.acc->id),
        fmt::format("pass --max-model-len {} or less (the requests here need {}), raise "
                    "--gpu-memory-utilization or tp, or quantize the weights",
                    perf.kv_tokens, v.input_len + v.output_len));
  }

  // B1: a training-class instance (NVLink/NVSwitch + RDMA fabric) serving a load that a much
  // cheaper deployment carries.
  void TrainingInstanceServing(const SetupServing& v, const std::string& cap_text) {
    if (r_.custom || !r_.price_usd || !IsTrainingClass(r_.inst)) return;
    ServeJobSpec job = ServeJobOf(v);
    job.clouds = {r_.inst.cloud};
    job.top = 1;
    auto res = PlanServing(job, cat_, cal_);
    if (!res || res->plans.empty() || !res->plans.front().cost_per_hour) return;
    const ServePlan& p = res->plans.front();
    const CheaperServing cheaper{fmt::format("{} x {} ({} x {} GPU(s))", p.instances,
                                             p.instance->instance_type, p.replicas, p.tp),
                                 *p.cost_per_hour};
    if (auto b1 = TrainingInstanceServingRule(r_.inst, HwName(r_, s_.nodes),
                                              *r_.price_usd * s_.nodes, cap_text, cheaper, "USD")) {
      out_.push_back(std::move(*b1));
    }
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
