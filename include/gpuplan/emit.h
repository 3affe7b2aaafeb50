// Deployment artifacts from a plan: turns the JSON of `gpuplan --json plan train ...` or
// `gpuplan --json plan infer ...` into files a user can apply (Kubernetes, SkyPilot, Slurm,
// vLLM, Hugging Face TrainingArguments, DeepSpeed, Prometheus/Grafana). Pure: no file system
// access; the CLI writes the files. Formats: ../shared/reference/formats.md sections 3-9, 12.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"

namespace gpuplan {

// One emitted file: a name relative to the output directory and its full contents.
struct EmittedFile {
  std::string name;
  std::string contents;
};

struct EmitOptions {
  // 1-based index into the plan's `plans` array (1 = the planner's top plan).
  int rank = 1;
  // Kubernetes autoscaler for serving plans: "hpa" (autoscaling/v2) or "keda" (ScaledObject).
  std::string autoscaler = "hpa";
  // Container image; empty = the pinned image of the plan's engine (vLLM, TGI, Triton,
  // OpenVINO Model Server) for serving, the NGC PyTorch image for training (which must then
  // contain the training script: pass your own image).
  std::string image;
  // Autoscaling floor (serving): minReplicas. 0 = derive it from `off_peak_qps`.
  int min_replicas = 0;
  // Off-peak load in requests/s (serving): minReplicas = ceil(off_peak_qps / the plan's
  // per-replica capacity at the target utilisation). Unset with min_replicas 0: 1 replica.
  std::optional<double> off_peak_qps;
  // Kubernetes training workload: "job" (an indexed batch/v1 Job + headless Service) or
  // "pytorchjob" (a Kubeflow training-operator kubeflow.org/v1 PyTorchJob).
  std::string k8s_training = "job";
  // Peak load in requests/s (serving); unset = the plan's own load (job.qps):
  // maxReplicas = max(the plan's replicas, ceil(peak / per-replica capacity)).
  std::optional<double> peak_qps;
};

// The targets Emit() knows, in the order the CLI lists them:
// k8s, skypilot, slurm, vllm, hf, deepspeed, monitoring.
const std::vector<std::string>& EmitTargets();

// Renders `target` for plan number `opt.rank` of `plan_json` (the CLI's --json output of
// `plan train` or `plan infer`). `catalog` supplies accelerator memory and model data for the
// vLLM KV-cache arithmetic. Errors (all for user input): malformed JSON or a missing field
// (kParse, field = JSON path), unknown target (kNotFound), rank out of range or a target that
// does not fit the plan's kind, e.g. `vllm` for a training plan (kInvalidArgument), a plan this
// version cannot render (kUnsupported), negative or inconsistent autoscaling options
// (kInvalidArgument, field "--min-replicas", "--off-peak-qps" or "--peak-qps").
Result<std::vector<EmittedFile>> Emit(std::string_view plan_json, std::string_view target,
                                      const EmitOptions& opt, const Catalog& catalog);

// The vLLM KV-cache capacity (tokens per replica) implied by a set of `vllm serve` flags, with
// the planner's arithmetic (EstimateInferenceMemory with vLLM's memory rule). Exposed so tests
// and the emitted comment agree on one formula. `model` is a preset name or HF id; `kv_dtype`
// is "auto" or "fp8"; `quantization` is "" (none), "fp8", "awq", "gptq" or "bitsandbytes".
// The device's visible memory is 99 % of the nominal `accelerator` memory, as the planner
// assumes.
struct VllmFlags {
  std::string model;
  std::string accelerator;
  int tensor_parallel_size = 1;
  int pipeline_parallel_size = 1;
  double gpu_memory_utilization = 0.92;  // vLLM's current default (VllmDefaultGpuMemoryUtilization)
  int max_model_len = 0;
  int max_num_seqs = 256;
  int max_num_batched_tokens = 8192;
  std::string quantization;
  std::string kv_cache_dtype = "auto";
};
Result<std::int64_t> VllmKvCapacityTokens(const VllmFlags& flags, const Catalog& catalog);

}  // namespace gpuplan
