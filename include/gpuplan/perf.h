// Performance model: calibration, the hardware a job runs on, and the training step time.
// Pure functions; formulas and sources in docs/model.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/result.h"
#include "gpuplan/units.h"

namespace gpuplan {

// An accelerator's GEMM efficiency and power ceiling (docs/model.md 5.2-5.3).
struct ArchEfficiency {
  double gemm_eff = 0.8;
  double power_cap = 1.0;
};

// Achievable-efficiency constants with sources (data/calibration.csv; --calibration overrides).
struct Calibration {
  struct Entry {
    std::string key;
    double value = 0;
    std::string source;
  };
  std::vector<Entry> entries;

  // The value of `key`, or of `key.<keyword>` where keyword appears in `arch`; `fallback`
  // when absent.
  double Get(std::string_view key, double fallback) const;
  double ForArch(std::string_view key, std::string_view arch, double fallback) const;
  double GemmEfficiency(const Accelerator& a) const;
  // GEMM efficiency and the sustained fraction of dense peak under the board's power limit
  // (1 = not power-bound), in one pass over the table (the hot paths' lookup).
  ArchEfficiency ForAccelerator(const Accelerator& a) const;
};

Result<Calibration> ParseCalibration(std::string_view text, std::string_view label);
// The built-in table (data/calibration.csv).
const Calibration& DefaultCalibration();

// `cal` with the spot interruption rate (interruptions per node-hour) replaced by `rate`,
// sourced "--spot-rate". Errors: `field` names the input when rate is outside [0, 1].
Result<Calibration> WithSpotRate(Calibration cal, double rate, std::string_view field);

// A simple trace of named terms for --explain. Null in the search loop.
struct Trace {
  struct Term {
    std::string name;
    std::string formula;
    double value = 0;
    std::string unit;
  };
  std::vector<Term> terms;
  void Add(std::string name, std::string formula, double value, std::string unit) {
    terms.push_back({std::move(name), std::move(formula), value, std::move(unit)});
  }
};

// What the job runs on: the accelerator, the machine shape and its links.
struct HardwareView {
  const Accelerator* acc = nullptr;
  int gpus_per_node = 8;
  int nodes = 1;
  IntraNodeLink intra = IntraNodeLink::kNvswitch;
  InterNodeFabric inter = InterNodeFabric::kInfiniband;
  // Per-GPU, per-direction bandwidths.
  BytesPerSec intra_bw;
  BytesPerSec inter_bw;
  // Point-to-point links per GPU when the node's GPUs are a full mesh without a switch (AMD
  // Infinity Fabric: each MI300X has 7 links of 64 GB/s per direction, one to each peer);
  // 0 for switched or shared links (NVSwitch, NVLink bridges, PCIe), where any group of the
  // node's GPUs gets `intra_bw`.
  int mesh_links = 0;
  // GPUs of one scale-up domain (Accelerator::nvlink_domain) when it spans machines; 0 = one
  // machine. Collectives among ranks of one domain run at intra-node bandwidth.
  int scaleup_gpus = 0;
  int ScaleUpGpus() const { return scaleup_gpus > gpus_per_node ? scaleup_gpus : gpus_per_node; }
  // Per-GPU, per-direction bandwidth a collective over `group` GPUs of one node can use: on a
  // mesh only the links to the group's other members carry it (group - 1 of `mesh_links`).
  BytesPerSec IntraBwFor(int group) const;
  // Per-GPU host link (PCIe to host RAM), per direction; 0 = from the accelerator's PCIe gen.
  BytesPerSec host_bw;
  int gpus() const { return gpus_per_node * nodes; }
};

// Builds the view of `nodes` machines of `inst` (its accelerator must be `acc`).
HardwareView HardwareFromInstance(const InstanceType& inst, const Accelerator& acc, int nodes);

// A training job's size: what one step and the whole run process.
struct TrainJob {
  int global_batch = 0;  // sequences (samples) per step
  double tokens = 0;     // tokens to train on in total (0 = unknown)
  double samples = 0;    // samples in total for non-token models (0 = unknown)
};

struct StepTime {
  Seconds compute;        // GEMMs + attention + element-wise, incl. recompute, all micro-batches
  Seconds tp_comm;        // tensor/sequence/context-parallel collectives (exposed)
  Seconds dp_comm;        // data-parallel / ZeRO collectives (exposed part)
  Seconds dp_comm_total;  // before overlap
  Seconds pp_comm;        // pipeline point-to-point (exposed)
  Seconds ep_comm;        // MoE all-to-all (exposed)
  Seconds bubble;         // pipeline fill/drain
  Seconds optimizer;      // optimizer step (on the CPU under optimizer offload)
  Seconds offload;        // host-link transfers of offloaded states (exposed)
  Seconds total;
  Flop model_flops;     // per step, whole job: 6N-style + attention, no recompute
  Flop hardware_flops;  // per step, whole job, including recompute
  // The attention-core share of model_flops (QK^T and AV over the full s x s square, forward
  // and backward). Megatron-Core reports model FLOPs with half of it (causal mask).
  Flop attention_flops;
  int num_microbatches = 1;
  double mfu = 0;  // model FLOPs / (time x GPUs x dense peak)
  double tokens_per_s_per_gpu = 0;
  double samples_per_s = 0;
  bool valid = false;  // false when the layout cannot run (reason says why)
  std::string reason;
};

// Training FLOPs per token (forward + backward = 3x forward; LoRA: frozen weights need no
// weight gradients, so 2x forward for the base). `recompute` adds the recomputed forward.
Flop TrainingFlopsPerToken(const ModelSpec& m, int seq_len, TrainMethod method, Recompute rc,
                           bool include_recompute);

// The calibration values one training step reads, looked up once per hardware shape (the
// layout search evaluates thousands of layouts on one shape; a table lookup per term would
// dominate its time).
struct StepConstants {
  double gemm_eff = 0, gemm_knee = 0, hbm_eff = 0, attn_eff = 0, kernel_s = 0, fp8_factor = 0;
  double power_cap = 1;  // ArchEfficiency::power_cap: sustained fraction of peak (T4: 70 W board)
  double passes_fused = 0, passes_eager = 0, kernels_per_layer = 0, attn_bwd_factor = 0;
  double cnn_knee_flops = 0, cnn_factor = 0, cnn_train_passes = 0;
  double cnn_train_passes_eager = 0;  // the same with batch norm and ReLU as separate kernels
  // Element-wise passes of a CNN whose norms are frozen (folded into the convolution).
  double cnn_frozen_fwd_passes = 0, cnn_frozen_bwd_passes = 0;
  double intra_link_eff = 0, inter_link_eff = 0, lat_intra_s = 0, lat_inter_s = 0;
  double tp_overlap = 0, param_gather_overlap = 0, zero3_overlap = 0, dp_overlap = 0;
  double host_link_eff = 0, host_memory_bw = 0, nf4_dequant_bytes = 0;
  static StepConstants From(const Calibration& cal, const HardwareView& hw);
};

// One training step (one global batch) on `hw` with layout `par` and options `opt`
// (micro_batch, seq_len, recompute, precision, method). Pure. `k`: the constants of `cal` for
// `hw`, when the caller has them (StepConstants::From), else looked up here.
StepTime EstimateTrainStep(const ModelSpec& m, const Parallelism& par,
                           const TrainMemoryOptions& opt, int global_batch, const HardwareView& hw,
                           const Calibration& cal, Trace* trace = nullptr,
                           const StepConstants* k = nullptr);

// The tensor rate a training step's linear layers run at: the precision's (fp32 as TF32), or
// the FP4 rate for NVFP4 training; nullopt where the device has neither.
std::optional<FlopPerSec> TrainGemmPeak(const Accelerator& acc, Precision p, bool fp4_gemms);

// Why bitsandbytes (QLoRA's NF4 base) cannot run on `acc`, or "" when it can: it has CUDA,
// ROCm, Intel XPU and Gaudi (HPU) backends, none for AWS Neuron or TPU. docs/model.md 9.2.
std::string BitsandbytesUnsupported(const Accelerator& acc);

// Why a training job cannot run on an accelerator, and what runs instead.
struct CannotTrain {
  bool precision = true;  // no tensor path for the precision; false: no bitsandbytes (QLoRA)
  std::string why;        // "no FP8 tensor cores: FP8 training ... needs compute capability 8.9"
  std::string instead;    // "train in bf16"
};
// The reason a training job cannot run on `acc`, or nullopt when it can: no tensor path for its
// precision (TrainGemmPeak: bf16 on Volta/Turing, FP8 without FP8 tensor cores, NVFP4 before
// Blackwell) or, for QLoRA, no bitsandbytes backend. The training planner, `memory --train` and
// `check` all ask this. docs/model.md 9.2.
std::optional<CannotTrain> TrainingUnsupported(const Accelerator& acc, Precision precision,
                                               bool fp4_gemms, TrainMethod method);

// A lower bound on EstimateTrainStep(...).total for every micro-batch, recompute, ZeRO stage,
// offload and interleaving choice of the layout `par` (tp, pp, dp, cp, ep) at `global_batch`:
// GEMM work at the asymptotic GEMM efficiency, the byte part of TP and EP traffic, no
// bubble, no DP traffic. The search skips a layout whose bound per sample is slower than the
// best found (docs/model.md 7.2). 0 when no bound is known (non-transformers).
Seconds TrainStepLowerBound(const ModelSpec& m, const Parallelism& par,
                            const TrainMemoryOptions& opt, int global_batch, const HardwareView& hw,
                            const StepConstants& k);

}  // namespace gpuplan
