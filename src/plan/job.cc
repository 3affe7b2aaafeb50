// The training job's own semantics: defaults a job leaves unstated (sequence length, global
// batch) and the objective names. File reading is in job_yaml.cc; validation in job_validate.cc.
#include "gpuplan/job.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/strings.h"
#include "gpuplan/benchmark.h"

namespace gpuplan {

namespace {

using internal::ToLower;
using internal::Trim;

// LLM pretraining tokens per step: 16,384 per GPU between 2^20 and 2^24 (powers of two keep the
// batch a power of two at power-of-two sequence lengths: 256 x 4096 at 64 GPUs or fewer).
constexpr double kPretrainTokensPerGpu = 16384.0;
constexpr double kPretrainTokensMin = 1048576.0;
constexpr double kPretrainTokensMax = 16777216.0;
constexpr int kFullFinetuneBatch = 128;
constexpr int kLoraBatch = 16;
constexpr int kVisionBatch = 256;
// Default LLM sequence length when the job does not give one (capped by the model's context).
constexpr int kDefaultSeqLen = 4096;

}  // namespace

// Tokens in one sequence (sample) the job trains on: the given seq_len, else the family default.
int EffectiveSeqLen(const TrainJobSpec& job) {
  if (job.seq_len > 0) return job.seq_len;
  const ModelSpec& m = job.model;
  switch (m.arch) {
    case ModelArch::kVit:
      return std::max(1, m.ImageTokens());
    case ModelArch::kCnn:
    case ModelArch::kDiffusionUnet:
      return 1;  // a sample is the unit of work
    default:
      break;
  }
  if (m.max_positions > 0) return std::min(kDefaultSeqLen, m.max_positions);
  return kDefaultSeqLen;
}

const char* ObjectiveName(Objective o) {
  switch (o) {
    case Objective::kCost:
      return "cost";
    case Objective::kTime:
      return "time";
    case Objective::kPareto:
      return "pareto";
  }
  return "?";
}

std::optional<Objective> ParseObjective(std::string_view s) {
  std::string t = ToLower(Trim(s));
  if (t == "cost" || t == "cheapest") return Objective::kCost;
  if (t == "time" || t == "fastest") return Objective::kTime;
  if (t == "pareto") return Objective::kPareto;
  return std::nullopt;
}

double TrainJobSpec::TotalTokens() const {
  if (tokens > 0) return tokens * epochs;
  // A run-to-target benchmark whose samples run packed costs their real tokens (MLPerf BERT).
  const TrainBenchmark* b = benchmark.empty() ? nullptr : FindTrainBenchmark(benchmark);
  const int seq = EffectiveSeqLen(*this);
  return samples * (b ? b->TokensPerSample(seq) : seq) * epochs;
}

int SamplesPerSequence(const TrainJobSpec& job) {
  const TrainBenchmark* b = job.benchmark.empty() ? nullptr : FindTrainBenchmark(job.benchmark);
  return b && job.model.is_transformer() ? b->PackingFactor(EffectiveSeqLen(job)) : 1;
}

int DefaultGlobalBatch(const TrainJobSpec& job, int gpus) {
  if (job.model.is_image_model()) return kVisionBatch;
  switch (job.method) {
    case TrainMethod::kLora:
    case TrainMethod::kQlora:
      return kLoraBatch;
    case TrainMethod::kFull:
      return kFullFinetuneBatch;
    case TrainMethod::kPretrain:
      break;
  }
  // No larger than the compute-optimal batch of the run's budget: DeepSeek LLM's fit
  // B_opt = 0.2920 C^0.3271 tokens for C = 6 N D FLOPs (Bi et al. 2024, arXiv:2401.02954,
  // section 3.1): ~2M tokens for a 1B model on 100B tokens, ~14M for 70B on 2T. A small model
  // on a large cluster keeps the batch its optimisation tolerates.
  double cap = kPretrainTokensMax;
  if (const double d = job.TotalTokens(); d > 0) {
    const double n = static_cast<double>(CountParams(job.model).active);
    if (n > 0) {
      cap = std::clamp(0.2920 * std::pow(6.0 * n * d, 0.3271), kPretrainTokensMin,
                       kPretrainTokensMax);
    }
  }
  const double tokens =
      std::clamp(kPretrainTokensPerGpu * std::max(0, gpus), kPretrainTokensMin, cap);
  double seqs = std::round(tokens / EffectiveSeqLen(job));
  return std::max(1, static_cast<int>(seqs));
}

TrainMemoryOptions TrainOptionsFor(const TrainJobSpec& job) {
  TrainMemoryOptions o;
  o.method = job.method;
  o.precision = job.precision;
  o.fp4_gemms = job.fp4_gemms;
  o.optimizer = job.optimizer;
  o.paged_optimizer = job.paged_optimizer;
  o.lora_rank = job.lora_rank;
  o.seq_len = EffectiveSeqLen(job);
  if (job.method == TrainMethod::kQlora) o.base_bits = 4;
  o.dropout = DefaultDropout(job.model);
  o.fused_kernels = RunsBenchmarkImplementation(job);
  o.notes = false;
  return o;
}

bool RunsBenchmarkImplementation(const TrainJobSpec& job) {
  return !job.benchmark.empty() && FindTrainBenchmark(job.benchmark) != nullptr &&
         job.framework == BenchmarkReferenceFramework(job.model);
}

}  // namespace gpuplan
