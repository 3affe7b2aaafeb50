// Job validation: the ranges and combinations every training and serving job must satisfy,
// whatever its source (flags, a job file, an API request). Errors name the flag or the YAML path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuplan/input.h"
#include "gpuplan/result.h"

namespace gpuplan {

struct TrainJobSpec;
struct ServeJobSpec;
struct ModelSpec;

// A sequence longer than the model's context: the message and the fix, naming `flag`.
struct ContextExcess {
  std::string message, fix;
};
// Whether `tokens` per sequence (`what`, e.g. "8000 input + 256 output tokens") exceed the
// context of a decoder LLM or encoder whose config gives one (ModelSpec::max_positions:
// max_position_embeddings with RoPE scaling applied, as vLLM, SGLang and TGI derive it and
// refuse a longer max_model_len).
std::optional<ContextExcess> ExceedsContext(const ModelSpec& m, long long tokens,
                                            std::string_view what, std::string_view flag);

// The ranges every training job must satisfy, whatever its source: finite numbers, sane upper
// bounds (the constants above; LoRA rank <= hidden size), mutually exclusive and required
// combinations. `label` prefixes YAML paths ("job.yaml: train.max_nodes").
// The largest LoRA rank worth asking for: min(kMaxLoraRank, the hidden size); a rank above the
// hidden size adds nothing. The job files', the flags' and check setups' bound.
int MaxLoraRank(const ModelSpec& m);

Status ValidateTrainJob(const TrainJobSpec& job, InputSource source, std::string_view label = {});
Status ValidateServeJob(const ServeJobSpec& job, InputSource source, std::string_view label = {});

}  // namespace gpuplan
