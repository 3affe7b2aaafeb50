// The one validation of a training or serving job, shared by the CLI flags, the YAML readers
// and any other front end (docs/reliability.md: the bounds and where they come from).
#include "gpuplan/job_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuplan/input.h"
#include "gpuplan/job.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {

namespace {

class Namer {
 public:
  Namer(InputSource src, std::string_view label) : src_(src), label_(label) {}
  std::string operator()(std::string_view flag, std::string_view yaml_path) const {
    if (src_ == InputSource::kFlags) return std::string(flag);
    return label_.empty() ? std::string(yaml_path)
                          : std::string(label_) + ": " + std::string(yaml_path);
  }

 private:
  InputSource src_;
  std::string_view label_;
};

Status IntRange(long long v, const std::string& field, long long lo, long long hi) {
  if (v >= lo && v <= hi) return {};
  return MakeError(ErrorCode::kInvalidArgument, field,
                   fmt::format("must be in [{}, {}], got {}", lo, hi, v));
}

}  // namespace

std::optional<ContextExcess> ExceedsContext(const ModelSpec& m, long long tokens,
                                            std::string_view what, std::string_view flag) {
  // An encoder-decoder's context is its decoder's (Whisper: max_target_positions 448); its
  // encoder input is checked where it is a request's (ValidateServeJob).
  if (m.max_positions <= 0 || tokens <= m.max_positions ||
      !(m.generates_tokens() || m.arch == ModelArch::kEncoder)) {
    return std::nullopt;
  }
  return ContextExcess{
      fmt::format("{} exceeds {}'s {}context of {} tokens ({})", what, m.name,
                  m.arch == ModelArch::kEncoderDecoder ? "decoder " : "", m.max_positions,
                  m.arch == ModelArch::kEncoderDecoder && m.encoder_positions > 0
                      ? "config.json's max_target_positions"
                      : "config.json's max_position_embeddings, with any RoPE scaling"),
      fmt::format("keep {} <= {}, or give a config.json with a longer context", flag,
                  m.max_positions)};
}

int MaxLoraRank(const ModelSpec& m) {
  return m.hidden > 0 ? static_cast<int>(std::min<long long>(kMaxLoraRank, m.hidden))
                      : kMaxLoraRank;
}

Status ValidateTrainJob(const TrainJobSpec& job, InputSource source, std::string_view label) {
  Namer n(source, label);
  if (job.model.name.size() > kMaxNameBytes) {
    return MakeError(ErrorCode::kInvalidArgument, n("--model", "model"),
                     fmt::format("name is longer than {} bytes", kMaxNameBytes));
  }
  if (auto st = IntRange(job.max_nodes, n("--max-nodes", "constraints.max_nodes"), 1, kMaxNodes);
      !st)
    return st;
  if (auto st = IntRange(job.seq_len, n("--seq-len", "train.seq_len"), 0, kMaxSeqLen); !st)
    return st;
  if (auto x = ExceedsContext(job.model, job.seq_len,
                              fmt::format("a sequence of {} tokens", job.seq_len), "--seq-len")) {
    return MakeError(ErrorCode::kInvalidArgument, n("--seq-len", "train.seq_len"), x->message,
                     x->fix);
  }
  if (auto st =
          IntRange(job.global_batch, n("--global-batch", "train.global_batch"), 0, kMaxGlobalBatch);
      !st)
    return st;
  if (auto st = IntRange(job.top, n("--top", "top"), 1, kMaxTop); !st) return st;
  const bool lora = job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora;
  const int max_rank = lora ? MaxLoraRank(job.model) : kMaxLoraRank;
  if (auto st = IntRange(job.lora_rank, n("--lora-rank", "train.lora_rank"), 1, max_rank); !st)
    return st;
  if (auto st = CheckRange(job.epochs, n("--epochs", "train.data.epochs"), 0, kMaxEpochs, true);
      !st)
    return st;
  if (auto st = CheckRange(job.tokens, n("--tokens", "train.data.tokens"), 0, kMaxTokens); !st)
    return st;
  if (auto st = CheckRange(job.samples, n("--samples", "train.data.samples"), 0, kMaxSamples); !st)
    return st;
  if (auto st = CheckRange(job.headroom, n("--headroom", "constraints.headroom"), 0, 1, true); !st)
    return st;
  if (auto st = CheckRange(job.deadline_hours, n("--deadline", "constraints.deadline"), 0,
                           kMaxHours, true);
      !st)
    return st;
  if (auto st = CheckRange(job.budget, n("--budget", "constraints.budget"), 0, kMaxBudget, true);
      !st)
    return st;
  if (auto st = CheckRange(job.checkpoint_interval_hours,
                           n("--checkpoint-every", "train.checkpoint_every"), 0, kMaxHours);
      !st)
    return st;
  if (auto st =
          CheckRange(job.dataset.value(), n("--dataset-size", "train.data.dataset_size"), 0, 1e18);
      !st)
    return st;
  if (job.min_gpus < 0 || job.max_gpus < 0 || (job.max_gpus > 0 && job.min_gpus > job.max_gpus)) {
    return MakeError(
        ErrorCode::kInvalidArgument, n("--max-gpus", "constraints.max_gpus"),
        fmt::format("needs 0 <= min <= max, got min {} max {}", job.min_gpus, job.max_gpus));
  }
  if (job.tokens > 0 && job.samples > 0) {
    return MakeError(ErrorCode::kInvalidArgument, n("--samples", "train.data.samples"),
                     "give either tokens or samples, not both",
                     "tokens for LLMs; samples (with the sequence length) for other models");
  }
  const double total = job.TotalTokens();
  if (!std::isfinite(total) || total > kMaxTokens * kMaxEpochs) {
    return MakeError(ErrorCode::kInvalidArgument, n("--tokens", "train.data.tokens"),
                     fmt::format("the job's size (tokens x epochs) is out of range: {:g}", total));
  }
  return {};
}

Status ValidateServeJob(const ServeJobSpec& job, InputSource source, std::string_view label) {
  Namer n(source, label);
  if (job.model.name.size() > kMaxNameBytes) {
    return MakeError(ErrorCode::kInvalidArgument, n("--model", "model"),
                     fmt::format("name is longer than {} bytes", kMaxNameBytes));
  }
  if (auto st = CheckRange(job.qps, n("--qps", "serve.qps"), 0, kMaxQps, true); !st) return st;
  if (auto st = IntRange(job.input_len, n("--input-len", "serve.input_len"), 1, kMaxSeqLen); !st)
    return st;
  if (auto st = IntRange(job.output_len, n("--output-len", "serve.output_len"), 0, kMaxSeqLen); !st)
    return st;
  if (auto st = IntRange(job.top, n("--top", "top"), 1, kMaxTop); !st) return st;
  if (auto st =
          CheckRange(job.target_utilization, n("--util", "serve.target_utilization"), 0, 1, true);
      !st)
    return st;
  if (job.target_utilization >= 1) {
    return MakeError(ErrorCode::kInvalidArgument, n("--util", "serve.target_utilization"),
                     fmt::format("must be in (0, 1), got {:g}", job.target_utilization));
  }
  if (auto st = CheckRange(job.ttft_p99_ms, n("--ttft-ms", "slo.ttft_p99_ms"), 0, kMaxSloMs, true);
      !st)
    return st;
  if (auto st = CheckRange(job.tpot_p99_ms, n("--tpot-ms", "slo.tpot_p99_ms"), 0, kMaxSloMs, true);
      !st)
    return st;
  if (auto st = CheckRange(job.e2e_p99_ms, n("--e2e-ms", "slo.e2e_p99_ms"), 0, kMaxSloMs, true);
      !st)
    return st;
  if (static_cast<long long>(job.input_len) + job.output_len > 2LL * kMaxSeqLen) {
    return MakeError(ErrorCode::kInvalidArgument, n("--input-len", "serve.input_len"),
                     "input plus output tokens out of range");
  }
  // A request must fit the model's context (the prompt and every generated token).
  const ModelSpec& m = job.model;
  if (m.arch == ModelArch::kEncoderDecoder && m.max_positions > 0) {
    // The decoder's context bounds its start tokens and the generated ones (Whisper:
    // max_target_positions 448, a learned position table).
    const long long dec =
        DecoderPromptTokens(m) + std::max(job.output_len, job.max_output_len.value_or(0));
    if (dec > m.max_positions) {
      return MakeError(
          ErrorCode::kInvalidArgument, n("--output-len", "serve.output_len"),
          fmt::format("{} start + {} output tokens exceed {}'s decoder context of {} tokens",
                      DecoderPromptTokens(m), dec - DecoderPromptTokens(m), m.name,
                      m.max_positions),
          fmt::format("keep --output-len <= {}", m.max_positions - DecoderPromptTokens(m)));
    }
  }
  const long long out =
      m.is_decoder_llm() ? std::max(job.output_len, job.max_output_len.value_or(0)) : 0;
  if (m.arch == ModelArch::kEncoderDecoder) return {};  // its decoder: checked above
  if (auto x = ExceedsContext(
          m, job.input_len + out,
          fmt::format("a request of {} input + {} output tokens", job.input_len, out),
          "--input-len + --output-len")) {
    return MakeError(ErrorCode::kInvalidArgument, n("--input-len", "serve.input_len"), x->message,
                     x->fix);
  }
  return {};
}

}  // namespace gpuplan
