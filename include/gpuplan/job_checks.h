// The job-level steps every front end runs after reading a job (flags, a YAML file or an HTTP
// body) and before planning: the checks the readers cannot make alone, and the serving job's
// defaults. One copy, so that a library caller cannot skip them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/input.h"
#include "gpuplan/job.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/result.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {

// Field names FinalizeTrainJob's errors use: the CLI's flags by default; a job-file reader
// passes its own paths ("train.method", "train.data.tokens").
struct TrainJobFields {
  std::string method = "--method";
  std::string tokens = "--tokens";
};

// Completes and checks a training job: LoRA/QLoRA needs a transformer's linear layers
// (kUnsupported, field `method`); an unset seq_len becomes EffectiveSeqLen; the job's size must be
// known (TotalTokens() > 0, field `tokens`); then the ranges of ValidateTrainJob(source, label).
Status FinalizeTrainJob(TrainJobSpec& job, InputSource source, std::string_view label = {},
                        const TrainJobFields& fields = {});

// A serving job as a front end states it: each value optional, unset means the default below.
// Errors from BuildServeJob name the CLI flag ("--qps"), or the job file's field
// ("job.yaml:5:serve.qps") when the value came from a file (`from_file`).
struct ServeRequest {
  std::string model = "Llama-2-13B";  // preset, HF id, config.json or .safetensors path
  // False when `model` is the built-in default (no --model, no model in the file): a named
  // benchmark's reference model replaces it (ServeModelRef).
  bool model_given = true;
  std::string precision, quant, kv_precision, engine = "vllm", currency;
  // The load: one of requests/s, output tokens/s (/ output_len) or concurrent users.
  std::optional<double> qps;
  std::optional<double> tokens_per_s;
  std::optional<double> users;
  double think_s = 10;  // seconds between one user's requests
  std::optional<int> input_len, output_len;
  // Denoising steps per image (diffusion UNets only; default: the benchmark's, else diffusers'
  // 50).
  std::optional<int> denoise_steps;
  std::optional<double> ttft_ms, tpot_ms, e2e_ms;  // p99 SLOs
  // A public benchmark ("mlperf/llama2-70b-99", data/inference_benchmarks.csv) that fills the
  // lengths and SLOs left unset (FillServingShape); empty = none.
  std::string benchmark;
  double util = 0.6;  // target utilisation (B12)
  std::vector<std::string> clouds, regions, gpus;
  bool cpu = false, cpu_only = false, reserved = false;
  bool include_suspect = false, by_region = false;
  bool no_marketplace = false;  // drop marketplace listings (--no-marketplace)
  std::optional<int> top;
  // The flags whose values a job file gave, and where: "--engine" -> "job.yaml:8:serve.engine".
  std::map<std::string, std::string, std::less<>> from_file;
};

// `e` with its field replaced by where it sits when `where` has it: the field up to an item
// index ("constraints.clouds" of "constraints.clouds[1]") is looked up, the index kept
// ("job.yaml:7:constraints.clouds[1]").
Error FieldAt(Error e, const std::map<std::string, std::string, std::less<>>& where);

// `e` naming the job file's field instead of the flag, when the flag's value came from the file
// (the flag in the message and the hint becomes the field's path too).
Error NameFileField(Error e, const ServeRequest& r);
// The serving job file's key ("serve.engine") of a flag ("--engine"); empty when it has none.
std::string_view ServeFileKeyOfFlag(std::string_view flag);

// Fills the fields of `r` that `unset(flag)` reports as not given from a serving job file
// (values given elsewhere win). `unset` null: every field the file has.
void MergeServeJobFile(ServeRequest& r, const ServeJobFile& f,
                       const std::function<bool(const char*)>& unset = nullptr);

// Validates `r` into a serving job with the defaults: weights in the model's dtype (fp32 models
// served in fp16), 16-bit KV (fp8 with fp8 weights), input 512 / output 256 tokens for decoder
// LLMs (128 / 0 for encoders, 1 / 0 otherwise), top 5, currency `default_currency` when unset.
// `model` (when not null) is used instead of resolving r.model (a model the caller parsed, e.g.
// a pasted config.json); otherwise r.model is resolved with ResolveModel. Errors name the flag.
// The model the request serves: `r.model`, or the named benchmark's reference model when the
// request left the model at its default.
std::string ServeModelRef(const ServeRequest& r);

Result<ServeJobSpec> BuildServeJob(const ServeRequest& r, std::string_view default_currency,
                                   const ModelSpec* model = nullptr);

}  // namespace gpuplan
