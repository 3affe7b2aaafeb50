// Training job files (YAML, schema in docs/job-yaml.md) and the size/duration/count parsers
// shared with the CLI flags. The only place that reads job YAML: every yaml-cpp exception is
// caught here and becomes an Error naming "label:LINE:yaml.path", so none crosses the API.
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
#include "io/csv.h"
#include "io/yaml_util.h"

namespace gpuplan {

namespace {

using internal::ToLower;
using internal::Trim;

// ~1M tokens per step for LLM pretraining (Llama 1/2 used 4M, GPT-3 0.5-3.2M; 2^20 keeps
// the batch a power of two at power-of-two sequence lengths: 256 x 4096).
constexpr double kPretrainTokensPerStep = 1048576.0;
constexpr int kFullFinetuneBatch = 128;
constexpr int kLoraBatch = 16;
constexpr int kVisionBatch = 256;
// Default LLM sequence length when the job does not give one (capped by the model's context).
constexpr int kDefaultSeqLen = 4096;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// "-4", "-2B": reported as "must be > 0" where a positive value is needed, before the
// parsers' generic ">= 0".
bool LooksNegative(std::string_view s) { return !s.empty() && s[0] == '-'; }

// A value echoed unquoted in a message when it is short and printable, else a safe excerpt.
std::string Shown(std::string_view s) {
  if (s.size() > 60) return Excerpt(s);
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) return Excerpt(s);
  }
  return std::string(s);
}

bool IsVision(const ModelSpec& m) {
  return m.arch == ModelArch::kVit || m.arch == ModelArch::kCnn ||
         m.arch == ModelArch::kDiffusionUnet;
}

}  // namespace

// Tokens in one sequence (sample) the job trains on: the given seq_len, else the family default.
int EffectiveSeqLen(const TrainJobSpec& job) {
  if (job.seq_len > 0) return job.seq_len;
  const ModelSpec& m = job.model;
  switch (m.arch) {
    case ModelArch::kVit:
      // Patches plus the class token: 224/16 -> 14 x 14 + 1 = 197.
      if (m.image_size > 0 && m.patch_size > 0) {
        int side = m.image_size / m.patch_size;
        return side * side + 1;
      }
      return 1;
    case ModelArch::kCnn:
    case ModelArch::kDiffusionUnet:
      return 1;  // a sample is the unit of work
    default:
      break;
  }
  if (m.max_positions > 0) return std::min(kDefaultSeqLen, m.max_positions);
  return kDefaultSeqLen;
}

namespace {

// Parses a finite non-negative double at the start of `s`; returns the characters consumed
// (0 when there is no number). No sign, no "inf"/"nan", no hex.
size_t ParseLeadingNumber(std::string_view s, double& out) {
  if (s.empty() || !(IsDigit(s[0]) || s[0] == '.')) return 0;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return 0;
  out = v;
  return static_cast<size_t>(ptr - s.data());
}

// Removes digit-grouping separators: "50,000" (groups of exactly three before any decimal
// point) and "1_000_000" (between digits). Returns false on a misplaced separator such as
// "1,5M" (a decimal comma), which must not silently become 15M.
bool StripGrouping(std::string& t) {
  std::string out;
  out.reserve(t.size());
  bool seen_point = false;
  bool first_comma = true;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '.') seen_point = true;
    if (c == '_') {
      if (i == 0 || i + 1 >= t.size() || !IsDigit(t[i - 1]) || !IsDigit(t[i + 1])) return false;
      continue;
    }
    if (c == ',') {
      if (seen_point || i == 0 || !IsDigit(t[i - 1])) return false;
      if (first_comma) {
        size_t j = i;
        while (j > 0 && IsDigit(t[j - 1])) --j;
        if (i - j > 3) return false;
        first_comma = false;
      }
      // Exactly three digits follow, then a non-digit or the end.
      if (i + 3 >= t.size()) return false;
      for (size_t k = i + 1; k <= i + 3; ++k) {
        if (k >= t.size() || !IsDigit(t[k])) return false;
      }
      if (i + 4 < t.size() && IsDigit(t[i + 4])) return false;
      continue;
    }
    out.push_back(c);
  }
  t = std::move(out);
  return true;
}

// Strips a leading currency symbol ("$", "US$", "¥", "￥", "CN¥") and reports which currency
// it names.
std::optional<Currency> StripCurrencySymbol(std::string& t) {
  static const std::pair<std::string_view, Currency> kSymbols[] = {
      {"US$", Currency::kUsd},          {"$", Currency::kUsd},
      {"CN\xC2\xA5", Currency::kCny},   {"\xC2\xA5", Currency::kCny},  // ¥
      {"\xEF\xBF\xA5", Currency::kCny},                                // fullwidth ￥
  };
  for (const auto& [sym, cur] : kSymbols) {
    if (t.size() >= sym.size() && std::string_view(t).substr(0, sym.size()) == sym) {
      t = Trim(std::string_view(t).substr(sym.size()));
      return cur;
    }
  }
  return std::nullopt;
}

Error NegativeError(std::string_view field, std::string_view raw) {
  return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                   "must be >= 0, got " + Excerpt(raw));
}

// Splits "800GB" into the number and its alphabetic unit ("800", "gb"), trimmed and
// lower-cased. Returns false when there is no leading number or junk follows the unit.
bool SplitNumberUnit(std::string_view text, double& number, std::string& unit) {
  std::string t(text);
  if (!StripGrouping(t)) return false;
  size_t n = ParseLeadingNumber(t, number);
  if (n == 0) return false;
  std::string rest = Trim(std::string_view(t).substr(n));
  for (char c : rest) {
    if (!IsAlpha(c)) return false;
  }
  unit = ToLower(rest);
  return true;
}

// ---------------------------------------------------------------------------------------------
// YAML reading.

constexpr std::string_view kTopKeys[] = {"model",     "train",       "constraints",
                                         "objective", "host_policy", "top"};
constexpr std::string_view kTrainKeys[] = {"method",    "precision",       "optimizer",
                                           "lora_rank", "seq_len",         "global_batch",
                                           "data",      "checkpoint_every", "framework"};
constexpr std::string_view kDataKeys[] = {"tokens", "samples", "epochs", "dataset_size", "benchmark"};
constexpr std::string_view kConstraintKeys[] = {
    "deadline", "budget", "currency", "clouds", "regions", "gpus", "spot", "max_nodes", "headroom",
    "include_suspect", "num_gpus", "nodes"};

struct SectionKeys {
  std::string_view path;  // "" = top level
  const std::string_view* begin;
  const std::string_view* end;
};
constexpr SectionKeys kSections[] = {
    {"", std::begin(kTopKeys), std::end(kTopKeys)},
    {"train", std::begin(kTrainKeys), std::end(kTrainKeys)},
    {"train.data", std::begin(kDataKeys), std::end(kDataKeys)},
    {"constraints", std::begin(kConstraintKeys), std::end(kConstraintKeys)},
};

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string Describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return Excerpt(n.Scalar());
}

int LineOf(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  int line = n.Mark().line;
  return line >= 0 ? line + 1 : 0;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// "did you mean "lora"? (pretrain, full, lora, qlora)" or the list alone.
std::string ChoiceHint(std::string_view got, const std::vector<std::string>& choices) {
  std::string best = ClosestMatch(got, choices);
  if (best.empty()) return "use one of: " + JoinNames(choices);
  return "did you mean \"" + best + "\"? (one of: " + JoinNames(choices) + ")";
}

struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
  std::string path;  // "train.data.tokens"
  bool present() const { return value.IsDefined() && !value.IsNull(); }
};

struct Section {
  YAML::Node node;
  std::string path;
  std::vector<Entry> entries;
  // The entry for `key` when given with a value (a key with an empty value or ~ counts as
  // absent: the default applies).
  const Entry* Get(std::string_view key) const {
    for (const auto& e : entries) {
      if (e.key == key) return e.present() ? &e : nullptr;
    }
    return nullptr;
  }
  const Entry* Raw(std::string_view key) const {
    for (const auto& e : entries) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }
};

class Reader {
 public:
  explicit Reader(std::string_view label)
      : file_(label), label_(label.empty() ? std::string("<yaml>") : std::string(label)) {}

  // The label for messages ("<yaml>" when none was given) and as given (a path, or empty).
  const std::string& label() const { return label_; }
  const std::string& file() const { return file_; }

  // "label:LINE:path" (the line omitted when unknown, the path when empty).
  std::string Field(const YAML::Node& at, std::string_view path) const {
    std::string f = label_;
    int line = LineOf(at);
    if (line > 0) f += ":" + std::to_string(line);
    if (!path.empty()) {
      f += ":";
      f += path;
    }
    return f;
  }
  std::string Field(const Entry& e) const { return Field(e.key_node, e.path); }

  Error Fail(const YAML::Node& at, std::string_view path, std::string message,
             std::string hint = {}, ErrorCode code = ErrorCode::kInvalidArgument) const {
    return MakeError(code, Field(at, path), std::move(message), std::move(hint));
  }
  Error Fail(const Entry& e, std::string message, std::string hint = {},
             ErrorCode code = ErrorCode::kInvalidArgument) const {
    return MakeError(code, Field(e), std::move(message), std::move(hint));
  }

  // Reads a map, rejecting non-map values, non-scalar keys, duplicate and unknown keys.
  // `key_node` is the key that holds the map (null for the whole file).
  Result<Section> ReadSection(const YAML::Node& node, const YAML::Node* key_node,
                              std::string_view path) const {
    const SectionKeys* keys = nullptr;
    for (const auto& s : kSections) {
      if (s.path == path) keys = &s;
    }
    Section sec;
    sec.node = node;
    sec.path = std::string(path);
    if (!node.IsMap()) {
      std::string what = path.empty() ? "the job file" : std::string(path);
      return Fail(key_node != nullptr ? *key_node : node, path,
                  "expected a map of keys, got " + Describe(node),
                  path.empty() ? "a job file is a map: `model: ...`, `train: ...`; see "
                                 "docs/job-yaml.md"
                               : "indent the keys of " + what + " under `" +
                                     std::string(path.substr(path.rfind('.') + 1)) + ":`");
    }
    std::vector<std::string> known;
    if (keys != nullptr) {
      for (const auto* k = keys->begin; k != keys->end; ++k) known.emplace_back(*k);
    }
    for (const auto& kv : node) {
      const YAML::Node& k = kv.first;
      if (!k.IsScalar() || Trim(k.Scalar()).empty()) {
        return Fail(k, path, "expected a key name, got " + Describe(k));
      }
      Entry e;
      e.key = k.Scalar();
      e.key_node = k;
      e.value = kv.second;
      e.path = JoinPath(path, e.key);
      for (const auto& prev : sec.entries) {
        if (prev.key == e.key) {
          return Fail(
              k, e.path,
              "duplicate key (first given on line " + std::to_string(LineOf(prev.key_node)) + ")",
              "keep one `" + e.key + ":`");
        }
      }
      if (std::find(known.begin(), known.end(), e.key) == known.end()) {
        return UnknownKey(e, path, known);
      }
      sec.entries.push_back(std::move(e));
    }
    return sec;
  }

  Error UnknownKey(const Entry& e, std::string_view path,
                   const std::vector<std::string>& known) const {
    std::string where = path.empty() ? "at the top level" : "in " + std::string(path);
    // A key that belongs to another section.
    for (const auto& s : kSections) {
      if (s.path == path) continue;
      for (const auto* k = s.begin; k != s.end; ++k) {
        if (*k == e.key) {
          std::string home = s.path.empty() ? std::string("at the top level")
                                            : "under " + std::string(s.path) + ":";
          return Fail(e, "unknown key " + Excerpt(e.key) + " " + where,
                      "`" + e.key + "` belongs " + home + " (see docs/job-yaml.md)");
        }
      }
    }
    std::string best = ClosestMatch(e.key, known);
    return Fail(e, "unknown key " + Excerpt(e.key) + " " + where,
                best.empty()
                    ? "known keys: " + JoinNames(known)
                    : "did you mean \"" + best + "\"? (known keys: " + JoinNames(known) + ")");
  }

  // A non-empty scalar.
  Result<std::string> Str(const Entry& e) const {
    if (!e.value.IsScalar()) {
      return Fail(e, "expected a text value, got " + Describe(e.value));
    }
    std::string s = Trim(e.value.Scalar());
    if (s.empty()) return Fail(e, "is empty");
    return s;
  }

  // A count with K/M/B/T suffixes, > 0.
  Result<double> PositiveCount(const Entry& e) const {
    auto s = Str(e);
    if (!s) return s.error();
    if (LooksNegative(*s)) return Fail(e, "must be > 0, got " + Shown(*s));
    auto v = ParseCount(*s, Field(e));
    if (!v) return v.error();
    if (!(*v > 0)) return Fail(e, "must be > 0, got " + Shown(*s));
    return *v;
  }

  // A plain number (no suffix), > 0.
  Result<double> PositiveNumber(const Entry& e) const {
    auto s = Str(e);
    if (!s) return s.error();
    auto v = internal::ParseDouble(*s);
    if (!v) return Fail(e, "expected a number, got " + Excerpt(*s));
    if (!(*v > 0)) return Fail(e, "must be > 0, got " + Shown(*s));
    return *v;
  }

  // A whole number >= `min`, without suffixes ("4K" is ambiguous for a sequence length).
  Result<int> Int(const Entry& e, int min) const {
    auto s = Str(e);
    if (!s) return s.error();
    std::string t = *s;
    if (!StripGrouping(t)) return Fail(e, "expected a whole number, got " + Excerpt(*s));
    auto v = internal::ParseDouble(t);
    if (!v || *v != std::floor(*v)) {
      return Fail(e, "expected a whole number, got " + Excerpt(*s),
                  "write the number in full, e.g. 4096 (no K/M suffixes here)");
    }
    if (*v < min) {
      return Fail(e, "must be >= " + std::to_string(min) + ", got " + Shown(*s));
    }
    if (*v > INT_MAX) {
      return Fail(e, "must be <= " + std::to_string(INT_MAX) + ", got " + Shown(*s));
    }
    return static_cast<int>(*v);
  }

  Result<bool> Bool(const Entry& e) const {
    auto s = Str(e);
    if (!s) return s.error();
    std::string t = ToLower(*s);
    if (t == "true" || t == "yes" || t == "on") return true;
    if (t == "false" || t == "no" || t == "off") return false;
    return Fail(e, "expected true or false, got " + Excerpt(*s));
  }

  // A list of non-empty names; a single scalar is a one-item list. Duplicates are dropped.
  Result<std::vector<std::string>> Names(const Entry& e, bool lower) const {
    std::vector<std::string> out;
    auto add = [&](const YAML::Node& item, const std::string& path) -> Status {
      if (!item.IsScalar()) {
        return Fail(item, path, "expected a name, got " + Describe(item));
      }
      std::string s = Trim(item.Scalar());
      if (s.empty()) return Fail(item, path, "is empty");
      if (lower) s = ToLower(s);
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
      return {};
    };
    if (e.value.IsScalar()) {
      Status st = add(e.value, e.path);
      if (!st) return st.error();
      return out;
    }
    if (!e.value.IsSequence()) {
      return Fail(e, "expected a list of names, got " + Describe(e.value),
                  "write `" + e.key + ": [a, b]`");
    }
    size_t i = 0;
    for (const auto& item : e.value) {
      Status st = add(item, e.path + "[" + std::to_string(i) + "]");
      if (!st) return st.error();
      ++i;
    }
    return out;
  }

 private:
  std::string file_;
  std::string label_;
};

// Money: "5000", "$5000", "¥30000", "30000 CNY", "5K USD". Returns the amount and the
// currency the text names, if any.
struct MoneyText {
  double amount = 0;
  std::optional<Currency> currency;
};
Result<MoneyText> ParseMoney(std::string_view s, std::string_view field) {
  std::string t = Trim(s);
  MoneyText out;
  out.currency = StripCurrencySymbol(t);
  if (LooksNegative(t)) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "must be > 0, got " + std::string(s));
  }
  // A trailing currency code: "30000 CNY".
  size_t end = t.size();
  while (end > 0 && IsAlpha(t[end - 1])) --end;
  if (end < t.size() && end > 0 && t[end - 1] == ' ') {
    std::string code = t.substr(end);
    if (auto c = ParseCurrency(code)) {
      if (out.currency && *out.currency != *c) {
        return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                         "names two currencies, got " + Excerpt(s),
                         "write the amount with one currency, e.g. 30000 CNY");
      }
      out.currency = c;
      t = Trim(std::string_view(t).substr(0, end));
    }
  }
  auto v = ParseCount(t, field);
  if (!v) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected an amount such as 5000, $5000, 30000 CNY or ¥30000, got \"" +
                         std::string(s) + "\"",
                     "currencies: USD ($) and CNY (¥)");
  }
  out.amount = *v;
  return out;
}

const std::vector<std::string>& MethodNames() {
  static const std::vector<std::string> k = {"pretrain", "full", "lora", "qlora"};
  return k;
}
const std::vector<std::string>& PrecisionNames() {
  static const std::vector<std::string> k = {"bf16", "fp16", "fp8", "fp32"};
  return k;
}
const std::vector<std::string>& OptimizerNames() {
  static const std::vector<std::string> k = {"adamw", "adam", "sgd", "lion", "adamw-8bit"};
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
  const bool vision = IsVision(model);

  // --- train
  auto get_train = [&](std::string_view key) -> const Entry* {
    return train ? train->Get(key) : nullptr;
  };

  if (const Entry* e = get_train("method")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto m = ParseTrainMethod(*s);
    if (!m) return r.Fail(*e, "unknown method " + Excerpt(*s), ChoiceHint(*s, MethodNames()));
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
    auto p = ParsePrecision(*s);
    if (!p) {
      return r.Fail(*e, "unknown precision " + Excerpt(*s), ChoiceHint(*s, PrecisionNames()));
    }
    if (*p != Precision::kBf16 && *p != Precision::kFp16 && *p != Precision::kFp8 &&
        *p != Precision::kFp32) {
      return r.Fail(*e, "training precision must be bf16, fp16, fp8 or fp32, got " + Excerpt(*s),
                    *p == Precision::kTf32
                        ? "tf32 is fp32 training with TF32 math: use fp32"
                        : "for a 4-bit frozen base model use method: qlora with precision: bf16");
    }
    job.precision = *p;
  }
  if (const Entry* e = get_train("framework")) {
    auto s = r.Str(*e);
    if (!s) return s.error();
    auto f = ParseTrainFramework(*s);
    if (!f) {
      return r.Fail(*e, "unknown framework " + Excerpt(*s),
                    ChoiceHint(*s, {"generic", "megatron", "megatron-core", "nemo", "deepspeed"}));
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
    if (model.is_decoder_llm() || model.arch == ModelArch::kEncoder) {
      if (model.max_positions > 0 && *v > model.max_positions) {
        return r.Fail(*e,
                      "must be <= the model's context length " +
                          std::to_string(model.max_positions) + " (max_position_embeddings), got " +
                          std::to_string(*v),
                      "use seq_len <= " + std::to_string(model.max_positions) +
                          ", or a config.json with a longer context (RoPE scaling)");
      }
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
    // samples per epoch x epochs, so that dataset_size / samples is the bytes of one sample.
    const double total =
        b->SamplesToTarget(job.global_batch) * (1 + b->EvalOverhead(peft ? 0.5 : 1.0 / 3.0));
    job.samples = b->samples_per_epoch;
    job.epochs = total / b->samples_per_epoch;
    job.benchmark = b->id;
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
    }
    if (const Entry* e = c.Get("regions")) {
      auto v = r.Names(*e, true);
      if (!v) return v.error();
      job.regions = std::move(*v);
    }
    if (const Entry* e = c.Get("gpus")) {
      auto v = r.Names(*e, false);
      if (!v) return v.error();
      job.gpus = std::move(*v);
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
  return samples * EffectiveSeqLen(*this) * epochs;
}

int DefaultGlobalBatch(const TrainJobSpec& job) {
  if (IsVision(job.model)) return kVisionBatch;
  switch (job.method) {
    case TrainMethod::kLora:
    case TrainMethod::kQlora:
      return kLoraBatch;
    case TrainMethod::kFull:
      return kFullFinetuneBatch;
    case TrainMethod::kPretrain:
      break;
  }
  double seqs = std::round(kPretrainTokensPerStep / EffectiveSeqLen(job));
  return std::max(1, static_cast<int>(seqs));
}

Result<double> ParseCount(std::string_view s, std::string_view field) {
  std::string raw = Trim(s);
  auto bad = [&](std::string hint) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected a count such as 2B, 1.5M or 50000, got " + Excerpt(raw),
                     std::move(hint));
  };
  const std::string kSuffixHint = "suffixes: K = 1e3, M = 1e6, B or G = 1e9, T = 1e12";
  if (raw.empty()) return bad(kSuffixHint);
  std::string t = raw;
  if (t[0] == '-') return NegativeError(field, raw);
  if (t[0] == '+') t = Trim(std::string_view(t).substr(1));
  StripCurrencySymbol(t);
  if (!t.empty() && t[0] == '-') return NegativeError(field, raw);
  double v = 0;
  std::string unit;
  if (!SplitNumberUnit(t, v, unit)) return bad(kSuffixHint);
  double mult = 0;
  if (unit.empty()) {
    mult = 1;
  } else if (unit == "k") {
    mult = 1e3;
  } else if (unit == "m") {
    mult = 1e6;
  } else if (unit == "b" || unit == "g" || unit == "bn") {
    mult = 1e9;
  } else if (unit == "t") {
    mult = 1e12;
  }
  if (mult == 0) {
    bool bytes = unit.size() >= 2 && unit.back() == 'b';
    return bad(bytes ? "\"" + raw +
                           "\" is a size in bytes; counts take K, M, B, T (sizes go in "
                           "dataset_size)"
                     : kSuffixHint);
  }
  double out = v * mult;
  if (!std::isfinite(out)) return bad(kSuffixHint);
  return out;
}

Result<Bytes> ParseSize(std::string_view s, std::string_view field) {
  std::string raw = Trim(s);
  auto bad = [&]() {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected a size such as 800GB, 1.2TB or 64GiB, got " + Excerpt(raw),
                     "units: B, KB, MB, GB, TB, PB (powers of 1000), KiB, MiB, GiB, TiB, PiB "
                     "(powers of 1024); a bare number is bytes");
  };
  if (raw.empty()) return bad();
  if (raw[0] == '-') return NegativeError(field, raw);
  double v = 0;
  std::string unit;
  if (!SplitNumberUnit(raw, v, unit)) return bad();
  static const std::pair<std::string_view, double> kUnits[] = {
      {"", 1},         {"b", 1},        {"k", 1e3},      {"kb", 1e3},     {"m", 1e6},
      {"mb", 1e6},     {"g", 1e9},      {"gb", 1e9},     {"t", 1e12},     {"tb", 1e12},
      {"p", 1e15},     {"pb", 1e15},    {"ki", 0x1p10},  {"kib", 0x1p10}, {"mi", 0x1p20},
      {"mib", 0x1p20}, {"gi", 0x1p30},  {"gib", 0x1p30}, {"ti", 0x1p40},  {"tib", 0x1p40},
      {"pi", 0x1p50},  {"pib", 0x1p50},
  };
  for (const auto& [u, mult] : kUnits) {
    if (unit == u) {
      double out = v * mult;
      if (!std::isfinite(out)) return bad();
      return Bytes(out);
    }
  }
  return bad();
}

Result<double> ParseHours(std::string_view s, std::string_view field) {
  std::string raw = Trim(s);
  auto bad = [&]() {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected a duration such as 48h, 3d, 90m or 1h30m, got " + Excerpt(raw),
                     "units: s, m (minutes), h, d, w; a bare number is hours");
  };
  if (raw.empty()) return bad();
  if (raw[0] == '-') return NegativeError(field, raw);
  std::string_view t = raw;
  if (t[0] == '+') t.remove_prefix(1);
  // A bare number is hours.
  if (auto v = internal::ParseDouble(t)) {
    if (*v < 0) return NegativeError(field, raw);
    return *v;
  }
  double total = 0;
  size_t i = 0;
  int parts = 0;
  while (i < t.size()) {
    while (i < t.size() && t[i] == ' ') ++i;
    if (i >= t.size()) break;
    double v = 0;
    size_t n = ParseLeadingNumber(t.substr(i), v);
    if (n == 0) return bad();
    i += n;
    while (i < t.size() && t[i] == ' ') ++i;
    size_t u0 = i;
    while (i < t.size() && IsAlpha(t[i])) ++i;
    std::string unit = ToLower(t.substr(u0, i - u0));
    double hours_per = 0;
    if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") {
      hours_per = 1.0 / 3600.0;
    } else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" ||
               unit == "minutes") {
      hours_per = 1.0 / 60.0;
    } else if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hour" || unit == "hours") {
      hours_per = 1.0;
    } else if (unit == "d" || unit == "day" || unit == "days") {
      hours_per = 24.0;
    } else if (unit == "w" || unit == "week" || unit == "weeks") {
      hours_per = 168.0;
    } else {
      return bad();
    }
    total += v * hours_per;
    ++parts;
  }
  if (parts == 0 || !std::isfinite(total)) return bad();
  return total;
}

Result<TrainJobSpec> ParseTrainJobYaml(std::string_view yaml_text, std::string_view label) {
  Reader r(label);
  try {
    if (yaml_text.size() > kMaxYamlFileBytes) {
      return MakeError(ErrorCode::kInvalidArgument, r.label(),
                       "is " + std::to_string(yaml_text.size()) + " bytes, over the limit of " +
                           std::to_string(kMaxYamlFileBytes) + " bytes",
                       "a job file is a few lines; see docs/reliability.md");
    }
    internal::YamlDocument doc = internal::LoadOneYamlDocument(yaml_text);
    if (doc.extra_content) {
      return MakeError(ErrorCode::kParse, r.label() + ":" + std::to_string(doc.extra_line),
                       "holds 2 YAML documents or more",
                       "put one job per file (remove the `---` separators)");
    }
    if (!doc.root.IsDefined() || doc.root.IsNull()) {
      return MakeError(ErrorCode::kInvalidArgument, r.label(), "is empty",
                       "a job needs at least `model:` and `train: {data: {tokens: ...}}`; see "
                       "docs/job-yaml.md and examples/");
    }
    auto job = ParseJob(doc.root, r);
    if (!job) return job.error();
    if (auto st = ValidateTrainJob(*job, InputSource::kYaml, r.label()); !st) return st.error();
    return job;
  } catch (const YAML::ParserException& e) {
    std::string f = r.label();
    if (e.mark.line >= 0) f += ":" + std::to_string(e.mark.line + 1);
    return MakeError(ErrorCode::kParse, f, "invalid YAML: " + e.msg,
                     "check the indentation (spaces, not tabs), `key: value` pairs and quotes");
  } catch (const YAML::Exception& e) {
    std::string f = r.label();
    if (e.mark.line >= 0) f += ":" + std::to_string(e.mark.line + 1);
    return MakeError(ErrorCode::kParse, f, "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, r.label(),
                     std::string("unexpected error while reading the job: ") + e.what(),
                     "please report this with the job file");
  } catch (...) {
    return MakeError(ErrorCode::kInternal, r.label(), "unexpected error while reading the job",
                     "please report this with the job file");
  }
}

}  // namespace gpuplan
