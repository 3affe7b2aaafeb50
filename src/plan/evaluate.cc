#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <tuple>
#include <utility>
#include <fmt/format.h>

#include "gpuplan/plan.h"

namespace gpuplan {

std::string LayoutError(const ModelSpec& m, const Parallelism& par, const TrainMemoryOptions& opt,
                        const TrainJob& job, const HardwareView& hw, bool terse) {
  const int tp = par.tp, pp = par.pp, dp = par.dp, cp = par.cp, ep = par.ep, vpp = par.vpp;
  const int b = opt.micro_batch;
  if (tp < 1 || pp < 1 || dp < 1 || cp < 1 || ep < 1 || vpp < 1 || b < 1) {
    return terse ? "size < 1"
                 : fmt::format(
                       "tp {}, pp {}, dp {}, cp {}, ep {}, vpp {} and micro-batch {} must all be "
                       ">= 1",
                       tp, pp, dp, cp, ep, vpp, b);
  }
  const std::int64_t n = static_cast<std::int64_t>(tp) * pp * dp * cp;
  if (n != static_cast<std::int64_t>(hw.gpus())) {
    return terse ? "gpu count"
                 : fmt::format("tp {} x pp {} x dp {} x cp {} = {} GPUs, but the hardware has {}",
                               tp, pp, dp, cp, n, hw.gpus());
  }
  if (!m.is_transformer() || m.layers <= 0 || m.heads <= 0) {
    if (tp > 1 || pp > 1 || cp > 1) {
      return terse ? "not a transformer"
                   : fmt::format(
                         "{} is a {} model: it trains data-parallel only (tp, pp, cp = 1), "
                         "got tp {}, pp {}, cp {}",
                         m.name, ModelArchName(m.arch), tp, pp, cp);
    }
  } else {
    if (m.heads % tp != 0) {
      return terse ? "tp heads"
                   : fmt::format("tp {} does not divide the {} attention heads", tp, m.heads);
    }
    if (!m.mla && m.kv_heads > 0 && m.kv_heads % tp != 0) {
      return terse ? "tp kv heads"
                   : fmt::format(
                         "tp {} does not divide the {} KV heads (Megatron needs "
                         "num_query_groups % tp == 0)",
                         tp, m.kv_heads);
    }
    if (pp > m.layers) {
      return terse ? "pp layers"
                   : fmt::format("pp {} is more stages than the {} layers", pp, m.layers);
    }
    if (vpp > 1) {
      // Megatron-Core splits layers over the pp x vpp virtual stages evenly
      // (--num-layers-per-virtual-pipeline-stage) or as any pipeline layout string lists them
      // (--pipeline-model-parallel-layout, e.g. DeepSeek-V3's 61 layers over 16 chunks): every
      // virtual stage holds a layer, the embedding or the loss.
      const int chunks = pp * vpp;
      if (pp == 1 || chunks > m.layers + 2) {
        return terse ? "vpp"
                     : fmt::format(
                           "interleaving vpp {} needs pp > 1 and one of the {} layers, the "
                           "embedding or the loss in each of the pp x vpp = {} virtual stages",
                           vpp, m.layers, chunks);
      }
    }
    if (cp > 1 && opt.seq_len % (2 * cp) != 0) {
      return terse ? "cp seq"
                   : fmt::format("cp {} needs the sequence {} to split into 2 x cp chunks", cp,
                                 opt.seq_len);
    }
  }
  if (ep > 1) {
    if (!m.moe) {
      return terse ? "ep dense" : fmt::format("ep {} on a dense model (no experts)", ep);
    }
    if (m.moe->experts % ep != 0) {
      return terse ? "ep experts"
                   : fmt::format("ep {} does not divide the {} experts", ep, m.moe->experts);
    }
    // Expert-parallel ranks come from the data-parallel group, or (Megatron-Core's MoE
    // parallel folding, expert tensor parallelism 1) from dp x cp x tp.
    if (dp % ep != 0 && (static_cast<std::int64_t>(dp) * cp * tp) % ep != 0) {
      return terse ? "ep dp"
                   : fmt::format(
                         "ep {} does not divide dp {} (nor dp x cp x tp = {}): expert-parallel "
                         "ranks are drawn from the data-parallel group",
                         ep, dp, dp * cp * tp);
    }
  }
  if (job.global_batch > 0 && job.global_batch % (static_cast<std::int64_t>(b) * dp) != 0) {
    return terse ? "batch"
                 : fmt::format(
                       "global batch {} is not micro-batch {} x dp {} x a whole number of "
                       "accumulation steps",
                       job.global_batch, b, dp);
  }
  if (vpp > 1 && job.global_batch > 0) {
    // Megatron's interleaved schedule: the micro-batches per step must be a multiple of pp.
    const std::int64_t micro = job.global_batch / (static_cast<std::int64_t>(b) * dp);
    if (micro % pp != 0) {
      return terse ? "vpp micro"
                   : fmt::format(
                         "interleaving needs the {} micro-batches per step to be a multiple "
                         "of pp {}",
                         micro, pp);
    }
  }
  if (opt.optimizer_offload && par.zero_stage < 1) {
    return terse ? "offload zero" : "optimizer offload needs ZeRO >= 1 (a sharded optimizer)";
  }
  if (opt.param_offload && par.zero_stage < 3) {
    return terse ? "offload zero3" : "parameter offload needs ZeRO-3";
  }
  return {};
}

TrainEval EvaluateTraining(const ModelSpec& m, const Parallelism& par,
                           const TrainMemoryOptions& opt, const TrainJob& job,
                           const HardwareView& hw, const Calibration& cal, double headroom,
                           Trace* trace, const StepConstants* k) {
  TrainEval ev;
  ev.why = LayoutError(m, par, opt, job, hw, k != nullptr);
  if (!ev.why.empty()) {
    ev.step.reason = ev.why;
    return ev;
  }
  TrainMemoryOptions o = opt;
  const int dp = std::max(1, par.dp);
  const int b = std::max(1, o.micro_batch);
  if (job.global_batch > 0) {
    // 64-bit: b x dp can pass INT_MAX on large clusters.
    const long long per_step = static_cast<long long>(b) * dp;
    o.num_microbatches = static_cast<int>(std::max<long long>(1, job.global_batch / per_step));
  }
  ev.memory = EstimateTrainingMemory(m, par, o);
  const double limit = hw.acc->Usable().value() * headroom;
  if (ev.memory.Total().value() > limit && k != nullptr) {
    // In the search loop (constants given) the reason is never shown and a layout over memory
    // is never ranked: no formatting, no step estimate (step.valid stays false).
    ev.why = "over memory";
    return ev;
  }
  if (ev.memory.Total().value() > limit) {
    ev.why = k != nullptr
                 ? "over memory"
                 : fmt::format("needs {:.1f} GiB per GPU, {:.0f}% of {:.1f} GiB is {:.1f} GiB",
                               ToGiB(ev.memory.Total()), headroom * 100, ToGiB(hw.acc->Usable()),
                               limit / kBytesPerGiB);
  }
  if (o.paged_optimizer && !o.optimizer_offload && !o.param_offload) {
    // Paged states live in managed memory beside the allocator's peak; what does not fit pages.
    const double free_bytes = std::max(0.0, hw.acc->Usable().value() - ev.memory.Total().value());
    o.paged_spill_bytes = std::max(0.0, ev.memory.host_offload.value() - free_bytes);
  }
  ev.step = EstimateTrainStep(m, par, o, job.global_batch, hw, cal, trace, k);
  if (!ev.step.valid && ev.why.empty()) ev.why = ev.step.reason;
  ev.fits = ev.why.empty();
  if (ev.step.valid) {
    const double gpus = par.gpus();
    if (job.tokens > 0 && ev.step.tokens_per_s_per_gpu > 0) {
      ev.job_seconds = job.tokens / (ev.step.tokens_per_s_per_gpu * gpus);
    } else if (job.samples > 0 && ev.step.samples_per_s > 0) {
      ev.job_seconds = job.samples / ev.step.samples_per_s;
    }
  }
  return ev;
}

int LayoutSimplicity(const Parallelism& p, const TrainMemoryOptions& x) {
  return (x.param_offload ? 2000 : 0) + (x.optimizer_offload ? 1000 : 0) + p.zero_stage * 100 +
         static_cast<int>(x.recompute) * 10 + (p.vpp > 1 ? 1 : 0);
}

bool FrameworkRecomputes(TrainFramework f, Recompute rc, int layers) {
  switch (f) {
    case TrainFramework::kDeepSpeed:
    case TrainFramework::kFsdp:
    case TrainFramework::kDdp:
    case TrainFramework::kTorchtune:
      return rc == Recompute::kNone || (rc == Recompute::kFull && layers <= 0);
    default:
      return true;
  }
}

bool FrameworkSupports(TrainFramework f, const Parallelism& p, const TrainMemoryOptions& o) {
  const bool model_parallel = p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1 || p.vpp > 1;
  if (!FrameworkRecomputes(f, o.recompute, o.recompute_layers)) return false;
  // NVFP4 training is Transformer Engine's recipe, run through Megatron-Core (NeMo).
  if (o.fp4_gemms && f != TrainFramework::kMegatronCore && f != TrainFramework::kGeneric)
    return false;
  switch (f) {
    case TrainFramework::kGeneric:
      return FrameworkFor(f, p, o).has_value();
    case TrainFramework::kMegatronLegacy:
      return p.zero_stage <= 1 && !o.optimizer_offload && !o.param_offload;
    case TrainFramework::kMegatronCore:
      // Distributed optimizer (ZeRO-1-like); optimizer_cpu_offload needs it.
      return p.zero_stage <= 1 && !o.param_offload && (!o.optimizer_offload || p.zero_stage == 1);
    case TrainFramework::kDeepSpeed:
      // Pipelines only with ZeRO 0-1; tensor parallelism is AutoTP training, which the engine
      // allows with ZeRO 0-2 only (DeepSpeed 0.16.5 runtime/engine.py: "the compatibility between
      // 'autotp' and 'zero_stage = 3' has not been validated").
      // Its sequence parallelism (DeepSpeed-Ulysses) splits heads with all-to-alls, not the ring
      // attention the step model times: context parallelism is left to the others.
      return !(p.pp > 1 && p.zero_stage >= 2) && !(p.tp > 1 && p.zero_stage >= 3) && p.cp == 1;
    case TrainFramework::kFsdp:
      // FSDP shards (SHARD_GRAD_OP = 2, FULL_SHARD = 3) or replicates (NO_SHARD); CPUOffload
      // moves parameters, gradients and optimizer states together, under full sharding.
      return p.pp == 1 && p.vpp == 1 && p.ep == 1 && p.zero_stage != 1 &&
             o.optimizer_offload == o.param_offload;
    case TrainFramework::kDdp:
      return !model_parallel && p.zero_stage == 0 && !o.optimizer_offload && !o.param_offload;
    case TrainFramework::kTorchtitan:
      // FSDP2 (full shard) or replicated data parallelism, composed with TP, PP and CP; CPU
      // offload is FSDP2's CPUOffloadPolicy (parameters, gradients and optimizer together).
      return (p.zero_stage == 0 || p.zero_stage == 3) && o.optimizer_offload == o.param_offload &&
             (!o.param_offload || p.zero_stage == 3);
    case TrainFramework::kTorchtune:
      // Single-device recipes (one GPU, no sharding) or the distributed ones (FSDP2 fully_shard,
      // fsdp_cpu_offload moving parameters, gradients and optimizer states together).
      return !model_parallel && o.optimizer_offload == o.param_offload &&
             (p.dp == 1 ? p.zero_stage == 0 && !o.optimizer_offload : p.zero_stage == 3);
  }
  return false;
}

bool AnyFrameworkSupports(const Parallelism& p, const TrainMemoryOptions& o) {
  for (TrainFramework f : {TrainFramework::kMegatronCore, TrainFramework::kMegatronLegacy,
                           TrainFramework::kDeepSpeed, TrainFramework::kFsdp, TrainFramework::kDdp,
                           TrainFramework::kTorchtune, TrainFramework::kTorchtitan}) {
    if (FrameworkSupports(f, p, o)) return true;
  }
  return false;
}

std::optional<TrainFramework> FrameworkFor(TrainFramework requested, const Parallelism& p,
                                           const TrainMemoryOptions& o) {
  if (requested != TrainFramework::kGeneric) {
    if (FrameworkSupports(requested, p, o)) return requested;
    return std::nullopt;
  }
  if (o.fp4_gemms) {
    if (FrameworkSupports(TrainFramework::kMegatronCore, p, o))
      return TrainFramework::kMegatronCore;
    return std::nullopt;
  }
  const bool model_parallel = p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1 || p.vpp > 1;
  static constexpr TrainFramework kModelParallel[] = {
      TrainFramework::kMegatronCore, TrainFramework::kDeepSpeed, TrainFramework::kFsdp};
  static constexpr TrainFramework kDataParallel[] = {TrainFramework::kDdp, TrainFramework::kFsdp,
                                                     TrainFramework::kDeepSpeed,
                                                     TrainFramework::kMegatronCore};
  for (TrainFramework f : model_parallel ? std::span<const TrainFramework>(kModelParallel)
                                         : std::span<const TrainFramework>(kDataParallel)) {
    if (FrameworkSupports(f, p, o)) return f;
  }
  return std::nullopt;
}

namespace {

constexpr int kMaxVpp = 128;  // above any real model's layers / 2

std::vector<int> Divisors(int n, int cap) {
  std::vector<int> d;
  for (int i = 1; i <= std::min(n, cap); ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

struct Candidate {
  Parallelism par;
  TrainMemoryOptions opt;
  TrainEval eval;
  int global_batch = 0;
  double per_sample = 0;
  TrainFramework framework = TrainFramework::kGeneric;
};

// Total order of BestTrainLayout's choice among layouts within 1% of the fastest.
bool SimplerThan(const Candidate& a, const Candidate& b) {
  const int sa = LayoutSimplicity(a.par, a.opt), sb = LayoutSimplicity(b.par, b.opt);
  if (sa != sb) return sa < sb;
  if (a.per_sample != b.per_sample) return a.per_sample < b.per_sample;
  auto key = [](const Candidate& c) {
    return std::make_tuple(c.par.tp, c.par.pp, c.par.dp, c.par.ep, c.par.vpp, c.opt.micro_batch,
                           c.opt.recompute_layers);
  };
  return key(a) < key(b);
}

}  // namespace

std::optional<LayoutChoice> BestTrainLayout(const ModelSpec& m, const TrainMemoryOptions& base,
                                            const TrainJob& job, const HardwareView& hw,
                                            const Calibration& cal, double headroom,
                                            const LayoutConstraints& fixed,
                                            LayoutSearchStats* stats) {
  LayoutSearchStats local_stats;
  LayoutSearchStats& st = stats ? *stats : local_stats;
  const int gpus = hw.gpus();
  const StepConstants k = StepConstants::From(cal, hw);  // one lookup per shape, not per layout
  const bool transformer = m.is_transformer() && m.layers > 0 && m.heads > 0;
  // Context parallelism: a decoder's sequence split over cp ranks (ring attention), searched
  // where each rank keeps a chunk of at least kMinCpChunk tokens: shorter chunks leave too little
  // attention work to hide the K/V ring behind, and the recipes that use it split 8K and longer
  // sequences (NeMo's Llama 3.1 405B at 8K: cp 2; its long-context recipes: 8-16K per rank).
  constexpr int kMinCpChunk = 4096;
  constexpr int kMaxCp = 32;
  std::vector<int> cps;
  if (fixed.cp) {
    cps = {*fixed.cp};
  } else {
    cps = {1};
    if (transformer && m.is_decoder_llm()) {
      for (int c = 2; c <= kMaxCp && base.seq_len / c >= kMinCpChunk; c *= 2) {
        if (base.seq_len % (2 * c) == 0) cps.push_back(c);
      }
    }
  }
  // ---- enumerate (cp, tp, pp, dp, ep) with their runnable batch and lower bound ------------
  struct Shape {
    int cp, tp, pp, dp, ep, gb;
    double bound;  // per sample
  };
  std::vector<Shape> shapes;
  std::vector<int> tps;
  if (fixed.tp) {
    tps = {*fixed.tp};
  } else if (transformer) {
    // Tensor parallelism stays inside the scale-up domain: the machine, or a rack-scale NVLink
    // domain / TPU slice beyond it (GB200 NVL72: 72 GPUs over 4-GPU trays), where frameworks
    // still cap it at 8 (NVIDIA's GB200 recipes run tp <= 8).
    const int tp_cap = std::max(hw.gpus_per_node, std::min(hw.ScaleUpGpus(), 8));
    // A group must not straddle two machines: tp divides the GPUs of a node (of the scale-up
    // domain beyond it). Ranks are laid out node by node, so tp 5 on 8-GPU nodes would put
    // every other group's all-reduces on the inter-node fabric.
    const int domain = std::max(1, hw.gpus_per_node);
    for (int t : Divisors(m.heads, tp_cap)) {
      const int within = t <= domain ? domain : std::max(domain, hw.ScaleUpGpus());
      if (within % t != 0) continue;
      if (m.mla || m.kv_heads <= 0 || m.kv_heads % t == 0) tps.push_back(t);
    }
  } else {
    tps = {1};
  }
  // Every (cp, tp) split of the GPUs, then pp, dp and ep within it.
  std::vector<std::pair<int, int>> splits;
  for (int cp : cps) {
    for (int tp : tps) {
      if (gpus % (static_cast<std::int64_t>(tp) * cp) == 0) splits.emplace_back(cp, tp);
    }
  }
  for (auto [cp, tp] : splits) {
    const int rest = gpus / (tp * cp);
    std::vector<int> pps;
    if (fixed.pp) {
      pps = {*fixed.pp};
    } else {
      pps = Divisors(rest, transformer ? m.layers : 1);
    }
    for (int pp : pps) {
      if (pp < 1 || rest % pp != 0) continue;
      const int dp = rest / pp;
      if (fixed.dp && *fixed.dp != dp) continue;
      int gb = job.global_batch;
      // A fixed micro-batch runs in whole steps of micro-batch x dp sequences.
      const long long unit =
          static_cast<long long>(dp) * std::max(1, fixed.micro_batch.value_or(1));
      if (gb > 0 && gb % unit != 0) {
        if (!fixed.round_global_batch || gb < unit) {
          ++st.batch_unrunnable;
          continue;
        }
        gb = static_cast<int>(gb / unit * unit);  // down to a batch this dp runs
      }
      std::vector<int> eps;
      if (fixed.ep) {
        eps = {*fixed.ep};
      } else if (m.moe) {
        eps = Divisors(std::gcd(m.moe->experts, dp * cp * tp), m.moe->experts);
      } else {
        eps = {1};
      }
      for (int ep : eps) {
        Parallelism par;
        par.tp = tp;
        par.pp = pp;
        par.dp = dp;
        par.cp = cp;
        par.ep = ep;
        TrainMemoryOptions o = base;
        o.micro_batch = 1;
        TrainJob lj = job;
        lj.global_batch = gb;
        const std::string why = LayoutError(m, par, o, lj, hw, /*terse=*/false);
        if (!why.empty()) {
          ++st.invalid;
          if (st.first_invalid.empty()) st.first_invalid = why;
          continue;
        }
        const double lb = TrainStepLowerBound(m, par, o, gb, hw, k).value();
        shapes.push_back({cp, tp, pp, dp, ep, gb, gb > 0 ? lb / gb : lb});
      }
    }
  }
  std::sort(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) {
    return std::tie(a.bound, a.cp, a.tp, a.pp, a.ep) < std::tie(b.bound, b.cp, b.tp, b.pp, b.ep);
  });
  // ---- evaluate, best bound first ----------------------------------------------------------
  std::vector<int> zeros;
  if (fixed.zero_stage) {
    zeros = {*fixed.zero_stage};
  } else {
    for (int z = 0; z <= std::clamp(fixed.max_zero_stage, 0, 3); ++z) zeros.push_back(z);
  }
  std::vector<Recompute> rcs =
      fixed.recompute
          ? std::vector<Recompute>{*fixed.recompute}
          : std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  const bool peft = base.method == TrainMethod::kLora || base.method == TrainMethod::kQlora;
  struct Offload {
    bool opt, param;
  };
  std::vector<Offload> offloads;
  for (Offload x : {Offload{false, false}, Offload{true, false}, Offload{true, true}}) {
    if (fixed.optimizer_offload && *fixed.optimizer_offload != x.opt) continue;
    if (fixed.param_offload && *fixed.param_offload != x.param) continue;
    if (!fixed.optimizer_offload && !fixed.param_offload && peft && x.opt)
      continue;  // adapters only
    offloads.push_back(x);
  }
  double fastest = 1e300;
  std::vector<Candidate> near;  // fitting layouts within 1% of the fastest so far
  near.reserve(64);
  std::vector<int> mbs;
  mbs.reserve(64);
  for (size_t si = 0; si < shapes.size(); ++si) {
    const Shape& sh = shapes[si];
    // Every layout of this shape takes at least `bound` per sample; none can come within 1%
    // of the fastest found, and the shapes after it are bounded higher still.
    if (sh.bound * 0.999 > fastest * 1.01) {
      st.pruned += static_cast<long>(shapes.size() - si);
      break;
    }
    const int cp = sh.cp, tp = sh.tp, pp = sh.pp, dp = sh.dp, ep = sh.ep;
    TrainJob lj = job;
    lj.global_batch = sh.gb;
    // Micro-batches: every divisor of the per-rank batch, found in O(sqrt) (a loop over every
    // value took seconds at a global batch of 10^8; found by fuzz_check_yaml), in increasing
    // order; any when the batch is unknown: powers of two up to 64.
    mbs.clear();
    if (sh.gb > 0) {
      const int per_rank = sh.gb / dp;
      for (int b = 1; b <= per_rank / b; ++b) {
        if (per_rank % b != 0) continue;
        mbs.push_back(b);
        if (b != per_rank / b) mbs.push_back(per_rank / b);
      }
      std::sort(mbs.begin(), mbs.end());
      if (fixed.micro_batch) {
        const int want = *fixed.micro_batch;
        const bool divides = std::find(mbs.begin(), mbs.end(), want) != mbs.end();
        mbs.clear();
        if (divides) mbs.push_back(want);
      }
    } else {
      for (int b = 1; b <= 64; b *= 2) {
        if (!fixed.micro_batch || b == *fixed.micro_batch) mbs.push_back(b);
      }
    }
    // Interleaving: every vpp that divides each stage's layers (or with embedding and loss
    // counted as layers: Megatron-Core's account_for_embedding/loss_in_pipeline_split).
    std::vector<int> vpps;
    if (fixed.vpp) {
      vpps = {*fixed.vpp};
    } else {
      vpps = {1};
      if (transformer && pp > 1) {
        // Interleaved stages per device: real recipes use a handful (NeMo's largest 12); a
        // config with millions of layers would otherwise try millions.
        for (int v = 2; v <= kMaxVpp && v * pp <= m.layers + 2; ++v) {
          if (m.layers % (pp * v) == 0 || (m.layers + 2) % (pp * v) == 0) vpps.push_back(v);
        }
      }
    }
    const int stage_layers = transformer ? (m.layers + pp - 1) / pp : 0;
    for (int vpp : vpps) {
      for (int z : zeros) {
        // Offload dominance: at a (recompute, micro-batch) that already fits with less offload,
        // more offload is slower (the CPU optimizer runs at host-memory bandwidth, below HBM;
        // parameter reads add traffic) and less simple: skipped.
        int fit_less_offload[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (Offload off : offloads) {
          int fit_this_offload[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          // ZeRO stages shard nothing on one data-parallel rank: the same layout as ZeRO-0,
          // except as the carrier of offload (ZeRO-Offload on one GPU).
          if (dp == 1 && z > 0 && !off.opt) continue;
          Parallelism par;
          par.tp = tp;
          par.pp = pp;
          par.dp = dp;
          par.cp = cp;
          par.ep = ep;
          par.vpp = vpp;
          par.zero_stage = z;
          par.sequence_parallel = fixed.sequence_parallel.value_or(tp > 1);
          TrainMemoryOptions o = base;
          // The layout checks below see this shape's smallest micro-batch, not the caller's.
          o.micro_batch = mbs.empty() ? 1 : mbs.front();
          o.optimizer_offload = off.opt;
          o.param_offload = off.param;
          if (fixed.pipeline_needs_zero01 && pp > 1 && z >= 2) {
            ++st.invalid;
            continue;
          }
          if (fixed.max_zero_stage < z && !fixed.zero_stage) continue;
          auto fw = FrameworkFor(fixed.framework, par, o);
          // A ZeRO stage the caller fixed (a validation case's recorded run) is honoured.
          if (!fw && fixed.zero_stage) fw = fixed.framework;
          if (!fw) {
            ++st.invalid;
            continue;
          }
          // A searched context-parallel split runs where context parallelism is a documented
          // launch option (Megatron-Core's --context-parallel-size, torchtitan's
          // context_parallel_degree), not as FSDP with torch's experimental context_parallel.
          if (cp > 1 && !fixed.cp && *fw != TrainFramework::kMegatronCore &&
              *fw != TrainFramework::kTorchtitan) {
            ++st.invalid;
            continue;
          }
          ApplyFrameworkMemory(*fw, par, o);
          if (!LayoutError(m, par, o, lj, hw, /*terse=*/true).empty()) {
            ++st.invalid;
            continue;
          }
          if (fixed.host_ram_per_gpu_bytes && (off.opt || off.param || o.paged_optimizer)) {
            TrainMemoryOptions ho = o;
            ho.notes = false;
            if (EstimateTrainingMemory(m, par, ho).host_offload.value() >
                *fixed.host_ram_per_gpu_bytes) {
              ++st.over_memory;
              continue;
            }
          }
          // Memory first: the least memory this (vpp, ZeRO, offload) can take is full recompute
          // (or the fixed level) at the smallest micro-batch; when that does not fit, nothing
          // of it does (activations only grow with less recompute and larger micro-batches).
          if (!mbs.empty() && transformer) {
            TrainMemoryOptions lo = o;
            lo.micro_batch = mbs.front();
            lo.recompute = fixed.recompute.value_or(Recompute::kFull);
            lo.recompute_layers = 0;
            if (lj.global_batch > 0)
              lo.num_microbatches = std::max(1, lj.global_batch / (lo.micro_batch * dp));
            if (EstimateTrainingMemory(m, par, lo).Total().value() >
                hw.acc->Usable().value() * headroom) {
              ++st.over_memory;
              continue;
            }
          }
          // Recompute options: the searched levels, and when full recompute is searched (not
          // fixed by the caller) also block recompute of 1/4, 1/2 and 3/4 of the stage's
          // layers (Megatron's recompute_num_layers): the least recompute that fits.
          struct RcOption {
            Recompute rc;
            int layers;
          };
          RcOption rc_opts[8];
          int n_rc = 0;
          for (Recompute rc : rcs) {
            if (rc == Recompute::kFull && !fixed.recompute && stage_layers >= 4) {
              for (int q = 1; q <= 3; ++q) rc_opts[n_rc++] = {rc, stage_layers * q / 4};
            }
            rc_opts[n_rc++] = {rc, 0};
          }
          // Dominance: at a micro-batch where no recompute fits, any recompute is slower and
          // less simple; where block recompute of k layers fits, recomputing more is slower.
          int none_fit_b = 0, full_fit_b = 0;
          for (int ri = 0; ri < n_rc; ++ri) {
            const Recompute rc = rc_opts[ri].rc;
            // Only the recompute the framework can run (HF/DeepSpeed/torchtune: every layer).
            if (!FrameworkRecomputes(*fw, rc, rc_opts[ri].layers)) continue;
            const int dominated_upto = rc == Recompute::kSelective ? none_fit_b
                                       : rc == Recompute::kFull ? std::max(none_fit_b, full_fit_b)
                                                                : 0;
            for (int b : mbs) {
              if (b <= dominated_upto) continue;
              if (b <= fit_less_offload[ri]) continue;
              o.micro_batch = b;
              o.recompute = rc;
              o.recompute_layers = rc_opts[ri].layers;
              TrainEval ev = EvaluateTraining(m, par, o, lj, hw, cal, headroom, nullptr, &k);
              ++st.evaluated;
              if (!ev.fits) {
                if (ev.step.valid || ev.why == "over memory") {
                  ++st.over_memory;
                  break;  // larger micro-batches need more memory
                }
                ++st.invalid;
                continue;
              }
              ++st.fits;
              fit_this_offload[ri] = std::max(fit_this_offload[ri], b);
              if (rc == Recompute::kNone) none_fit_b = std::max(none_fit_b, b);
              if (rc == Recompute::kFull) full_fit_b = std::max(full_fit_b, b);
              const double t = ev.step.total.value() / std::max(1, lj.global_batch);
              if (t > fastest * 1.01) continue;
              if (t < fastest) {
                fastest = t;
                std::erase_if(near,
                              [&](const Candidate& c) { return c.per_sample > fastest * 1.01; });
              }
              near.push_back(Candidate{par, o, std::move(ev), lj.global_batch, t, *fw});
            }
          }
          for (int ri = 0; ri < 8; ++ri) {
            fit_less_offload[ri] = std::max(fit_less_offload[ri], fit_this_offload[ri]);
          }
        }
      }
    }
  }
  if (near.empty()) return std::nullopt;
  const Candidate* best = &near.front();
  for (const Candidate& c : near) {
    if (SimplerThan(c, *best)) best = &c;
  }
  LayoutChoice out{best->par,          best->opt,    best->eval,
                   best->global_batch, st.evaluated, best->framework};
  return out;
}

}  // namespace gpuplan

namespace gpuplan {

namespace {

// Sets a calibration entry (adds it where absent), with the source that sets it.
void SetEntry(Calibration& cal, std::string_view key, double value, const char* source) {
  for (auto& e : cal.entries) {
    if (e.key == key) {
      e.value = value;
      return;
    }
  }
  cal.entries.push_back({std::string(key), value, source});
}

}  // namespace

void ApplyBenchmarkImplementation(const TrainBenchmark& b, Calibration& cal,
                                  LayoutConstraints& fixed) {
  if (!b.ref_dp_overlap) return;
  SetEntry(cal, "dp_overlap", *b.ref_dp_overlap, "benchmark implementation");
  // The sharded optimizer's parameter all-gather runs in its step, after the update, too.
  SetEntry(cal, "param_gather_overlap", *b.ref_dp_overlap, "benchmark implementation");
  // Its data parallelism is the implementation's own (DDP, or apex's DistributedFusedLAMB
  // sharding the optimizer states): no ZeRO-3 / FSDP layout runs it.
  fixed.max_zero_stage = std::min(fixed.max_zero_stage, 1);
}

std::string ApplyAcceleratorLimits(const Accelerator& acc, LayoutConstraints& fixed) {
  if (!acc.AwsNeuron()) return "";
  fixed.max_zero_stage = std::min(fixed.max_zero_stage, 1);
  fixed.optimizer_offload = false;
  fixed.param_offload = false;
  return "Trainium trains with NeuronX Distributed Training (tensor, pipeline and sequence "
         "parallelism with ZeRO-1): its layouts have no ZeRO-2/3, FSDP or CPU offload";
}

void ApplyFramework(TrainFramework f, Calibration& cal, LayoutConstraints& fixed) {
  auto set = [&cal](std::string_view key, double value) {
    SetEntry(cal, key, value, "framework capability");
  };
  switch (f) {
    case TrainFramework::kGeneric:
      break;
    case TrainFramework::kMegatronLegacy:
      // Its distributed optimizer is ZeRO-1; gradients are all-reduced after the backward pass.
      fixed.max_zero_stage = std::min(fixed.max_zero_stage, 1);
      set("dp_overlap", 0.0);
      break;
    case TrainFramework::kMegatronCore:
      set("tp_comm_overlap", cal.Get("framework.mcore.tp_comm_overlap", 0.0));
      set("param_gather_overlap", cal.Get("framework.mcore.param_gather_overlap", 0.0));
      // Transformer Engine's fused attention (cuDNN, FlashAttention-3 class on Hopper) reaches
      // on Hopper what FlashAttention-2 reaches on Ampere: no Hopper penalty.
      set("attention_efficiency.hopper", cal.Get("attention_efficiency", 0.45));
      break;
    case TrainFramework::kDeepSpeed:
      fixed.pipeline_needs_zero01 = true;
      break;
    case TrainFramework::kFsdp:
    case TrainFramework::kDdp:
    case TrainFramework::kTorchtune:
    case TrainFramework::kTorchtitan:
      break;  // layout rules only (FrameworkSupports); memory: ApplyFrameworkMemory
  }
  fixed.framework = f;
}

}  // namespace gpuplan
