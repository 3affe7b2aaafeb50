// The memory analysis behind `gpuplan memory` and /v1/memory (include/gpuplan/memory_fit.h):
// request -> estimator options, the fit search over GPU counts x ZeRO stages (training) and
// tensor-parallel sizes (serving), and the cheapest offers for each fit.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <tuple>

#include "gpuplan/quant_preset.h"
#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/memory_fit.h"
#include "gpuplan/serve.h"

namespace gpuplan {

namespace {

// GPU counts the training fit search tries, smallest first.
constexpr int kGpuCounts[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
// Tensor-parallel sizes a serving replica tries (inside one 8-GPU machine).
constexpr int kServeTp[] = {1, 2, 4, 8};
// The GPU the serving reference breakdown is shown on when none is pinned.
constexpr const char* kReferenceAccelerator = "H100-SXM5-80GB";
// Engine memory fractions when none is given: TRT-LLM kv_cache_free_gpu_mem_fraction, SGLang
// mem_fraction_static (vLLM's: VllmDefaultGpuMemoryUtilization; docs/model.md section 4).
constexpr double kDefaultEngineFraction = 0.9;

Status CheckPositive(int v, const char* flag, int min = 1) {
  if (v < min) {
    return MakeError(ErrorCode::kInvalidArgument, flag,
                     fmt::format("must be >= {}, got {}", min, v));
  }
  return {};
}

Result<TrainMemoryOptions> BuildTrainOptions(const MemoryRequest& a, const ModelSpec& m) {
  TrainMemoryOptions o;
  auto method = ParseTrainMethod(a.method);
  if (!method) {
    return MakeError(ErrorCode::kInvalidArgument, "--method", "unknown method \"" + a.method + "\"",
                     ChoiceHint(a.method, TrainMethodNames()));
  }
  o.method = *method;
  std::string prec = a.precision.empty() ? "bf16" : a.precision;
  auto p = ParseTrainPrecision(prec);
  if (!p) {
    return MakeError(ErrorCode::kInvalidArgument, "--precision",
                     "unknown training precision \"" + prec + "\"",
                     ChoiceHint(prec, TrainPrecisionNames()));
  }
  o.precision = p->precision;
  o.fp4_gemms = p->fp4_gemms;
  auto opt = ParseOptimizer(a.optimizer);
  if (!opt) {
    return MakeError(ErrorCode::kInvalidArgument, "--optimizer",
                     "unknown optimizer \"" + a.optimizer + "\"",
                     ChoiceHint(a.optimizer, OptimizerNames()));
  }
  o.optimizer = *opt;
  o.paged_optimizer = PagedOptimizerName(a.optimizer);
  auto sd = ParsePrecision(a.optimizer_states);
  if (!sd || (*sd != Precision::kFp32 && *sd != Precision::kBf16)) {
    return MakeError(ErrorCode::kInvalidArgument, "--optimizer-states",
                     "must be fp32 or bf16, got \"" + a.optimizer_states + "\"",
                     "use fp32 (mixed precision's default) or bf16 (pure bf16 "
                     "training)");
  }
  o.optimizer_state_dtype = *sd;
  o.master_weights = !a.guide_b4;
  auto rc = ParseRecompute(a.recompute.empty() ? "none" : a.recompute);
  if (!rc) {
    return MakeError(ErrorCode::kInvalidArgument, "--recompute",
                     "unknown recompute \"" + a.recompute + "\"",
                     ChoiceHint(a.recompute, RecomputeNames()));
  }
  o.recompute = *rc;
  auto lt = ParseLoraTargets(a.lora_targets);
  if (!lt) {
    return MakeError(ErrorCode::kInvalidArgument, "--lora-targets",
                     "unknown targets \"" + a.lora_targets + "\"", "use qv, attention or all");
  }
  o.lora_targets = *lt;
  if (auto s = CheckPositive(a.batch, "--batch"); !s) return s.error();
  if (auto s = CheckPositive(a.lora_rank, "--lora-rank"); !s) return s.error();
  if (auto s = CheckPositive(a.grad_accum, "--grad-accum"); !s) return s.error();
  if (a.seq_len < 0) return CheckPositive(a.seq_len, "--seq-len").error();
  o.micro_batch = a.batch;
  o.lora_rank = a.lora_rank;
  o.num_microbatches = a.grad_accum;
  o.dropout = DefaultDropout(m);
  int def_seq = m.arch == ModelArch::kEncoder ? 512 : 2048;
  if (m.ImageTokens() > 0) def_seq = m.ImageTokens();
  if (m.max_positions > 0) def_seq = std::min(def_seq, m.max_positions);
  o.seq_len = a.seq_len > 0 ? a.seq_len : def_seq;
  if (auto x = ExceedsContext(m, a.seq_len, fmt::format("a sequence of {} tokens", a.seq_len),
                              "--seq-len")) {
    return MakeError(ErrorCode::kInvalidArgument, "--seq-len", x->message, x->fix);
  }
  if (o.method == TrainMethod::kQlora) o.base_bits = 4;
  // Training alone: a quantised base is LoRA's (frozen weights); full fine-tuning and
  // pretraining train the weights in --precision, and QLoRA's base is 4-bit NF4 by definition.
  if (a.train && !a.infer && !a.quant.empty() && o.method != TrainMethod::kLora) {
    const bool qlora = o.method == TrainMethod::kQlora;
    auto q = ParsePrecision(a.quant);
    if (!qlora || !q || *q != Precision::kInt4) {
      return MakeError(ErrorCode::kInvalidArgument, "--quant",
                       fmt::format("\"{}\" does not apply to {} training", a.quant, a.method),
                       qlora ? "QLoRA's base is 4-bit NF4; for an 8-bit base use --method lora "
                               "--quant int8"
                             : "a quantised frozen base is LoRA's: use --method lora --quant "
                               "int8|int4 (or --method qlora); full training trains the weights "
                               "in --precision");
    }
  }
  if (o.method == TrainMethod::kLora && !a.quant.empty()) {
    auto q = ParsePrecision(a.quant);
    if (!q || (*q != Precision::kInt8 && *q != Precision::kInt4)) {
      return MakeError(ErrorCode::kInvalidArgument, "--quant",
                       "LoRA base must be int8 or int4 (nf4), got \"" + a.quant + "\"");
    }
    o.base_bits = *q == Precision::kInt8 ? 8 : 4;
  }
  if (a.guide_b4) o.include_runtime = false;
  return o;
}

Result<InferMemoryOptions> BuildInferOptions(const MemoryRequest& a, const ModelSpec& m) {
  InferMemoryOptions o;
  auto eng = ParseEngine(a.engine);
  if (!eng) {
    return MakeError(ErrorCode::kInvalidArgument, "--engine", "unknown engine \"" + a.engine + "\"",
                     ChoiceHint(a.engine, EngineNames()));
  }
  o.engine = *eng;
  o.weight_precision = m.dtype == Precision::kFp32 ? Precision::kBf16 : m.dtype;
  // The training precision fp4 (NVFP4) serves as NVFP4 weights (the quantisation preset).
  const auto train_p = ParseTrainPrecision(a.precision);
  const bool nvfp4 = train_p && train_p->fp4_gemms;
  if (!a.precision.empty() && !nvfp4) {
    auto p = ParsePrecision(a.precision);
    if (!p) {
      return MakeError(ErrorCode::kInvalidArgument, "--precision",
                       "unknown precision \"" + a.precision + "\"",
                       ChoiceHint(a.precision, PrecisionNames()));
    }
    o.weight_precision = *p;
  }
  o.quant = m.quant;
  if (nvfp4 && a.quant.empty()) {
    if (auto st = ApplyQuantName("nvfp4", "--precision", o.weight_precision, o.quant); !st)
      return st.error();
  }
  if (!a.quant.empty()) {
    if (auto st = ApplyQuantName(a.quant, "--quant", o.weight_precision, o.quant); !st)
      return st.error();
  }
  o.kv_precision = DefaultKvPrecision(o.weight_precision);
  if (!a.kv_precision.empty()) {
    GPUPLAN_ASSIGN_OR_RETURN(
        o.kv_precision, ParseKvPrecision(a.kv_precision, "--kv-precision", o.weight_precision));
  }
  if (auto s = CheckPositive(a.context, "--context"); !s) return s.error();
  if (auto s = CheckPositive(a.concurrency, "--concurrency"); !s) return s.error();
  // Not given: the default, or the model's context where that is shorter.
  const bool context_limited =
      m.max_positions > 0 && (m.generates_tokens() || m.arch == ModelArch::kEncoder);
  o.context =
      context_limited && !a.context_given ? std::min(a.context, m.max_positions) : a.context;
  if (auto x = ExceedsContext(m, o.context, fmt::format("a sequence of {} tokens", o.context),
                              "--context")) {
    return MakeError(ErrorCode::kInvalidArgument, "--context", x->message, x->fix);
  }
  if (m.arch == ModelArch::kEncoderDecoder) {
    // --context is the decoder's tokens; each sequence also keeps its encoder output's
    // cross-attention K/V (Whisper: 1500 positions; a text model: as many as its input, taken
    // as long as the context).
    o.context += EncoderInputTokens(m, o.context);
  }
  o.concurrency = a.concurrency;
  if (o.engine == Engine::kTgi) {
    // Launched with --max-total-tokens = the context; its warm-up and KV rule (TgiDefaults).
    TgiDefaults("", m.max_positions, o.context).ApplyTo(o);
  }
  // The current vLLM charges its CUDA graphs' estimate to the KV budget (docs/model.md 4.3).
  if (o.engine == Engine::kVllm && VllmEstimatesCudaGraphs(""))
    o.cuda_graph_captures = VllmCudaGraphCaptures(o.max_num_seqs, o.max_num_batched_tokens);
  if (a.gpu_memory_utilization != 0) {
    if (a.gpu_memory_utilization <= 0 || a.gpu_memory_utilization > 1) {
      return MakeError(ErrorCode::kInvalidArgument, "--gpu-memory-utilization",
                       fmt::format("must be in (0, 1], got {}", a.gpu_memory_utilization));
    }
    o.memory_fraction = a.gpu_memory_utilization;
  }
  return o;
}

// The smallest GPU count (and ZeRO stage) at which `acc` holds the training job.
std::optional<MemoryFit> FitTraining(const ModelSpec& m, const TrainMemoryOptions& o,
                                     const MemoryRequest& a, const Accelerator& acc) {
  const double limit = acc.Usable().value() * a.headroom;
  for (int n : kGpuCounts) {
    if (a.gpus > 0 && n != a.gpus) continue;
    const int mp = a.tp * a.pp * a.cp;
    if (n % mp != 0) continue;
    Parallelism par;
    par.tp = a.tp;
    par.pp = a.pp;
    par.cp = a.cp;
    par.ep = a.ep;
    par.dp = n / mp;
    if (par.ep > 1 && par.dp % par.ep != 0) continue;  // ep ranks come from dp
    par.sequence_parallel = a.sequence_parallel;
    if (a.fsdp == "hybrid") par.shard_group = std::min(8, par.dp);
    std::vector<int> stages;
    if (a.zero >= 0)
      stages = {a.zero};
    else if (par.dp == 1)
      stages = {0};
    else
      stages = {0, 1, 2, 3};
    for (int z : stages) {
      par.zero_stage = z;
      TrainMemoryOptions oo = o;
      oo.num_microbatches = std::max(o.num_microbatches, a.pp);
      MemoryBreakdown mem = EstimateTrainingMemory(m, par, oo);
      if (mem.Total().value() <= limit) {
        MemoryFit f;
        f.acc = &acc;
        f.gpus = n;
        f.tp = par.tp;
        f.pp = par.pp;
        f.dp = par.dp;
        f.zero = z;
        f.mem = std::move(mem);
        f.limit_bytes = limit;
        return f;
      }
    }
    if (a.gpus > 0) break;
  }
  return std::nullopt;
}

std::optional<MemoryFit> FitServing(const ModelSpec& m, const InferMemoryOptions& o,
                                    const MemoryRequest& a, const Accelerator& acc) {
  const double limit = ServingMemoryLimit(o, a.headroom, acc);
  for (int tp : kServeTp) {
    if (a.tp_given && tp != a.tp) continue;
    int n = tp * a.pp;
    if (a.gpus > 0 && n != a.gpus) continue;
    if (m.heads > 0 && m.heads % tp != 0) continue;
    InferMemoryOptions oo = o;
    oo.tp = tp;
    oo.pp = a.pp;
    oo.nvls = NvlsAllReduce(acc);
    InferMemory r = EstimateInferenceMemory(m, oo, Bytes(limit));
    if (r.fits) {
      MemoryFit f;
      f.acc = &acc;
      f.gpus = n;
      f.tp = tp;
      f.pp = a.pp;
      f.mem = r.breakdown;
      f.limit_bytes = limit;
      f.kv_tokens = r.kv_tokens;
      f.max_concurrency = r.max_concurrency;
      return f;
    }
  }
  return std::nullopt;
}

void SortFits(std::vector<MemoryFit>& fits) {
  std::sort(fits.begin(), fits.end(), [](const MemoryFit& x, const MemoryFit& y) {
    const double cx = CheapestOnDemand(x.offers).value_or(1e300);
    const double cy = CheapestOnDemand(y.offers).value_or(1e300);
    if (cx != cy) return cx < cy;
    return x.acc->id < y.acc->id;
  });
}

Result<TrainMemoryAnalysis> AnalyzeTraining(const Catalog& cat, const ModelSpec& m,
                                            const MemoryRequest& a, Currency cur,
                                            std::optional<double> rate, const Accelerator* pinned) {
  auto o = BuildTrainOptions(a, m);
  if (!o) return o.error();
  TrainMemoryAnalysis s;
  s.options = *o;
  Parallelism& par = s.reference;
  par.tp = a.tp;
  par.pp = a.pp;
  par.cp = a.cp;
  par.ep = a.ep;
  par.sequence_parallel = a.sequence_parallel;
  int n = a.gpus > 0 ? a.gpus : a.tp * a.pp * a.cp;
  if (n % (a.tp * a.pp * a.cp) != 0) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--gpus",
        fmt::format("{} GPUs cannot be split into tp {} x pp {} x cp {}", n, a.tp, a.pp, a.cp),
        "make --gpus a multiple of tp x pp x cp");
  }
  par.dp = n / (a.tp * a.pp * a.cp);
  if (a.ep > 1) {
    // Expert-parallel ranks come from the data-parallel group and split the experts.
    if (!m.moe) {
      return MakeError(ErrorCode::kInvalidArgument, "--ep",
                       fmt::format("ep {} on {}, a dense model (no experts)", a.ep, m.name),
                       "leave out --ep");
    }
    if (m.moe->experts % a.ep != 0 || par.dp % a.ep != 0) {
      return MakeError(
          ErrorCode::kInvalidArgument, "--ep",
          fmt::format(
              "ep {} must divide the {} experts and dp {} (= GPUs {} / (tp {} x pp {} x cp {}))",
              a.ep, m.moe->experts, par.dp, n, a.tp, a.pp, a.cp),
          "use an ep that divides both, or more --gpus");
    }
  }
  par.zero_stage = a.zero >= 0 ? a.zero : (par.dp > 1 ? 3 : 0);
  if (a.fsdp == "full") par.zero_stage = 3;
  if (a.fsdp == "grad-op") par.zero_stage = 2;
  if (a.fsdp == "hybrid") {
    par.zero_stage = 3;
    par.shard_group = std::min(8, par.dp);
  }
  TrainMemoryOptions ro = *o;
  ro.num_microbatches = std::max(o->num_microbatches, a.pp);
  s.memory = EstimateTrainingMemory(m, par, ro);
  s.headroom = a.headroom;
  for (const auto& acc : cat.accelerators) {
    if (pinned && &acc != pinned) continue;
    if (acc.InferenceOnly()) continue;
    if (auto no = TrainingUnsupported(acc, o->precision, o->fp4_gemms, o->method)) {
      s.no_kernels.emplace_back(acc.id, no->why + "; " + no->instead + " there");
      continue;
    }
    auto f = FitTraining(m, *o, a, acc);
    if (a.recompute.empty() && o->recompute == Recompute::kNone) {
      // Recompute was not stated: full recompute is what a user turns on before renting more
      // GPUs (activations shrink to one layer input per layer, for a third more compute). It
      // is the fit wherever it needs fewer GPUs than going without; activations do not shrink
      // with data parallelism, so without it a large batch can need hundreds of GPUs.
      TrainMemoryOptions rc = *o;
      rc.recompute = Recompute::kFull;
      auto g = FitTraining(m, rc, a, acc);
      if (g && (!f || g->gpus < f->gpus)) {
        f = std::move(g);
        f->recompute = Recompute::kFull;
      }
    }
    if (f) {
      f->offers = CheapestOffers(cat, acc, f->gpus, true, cur, rate);
      s.fits.push_back(std::move(*f));
    }
  }
  SortFits(s.fits);
  return s;
}

Result<InferMemoryAnalysis> AnalyzeServing(const Catalog& cat, const ModelSpec& m,
                                           const MemoryRequest& a, Currency cur,
                                           std::optional<double> rate, const Accelerator* pinned) {
  auto o = BuildInferOptions(a, m);
  if (!o) return o.error();
  InferMemoryAnalysis s;
  s.options = *o;
  InferMemoryOptions ro = *o;
  ro.tp = a.tp;
  ro.pp = a.pp;
  const Accelerator* ref_acc = pinned;
  if (!ref_acc) ref_acc = cat.FindAccelerator(kReferenceAccelerator);
  if (!ref_acc && !cat.accelerators.empty()) ref_acc = &cat.accelerators.front();
  if (!ref_acc) return MakeError(ErrorCode::kInvalidArgument, "--catalog", "no accelerators");
  s.reference_acc = ref_acc;
  s.reference_tp = a.tp;
  ro.nvls = NvlsAllReduce(*ref_acc);
  s.reference = EstimateInferenceMemory(m, ro, Bytes(ServingMemoryLimit(*o, a.headroom, *ref_acc)));
  if (o->quant) {
    // What the format covers when it is not every linear layer.
    const std::string scope =
        o->quant->mlp_only
            ? fmt::format("; feed-forward layers only, attention and {} edge blocks 16-bit",
                          o->quant->dense_blocks)
        : o->quant->experts_only ? "; routed experts only, the rest 16-bit"
                                 : "";
    s.weights = fmt::format("{} ({:.2f} bits/weight incl. scales{})", o->quant->method,
                            o->quant->EffectiveBits(), scope);
  } else {
    s.weights = PrecisionName(o->weight_precision);
  }
  // SGLang's default follows the GPU: the reference accelerator's is shown.
  s.memory_fraction = o->memory_fraction.value_or(
      o->engine == Engine::kSglang
          ? SglangDefaultMemFractionForGpu(VisibleMemory(ref_acc->Usable()), a.tp, a.pp,
                                           m.mla.has_value())
      : o->engine == Engine::kVllm ? VllmDefaultGpuMemoryUtilization("")
                                   : kDefaultEngineFraction);
  for (const auto& acc : cat.accelerators) {
    if (pinned && &acc != pinned) continue;
    if (std::string why = EngineCannotServe(o->engine, acc, o->weight_precision, o->quant);
        !why.empty()) {
      s.no_kernels.emplace_back(acc.id, std::move(why));
      continue;
    }
    if (auto f = FitServing(m, *o, a, acc)) {
      f->offers = CheapestOffers(cat, acc, f->gpus, false, cur, rate);
      s.fits.push_back(std::move(*f));
    }
  }
  SortFits(s.fits);
  return s;
}

}  // namespace

double ServingMemoryLimit(const InferMemoryOptions& o, double headroom, const Accelerator& acc) {
  if (o.engine == Engine::kTransformers) return acc.Usable().value() * headroom;
  return acc.Usable().value();  // the engine's own fraction applies inside the estimator
}

Status ValidateMemoryRequest(const MemoryRequest& a) {
  // Upper bounds (docs/reliability.md): products of these stay inside 64-bit counts.
  for (auto [v, flag, hi] : {std::tuple{a.tp, "--tp", kMaxParallel},
                             {a.pp, "--pp", kMaxParallel},
                             {a.cp, "--cp", kMaxParallel},
                             {a.ep, "--ep", kMaxParallel},
                             {a.gpus, "--gpus", kMaxParallel},
                             {a.batch, "--batch", kMaxBatch},
                             {a.grad_accum, "--grad-accum", kMaxBatch},
                             {a.seq_len, "--seq-len", kMaxSeqLen},
                             {a.context, "--context", kMaxSeqLen},
                             {a.concurrency, "--concurrency", kMaxBatch},
                             {a.lora_rank, "--lora-rank", kMaxLoraRank}}) {
    if (v > hi) {
      return MakeError(ErrorCode::kInvalidArgument, flag,
                       fmt::format("must be at most {}, got {}", hi, v));
    }
  }
  if (static_cast<long long>(a.tp) * a.pp * a.cp > kMaxParallel ||
      static_cast<long long>(a.batch) * a.grad_accum > kMaxBatch) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--tp",
        fmt::format("tp x pp x cp must be at most {} and batch x grad-accum at most {}",
                    kMaxParallel, kMaxBatch));
  }
  if (!std::isfinite(a.gpu_memory_utilization) || a.gpu_memory_utilization < 0 ||
      a.gpu_memory_utilization > 1) {
    return MakeError(ErrorCode::kInvalidArgument, "--gpu-memory-utilization",
                     fmt::format("must be in (0, 1], got {}", a.gpu_memory_utilization));
  }
  if (!(a.headroom > 0 && a.headroom <= 1)) {
    return MakeError(ErrorCode::kInvalidArgument, "--headroom",
                     fmt::format("must be in (0, 1], got {}", a.headroom),
                     "0.8 keeps 20% free, the guides' B5 rule");
  }
  for (auto [v, flag] : {std::pair{a.tp, "--tp"}, {a.pp, "--pp"}, {a.cp, "--cp"}, {a.ep, "--ep"}}) {
    if (auto s = CheckPositive(v, flag); !s) return s.error();
  }
  if (a.gpus < 0) return CheckPositive(a.gpus, "--gpus").error();
  if (a.zero < -1 || a.zero > 3) {
    return MakeError(ErrorCode::kInvalidArgument, "--zero",
                     fmt::format("must be 0-3, got {}", a.zero),
                     "0 = none, 1 = optimizer states, 2 = + gradients, 3 = + parameters sharded");
  }
  if (!a.fsdp.empty() && a.fsdp != "full" && a.fsdp != "hybrid" && a.fsdp != "grad-op") {
    return MakeError(ErrorCode::kInvalidArgument, "--fsdp", "unknown FSDP mode \"" + a.fsdp + "\"",
                     "use full, hybrid or grad-op");
  }
  return {};
}

std::optional<Error> MemoryFlagOfOtherMode(const MemoryRequest& r,
                                           const std::function<bool(std::string_view)>& given) {
  if (r.train == r.infer) return std::nullopt;  // neither or both: both analyses run
  static const std::vector<std::pair<const char*, const char*>> kTrainOnly = {
      {"--method", ""},
      {"--optimizer", ""},
      {"--optimizer-states", ""},
      {"--guide-b4", ""},
      {"--batch", "--concurrency (sequences served at once)"},
      {"--seq-len", "--context (tokens per sequence)"},
      {"--grad-accum", ""},
      {"--zero", ""},
      {"--fsdp", ""},
      {"--cp", ""},
      {"--ep", ""},
      {"--sequence-parallel", ""},
      {"--recompute", ""},
      {"--lora-rank", ""},
      {"--lora-targets", ""}};
  static const std::vector<std::pair<const char*, const char*>> kServeOnly = {
      {"--kv-precision", ""},
      {"--context", "--seq-len (tokens per training sequence)"},
      {"--concurrency", "--batch (micro-batch per GPU)"},
      {"--engine", ""},
      {"--gpu-memory-utilization", "--headroom (usable fraction of GPU memory)"}};
  const auto& other = r.infer ? kTrainOnly : kServeOnly;
  const char* mode = r.infer ? "--infer" : "--train";
  const char* needed = r.infer ? "--train" : "--infer";
  const char* what = r.infer ? "serving" : "training";
  const char* other_what = r.infer ? "training" : "serving";
  for (const auto& [flag, instead] : other) {
    if (!given(flag)) continue;
    std::string fix = *instead != '\0' ? fmt::format("for {} use {}; or drop {} to analyse both",
                                                     what, instead, mode)
                                       : fmt::format("drop it, or add {} to analyse both", needed);
    return MakeError(
        ErrorCode::kInvalidArgument, flag,
        fmt::format("is a {} setting, but {} asks for {} memory only", other_what, mode, what),
        fix);
  }
  return std::nullopt;
}

Result<MemoryAnalysis> AnalyzeMemory(const MemoryRequest& req, const ModelSpec& model,
                                     const Catalog& catalog, Currency currency,
                                     std::optional<double> cny_per_usd) {
  if (auto st = ValidateMemoryRequest(req); !st) return st.error();
  const Accelerator* pinned = nullptr;
  if (!req.gpu.empty()) {
    auto acc = catalog.ResolveAccelerator(req.gpu, "--gpu");
    if (!acc) return acc.error();
    pinned = *acc;
  }
  MemoryAnalysis r;
  r.model = model;
  r.params = CountParams(model);
  r.currency = currency;
  r.cny_per_usd = cny_per_usd.value_or(catalog.CnyPerUsd());
  r.prices_as_of = catalog.PricesAsOf();
  const bool both = !req.train && !req.infer;
  if (req.train || both) {
    auto s = AnalyzeTraining(catalog, model, req, currency, cny_per_usd, pinned);
    if (!s) return s.error();
    r.train = std::move(*s);
  }
  if (req.infer || both) {
    auto s = AnalyzeServing(catalog, model, req, currency, cny_per_usd, pinned);
    if (!s) return s.error();
    r.infer = std::move(*s);
  }
  return r;
}

}  // namespace gpuplan
