// Job descriptions for the planners: what to train (or serve), on what data, by when, for how
// much, where. Parsed from a YAML job file or built from CLI flags; validated once here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/quantity.h"
#include "gpuplan/result.h"
#include "gpuplan/sizing.h"
#include "gpuplan/units.h"

namespace gpuplan {

enum class Objective : std::uint8_t { kCost, kTime, kPareto };
const char* ObjectiveName(Objective o);
std::optional<Objective> ParseObjective(std::string_view s);

struct TrainJobSpec {
  std::string model_arg;  // as given (preset name, config.json path, .safetensors path)
  ModelSpec model;
  TrainMethod method = TrainMethod::kFull;
  Precision precision = Precision::kBf16;
  bool fp4_gemms = false;  // precision "fp4": NVFP4 GEMMs (TrainMemoryOptions::fp4_gemms)
  Optimizer optimizer = Optimizer::kAdamW;
  bool paged_optimizer = false;  // a paged variant ("paged_adamw_8bit"): TrainMemoryOptions
  TrainFramework framework = TrainFramework::kGeneric;  // its overlap and sharding capabilities
  int lora_rank = 16;
  // Data: tokens, or samples x seq_len; times epochs.
  double tokens = 0;   // total tokens per epoch (0 = from samples)
  double samples = 0;  // samples (sequences / images) per epoch
  double epochs = 1;
  int seq_len = 0;        // 0 = model family default (LLM 4096 capped by max positions)
  int global_batch = 0;   // sequences per step; 0 = family default (see DefaultGlobalBatch)
  Bytes dataset;          // dataset size on disk; 0 = unknown
  std::string benchmark;  // run-to-target benchmark that set `samples` ("mlperf/resnet"), or empty
  // Constraints.
  std::optional<double> deadline_hours;
  std::optional<double> budget;  // in `currency`, whole job
  Currency currency = Currency::kUsd;
  std::vector<std::string> clouds;   // empty = all
  std::vector<std::string> regions;  // empty = all
  std::vector<std::string> gpus;     // accelerator ids/aliases to consider; empty = all
  bool spot_allowed = false;
  double checkpoint_interval_hours = 1.0;  // 0 = no checkpoints
  Objective objective = Objective::kCost;
  SizingPolicy host_policy = SizingPolicy::kDefault;
  double headroom = 0.8;  // B5
  int max_nodes = 64;
  // A fixed cluster: exactly this many GPUs (instances whose GPU count divides it, any node
  // count) or this many nodes; 0 = searched (powers of two up to max_nodes).
  int num_gpus = 0;
  int nodes = 0;
  int min_gpus = 0;  // GPUs per plan bounds; 0 = no bound
  int max_gpus = 0;
  int top = 5;                   // plans to print
  bool include_suspect = false;  // rank catalog rows whose source marks them suspect
  bool marketplace = true;       // rank marketplace listings (kMarketplaceFlag)
  bool by_region = false;        // keep rows that differ only by region apart
  // Where a job file gave the keys the planner checks against the catalog (it names them when
  // they are wrong): "constraints.clouds" -> "job.yaml:7:constraints.clouds".
  std::map<std::string, std::string, std::less<>> file_keys;

  double TotalTokens() const;  // tokens x epochs (or samples x seq_len x epochs)
};

// Sequences per step when the job does not say. LLM pretraining: 16,384 tokens per GPU, at
// least 2^20 (1M) and at most 2^24 (16M) tokens per step, so the batch grows with the cluster as
// published recipes do (NeMo's 8-64 GPU recipes 0.5-1M, Megatron-Core's Qwen3-235B on 256 GPUs
// 8M, MosaicML's MPT-70B on 512 GPUs 8M, Llama 3 405B on 16K GPUs 16M) and a pipeline keeps
// many micro-batches per stage; `gpus` <= 0 (cluster not chosen yet) is the 1M floor. Never
// above the compute-optimal batch of the job's budget (DeepSeek LLM: 0.292 C^0.3271 tokens).
// Fine-tuning 128 sequences, LoRA 16, vision models 256 images, whatever the cluster.
int DefaultGlobalBatch(const TrainJobSpec& job, int gpus = 0);

// Tokens per sample the job trains on: seq_len when given, else the family default (LLMs 4096
// capped by the model's context; ViT patches + 1; CNNs and UNets 1).
int EffectiveSeqLen(const TrainJobSpec& job);
// Samples a sequence of the job's run-to-target benchmark carries (MLPerf BERT: 2, its samples
// packed; TrainBenchmark::PackingFactor); 1 for other jobs. Its global_batch counts sequences.
int SamplesPerSequence(const TrainJobSpec& job);

// True when the job names a run-to-target benchmark and keeps its reference framework
// (BenchmarkReferenceFramework): it runs the benchmark's tuned reference implementation, whose
// overlap (ApplyBenchmarkImplementation) and fused element-wise kernels the planner assumes, as
// the validation adapter does for the benchmark's submissions.
bool RunsBenchmarkImplementation(const TrainJobSpec& job);

// The estimator inputs a job fixes before any layout is chosen: method, precision, optimizer,
// LoRA rank, effective sequence length, QLoRA's 4-bit base, the model's dropout, fused kernels
// for a benchmark's reference implementation. The one
// job -> TrainMemoryOptions step the planner and its guide comparison use; layouts add
// micro-batch, recompute, ZeRO and offload.
TrainMemoryOptions TrainOptionsFor(const TrainJobSpec& job);

// Parses a YAML job file (schema: docs/job-yaml.md). Errors name the YAML path
// ("train.data.tokens") and the line. Resolves `model` through ResolveModel.
Result<TrainJobSpec> ParseTrainJobYaml(std::string_view yaml_text, std::string_view label);

}  // namespace gpuplan
