// `gpuplan check`: reads a setup the user intends to run (an instance type or custom hardware,
// node count, zones, spot, checkpoints, and one training or serving job), evaluates it through
// the library's prediction path (EvaluateTraining, SizeHost/CheckHost, EstimateLlmServing,
// PlanServing) and reports the guides' pitfalls that apply, each with its numbers and a fix.
// The training rules a plan also gets (Finding, Severity and the rules: pitfalls.h) are the
// planner's own; check adds the rules that need what only a setup says (storage, batch, A3's
// catalog search, serving). Rules and their numbers: docs/check.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/pitfalls.h"
#include "gpuplan/result.h"
#include "gpuplan/units.h"

namespace gpuplan {

// Where the training data (and checkpoints) live.
enum class StorageKind : std::uint8_t { kNvme, kSsd, kNetwork, kHdd };
const char* StorageKindName(StorageKind s);
std::optional<StorageKind> ParseStorageKind(std::string_view s);

// How a serving load varies over the day.
enum class LoadPattern : std::uint8_t { kSteady, kVariable };

// The machine: a catalog instance type, or custom hardware. Exactly one of `instance_type` and
// `accelerator` is set after parsing.
struct SetupHardware {
  std::string instance_type;  // catalog instance type ("p4d.24xlarge"); empty = custom
  std::string region;         // optional region of the instance type
  std::string accelerator;    // custom: accelerator id or alias
  int gpus_per_node = 0;      // custom
  IntraNodeLink intra = IntraNodeLink::kPcie;      // custom
  InterNodeFabric inter = InterNodeFabric::kNone;  // custom
  std::optional<BitsPerSec> network;  // custom: per-node network (and fabric) bandwidth
  std::optional<Bytes> ram;           // custom: host RAM per node
  std::optional<int> vcpus;           // custom: vCPUs per node
  // Storage the job reads from. For an instance type with local NVMe the kind defaults to
  // NVMe; the bandwidth is never assumed (B7 is reported unknown without it).
  std::optional<StorageKind> storage;
  std::optional<BytesPerSec> storage_bw;
  // "label:LINE:path" of the keys, for errors that need the catalog.
  std::string instance_field, accelerator_field, region_field;
};

struct SetupTraining {
  std::string model_arg;
  ModelSpec model;
  TrainMethod method = TrainMethod::kFull;
  Precision precision = Precision::kBf16;
  bool fp4_gemms = false;  // precision "fp4": NVFP4 GEMMs (TrainMemoryOptions::fp4_gemms)
  int micro_batch = 1;
  int seq_len = 0;                           // 0 = the model family default (EffectiveSeqLen)
  std::optional<int> global_batch;           // sequences per step
  std::optional<int> gradient_accumulation;  // micro-batches per step per data-parallel rank
  Recompute recompute = Recompute::kNone;
  int zero_stage = 0;
  int tp = 1;
  int pp = 1;
  int cp = 1;  // context parallelism (ring attention over the sequence)
  int ep = 1;  // expert parallelism (MoE models)
  // What the run uses (defaults: the planner's): the framework (kGeneric = the one `plan train`
  // would pick for the layout), the optimizer and, for LoRA/QLoRA, the adapter rank.
  TrainFramework framework = TrainFramework::kGeneric;
  Optimizer optimizer = Optimizer::kAdamW;
  bool paged_optimizer = false;
  std::optional<int> lora_rank;
  Bytes dataset;      // 0 = unknown
  std::string field;  // "label:LINE:train"
};

struct SetupServing {
  std::string model_arg;
  ModelSpec model;
  Precision precision = Precision::kBf16;
  std::optional<QuantSpec> quant;         // serve.quant: a quantization preset (awq, gptq, ...)
  std::optional<Precision> kv_precision;  // unset: DefaultKvPrecision of the weights
  Engine engine = Engine::kVllm;
  // Tensor-parallel GPUs per replica (`--tensor-parallel-size`); unset: the fewest that hold the
  // model. `tp_field`: "label:LINE:serve.tp" for errors that need the hardware.
  std::optional<int> tp;
  std::string tp_field;
  // vLLM's --max-model-len; unset: the engine's default, the model's context length.
  std::optional<int> max_model_len;
  // The engine's memory fraction (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static,
  // TGI --cuda-memory-fraction); unset: the engine's default.
  std::optional<double> memory_fraction;
  double qps = 1;  // peak requests per second
  int input_len = 512;
  int output_len = 128;
  bool autoscaling = false;
  LoadPattern load = LoadPattern::kSteady;
};

// What the user intends to run.
struct Setup {
  SetupHardware hardware;
  int nodes = 1;
  std::vector<std::string> zones;  // availability zone of each node (or the set used)
  bool spot = false;
  // Hours between checkpoints; empty or 0 = no checkpointing declared.
  std::optional<double> checkpoint_interval_hours;
  double headroom = 0.8;               // usable fraction of GPU memory (B5)
  std::optional<SetupTraining> train;  // exactly one of train / serve
  std::optional<SetupServing> serve;
};

// Parses a setup file (schema: docs/check.md). Errors name "label:LINE:yaml.path"; unknown keys
// get a did-you-mean. Resolves models through ResolveModel; catalog names are checked by
// ValidateSetup.
Result<Setup> ParseSetupYaml(std::string_view text, std::string_view label);

// Checks what needs the catalog: the instance type (and region) or accelerator exists, and the
// training layout divides the GPUs. Errors name the YAML field.
Status ValidateSetup(const Setup& setup, const Catalog& catalog);

// Evaluates the setup and returns the findings, errors first. A setup that ValidateSetup
// rejects yields one error finding "setup-invalid" with the reason.
std::vector<Finding> CheckSetup(const Setup& setup, const Catalog& catalog, const Calibration& cal);

}  // namespace gpuplan
