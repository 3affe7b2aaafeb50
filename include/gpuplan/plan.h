// The one prediction path for training: Evaluate(job, hardware, layout) -> memory + step time,
// used by the planner's search, by `validate` and by `check`. Plus the layout search that
// fills in what a user (or a validation case) leaves open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuplan/estimate.h"
#include "gpuplan/perf.h"

namespace gpuplan {

struct TrainEval {
  MemoryBreakdown memory;  // per GPU
  StepTime step;
  bool fits = false;       // memory within headroom x device memory and the layout is valid
  std::string why;         // when it does not fit or cannot run
  double job_seconds = 0;  // whole job when the job's size is known
};

// Evaluates one layout. `headroom` is the usable fraction of device memory (B5: 0.8). `k`:
// the step constants of `cal` for `hw` (StepConstants::From), given by search loops; with it
// the reason a layout does not fit is terse ("over memory") instead of formatted.
TrainEval EvaluateTraining(const ModelSpec& m, const Parallelism& par,
                           const TrainMemoryOptions& opt, const TrainJob& job,
                           const HardwareView& hw, const Calibration& cal, double headroom,
                           Trace* trace = nullptr, const StepConstants* k = nullptr);

// What is fixed when searching layouts; empty fields are searched.
struct LayoutConstraints {
  std::optional<int> tp, pp, dp, cp, ep, vpp, zero_stage, micro_batch;
  // Highest ZeRO stage the framework offers when the stage is searched (Megatron: 1, its
  // distributed optimizer; DeepSpeed/FSDP: 3).
  int max_zero_stage = 3;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  // The job's global batch is a default, not a requirement: round it to the nearest multiple
  // of micro-batch x dp for each layout instead of rejecting layouts it does not divide.
  bool round_global_batch = false;
  // DeepSpeed: ZeRO stages 2-3 cannot be combined with pipeline parallelism.
  bool pipeline_needs_zero01 = false;
};

// Applies the framework's capabilities: search constraints and calibration overrides.
void ApplyFramework(TrainFramework f, Calibration& cal, LayoutConstraints& fixed);

struct LayoutChoice {
  Parallelism par;
  TrainMemoryOptions opt;
  TrainEval eval;
  int global_batch = 0;  // the job's, or its rounding (LayoutConstraints::round_global_batch)
  long evaluated = 0;    // layouts evaluated
};

// The fastest layout on `hw` (all of its GPUs) that fits memory, honouring `fixed`. Searches
// TP within a node (divisors of heads), PP over divisors of layers, ZeRO 0-3, micro-batch
// powers of two, recompute none/selective/full. Empty when nothing fits.
std::optional<LayoutChoice> BestTrainLayout(const ModelSpec& m, const TrainMemoryOptions& base,
                                            const TrainJob& job, const HardwareView& hw,
                                            const Calibration& cal, double headroom,
                                            const LayoutConstraints& fixed);

}  // namespace gpuplan
