// Shared pieces of the emitters (src/emit/*.cc): the plan fields they read, rendering helpers
// and the per-target entry points. Not a public header.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/emit.h"
#include "gpuplan/model.h"
#include "gpuplan/result.h"

namespace gpuplan::emit {

using ojson = nlohmann::ordered_json;

// Pinned versions of what the files run; the schema fixtures in tests/emit/fixtures come from
// the same lines (docs/emit.md, "Checks").
// vLLM: a V1 release with every behaviour the planner sizes replicas by (the hybrid KV cache
// manager for sliding windows from 0.10, the 0.92 memory default from 0.20, the sorting-free
// sampler from 0.18; docs/model.md 4.3), and the last release line that still has
// bitsandbytes among its --quantization methods (it left in 0.28).
inline constexpr const char* kVllmImage = "vllm/vllm-openai:v0.27.0";
inline constexpr const char* kVllmImageVersion = "0.27.0";  // the release in kVllmImage
inline constexpr const char* kSglangImage = "lmsysorg/sglang:v0.4.3.post2-cu124";
inline constexpr const char* kTgiImage = "ghcr.io/huggingface/text-generation-inference:3.3.7";
inline constexpr const char* kTritonImage = "nvcr.io/nvidia/tritonserver:25.01-py3";
inline constexpr const char* kTensorRtImage = "nvcr.io/nvidia/tensorrt:25.01-py3";
inline constexpr const char* kOpenVinoImage = "openvino/model_server:2025.0";
inline constexpr const char* kPytorchImage = "nvcr.io/nvidia/pytorch:25.01-py3";
inline constexpr const char* kPrometheus = "http://prometheus.monitoring:9090";
// Release dates of the pinned serving images: an image cannot load a model architecture made
// public after it (ModelSpec::architecture_released; ImageKnowsModel).
inline constexpr const char* kVllmImageReleased = "2026-08-10";  // vLLM v0.27.0
inline constexpr const char* kTgiImageReleased = "2025-12-18";   // TGI 3.3.7
// A10: checkpoints on local NVMe, keep the last 3.
inline constexpr const char* kNvmeDir = "/nvme/ckpt";
inline constexpr int kKeepCheckpoints = 3;
// Where the emitted config files sit on every training node (K8s ConfigMap mount, SkyPilot
// file_mounts); Slurm uses the submit directory instead, through the same variable.
inline constexpr const char* kConfigDir = "/gpuplan";
// The model cache every serving target mounts (HF_HOME); weights are downloaded once.
inline constexpr const char* kModelCacheDir = "/models";
inline constexpr int kServePort = 8000;

enum class Kind { kTrain, kServe };

// The plan fields the emitters use, read and checked once (plan_reader.cc).
struct Plan {
  Kind kind = Kind::kServe;
  std::string path;  // "plans[0]"
  std::string model, cloud, region, instance_type, accelerator, currency;
  std::string model_ref;  // what resolves to the planned model: preset name or absolute path
  std::string arch;       // ModelArchName: dense, moe, mla-moe, encoder, vit, cnn, ...
  int gpus_per_node = 0, nodes = 1;                                                  // training
  int gpus_per_replica = 0, replicas = 1, batch = 1, input_len = 0, output_len = 0;  // serving
  std::int64_t kv_tokens = 0;
  double qps = 0, capacity_qps = 0, e2e_p99_ms = 0, cost_per_1k = 0, target_utilization = 0.6;
  std::string engine;
  std::string serve_precision;  // weight precision of a serving plan ("" when the plan is older)
  std::string serve_quant;      // quantisation method of a serving plan, "" for none
  std::optional<double> price_per_hour;
  // Training.
  std::string precision, method, recompute, framework = "generic";
  std::string optimizer = "adamw";  // OptimizerName; absent in older plans: AdamW
  bool paged_optimizer = false;     // bitsandbytes' paged variant of `optimizer`
  int tp = 1, pp = 1, dp = 1, zero_stage = 0, micro_batch = 1, grad_accum = 1, seq_len = 0;
  int recompute_layers = 0, vpp = 1, cp = 1, ep = 1;
  bool sequence_parallel = false;
  // The layout's offload (ZeRO-Offload / FSDP CPUOffload): optimizer states and master copy,
  // and (ZeRO-3 / full shard) the parameters, in host RAM. Absent in older plans: false.
  bool optimizer_offload = false, param_offload = false;
  int global_batch = 0, cpu_cores = 0;
  double step_time_s = 0, ram_bytes = 0, disk_bytes = 0, job_hours = 0;
  double checkpoint_interval_h = 1.0;
  double tokens = 0;  // training tokens of the whole job (0 if the plan has none)
  bool spot = false;
  bool checkpoint_interval_known = false;
};

// The plan of `rank` (1 = top) in a plan document; a missing or mistyped field is a kParse Error
// naming its JSON path, a bad rank kInvalidArgument at "--rank", a multi-node serving replica
// kUnsupported.
Result<Plan> ReadPlan(const nlohmann::json& doc, int rank);

// ---- Rendering (render.cc) ----
std::string Yaml(const ojson& j);
std::string Header(const Plan& p, const std::string& what);
std::string Slug(std::string s);
std::string Gi(double bytes);
// One POSIX shell word: bare when only [A-Za-z0-9_./:=@%+,-] (and not empty), else single
// quoted with ' written as '\''. A value can never end the word or start a new command.
std::string ShellQuote(const std::string& s);
// Words joined with `sep` between them (" " or " \\\n  ").
std::string ShellJoin(const std::vector<std::string>& words, const std::string& sep);
// An argv as shell words, each `--flag value` pair on one line of `sep`-joined words; every word
// is ShellQuote()d.
std::string ShellArgv(const std::vector<std::string>& argv, const std::string& sep);
// A Kubernetes quantity for a non-negative rate in milli-units ("3190m" for 3.19).
std::string MilliQuantity(double v);
// Is the model gated on the Hugging Face Hub (licence acceptance needed, 401 without a token)?
bool GatedModel(const std::string& hf_id);
// What `vllm serve` / `from_pretrained` take: the preset's Hugging Face id, or the local model
// directory for a model planned from a config.json, a directory or a .safetensors file.
std::string HfModelId(const std::string& model_ref);
// Is the model reference a local path (config.json, directory, .safetensors)?
bool LocalModel(const std::string& model_ref);

// A plan of a decoder LLM (the job's arch; plans written before arch was recorded are LLMs):
// what vLLM and TGI serve.
inline bool DecoderLlm(const std::string& arch) {
  return arch.empty() || arch == "dense" || arch == "moe" || arch == "mla-moe";
}

// ---- Serving runtime per engine, architecture and precision (serve_runtime.cc) ----
struct ServeRuntime {
  std::string engine;  // "vllm", "sglang", "tgi", "triton-tensorrt", "openvino"
  std::string image;
  std::vector<std::string> command;  // argv, first the program
  std::string health_path = "/health";
  std::string metrics_path = "/metrics";
  int metrics_port = kServePort;
  std::string request_counter;     // Prometheus counter of completed requests
  std::string queue_gauge;         // Prometheus gauge of waiting requests ("" if none)
  std::vector<std::string> notes;  // comment lines for the file headers
  // Extra files (Triton model configuration, TensorRT engine build script).
  std::vector<EmittedFile> files;
  // Shell run before the server in a plain VM (SkyPilot setup, the TensorRT engine build).
  std::string prepare;
  bool gpu = true;
};
Result<ServeRuntime> ResolveServeRuntime(const Plan& p, const Catalog& catalog);

// ---- vLLM (vllm.cc) ----
struct VllmConfig {
  VllmFlags flags;
  std::int64_t planner_tokens = 0;
  std::int64_t flag_tokens = 0;
  bool ambiguous_awq_gptq = false;
  // The checkpoint loads with a quantization method the release has deprecated (fbgemm_fp8):
  // vLLM refuses it unless --allow-deprecated-quantization is set.
  bool deprecated_quantization = false;
  // The memory the pinned release estimates for its CUDA graphs at these flags and takes off the
  // KV cache (docs/model.md 4.3), and the graphs it captures.
  double cuda_graph_gib = 0;
  int cuda_graphs = 0;
};
Result<VllmConfig> ResolveVllm(const Plan& p, const Catalog& catalog);
// Error (not yet) when `image`, released on `released`, predates the model's architecture.
Status ImageKnowsModel(const ModelSpec& m, const char* image, const char* released);
// The pinned TGI has its own model code for `m.model_type` (its models/__init__.py ModelType
// list); other types fall back to a transformers backend the plan's TGI sizing does not describe
// (and which refuses AWQ/GPTQ), so they are "not yet". A spec without a model_type passes.
Status TgiKnowsModel(const ModelSpec& m);
std::vector<std::string> VllmArgs(const VllmConfig& c);
std::vector<EmittedFile> EmitVllm(const Plan& p, const VllmConfig& c);

// ---- Autoscaling bounds from the plan (k8s.cc; SkyPilot uses the same) ----
struct Scaling {
  double target_per_replica = 0;  // requests/s per replica at the target utilisation
  int min_replicas = 1, max_replicas = 1;
  std::string min_reason, max_reason;
};
Scaling ScalingFor(const Plan& p, const EmitOptions& opt);

// ---- Training launch, the same on every target (train_launch.cc) ----
struct TrainLaunch {
  // Files the launch reads from $GPUPLAN_CONFIG (ds_config.json, ...), name -> contents.
  std::vector<EmittedFile> config_files;
  // torchrun ... <script> <args>: one shell line that uses $NNODES, $NODE_RANK, $MASTER_ADDR,
  // $MASTER_PORT and $GPUPLAN_CONFIG, set per target.
  std::string command;
  std::string setup;  // pip/apt steps for a plain VM (SkyPilot setup)
  std::string framework_note;
};
TrainLaunch MakeTrainLaunch(const Plan& p);
// A plan whose layout runs under PyTorch FSDP (sharded): the Trainer's `fsdp`, not DeepSpeed.
bool UsesFsdp(const Plan& p);
ojson DeepSpeedConfig(const Plan& p);
ojson HfTrainingArgs(const Plan& p);
int SaveSteps(const Plan& p);

// ---- Targets ----
Result<std::vector<EmittedFile>> EmitK8s(const Plan& p, const EmitOptions& opt,
                                         const Catalog& catalog);
Result<std::vector<EmittedFile>> EmitSkypilot(const Plan& p, const EmitOptions& opt,
                                              const Catalog& catalog);
std::vector<EmittedFile> EmitSlurm(const Plan& p);
std::vector<EmittedFile> EmitHf(const Plan& p);
std::vector<EmittedFile> EmitMonitoring(const Plan& p, const Catalog& catalog);

}  // namespace gpuplan::emit
