#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/plan.h"

namespace gpuplan {

TrainEval EvaluateTraining(const ModelSpec& m, const Parallelism& par,
                           const TrainMemoryOptions& opt, const TrainJob& job,
                           const HardwareView& hw, const Calibration& cal, double headroom,
                           Trace* trace, const StepConstants* k) {
  TrainEval ev;
  TrainMemoryOptions o = opt;
  const int dp = std::max(1, par.dp);
  const int b = std::max(1, o.micro_batch);
  if (job.global_batch > 0) {
    // 64-bit: b x dp can pass INT_MAX on large clusters.
    const long long per_step = static_cast<long long>(b) * dp;
    o.num_microbatches = static_cast<int>(std::max<long long>(1, job.global_batch / per_step));
  }
  ev.memory = EstimateTrainingMemory(m, par, o);
  const double limit = hw.acc->memory.value() * headroom;
  if (ev.memory.Total().value() > limit) {
    // In the search loop (constants given) the reason is never shown: no formatting there.
    ev.why = k != nullptr ? "over memory"
                          : fmt::format("needs {:.1f} GiB per GPU, {:.0f}% of {:.0f} GiB is {:.1f} GiB",
                                        ToGiB(ev.memory.Total()), headroom * 100,
                                        ToGiB(hw.acc->memory), limit / kBytesPerGiB);
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

namespace {

std::vector<int> Divisors(int n, int cap) {
  std::vector<int> d;
  for (int i = 1; i <= std::min(n, cap); ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

}  // namespace

std::optional<LayoutChoice> BestTrainLayout(const ModelSpec& m, const TrainMemoryOptions& base,
                                            const TrainJob& job, const HardwareView& hw,
                                            const Calibration& cal, double headroom,
                                            const LayoutConstraints& fixed) {
  const int gpus = hw.gpus();
  const StepConstants k = StepConstants::From(cal, hw);  // one lookup per shape, not per layout
  std::optional<LayoutChoice> best, fastest;
  long evaluated = 0;
  std::vector<int> tps = fixed.tp ? std::vector<int>{*fixed.tp}
                                  : Divisors(std::max(1, m.heads > 0 ? m.heads : 1), hw.gpus_per_node);
  std::vector<int> pps = fixed.pp ? std::vector<int>{*fixed.pp}
                                  : Divisors(std::max(1, m.layers > 0 ? m.layers : 1), 64);
  std::vector<int> zeros;
  if (fixed.zero_stage) {
    zeros = {*fixed.zero_stage};
  } else {
    for (int z = 0; z <= std::clamp(fixed.max_zero_stage, 0, 3); ++z) zeros.push_back(z);
  }
  std::vector<Recompute> rcs = fixed.recompute
                                   ? std::vector<Recompute>{*fixed.recompute}
                                   : std::vector<Recompute>{Recompute::kNone, Recompute::kSelective,
                                                            Recompute::kFull};
  const int cp = fixed.cp.value_or(1);
  for (int tp : tps) {
   for (int vpp_try : {1, 2, 3, 4, 8}) {
    if (tp > gpus) continue;
    for (int pp : pps) {
      const long long model_par = static_cast<long long>(tp) * pp * cp;  // no int overflow
      if (model_par > gpus || gpus % model_par != 0) continue;
      const int dp = static_cast<int>(gpus / model_par);
      if (fixed.dp && *fixed.dp != dp) continue;
      // Interleaved stages need pp > 1 and layers divisible by pp x vpp, or by pp x vpp once
      // the embedding and the loss count as one layer each (Megatron-Core's
      // account_for_embedding/loss_in_pipeline_split: Llama 3.1 405B's 126 layers on pp 8 x vpp 8).
      const int vpp = fixed.vpp.value_or(vpp_try);
      if (fixed.vpp && vpp_try != 1) continue;
      if (vpp > 1 && (pp == 1 || static_cast<long long>(pp) * vpp > m.layers + 2 ||
                      (m.layers % (pp * vpp) != 0 && (m.layers + 2) % (pp * vpp) != 0))) continue;
      // Micro-batches: powers of two up to 64, and the whole per-rank batch (no gradient
      // accumulation: how CNNs train, e.g. 408 images per GPU).
      int cand[9];
      int nc = 0;
      for (int b = 1; b <= 64; b *= 2) cand[nc++] = b;
      const int per_rank = job.global_batch > 0 ? job.global_batch / dp : 0;
      if (per_rank > 64 && per_rank <= 4096 && job.global_batch % dp == 0) cand[nc++] = per_rank;
      for (int z : zeros) {
        if (dp == 1 && z > 0) continue;
        if (fixed.pipeline_needs_zero01 && pp > 1 && z >= 2) continue;
        // Recompute options: the searched levels, and when full recompute is searched (not
        // fixed by the caller) also block recompute of 1/4, 1/2 and 3/4 of the stage's layers
        // (Megatron's recompute_num_layers): the least recompute that fits.
        const int stage_layers = m.layers > 0 ? (m.layers + pp - 1) / pp : 0;
        struct RcOption {
          Recompute rc;
          int layers;
        };
        RcOption rc_opts[8];
        int n_rc = 0;
        for (Recompute rc : rcs) {
          if (rc == Recompute::kFull && !fixed.recompute && stage_layers >= 4 && m.is_transformer()) {
            for (int q = 1; q <= 3; ++q) rc_opts[n_rc++] = {rc, stage_layers * q / 4};
          }
          rc_opts[n_rc++] = {rc, 0};
        }
        // Dominance: at a micro-batch where no recompute fits, any recompute is slower; where
        // block recompute of k layers fits, recomputing more layers is slower. Those are skipped.
        int none_fit_b = 0, full_fit_b = 0;
        for (int ri = 0; ri < n_rc; ++ri) {
          const Recompute rc = rc_opts[ri].rc;
          const int dominated_upto = rc == Recompute::kSelective ? none_fit_b
                                     : rc == Recompute::kFull    ? std::max(none_fit_b, full_fit_b)
                                                                 : 0;
          for (int ci = 0; ci < nc; ++ci) {
            const int b = cand[ci];
            if (fixed.micro_batch && b != *fixed.micro_batch) continue;
            if (b <= dominated_upto) continue;
            TrainJob lj = job;
            if (fixed.round_global_batch && job.global_batch > 0) {
              const long unit = static_cast<long>(b) * dp;  // nearest multiple, at least one
              lj.global_batch = static_cast<int>(std::max(1L, (job.global_batch + unit / 2) / unit) * unit);
            }
            if (lj.global_batch > 0 && lj.global_batch % (static_cast<long long>(b) * dp) != 0) continue;
            Parallelism par;
            par.tp = tp;
            par.pp = pp;
            par.dp = dp;
            par.cp = cp;
            par.ep = fixed.ep.value_or(1);
            par.vpp = vpp;
            par.zero_stage = z;
            par.sequence_parallel = fixed.sequence_parallel.value_or(tp > 1);
            TrainMemoryOptions o = base;
            o.micro_batch = b;
            o.recompute = rc;
            o.recompute_layers = rc_opts[ri].layers;
            TrainEval ev = EvaluateTraining(m, par, o, lj, hw, cal, headroom, nullptr, &k);
            ++evaluated;
            if (!ev.fits) break;  // larger micro-batches need more memory
            if (rc == Recompute::kNone) none_fit_b = std::max(none_fit_b, b);
            if (rc == Recompute::kFull) full_fit_b = std::max(full_fit_b, b);
            // Rounded batches differ per layout: compare time per sample.
            auto per_sample = [](const TrainEval& e, int gb) {
              return e.step.total.value() / std::max(1, gb);
            };
            // Within 1% of the fastest, the simpler layout wins (lower ZeRO stage, less
            // recompute, no interleaving): what users run, and the same speed.
            auto simplicity = [](const Parallelism& p, const TrainMemoryOptions& x) {
              return p.zero_stage * 100 + static_cast<int>(x.recompute) * 10 + (p.vpp > 1 ? 1 : 0);
            };
            const double t_new = per_sample(ev, lj.global_batch);
            if (!fastest || t_new < per_sample(fastest->eval, fastest->global_batch)) {
              fastest = LayoutChoice{par, o, ev, lj.global_batch, 0};
            }
            bool take = !best;
            if (best) {
              const double t_best = per_sample(best->eval, best->global_batch);
              const double t_fast = per_sample(fastest->eval, fastest->global_batch);
              const int s_new = simplicity(par, o), s_best = simplicity(best->par, best->opt);
              take = t_new < t_best * 0.99 || (t_new <= t_fast * 1.01 && s_new < s_best) ||
                     (t_new < t_best && s_new <= s_best);
            }
            if (take) best = LayoutChoice{par, o, ev, lj.global_batch, 0};
          }
        }
      }
    }
   }
  }
  // The simplicity preference never costs more than 1% against the fastest layout.
  if (best && fastest &&
      best->eval.step.total.value() / std::max(1, best->global_batch) >
          1.01 * fastest->eval.step.total.value() / std::max(1, fastest->global_batch)) {
    best = fastest;
  }
  if (best) best->evaluated = evaluated;
  return best;
}

}  // namespace gpuplan

namespace gpuplan {

void ApplyFramework(TrainFramework f, Calibration& cal, LayoutConstraints& fixed) {
  auto set = [&cal](std::string_view key, double value) {
    for (auto& e : cal.entries) {
      if (e.key == key) {
        e.value = value;
        return;
      }
    }
    cal.entries.push_back({std::string(key), value, "framework capability"});
  };
  switch (f) {
    case TrainFramework::kGeneric: break;
    case TrainFramework::kMegatronLegacy:
      // Its distributed optimizer is ZeRO-1; gradients are all-reduced after the backward pass.
      fixed.max_zero_stage = std::min(fixed.max_zero_stage, 1);
      set("dp_overlap", 0.0);
      break;
    case TrainFramework::kMegatronCore:
      set("tp_comm_overlap", cal.Get("framework.mcore.tp_comm_overlap", 0.0));
      set("param_gather_overlap", cal.Get("framework.mcore.param_gather_overlap", 0.0));
      break;
    case TrainFramework::kDeepSpeed:
      fixed.pipeline_needs_zero01 = true;
      break;
  }
}

}  // namespace gpuplan
