// The one prediction path for training: Evaluate(job, hardware, layout) -> memory + step time,
// used by the planner's search, by `validate` and by `check`. Plus the layout search that
// fills in what a user (or a validation case) leaves open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuplan/benchmark.h"
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

// Why `par` cannot run `m` on `hw` (empty when it can): tp divides the attention heads and the
// KV heads (Megatron's num_query_groups % tp), pp <= layers (uneven stages are modelled: the
// most loaded stage holds ceil(layers / pp)), interleaving divides each stage's layers,
// tp x pp x dp x cp = the hardware's GPUs, cp divides the sequence, ep divides the experts
// and the data-parallel group (ep = 1 for dense models), the global batch is micro-batch x
// dp x accumulation, offload needs ZeRO >= 1 (parameters: ZeRO-3). Non-transformers run data
// parallel only. `terse`: a fixed string per rule (no formatting, for search loops).
std::string LayoutError(const ModelSpec& m, const Parallelism& par, const TrainMemoryOptions& opt,
                        const TrainJob& job, const HardwareView& hw, bool terse = false);

// Evaluates one layout. `headroom` is the usable fraction of device memory (B5: 0.8). `k`:
// the step constants of `cal` for `hw` (StepConstants::From), given by search loops; with it
// the reason a layout does not fit is terse ("over memory") instead of formatted, and a layout
// over memory gets no step estimate (search loops never rank it). An invalid layout
// (LayoutError) is not evaluated: fits is false and `why` gives the reason.
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
  // Optimizer / parameter offload to host RAM: searched when empty.
  std::optional<bool> optimizer_offload, param_offload;
  // Host RAM per GPU the machines of the shape offer (the largest of them): a layout whose
  // offloaded states need more cannot run there. Empty = unbounded.
  std::optional<double> host_ram_per_gpu_bytes;
  // The job's global batch is a default or cannot be divided by the cluster's data-parallel
  // size: a layout whose dp does not divide it runs the largest batch below it that it can
  // (floor(batch / dp) x dp, never rounded up). Off: such layouts are rejected.
  bool round_global_batch = false;
  // DeepSpeed: ZeRO stages 2-3 cannot be combined with pipeline parallelism.
  bool pipeline_needs_zero01 = false;
  // The framework that must run the plan; kGeneric = any (each layout names the framework
  // that runs it: FrameworkFor).
  TrainFramework framework = TrainFramework::kGeneric;
};

// Applies the framework's capabilities: search constraints and calibration overrides.
void ApplyFramework(TrainFramework f, Calibration& cal, LayoutConstraints& fixed);

// Applies what the accelerator's training stack runs, and says it ("" = nothing to apply): on
// AWS Trainium, NeuronX Distributed Training (tensor, pipeline and sequence parallelism with
// ZeRO-1; no ZeRO-2/3, FSDP or CPU offload). docs/model.md 9.2.
std::string ApplyAcceleratorLimits(const Accelerator& acc, LayoutConstraints& fixed);

// Applies what a run-to-target benchmark's reference implementation does differently from its
// framework (data/benchmarks.csv ref_dp_overlap: MLPerf BERT and Stable Diffusion reduce their
// gradients after the backward, with their own data parallelism: ZeRO <= 1). For runs of that
// implementation: a job naming the benchmark with its reference framework, and NVIDIA-GPU
// submissions to it.
void ApplyBenchmarkImplementation(const TrainBenchmark& b, Calibration& cal,
                                  LayoutConstraints& fixed);

// Whether framework `f` runs the layout: Megatron(-Core)/NeMo: ZeRO <= 1 (distributed
// optimizer), optimizer offload with it (Megatron-Core optimizer_cpu_offload); DeepSpeed:
// pipelines only with ZeRO 0-1, offload with ZeRO >= 1 (parameters: ZeRO-3); FSDP/torchtune:
// no pipeline, no expert parallelism, ZeRO 0/2/3, offload of parameters and optimizer
// together (CPUOffload) under full sharding; DDP: replicated data parallelism only. Recompute
// as FrameworkRecomputes says.
bool FrameworkSupports(TrainFramework f, const Parallelism& par, const TrainMemoryOptions& opt);

// Whether framework `f` can recompute activations this way. The HF Trainer / Accelerate stack
// (DDP, FSDP, DeepSpeed: `gradient_checkpointing`) and torchtune
// (`enable_activation_checkpointing`) checkpoint every decoder layer: no attention-only (selective)
// recompute and no subset of layers
// (`layers` > 0). Megatron(-Core)/NeMo (--recompute-granularity selective, --recompute-method
// block) and torchtitan (op-level or every-Nth-layer SAC) have both.
bool FrameworkRecomputes(TrainFramework f, Recompute rc, int layers);

// Whether any framework (Megatron, DeepSpeed, FSDP, DDP, torchtune, torchtitan) runs the layout.
bool AnyFrameworkSupports(const Parallelism& par, const TrainMemoryOptions& opt);

// The framework that runs the layout: `requested` when it supports it; for kGeneric the first
// that does of Megatron-Core (model parallel layouts), DDP, FSDP, DeepSpeed, then Megatron-Core
// (data parallel layouts that recompute selectively or a subset of layers). Empty when none.
std::optional<TrainFramework> FrameworkFor(TrainFramework requested, const Parallelism& par,
                                           const TrainMemoryOptions& opt);

struct LayoutChoice {
  Parallelism par;
  TrainMemoryOptions opt;
  TrainEval eval;
  int global_batch = 0;  // the job's, or its rounding down (round_global_batch)
  long evaluated = 0;    // layouts evaluated
  TrainFramework framework = TrainFramework::kGeneric;  // the framework that runs it
};

// What a layout search saw: counts per outcome, so "nothing fits" can name the real reason.
struct LayoutSearchStats {
  long evaluated = 0;         // EvaluateTraining calls
  long fits = 0;              // of which fit memory
  long over_memory = 0;       // of which did not
  long invalid = 0;           // layouts rejected before evaluation (divisibility, framework)
  long batch_unrunnable = 0;  // (tp, pp, dp) whose dp cannot run the global batch
  long pruned = 0;            // (tp, pp, dp, ep) skipped by the lower bound
  std::string first_invalid;  // one example reason
};

// The fastest layout on `hw` (all of its GPUs) that fits memory, honouring `fixed`, and among
// layouts within 1% of the fastest the simplest (lower ZeRO stage, less recompute, no
// interleaving, no offload; ties by time, then by the layout's fields). Searches TP within a
// node (divisors of the heads and KV heads), PP up to the layers (uneven stages modelled),
// EP over divisors of the experts within dp (MoE), interleaving, ZeRO 0-3, every micro-batch
// that divides the per-rank batch, recompute none/selective/block/full, optimizer and
// parameter offload. Layouts whose lower bound (TrainStepLowerBound) cannot come within 1% of
// the fastest found are skipped. Empty when nothing fits.
std::optional<LayoutChoice> BestTrainLayout(const ModelSpec& m, const TrainMemoryOptions& base,
                                            const TrainJob& job, const HardwareView& hw,
                                            const Calibration& cal, double headroom,
                                            const LayoutConstraints& fixed,
                                            LayoutSearchStats* stats = nullptr);

// The ranking key of BestTrainLayout, exposed for tests: lower is simpler.
int LayoutSimplicity(const Parallelism& p, const TrainMemoryOptions& o);

}  // namespace gpuplan
