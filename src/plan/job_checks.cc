// Job completion and checks shared by every front end (include/gpuplan/job_checks.h).
#include "gpuplan/quant_preset.h"
#include "gpuplan/job_checks.h"

#include "gpuplan/benchmark.h"

#include <fmt/format.h>

#include <cctype>
#include <string>
#include <utility>

#include "gpuplan/job_validate.h"

namespace gpuplan {

namespace {
// Serving defaults when the job does not say (docs/serve-yaml.md).
constexpr int kLlmInputLen = 512;
constexpr int kLlmOutputLen = 256;
constexpr int kEncoderInputLen = 128;
constexpr int kAudioOutputLen = 128;
constexpr int kDefaultTop = 5;
}  // namespace

int DefaultServeInputLen(const ModelSpec& m) {
  if (m.is_audio_model()) return std::max(1, m.encoder_positions);  // the fixed audio window
  if (m.generates_tokens()) return kLlmInputLen;
  return m.arch == ModelArch::kEncoder ? kEncoderInputLen : std::max(1, m.ImageTokens());
}
int DefaultServeOutputLen(const ModelSpec& m) {
  // Whisper: a 30 s window of speech is about 100-150 tokens of text (2-3 words a second at
  // about 1.3 tokens a word); its decoder stops at max_target_positions (448).
  if (m.is_audio_model()) return kAudioOutputLen;
  return m.generates_tokens() ? kLlmOutputLen : 0;
}

Status FinalizeTrainJob(TrainJobSpec& job, InputSource source, std::string_view label,
                        const TrainJobFields& fields) {
  if ((job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora) &&
      (!job.model.is_transformer() || job.model.layers == 0)) {
    return MakeError(ErrorCode::kUnsupported, fields.method,
                     std::string("LoRA/QLoRA needs a transformer's linear layers; ") +
                         job.model.name + " is a " + ModelArchName(job.model.arch) + " model",
                     fields.method.rfind("--", 0) == 0 ? "use --method full" : "use method: full");
  }
  if (job.seq_len <= 0) job.seq_len = EffectiveSeqLen(job);
  if (job.TotalTokens() <= 0) {
    return MakeError(ErrorCode::kInvalidArgument, fields.tokens, "the job's size is unknown",
                     fields.tokens.rfind("--", 0) == 0
                         ? "give --tokens (e.g. 2B) or --samples with --epochs"
                         : "give train.data.tokens (e.g. 2B) or train.data.samples with epochs");
  }
  // The same ranges as the YAML reader's (one validation layer).
  return ValidateTrainJob(job, source, label);
}

namespace {
// The serving job file's key of each flag (docs/serve-yaml.md). --tokens-per-s and --users are
// other ways to give the file's serve.qps.
constexpr std::pair<std::string_view, std::string_view> kServeFileKeys[] = {
    {"--model", "model"},
    {"--qps", "serve.qps"},
    {"--tokens-per-s", "serve.qps"},
    {"--users", "serve.qps"},
    {"--benchmark", "serve.benchmark"},
    {"--input-len", "serve.input_len"},
    {"--output-len", "serve.output_len"},
    {"--denoise-steps", "serve.denoise_steps"},
    {"--precision", "serve.precision"},
    {"--quant", "serve.quant"},
    {"--kv-precision", "serve.kv_precision"},
    {"--engine", "serve.engine"},
    {"--util", "serve.target_utilization"},
    {"--ttft-ms", "slo.ttft_p99_ms"},
    {"--tpot-ms", "slo.tpot_p99_ms"},
    {"--e2e-ms", "slo.e2e_p99_ms"},
    {"--clouds", "constraints.clouds"},
    {"--regions", "constraints.regions"},
    {"--gpus", "constraints.gpus"},
    {"--cpu", "constraints.cpu"},
    {"--cpu-only", "constraints.cpu_only"},
    {"--reserved", "constraints.reserved"},
    {"--include-suspect", "constraints.include_suspect"},
    {"--no-marketplace", "constraints.marketplace"},
    {"--currency", "constraints.currency"},
    {"--top", "top"}};
}  // namespace

std::string_view ServeFileKeyOfFlag(std::string_view flag) {
  for (const auto& [f, key] : kServeFileKeys) {
    if (f == flag) return key;
  }
  return {};
}

void MergeServeJobFile(ServeRequest& a, const ServeJobFile& f,
                       const std::function<bool(const char*)>& is_unset) {
  // Takes the file's value of `flag` and remembers where it sits.
  auto take = [&](const char* flag, bool has) {
    if (!has || (is_unset && !is_unset(flag))) return false;
    if (auto it = f.where.find(ServeFileKeyOfFlag(flag)); it != f.where.end())
      a.from_file[flag] = it->second;
    return true;
  };
  if (take("--model", !f.model.empty())) {
    a.model = f.model;
    a.model_given = true;
  }
  const bool load_flag = is_unset && (!is_unset("--tokens-per-s") || !is_unset("--users"));
  if (take("--qps", f.qps.has_value() && !load_flag)) a.qps = *f.qps;
  if (take("--benchmark", !f.benchmark.empty())) a.benchmark = f.benchmark;
  if (take("--input-len", f.input_len.has_value())) a.input_len = *f.input_len;
  if (take("--output-len", f.output_len.has_value())) a.output_len = *f.output_len;
  if (take("--denoise-steps", f.denoise_steps.has_value())) a.denoise_steps = *f.denoise_steps;
  if (take("--ttft-ms", f.ttft_p99_ms.has_value())) a.ttft_ms = *f.ttft_p99_ms;
  if (take("--tpot-ms", f.tpot_p99_ms.has_value())) a.tpot_ms = *f.tpot_p99_ms;
  if (take("--e2e-ms", f.e2e_p99_ms.has_value())) a.e2e_ms = *f.e2e_p99_ms;
  if (take("--util", f.target_utilization.has_value())) a.util = *f.target_utilization;
  if (take("--precision", !f.precision.empty())) a.precision = f.precision;
  if (take("--quant", !f.quant.empty())) a.quant = f.quant;
  if (take("--kv-precision", !f.kv_precision.empty())) a.kv_precision = f.kv_precision;
  if (take("--engine", !f.engine.empty())) a.engine = f.engine;
  if (take("--currency", !f.currency.empty())) a.currency = f.currency;
  if (take("--clouds", !f.clouds.empty())) a.clouds = f.clouds;
  if (take("--regions", !f.regions.empty())) a.regions = f.regions;
  if (take("--gpus", !f.gpus.empty())) a.gpus = f.gpus;
  if (take("--cpu", f.cpu.has_value())) a.cpu = *f.cpu;
  if (take("--cpu-only", f.cpu_only.has_value())) a.cpu_only = *f.cpu_only;
  if (take("--reserved", f.reserved.has_value())) a.reserved = *f.reserved;
  if (take("--include-suspect", f.include_suspect.has_value()))
    a.include_suspect = *f.include_suspect;
  if (take("--no-marketplace", f.marketplace.has_value())) a.no_marketplace = !*f.marketplace;
  if (take("--top", f.top.has_value())) a.top = *f.top;
}

namespace {
// `text` with each whole-word `flag` ("--cpu", not the start of "--cpu-only") replaced.
std::string ReplaceFlag(std::string text, std::string_view flag, std::string_view with) {
  for (size_t at = text.find(flag); at != std::string::npos; at = text.find(flag, at)) {
    const size_t end = at + flag.size();
    const bool word_end =
        end == text.size() ||
        !(std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '-');
    if (!word_end) {
      at = end;
      continue;
    }
    text.replace(at, flag.size(), with);
    at += with.size();
  }
  return text;
}
}  // namespace

Error FieldAt(Error e, const std::map<std::string, std::string, std::less<>>& where) {
  const size_t bracket = e.field.find('[');
  auto it = where.find(std::string_view(e.field).substr(0, bracket));
  if (it == where.end()) return e;
  e.field = it->second + (bracket == std::string::npos ? "" : e.field.substr(bracket));
  return e;
}

Error NameFileField(Error e, const ServeRequest& r) {
  // "--clouds[1]" is the flag --clouds, item 1.
  const std::string field = e.field;
  e = FieldAt(std::move(e), r.from_file);
  if (e.field == field) return e;
  // Whoever wrote the file is told its keys, not flags: "use constraints.cpu", not "use --cpu".
  for (const auto& [flag, key] : kServeFileKeys) {
    if (flag == "--tokens-per-s" || flag == "--users") continue;
    e.message = ReplaceFlag(std::move(e.message), flag, key);
    e.hint = ReplaceFlag(std::move(e.hint), flag, key);
  }
  return e;
}

std::string ServeModelRef(const ServeRequest& r) {
  if (!r.model_given && !r.benchmark.empty()) {
    if (const InferBenchmark* b = FindInferBenchmark(r.benchmark); b && !b->model.empty()) {
      return b->model;
    }
  }
  return r.model;
}

namespace {
Result<ServeJobSpec> BuildServeJobOfFlags(const ServeRequest& a, std::string_view default_currency,
                                          const ModelSpec* given_model) {
  ServeJobSpec job;
  if (a.model.empty() && given_model == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument, "--model", "is empty",
                     "give a preset name (see `gpuplan models`) or a path to config.json");
  }
  // Mutually exclusive load flags; each given value finite and in range.
  if ((a.qps ? 1 : 0) + (a.tokens_per_s ? 1 : 0) + (a.users ? 1 : 0) > 1) {
    return MakeError(ErrorCode::kInvalidArgument, a.qps ? "--qps" : "--tokens-per-s",
                     "give one load: --qps, --tokens-per-s or --users",
                     "they are three ways to say the same thing");
  }
  if (auto st = CheckRange(a.qps, "--qps", 0, kMaxQps, true); !st) return st.error();
  if (auto st = CheckRange(a.tokens_per_s, "--tokens-per-s", 0, kMaxQps * 1e4, true); !st)
    return st.error();
  if (auto st = CheckRange(a.users, "--users", 0, 1e9, true); !st) return st.error();
  if (auto st = CheckRange(a.think_s, "--think-s", 0, 86400, true); !st) return st.error();
  if (a.cpu_only && !a.gpus.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "--gpus",
                     "names accelerators, but --cpu-only plans CPU instances only",
                     "drop --gpus, or use --cpu to rank CPUs beside those GPUs");
  }
  for (const auto& [v, flag] :
       {std::pair{a.ttft_ms, "--ttft-ms"}, {a.tpot_ms, "--tpot-ms"}, {a.e2e_ms, "--e2e-ms"}}) {
    if (auto st = CheckRange(v, flag, 0, kMaxSloMs, true); !st) return st.error();
  }
  if (a.input_len && (*a.input_len < 1 || *a.input_len > kMaxSeqLen)) {
    return MakeError(ErrorCode::kInvalidArgument, "--input-len",
                     fmt::format("must be in [1, {}], got {}", kMaxSeqLen, *a.input_len));
  }
  if (a.output_len && (*a.output_len < 0 || *a.output_len > kMaxSeqLen)) {
    return MakeError(ErrorCode::kInvalidArgument, "--output-len",
                     fmt::format("must be in [0, {}], got {}", kMaxSeqLen, *a.output_len));
  }
  if (a.denoise_steps && (*a.denoise_steps < 1 || *a.denoise_steps > kMaxDenoiseSteps)) {
    return MakeError(ErrorCode::kInvalidArgument, "--denoise-steps",
                     fmt::format("must be in [1, {}], got {}", kMaxDenoiseSteps, *a.denoise_steps));
  }
  if (a.top && (*a.top < 1 || *a.top > kMaxTop)) {
    return MakeError(ErrorCode::kInvalidArgument, "--top",
                     fmt::format("must be in [1, {}], got {}", kMaxTop, *a.top));
  }
  if (auto st = CheckRange(a.util, "--util", 0, 1, true); !st) return st.error();
  if (given_model != nullptr) {
    job.model = *given_model;
  } else {
    if (const InferBenchmark* b = a.benchmark.empty() ? nullptr : FindInferBenchmark(a.benchmark);
        b != nullptr && !a.model_given && b->model.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "--model",
                       b->id + "'s reference model (" + b->task +
                           ") has no built-in preset, and no --model was given",
                       "give --model with the model's config.json (or a preset to serve instead)");
    }
    auto m = ResolveModel(ServeModelRef(a), "--model");
    if (!m) return m.error();
    job.model = std::move(*m);
  }
  const ModelSpec* m = &job.model;
  job.weight_precision = m->dtype == Precision::kFp32 ? Precision::kFp16 : m->dtype;
  job.quant = m->quant;
  // A named public benchmark runs in its closed-division format (fp8 for MLPerf's LLMs) unless
  // the request states one: the validation adapter's rule too (docs/model.md 12.6). GPUs without
  // fp8 tensor cores run such weights at their bf16 rate (weight-only fp8).
  if (const InferBenchmark* b = a.benchmark.empty() ? nullptr : FindInferBenchmark(a.benchmark);
      b != nullptr && b->precision && a.precision.empty() && a.quant.empty() && !m->quant &&
      m->is_decoder_llm()) {
    job.weight_precision = *b->precision;
  }
  if (!a.precision.empty()) {
    auto p = ParsePrecision(a.precision);
    if (!p)
      return MakeError(ErrorCode::kInvalidArgument, "--precision",
                       "unknown precision \"" + a.precision + "\"",
                       ChoiceHint(a.precision, PrecisionNames()));
    job.weight_precision = *p;
  }
  if (!a.quant.empty()) {
    if (auto st = ApplyQuantName(a.quant, "--quant", job.weight_precision, job.quant); !st)
      return st.error();
  }
  job.kv_precision = DefaultKvPrecision(job.weight_precision);
  if (!a.kv_precision.empty()) {
    GPUPLAN_ASSIGN_OR_RETURN(
        job.kv_precision, ParseKvPrecision(a.kv_precision, "--kv-precision", job.weight_precision));
  }
  auto e = ParseEngine(a.engine);
  if (!e)
    return MakeError(ErrorCode::kInvalidArgument, "--engine", "unknown engine \"" + a.engine + "\"",
                     ChoiceHint(a.engine, EngineNames()));
  job.engine = *e;
  const bool llm = m->generates_tokens();
  if (a.denoise_steps && m->arch != ModelArch::kDiffusionUnet) {
    return MakeError(ErrorCode::kInvalidArgument, "--denoise-steps",
                     m->name + " is not a diffusion UNet: it has no denoising steps",
                     "drop --denoise-steps, or serve a diffusion UNet (sdxl-unet, sd-1.5-unet)");
  }
  // Lengths a model does not have: an encoder generates no tokens; an image model's request is
  // one image (its size is the model's).
  if (!llm && a.output_len && *a.output_len > 0) {
    return MakeError(ErrorCode::kInvalidArgument, "--output-len",
                     fmt::format("{} ({}) generates no tokens: each request is one forward "
                                 "pass, got {}",
                                 m->name, ModelArchName(m->arch), *a.output_len),
                     "drop --output-len");
  }
  if (!llm && a.tpot_ms) {
    return MakeError(ErrorCode::kInvalidArgument, "--tpot-ms",
                     fmt::format("{} ({}) generates no tokens, so it has no time per output token",
                                 m->name, ModelArchName(m->arch)),
                     "bound the request's latency with --e2e-ms instead");
  }
  if (!llm && !a.kv_precision.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--kv-precision",
        fmt::format("{} ({}) keeps no KV cache between requests", m->name, ModelArchName(m->arch)),
        "drop --kv-precision");
  }
  if (m->is_audio_model() && a.input_len) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--input-len",
        fmt::format("{} takes {} per request, not tokens", m->name, AudioWindowText(*m)),
        "drop --input-len; --output-len is the transcript's tokens");
  }
  if (m->is_image_model() && a.input_len) {
    return MakeError(ErrorCode::kInvalidArgument, "--input-len",
                     m->name + " takes one image per request, not tokens",
                     "drop --input-len (the image size is the model's)");
  }
  // A named benchmark fills the lengths and SLOs the request leaves unset (one rule with the
  // validation adapter: FillServingShape). Encoders process the real (unpadded) lengths: the
  // benchmark's harness batches by length on GPUs and CPUs alike.
  ServingShape shape;
  shape.input_len = a.input_len;
  shape.output_len = a.output_len;
  shape.ttft_p99_ms = a.ttft_ms;
  shape.tpot_p99_ms = a.tpot_ms;
  shape.e2e_p99_ms = a.e2e_ms;
  shape.denoise_steps = a.denoise_steps;
  if (!a.benchmark.empty()) {
    const InferBenchmark* b = FindInferBenchmark(a.benchmark);
    if (b == nullptr) {
      std::string known;
      for (const auto& t : InferBenchmarks()) known += (known.empty() ? "" : ", ") + t.id;
      return MakeError(ErrorCode::kInvalidArgument, "--benchmark",
                       "unknown inference benchmark \"" + a.benchmark + "\"", "known: " + known);
    }
    shape = FillServingShape(*b, shape);
    if (auto miss = llm ? UnpublishedLength(*b, shape) : std::nullopt) {
      return MakeError(ErrorCode::kUnsupported, "--benchmark", miss->message, "give " + miss->flag);
    }
  }
  job.input_len = shape.input_len ? *shape.input_len : DefaultServeInputLen(*m);
  job.output_len = shape.output_len ? *shape.output_len : DefaultServeOutputLen(*m);
  job.beams = llm ? shape.beams.value_or(1) : 1;
  if (llm && shape.max_output_len && *shape.max_output_len > job.output_len) {
    job.max_output_len = shape.max_output_len;
  }
  job.diffusion = SamplingOf(shape);
  // The load: requests/s, or output tokens/s (/ output_len), or concurrent users each sending a
  // request every think time.
  double qps = a.qps.value_or(0);
  if (a.tokens_per_s) {
    if (job.output_len <= 0) {
      return MakeError(ErrorCode::kInvalidArgument, "--tokens-per-s",
                       "needs --output-len > 0 to convert tokens/s into requests/s",
                       "give --output-len (tokens per response), or the load as --qps");
    }
    qps = *a.tokens_per_s / job.output_len;
  }
  if (a.users) qps = *a.users / a.think_s;
  if (!(qps > 0)) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--qps", "no load given",
        "give the peak load: --qps (requests/s), --tokens-per-s (output tokens/s) or --users");
  }
  if (qps > kMaxQps) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        a.qps            ? "--qps"
        : a.tokens_per_s ? "--tokens-per-s"
                         : "--users",
        fmt::format("the load is {:g} requests/s, more than the limit of {:g}", qps, kMaxQps));
  }
  job.qps = qps;
  job.ttft_p99_ms = shape.ttft_p99_ms;
  job.tpot_p99_ms = shape.tpot_p99_ms;
  job.e2e_p99_ms = shape.e2e_p99_ms;
  if (!(a.util > 0 && a.util < 1))
    return MakeError(ErrorCode::kInvalidArgument, "--util",
                     fmt::format("must be in (0, 1), got {}", a.util),
                     "0.6 is the guides' HPA target (B12)");
  job.target_utilization = a.util;
  job.clouds = a.clouds;
  job.regions = a.regions;
  job.gpus = a.gpus;
  job.allow_cpu = a.cpu || a.cpu_only;
  job.allow_gpu = !a.cpu_only;
  job.reserved = a.reserved;
  job.include_suspect = a.include_suspect;
  job.marketplace = !a.no_marketplace;
  job.by_region = a.by_region;
  job.top = a.top.value_or(kDefaultTop);
  std::string cur = a.currency.empty() ? std::string(default_currency) : a.currency;
  auto c = ParseCurrency(cur);
  if (!c)
    return MakeError(ErrorCode::kInvalidArgument, "--currency", "unknown currency \"" + cur + "\"",
                     "use USD or CNY");
  job.currency = *c;
  if (auto st = ValidateServeJob(job, InputSource::kFlags); !st) return st.error();
  return job;
}

}  // namespace

Result<ServeJobSpec> BuildServeJob(const ServeRequest& a, std::string_view default_currency,
                                   const ModelSpec* given_model) {
  auto job = BuildServeJobOfFlags(a, default_currency, given_model);
  if (!job) return NameFileField(job.error(), a);
  return job;
}

}  // namespace gpuplan
