// `memory`: the per-GPU memory of a training or serving job at a reference layout, which
// accelerators hold it with the fewest GPUs (a fit search over GPU counts x ZeRO stages for
// training, over tensor-parallel sizes for serving), and the cheapest offer per cloud for each.
// The CLI's `gpuplan memory` and the HTTP API's /v1/memory both call AnalyzeMemory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/cost.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/result.h"

namespace gpuplan {

// What to analyse. Errors name the CLI flag of the field ("--tp"); other front ends map the
// flag to their own field name (the HTTP API: "tp", "seq_len").
struct MemoryRequest {
  bool train = false;  // neither set: both
  bool infer = false;
  // Training.
  std::string method = "full";
  std::string precision;  // default: bf16 (training) / the model's dtype (serving)
  std::string optimizer = "adamw";
  bool guide_b4 = false;  // the guides' B4 arithmetic: no fp32 master copy, no runtime terms
  std::string optimizer_states = "fp32";
  int batch = 1;     // micro-batch per GPU
  int seq_len = 0;   // 0 = model default
  int zero = -1;     // -1 = search 0..3
  std::string fsdp;  // "", full | hybrid | grad-op
  int tp = 1, pp = 1, cp = 1, ep = 1;
  bool tp_given = false;  // serving: pin tp instead of searching 1, 2, 4, 8
  bool sequence_parallel = false;
  std::string recompute;  // empty: none, or full where that needs fewer GPUs
  int lora_rank = 16;
  std::string lora_targets = "all";
  int grad_accum = 1;
  // Serving.
  std::string quant;         // awq, gptq, nf4, int8, int4, fp8 (LoRA base: int8 | int4)
  std::string kv_precision;  // default: 16-bit
  int context = 4096;        // tokens per sequence
  // Whether the caller gave `context`; if not, a model with a shorter context takes its own.
  bool context_given = false;
  int concurrency = 16;
  std::string engine = "vllm";
  double gpu_memory_utilization = 0;  // 0 = the engine's default
  // Hardware.
  std::string gpu;        // pin the accelerator (id or alias)
  int gpus = 0;           // 0 = smallest count that fits
  double headroom = 0.8;  // usable fraction of GPU memory (B5)
};

// Accelerator `acc` holds the job on `gpus` GPUs at this layout.
struct MemoryFit {
  const Accelerator* acc = nullptr;  // points into the catalog
  int gpus = 0;
  int tp = 1, pp = 1, dp = 1, zero = 0;
  Recompute recompute = Recompute::kNone;
  MemoryBreakdown mem;
  double limit_bytes = 0;      // what the job may use on one GPU
  std::int64_t kv_tokens = 0;  // serving
  std::int64_t max_concurrency = 0;
  std::vector<Offer> offers;  // cheapest per cloud, cheapest first
};

struct TrainMemoryAnalysis {
  TrainMemoryOptions options;
  Parallelism reference;        // the pinned GPU count (or tp x pp x cp), the user's ZeRO stage
  MemoryBreakdown memory;       // at `reference`
  double headroom = 0.8;        // the request's
  std::vector<MemoryFit> fits;  // cheapest setup first, then accelerator id
  // Accelerators left out because the job cannot run there, with why (TrainingUnsupported).
  std::vector<std::pair<std::string, std::string>> no_kernels;
};

struct InferMemoryAnalysis {
  InferMemoryOptions options;
  const Accelerator* reference_acc = nullptr;  // pinned, else H100-SXM5-80GB, else the first
  InferMemory reference;                       // at the request's tp/pp on reference_acc
  int reference_tp = 1;
  double memory_fraction = 0;   // the engine's (or the given) memory fraction
  std::string weights;          // "bf16" or "awq (4.25 bits/weight incl. scales)"
  std::vector<MemoryFit> fits;  // cheapest first, then accelerator id
  // Accelerators left out because the engine cannot serve the weights there, with why
  // (EngineCannotServe).
  std::vector<std::pair<std::string, std::string>> no_kernels;
};

struct MemoryAnalysis {
  ModelSpec model;
  ParamCounts params;
  Currency currency = Currency::kUsd;
  double cny_per_usd = 0;  // the rate used
  std::string prices_as_of;
  std::optional<TrainMemoryAnalysis> train;
  std::optional<InferMemoryAnalysis> infer;
  bool any_fit() const {
    return (train && !train->fits.empty()) || (infer && !infer->fits.empty());
  }
};

// The request's ranges that need no model or catalog (parallel sizes, batch bounds, ZeRO stage,
// FSDP mode, headroom, memory fraction); errors name the flag. AnalyzeMemory calls it too.
Status ValidateMemoryRequest(const MemoryRequest& req);

// A setting only the other analysis reads, given with `train` or `infer` alone (`given` says
// whether a flag, in its CLI spelling "--seq-len", was set): the analysis asked for would ignore
// it (`--infer --seq-len 8192` would size 4096-token sequences). The error names the flag and
// its counterpart; nullopt when both or neither analysis runs, or nothing is misplaced.
std::optional<Error> MemoryFlagOfOtherMode(const MemoryRequest& r,
                                           const std::function<bool(std::string_view)>& given);

// Validates `req` (ranges, enum names; errors name the flag) and analyses `model`. Pure apart
// from reading `catalog`. Nothing fitting is a result (empty fits), not an error.
Result<MemoryAnalysis> AnalyzeMemory(const MemoryRequest& req, const ModelSpec& model,
                                     const Catalog& catalog, Currency currency,
                                     std::optional<double> cny_per_usd);

// The engine's memory limit on `acc` that serving fits are checked against: the whole memory
// for engines applying their own fraction inside the estimator, `headroom` x memory for plain
// transformers.
double ServingMemoryLimit(const InferMemoryOptions& o, double headroom, const Accelerator& acc);

}  // namespace gpuplan
