// Training job files (YAML, schema in docs/job-yaml.md), read with the shared YamlReader: every
// yaml-cpp exception is caught here and becomes an Error naming "label:LINE:yaml.path", so none
// crosses the API.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "gpuplan/benchmark.h"
#include "gpuplan/job.h"
#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/quantity.h"
#include "io/csv.h"
#include "io/quantity_text.h"
#include "io/yaml_reader.h"

namespace gpuplan {

namespace {

using internal::Describe;
using internal::Entry;
using internal::Join;
using internal::LineOf;
using internal::LooksNegative;
using internal::Section;
using internal::Shown;
using internal::ToLower;
using internal::Trim;
using Reader = internal::YamlReader;

const internal::YamlSchema& JobSchema() {
  static const internal::YamlSchema k{
      {{"", {"model", "train", "constraints", "objective", "host_policy", "top"}},
       {"train",
        {"method", "precision", "optimizer", "lora_rank", "seq_len", "global_batch", "data",
         "checkpoint_every", "framework"}},
       {"train.data", {"tokens", "samples", "epochs", "dataset_size", "benchmark"}},
       {"constraints",
        {"deadline", "budget", "currency", "clouds", "regions", "gpus", "spot", "max_nodes",
         "headroom", "include_suspect", "marketplace", "num_gpus", "nodes"}}},
      "docs/job-yaml.md",
      "the job file",
      "a job file is a map: `model: ...`, `train: ...`; see docs/job-yaml.md",
      "a job needs at least `model:` and `train: {data: {tokens: ...}}`; see docs/job-yaml.md and "
      "examples/",
      "put one job per file (remove the `---` separators)"};
  return k;
}

const std::vector<std::string>& ObjectiveNames() {
  static const std::vector<std::string> k = {"cost", "time", "pareto"};
  return k;
}
const std::vector<std::string>& HostPolicyNames() {
  static const std::vector<std::string> k = {"default", "guide-a", "guide-b"};
  return k;
}

// Resolves `model`: presets first, then a path relative to the job file's folder (so a job
// file can sit beside its config.json), then the path as given (relative to the working dir).
Result<ModelSpec> ResolveJobModel(const std::string& arg, std::string_view label,
                                  const std::string& field) {
  namespace fs = std::filesystem;
  std::string use = arg;
  if (FindPreset(arg) == nullptr && !label.empty()) {
    std::error_code ec;
    fs::path p(arg);
    fs::path base = fs::path(std::string(label)).parent_path();
    if (p.is_relative() && !base.empty()) {
      fs::path cand = base / p;
      if (fs::exists(cand, ec)) use = cand.string();
    }
  }
  return ResolveModel(use, field);
}

Result<TrainJobSpec> ParseJob(const YAML::Node& root, const Reader& r) {
  TrainJobSpec job;
  // Structure first (maps, unknown and duplicate keys in every section), then values, so a
  // misspelt key is reported before what its absence implies.
  auto top = r.ReadSection(root, nullptr, "");
  if (!top) return top.error();
  std::optional<Section> train;
  if (const Entry* e = top->Get("train")) {
    auto s = r.ReadSection(e->value, &e->key_node, "train");
    if (!s) return s.error();
    train = std::move(*s);
  }
  std::optional<Section> data;
  if (const Entry* e = train ? train->Get("data") : nullptr) {
    auto s = r.ReadSection(e->value, &e->key_node, "train.data");
    if (!s) return s.error();
    data = std::move(*s);
  }
  std::optional<Section> constraints;
  if (const Entry* e = top->Get("constraints")) {
    auto s = r.ReadSection(e->value, &e->key_node, "constraints");
    if (!s) return s.error();
    constraints = std::move(*s);
  }

  // --- model
  const Entry* model_raw = top->Raw("model");
  if (model_raw == nullptr) {
    return r.Fail(root, "model", "is missing",
                  "name the model: a preset (`gpuplan models`), a Hugging Face config.json or a "
                  ".safetensors path, e.g. `model: llama-2-7b`");
  }
  if (!model_raw->present()) {
    return r.Fail(*model_raw, "is empty", "e.g. `model: llama-2-7b`");
  }
  auto model_arg = r.Str(*model_raw);
  if (!model_arg) return model_arg.error();
  job.model_arg = *model_arg;
  {
    auto m = ResolveJobModel(*model_arg, r.file(), r.Field(*model_raw));
    if (!m) return m.error();
    job.model = std::move(*m);
  }
  const ModelSpec& model = job.model;
  const bool vision = model.is_image_model();

  // --- train
  auto get_train = [&](std::string_view key) -> const Entry* {
    return train ? train->Get(key) : nullptr;
  };

  if (const Entry* e = get_train("method")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto m = ParseTrainMethod(*s);
    if (!m) return r.Fail(*e, "unknown method " + Excerpt(*s), ChoiceHint(*s, TrainMethodNames()));
    job.method = *m;
  }
  const bool lora = job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora;
  if (lora && model.arch == ModelArch::kCnn) {
    return r.Fail(*get_train("method"),
                  std::string(TrainMethodName(job.method)) +
                      " adapts the linear layers of transformer models; " + model.name +
                      " is a CNN",
                  "use method: full", ErrorCode::kUnsupported);
  }
  if (const Entry* e = get_train("precision")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto tp = ParseTrainPrecision(*s);
    if (!tp) {
      auto p = ParsePrecision(*s);
      if (!p) {
        return r.Fail(*e, "unknown precision " + Excerpt(*s),
                      ChoiceHint(*s, TrainPrecisionNames()));
      }
      return r.Fail(*e,
                    "training precision must be bf16, fp16, fp8, fp4 or fp32, got " + Excerpt(*s),
                    *p == Precision::kTf32
                        ? "tf32 is fp32 training with TF32 math: use fp32"
                        : "for a 4-bit frozen base model use method: qlora with precision: bf16");
    }
    job.precision = tp->precision;
    job.fp4_gemms = tp->fp4_gemms;
  }
  if (const Entry* e = get_train("framework")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto f = ParseTrainFramework(*s);
    if (!f) {
      return r.Fail(*e, "unknown framework " + Excerpt(*s), ChoiceHint(*s, TrainFrameworkNames()));
    }
    job.framework = *f;
  }
  if (const Entry* e = get_train("optimizer")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto o = ParseOptimizer(*s);
    if (!o) {
      return r.Fail(*e, "unknown optimizer " + Excerpt(*s), ChoiceHint(*s, OptimizerNames()));
    }
    job.optimizer = *o;
    job.paged_optimizer = PagedOptimizerName(*s);
  }
  if (const Entry* e = get_train("lora_rank")) {
    if (!lora) {
      return r.Fail(
          *e,
          "applies to method lora or qlora, got method " + std::string(TrainMethodName(job.method)),
          "set train.method: lora (or qlora), or remove lora_rank");
    }
    auto v = r.Int(*e, 1);
    if (!v) return v.error();
    job.lora_rank = *v;
  }
  if (const Entry* e = get_train("seq_len")) {
    if (vision) {
      return r.Fail(*e,
                    "does not apply to " + std::string(ModelArchName(model.arch)) +
                        " models (a sample is " +
                        (model.sample.empty() ? std::string("one image") : model.sample) + ")",
                    "remove seq_len; give train.data.samples");
    }
    auto v = r.Int(*e, 1);
    if (!v) return v.error();
    if (auto x = ExceedsContext(model, *v, "a sequence of " + std::to_string(*v) + " tokens",
                                "seq_len")) {
      return r.Fail(*e, x->message, x->fix);
    }
    job.seq_len = *v;
  }
  if (const Entry* e = get_train("global_batch")) {
    auto v = r.Int(*e, 1);
    if (!v) return v.error();
    job.global_batch = *v;
  }
  if (const Entry* e = get_train("checkpoint_every")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    std::string t = ToLower(*s);
    if (t == "none" || t == "off" || t == "never" || t == "false" || t == "no") {
      job.checkpoint_interval_hours = 0;
    } else {
      auto h = ParseHours(*s, r.Field(*e));
      if (!h) return h.error();
      job.checkpoint_interval_hours = *h;
    }
  }

  // --- train.data
  const Entry* tokens = data ? data->Get("tokens") : nullptr;
  const Entry* samples = data ? data->Get("samples") : nullptr;
  const Entry* bench = data ? data->Get("benchmark") : nullptr;
  if (bench != nullptr) {
    // A run to a quality target: the benchmark's samples to the target at this batch, plus
    // its evaluation passes as training-sample equivalents (data/benchmarks.csv).
    if (tokens != nullptr || samples != nullptr || data->Get("epochs") != nullptr) {
      return r.Fail(*bench, "give benchmark or tokens/samples/epochs, not both",
                    "a benchmark fixes the data its runs process to the target");
    }
    auto name = r.Str(*bench);
    if (!name) return name.error();
    const TrainBenchmark* b = FindTrainBenchmark(*name);
    if (b == nullptr) {
      std::string known;
      for (const auto& t : TrainBenchmarks()) known += (known.empty() ? "" : ", ") + t.id;
      return r.Fail(*bench, "unknown benchmark " + Excerpt(*name), "known: " + known);
    }
    const bool peft = job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora;
    // An unstated batch is the benchmark's reference batch: the one its samples to the target
    // are measured at (a larger one needs more samples, SamplesToTarget).
    if (job.global_batch <= 0 && b->ref_global_batch > 0) job.global_batch = b->ref_global_batch;
    // samples per epoch x epochs, so that dataset_size / samples is the bytes of one sample.
    const double total =
        b->SamplesToTarget(job.global_batch) * (1 + b->EvalOverhead(peft ? 0.5 : 1.0 / 3.0));
    // The benchmark's global batch counts samples; its packed samples share sequences, so a
    // step runs fewer sequences than samples (SequencesPerStep: BERT's 3072 are 1536 packs of
    // 512 tokens).
    if (model.is_transformer()) {
      job.global_batch = b->SequencesPerStep(job.global_batch, EffectiveSeqLen(job));
    }
    if (b->samples_per_epoch > 0) {
      job.samples = b->samples_per_epoch;
      job.epochs = total / b->samples_per_epoch;
    } else {
      job.samples = total;  // a corpus sampled, not passed over: one "epoch" of the samples
      job.epochs = 1;
    }
    job.benchmark = b->id;
    // Its reference implementation's framework where the job names none
    // (BenchmarkReferenceFramework: NeMo on Megatron-Core for the LLM benchmarks).
    if (!get_train("framework")) job.framework = BenchmarkReferenceFramework(model);
  } else if (tokens == nullptr && samples == nullptr) {
    // Point at the deepest thing the user wrote: train.data, train, or the file.
    const Entry* at = train ? train->Raw("data") : nullptr;
    if (at == nullptr && top->Raw("train") != nullptr) at = top->Raw("train");
    YAML::Node where = at != nullptr ? at->key_node : root;
    return r.Fail(where, "train.data", "give tokens or samples",
                  vision ? "e.g. train.data: {samples: 1.28M, epochs: 90}"
                         : "e.g. train.data: {tokens: 2B}, or {samples: 50000, epochs: 3} "
                           "(tokens = samples x seq_len)");
  }
  if (tokens != nullptr && samples != nullptr) {
    return r.Fail(*samples, "give tokens or samples, not both",
                  "tokens counts what the model reads per epoch; samples x seq_len is used only "
                  "when tokens is absent");
  }
  if (tokens != nullptr) {
    if (vision) {
      return r.Fail(
          *tokens,
          "a " + std::string(ModelArchName(model.arch)) + " model trains on samples, not tokens",
          "give train.data.samples (images) instead");
    }
    auto v = r.PositiveCount(*tokens);
    if (!v) return v.error();
    job.tokens = *v;
  }
  if (samples != nullptr) {
    auto v = r.PositiveCount(*samples);
    if (!v) return v.error();
    job.samples = *v;
  }
  if (const Entry* e = data->Get("epochs")) {
    auto v = r.PositiveNumber(*e);
    if (!v) return v.error();
    job.epochs = *v;
  }
  if (const Entry* e = data->Get("dataset_size")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    if (LooksNegative(*s)) return r.Fail(*e, "must be > 0, got " + *s, "omit it when unknown");
    auto v = ParseSize(*s, r.Field(*e));
    if (!v) return v.error();
    if (!(v->value() > 0)) return r.Fail(*e, "must be > 0, got " + *s, "omit it when unknown");
    job.dataset = *v;
  }

  // --- constraints
  if (constraints) {
    const Section& c = *constraints;
    if (const Entry* e = c.Get("deadline")) {
      auto s = r.Str(*e);
      if (!s) return s.error();
      if (LooksNegative(*s)) return r.Fail(*e, "must be > 0, got " + Shown(*s));
      auto h = ParseHours(*s, r.Field(*e));
      if (!h) return h.error();
      if (!(*h > 0)) return r.Fail(*e, "must be > 0, got " + Shown(*s));
      job.deadline_hours = *h;
    }
    if (const Entry* e = c.Get("currency")) {
      auto s = r.Str(*e);
      if (!s) return s.error();
      auto cur = ParseCurrency(*s);
      if (!cur) return r.Fail(*e, "unknown currency " + Excerpt(*s), "use USD or CNY");
      job.currency = *cur;
    }
    if (const Entry* e = c.Get("budget")) {
      auto s = r.Str(*e);
      if (!s) return s.error();
      auto m = ParseMoney(*s, r.Field(*e));
      if (!m) return m.error();
      if (!(m->amount > 0)) return r.Fail(*e, "must be > 0, got " + Shown(*s));
      if (m->currency) {
        if (c.Get("currency") != nullptr && *m->currency != job.currency) {
          return r.Fail(*e,
                        "is in " + std::string(CurrencyCode(*m->currency)) +
                            " but constraints.currency is " + CurrencyCode(job.currency),
                        "drop the currency from the amount, or set currency: " +
                            std::string(CurrencyCode(*m->currency)));
        }
        job.currency = *m->currency;
      }
      job.budget = m->amount;
    }
    if (const Entry* e = c.Get("clouds")) {
      auto v = r.Names(*e, true);
      if (!v) return v.error();
      job.clouds = std::move(*v);
      job.file_keys[e->path] = r.Field(*e);
    }
    if (const Entry* e = c.Get("regions")) {
      auto v = r.Names(*e, true);
      if (!v) return v.error();
      job.regions = std::move(*v);
      job.file_keys[e->path] = r.Field(*e);
    }
    if (const Entry* e = c.Get("gpus")) {
      auto v = r.Names(*e, false);
      if (!v) return v.error();
      job.gpus = std::move(*v);
      job.file_keys[e->path] = r.Field(*e);
    }
    if (const Entry* e = c.Get("spot")) {
      auto v = r.Bool(*e);
      if (!v) return v.error();
      job.spot_allowed = *v;
    }
    if (const Entry* e = c.Get("include_suspect")) {
      auto v = r.Bool(*e);
      if (!v) return v.error();
      job.include_suspect = *v;
    }
    if (const Entry* e = c.Get("marketplace")) {
      auto v = r.Bool(*e);
      if (!v) return v.error();
      job.marketplace = *v;
    }
    if (const Entry* e = c.Get("max_nodes")) {
      auto v = r.Int(*e, 1);
      if (!v) return v.error();
      job.max_nodes = *v;
    }
    // A fixed cluster: exactly num_gpus GPUs and/or this many nodes.
    if (const Entry* e = c.Get("num_gpus")) {
      auto v = r.Int(*e, 1);
      if (!v) return v.error();
      job.num_gpus = *v;
    }
    if (const Entry* e = c.Get("nodes")) {
      auto v = r.Int(*e, 1);
      if (!v) return v.error();
      job.nodes = *v;
    }
    if (const Entry* e = c.Get("headroom")) {
      auto s = r.Str(*e);
      if (!s) return s.error();
      std::string t = *s;
      double scale = 1.0;
      if (!t.empty() && t.back() == '%') {
        t.pop_back();
        scale = 0.01;
      }
      auto v = internal::ParseDouble(t);
      if (!v) return r.Fail(*e, "expected a fraction such as 0.8 or 80%, got " + Excerpt(*s));
      double h = *v * scale;
      if (!(h > 0 && h <= 1)) {
        return r.Fail(*e, "must be in (0, 1], got " + *s,
                      "the fraction of GPU memory a plan may fill: 0.8 (or 80%) keeps 20% free "
                      "(guide B5)");
      }
      job.headroom = h;
    }
  }

  // --- top-level choices
  if (const Entry* e = top->Get("objective")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto o = ParseObjective(*s);
    if (!o) return r.Fail(*e, "unknown objective " + Excerpt(*s), ChoiceHint(*s, ObjectiveNames()));
    job.objective = *o;
  }
  if (const Entry* e = top->Get("host_policy")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto p = ParseSizingPolicy(*s);
    if (!p) {
      return r.Fail(*e, "unknown host_policy " + Excerpt(*s), ChoiceHint(*s, HostPolicyNames()));
    }
    job.host_policy = *p;
  }
  if (const Entry* e = top->Get("top")) {
    auto v = r.Int(*e, 1);
    if (!v) return v.error();
    job.top = *v;
  }
  return job;
}

}  // namespace

Result<TrainJobSpec> ParseTrainJobYaml(std::string_view yaml_text, std::string_view label) {
  const Reader r(label, JobSchema());
  return r.Read(yaml_text, [&](const YAML::Node& root) -> Result<TrainJobSpec> {
    auto job = ParseJob(root, r);
    if (!job) return job.error();
    if (auto st = ValidateTrainJob(*job, InputSource::kYaml, r.label()); !st) return st.error();
    return job;
  });
}

}  // namespace gpuplan
