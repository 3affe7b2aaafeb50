// `gpuplan check` setup files (YAML): the reader. yaml-cpp exceptions are caught in
// ParseSetupYaml and become Errors naming "label:LINE:yaml.path" (docs/check.md).
#include <yaml-cpp/yaml.h>

#include <exception>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "check/check_internal.h"
#include "gpuplan/check.h"
#include "gpuplan/quant_preset.h"
#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/job.h"
#include "io/csv.h"
#include "io/yaml_reader.h"

namespace gpuplan {

const char* StorageKindName(StorageKind s) {
  switch (s) {
    case StorageKind::kNvme:
      return "nvme";
    case StorageKind::kSsd:
      return "ssd";
    case StorageKind::kNetwork:
      return "network";
    case StorageKind::kHdd:
      return "hdd";
  }
  return "nvme";
}

std::optional<StorageKind> ParseStorageKind(std::string_view s) {
  const std::string t = internal::ToLower(internal::Trim(s));
  if (t == "nvme") return StorageKind::kNvme;
  if (t == "ssd") return StorageKind::kSsd;
  if (t == "network" || t == "nfs" || t == "nas") return StorageKind::kNetwork;
  if (t == "hdd") return StorageKind::kHdd;
  return std::nullopt;
}

namespace {

// ---------------------------------------------------------------------------------------------
// YAML reading, with the shared YamlReader (src/io/yaml_reader.h).

using internal::Entry;
using internal::Section;
using Reader = internal::YamlReader;

// Whole numbers in a setup stay below this (GPU counts, batch sizes, parallel degrees).
constexpr int kMaxSetupInt = 1000000000;

const internal::YamlSchema& SetupSchema() {
  static const internal::YamlSchema k{
      {{"",
        {"hardware", "nodes", "zones", "spot", "checkpoint_every", "headroom", "train", "serve"}},
       {"hardware",
        {"instance", "region", "accelerator", "gpus_per_node", "intra_link", "inter_fabric",
         "network_gbps", "ram_gb", "vcpus", "storage", "storage_gbps"}},
       {"train",
        {"model", "method", "precision", "micro_batch", "seq_len", "global_batch",
         "gradient_accumulation", "recompute", "zero", "tp", "pp", "cp", "ep", "framework",
         "optimizer", "lora_rank", "dataset_size"}},
       {"serve",
        {"model", "precision", "quant", "kv_precision", "engine", "tp", "max_model_len",
         "gpu_memory_utilization", "qps", "input_len", "output_len", "autoscaling", "load"}}},
      "docs/check.md",
      "the setup file",
      "a setup file is a map: `hardware: ...`, `train: ...` or `serve: ...`; see docs/check.md",
      "see docs/check.md for the schema",
      "put one setup per file",
      "malformed YAML"};
  return k;
}

// The names of `values` (a subset of the Precision table, in the order given).
std::vector<std::string> NamesOf(std::initializer_list<Precision> values) {
  std::vector<std::string> out;
  for (Precision p : values) out.emplace_back(PrecisionName(p));
  return out;
}

// Typed optional reads of one section's keys: absent (or ~) gives an empty optional.
class SectionReader {
 public:
  SectionReader(const Reader& r, const Section& sec) : r_(r), sec_(sec) {}

  const Entry* Get(std::string_view key) const { return sec_.Get(key); }

  // Trimmed text (possibly empty).
  Result<std::optional<std::string>> Str(std::string_view key) const {
    const Entry* e = sec_.Get(key);
    if (e == nullptr) return std::optional<std::string>();
    auto t = r_.Text(*e);
    if (!t) return t.error();
    return std::optional<std::string>(std::move(*t));
  }

  // A count (K/M/B suffixes allowed) > `min_exclusive`.
  Result<std::optional<double>> Number(std::string_view key, double min_exclusive) const {
    const Entry* e = sec_.Get(key);
    if (e == nullptr) return std::optional<double>();
    auto v = r_.Count(*e, min_exclusive);
    if (!v) return v.error();
    return std::optional<double>(*v);
  }

  Result<std::optional<int>> Int(std::string_view key, int min, int max = kMaxSetupInt) const {
    const Entry* e = sec_.Get(key);
    if (e == nullptr) return std::optional<int>();
    auto v = r_.Int(*e, min, max);
    if (!v) return v.error();
    return std::optional<int>(*v);
  }

  Result<std::optional<bool>> Bool(std::string_view key) const {
    const Entry* e = sec_.Get(key);
    if (e == nullptr) return std::optional<bool>();
    auto v = r_.Bool(*e);
    if (!v) return v.error();
    return std::optional<bool>(*v);
  }

  // A choice parsed by `parse`; unknown values get a did-you-mean over `choices`.
  template <class T, class F>
  Result<std::optional<T>> Choice(std::string_view key, F parse,
                                  const std::vector<std::string>& choices) const {
    const Entry* e = sec_.Get(key);
    if (e == nullptr) return std::optional<T>();
    auto s = r_.Str(*e);
    if (!s) return s.error();
    if (auto v = parse(*s)) return std::optional<T>(*v);
    return r_.Fail(*e, "unknown value " + Excerpt(*s), ChoiceHint(*s, choices));
  }

 private:
  const Reader& r_;
  const Section& sec_;
};

// The section `key` of `top`: its map read and its keys checked.
Result<Section> ReadSub(const Reader& r, const Section& top, std::string_view key) {
  const Entry* e = top.Raw(key);
  return r.ReadSection(e->value, &e->key_node, key);
}

Result<ModelSpec> ReadModel(const Reader& r, const Section& sec, std::string& arg) {
  const std::string path = sec.path + ".model";
  std::optional<std::string> s;
  GPUPLAN_ASSIGN_OR_RETURN(s, SectionReader(r, sec).Str("model"));
  if (!s || s->empty()) {
    return r.Fail(sec.node, path, "missing model",
                  "give a preset name (`gpuplan models`), a config.json or a .safetensors path");
  }
  arg = *s;
  return ResolveModel(*s, r.Field(*sec.Get("model")));
}

Result<SetupHardware> ReadHardware(const Reader& r, const Section& sec) {
  SetupHardware h;
  const SectionReader n(r, sec);
  std::optional<std::string> s;
  GPUPLAN_ASSIGN_OR_RETURN(s, n.Str("instance"));
  if (s) h.instance_type = *s;
  const Entry* instance = sec.Raw("instance");
  h.instance_field =
      instance != nullptr ? r.Field(*instance) : r.Field(YAML::Node(), "hardware.instance");
  GPUPLAN_ASSIGN_OR_RETURN(s, n.Str("region"));
  if (s) h.region = *s;
  const Entry* region = sec.Raw("region");
  if (region != nullptr) h.region_field = r.Field(*region);
  GPUPLAN_ASSIGN_OR_RETURN(s, n.Str("accelerator"));
  if (s) h.accelerator = *s;
  const Entry* accel = sec.Raw("accelerator");
  h.accelerator_field =
      accel != nullptr ? r.Field(*accel) : r.Field(YAML::Node(), "hardware.accelerator");
  static const char* kCustomOnly[] = {"accelerator",  "gpus_per_node", "intra_link", "inter_fabric",
                                      "network_gbps", "ram_gb",        "vcpus"};
  if (!h.instance_type.empty()) {
    for (const char* k : kCustomOnly) {
      if (const Entry* e = n.Get(k)) {
        return r.Fail(*e, "given together with hardware.instance, which defines it",
                      "remove it, or describe custom hardware without `instance:`");
      }
    }
  } else {
    if (h.accelerator.empty()) {
      return r.Fail(sec.node, "hardware",
                    "needs `instance:` (a catalog instance type) or "
                    "`accelerator:` (custom hardware)",
                    "e.g. `instance: p5.48xlarge` or `accelerator: A100-PCIe-80GB`");
    }
    std::optional<int> i;
    GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("gpus_per_node", 1));
    if (!i) {
      return r.Fail(sec.node, "hardware.gpus_per_node", "missing gpus_per_node for custom hardware",
                    "e.g. `gpus_per_node: 8` under hardware:");
    }
    h.gpus_per_node = *i;
    std::optional<IntraNodeLink> intra;
    GPUPLAN_ASSIGN_OR_RETURN(
        intra, n.Choice<IntraNodeLink>("intra_link", ParseIntraNodeLink, IntraNodeLinkNames()));
    h.intra = intra.value_or(h.gpus_per_node > 1 ? IntraNodeLink::kPcie : IntraNodeLink::kNone);
    std::optional<InterNodeFabric> inter;
    GPUPLAN_ASSIGN_OR_RETURN(inter, n.Choice<InterNodeFabric>("inter_fabric", ParseInterNodeFabric,
                                                              InterNodeFabricNames()));
    h.inter = inter.value_or(InterNodeFabric::kNone);
    std::optional<double> d;
    GPUPLAN_ASSIGN_OR_RETURN(d, n.Number("network_gbps", 0));
    if (d) h.network = Gbps(*d);
    GPUPLAN_ASSIGN_OR_RETURN(d, n.Number("ram_gb", 0));
    if (d) h.ram = GB(*d);
    GPUPLAN_ASSIGN_OR_RETURN(h.vcpus, n.Int("vcpus", 1));
  }
  GPUPLAN_ASSIGN_OR_RETURN(h.storage, n.Choice<StorageKind>("storage", ParseStorageKind,
                                                            {"nvme", "ssd", "network", "hdd"}));
  std::optional<double> bw;
  GPUPLAN_ASSIGN_OR_RETURN(bw, n.Number("storage_gbps", 0));
  if (bw) h.storage_bw = GBps(*bw);
  return h;
}

Result<SetupTraining> ReadTraining(const Reader& r, const Section& sec) {
  SetupTraining t;
  const SectionReader n(r, sec);
  t.field = r.Field(sec.node, "train");
  GPUPLAN_ASSIGN_OR_RETURN(t.model, ReadModel(r, sec, t.model_arg));
  std::optional<TrainMethod> m;
  GPUPLAN_ASSIGN_OR_RETURN(m,
                           n.Choice<TrainMethod>("method", ParseTrainMethod, TrainMethodNames()));
  t.method = m.value_or(TrainMethod::kFull);
  std::optional<TrainPrecision> p;
  GPUPLAN_ASSIGN_OR_RETURN(
      p, n.Choice<TrainPrecision>("precision", ParseTrainPrecision, TrainPrecisionNames()));
  t.precision = p ? p->precision : Precision::kBf16;
  t.fp4_gemms = p && p->fp4_gemms;
  std::optional<int> i;
  // The job files' and flags' ranges (include/gpuplan/input.h): one validation layer.
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("micro_batch", 1, kMaxGlobalBatch));
  t.micro_batch = i.value_or(1);
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("seq_len", 1, kMaxSeqLen));
  t.seq_len = i.value_or(0);
  if (auto x = ExceedsContext(t.model, t.seq_len, fmt::format("a sequence of {} tokens", t.seq_len),
                              "seq_len")) {
    return r.Fail(*n.Get("seq_len"), x->message, x->fix);
  }
  GPUPLAN_ASSIGN_OR_RETURN(t.global_batch, n.Int("global_batch", 1, kMaxGlobalBatch));
  GPUPLAN_ASSIGN_OR_RETURN(t.gradient_accumulation,
                           n.Int("gradient_accumulation", 1, kMaxGlobalBatch));
  std::optional<Recompute> rc;
  GPUPLAN_ASSIGN_OR_RETURN(rc, n.Choice<Recompute>("recompute", ParseRecompute, RecomputeNames()));
  t.recompute = rc.value_or(Recompute::kNone);
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("zero", 0));
  t.zero_stage = i.value_or(0);
  if (t.zero_stage > 3) {
    return r.Fail(*n.Get("zero"), fmt::format("must be 0-3, got {}", t.zero_stage));
  }
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("tp", 1));
  t.tp = i.value_or(1);
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("pp", 1));
  t.pp = i.value_or(1);
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("cp", 1));
  t.cp = i.value_or(1);
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("ep", 1));
  t.ep = i.value_or(1);
  // The job file's names and rules (docs/job-yaml.md).
  std::optional<TrainFramework> fw;
  GPUPLAN_ASSIGN_OR_RETURN(
      fw, n.Choice<TrainFramework>("framework", ParseTrainFramework, TrainFrameworkNames()));
  t.framework = fw.value_or(TrainFramework::kGeneric);
  std::optional<Optimizer> o;
  GPUPLAN_ASSIGN_OR_RETURN(o, n.Choice<Optimizer>("optimizer", ParseOptimizer, OptimizerNames()));
  if (o) {
    t.optimizer = *o;
    t.paged_optimizer = PagedOptimizerName(sec.Get("optimizer")->value.Scalar());
  }
  if (const Entry* e = n.Get("lora_rank")) {
    if (t.method != TrainMethod::kLora && t.method != TrainMethod::kQlora) {
      return r.Fail(
          *e,
          "applies to method lora or qlora, got method " + std::string(TrainMethodName(t.method)),
          "set train.method: lora (or qlora), or remove lora_rank");
    }
    GPUPLAN_ASSIGN_OR_RETURN(t.lora_rank, n.Int("lora_rank", 1, MaxLoraRank(t.model)));
  }
  std::optional<std::string> s;
  GPUPLAN_ASSIGN_OR_RETURN(s, n.Str("dataset_size"));
  if (s) {
    auto b = ParseSize(*s, r.Field(*n.Get("dataset_size")));
    if (!b) return b.error();
    t.dataset = *b;
  }
  return t;
}

std::optional<LoadPattern> ParseLoadPattern(std::string_view v) {
  const std::string t = internal::ToLower(internal::Trim(v));
  if (t == "steady") return LoadPattern::kSteady;
  if (t == "variable") return LoadPattern::kVariable;
  return std::nullopt;
}

Result<SetupServing> ReadServing(const Reader& r, const Section& sec) {
  SetupServing s;
  const SectionReader n(r, sec);
  GPUPLAN_ASSIGN_OR_RETURN(s.model, ReadModel(r, sec, s.model_arg));
  std::optional<Precision> p;
  GPUPLAN_ASSIGN_OR_RETURN(
      p, n.Choice<Precision>("precision", ParsePrecision,
                             NamesOf({Precision::kFp32, Precision::kBf16, Precision::kFp16,
                                      Precision::kFp8, Precision::kInt8, Precision::kInt4})));
  s.precision = p.value_or(Precision::kBf16);
  // The serving job file's names (docs/serve-yaml.md).
  if (const Entry* e = n.Get("quant")) {
    std::optional<std::string> name;
    GPUPLAN_ASSIGN_OR_RETURN(name, n.Str("quant"));
    if (auto st = ApplyQuantName(*name, r.Field(*e), s.precision, s.quant); !st) return st.error();
  }
  if (const Entry* e = n.Get("kv_precision")) {
    std::optional<std::string> name;
    GPUPLAN_ASSIGN_OR_RETURN(name, n.Str("kv_precision"));
    auto kv = ParseKvPrecision(*name, r.Field(*e), s.precision);
    if (!kv) return kv.error();
    s.kv_precision = *kv;
  }
  std::optional<Engine> engine;
  GPUPLAN_ASSIGN_OR_RETURN(engine, n.Choice<Engine>("engine", ParseEngine, EngineNames()));
  s.engine = engine.value_or(Engine::kVllm);
  if (const Entry* e = n.Get("tp")) {
    GPUPLAN_ASSIGN_OR_RETURN(s.tp, n.Int("tp", 1, 1024));
    s.tp_field = r.Field(*e);
  }
  GPUPLAN_ASSIGN_OR_RETURN(s.max_model_len, n.Int("max_model_len", 1, kMaxSeqLen));
  GPUPLAN_ASSIGN_OR_RETURN(s.memory_fraction, n.Number("gpu_memory_utilization", 0));
  if (s.memory_fraction && *s.memory_fraction > 1) {
    return r.Fail(*n.Get("gpu_memory_utilization"),
                  fmt::format("must be in (0, 1], got {:g}", *s.memory_fraction),
                  "a fraction of the GPU's memory, e.g. 0.9");
  }
  std::optional<double> q;
  GPUPLAN_ASSIGN_OR_RETURN(q, n.Number("qps", 0));
  if (!q) return r.Fail(sec.node, "serve.qps", "missing qps (peak requests per second)");
  s.qps = *q;
  std::optional<int> i;
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("input_len", 1));
  s.input_len = i.value_or(s.input_len);
  GPUPLAN_ASSIGN_OR_RETURN(i, n.Int("output_len", 0));
  s.output_len = i.value_or(s.model.generates_tokens() ? s.output_len : 0);
  if (s.model.is_audio_model() && n.Get("input_len")) {
    return r.Fail(
        *n.Get("input_len"),
        fmt::format("{} takes {} per request, not tokens", s.model.name, AudioWindowText(s.model)),
        "drop input_len; output_len is the transcript's tokens");
  }
  // An encoder-decoder's context is its decoder's: its start tokens and the output.
  const bool encdec = s.model.arch == ModelArch::kEncoderDecoder;
  const long long total = encdec
                              ? static_cast<long long>(DecoderPromptTokens(s.model)) + s.output_len
                              : static_cast<long long>(s.input_len) + s.output_len;
  if (auto x = ExceedsContext(s.model, total,
                              encdec ? fmt::format("{} start + {} output tokens",
                                                   DecoderPromptTokens(s.model), s.output_len)
                                     : fmt::format("a request of {} input + {} output tokens",
                                                   s.input_len, s.output_len),
                              encdec ? "output_len" : "input_len + output_len")) {
    const auto* e = n.Get("input_len") && !encdec ? n.Get("input_len") : n.Get("output_len");
    return e ? r.Fail(*e, x->message, x->fix) : r.Fail(sec.node, "serve", x->message, x->fix);
  }
  std::optional<bool> b;
  GPUPLAN_ASSIGN_OR_RETURN(b, n.Bool("autoscaling"));
  s.autoscaling = b.value_or(false);
  std::optional<LoadPattern> l;
  GPUPLAN_ASSIGN_OR_RETURN(l,
                           n.Choice<LoadPattern>("load", ParseLoadPattern, {"steady", "variable"}));
  s.load = l.value_or(LoadPattern::kSteady);
  return s;
}

Result<Setup> ParseSetupNode(const Reader& r, const YAML::Node& root) {
  Setup s;
  Section top;
  GPUPLAN_ASSIGN_OR_RETURN(top, r.ReadSection(root, nullptr, ""));
  const SectionReader n(r, top);
  if (top.Raw("hardware") == nullptr) {
    return r.Fail(root, "hardware", "missing hardware",
                  "add `hardware: {instance: p5.48xlarge}` or custom hardware (docs/check.md)");
  }
  Section hw;
  GPUPLAN_ASSIGN_OR_RETURN(hw, ReadSub(r, top, "hardware"));
  GPUPLAN_ASSIGN_OR_RETURN(s.hardware, ReadHardware(r, hw));
  std::optional<int> nodes;
  GPUPLAN_ASSIGN_OR_RETURN(nodes, n.Int("nodes", 1));
  s.nodes = nodes.value_or(1);
  if (const Entry* z = n.Get("zones")) {
    if (z->value.IsScalar()) {
      s.zones.push_back(internal::Trim(z->value.Scalar()));
    } else if (z->value.IsSequence()) {
      for (size_t k = 0; k < z->value.size(); ++k) {
        const YAML::Node item = z->value[k];
        if (!item.IsScalar()) {
          return r.Fail(item, fmt::format("zones[{}]", k),
                        "expected a zone name, got " + internal::Describe(item));
        }
        s.zones.push_back(internal::Trim(item.Scalar()));
      }
    } else {
      return r.Fail(*z, "expected a list of zone names, got " + internal::Describe(z->value));
    }
  }
  std::optional<bool> spot;
  GPUPLAN_ASSIGN_OR_RETURN(spot, n.Bool("spot"));
  s.spot = spot.value_or(false);
  std::optional<std::string> ck;
  GPUPLAN_ASSIGN_OR_RETURN(ck, n.Str("checkpoint_every"));
  if (ck) {
    const std::string t = internal::ToLower(*ck);
    if (t == "none" || t == "never" || t == "0") {
      s.checkpoint_interval_hours = 0.0;
    } else {
      auto h = ParseHours(*ck, r.Field(*n.Get("checkpoint_every")));
      if (!h) return h.error();
      s.checkpoint_interval_hours = *h;
    }
  }
  std::optional<double> headroom;
  GPUPLAN_ASSIGN_OR_RETURN(headroom, n.Number("headroom", 0));
  if (headroom) {
    if (*headroom > 1) {
      return r.Fail(*n.Get("headroom"),
                    fmt::format("must be a fraction in (0, 1], got {}", *headroom),
                    "B5: 0.8 = stay under 80% of GPU memory");
    }
    s.headroom = *headroom;
  }
  const bool has_train = n.Get("train") != nullptr;
  const bool has_serve = n.Get("serve") != nullptr;
  if (has_train == has_serve) {
    return r.Fail(root, has_train ? "serve" : "train",
                  has_train ? "give either train or serve, not both"
                            : "missing the job: `train:` or `serve:`",
                  "one setup file checks one job");
  }
  Section job;
  GPUPLAN_ASSIGN_OR_RETURN(job, ReadSub(r, top, has_train ? "train" : "serve"));
  if (has_train) {
    SetupTraining t;
    GPUPLAN_ASSIGN_OR_RETURN(t, ReadTraining(r, job));
    s.train = std::move(t);
  } else {
    SetupServing v;
    GPUPLAN_ASSIGN_OR_RETURN(v, ReadServing(r, job));
    s.serve = std::move(v);
  }
  return s;
}

}  // namespace

Result<Setup> ParseSetupYaml(std::string_view text, std::string_view label) {
  const Reader r(label, SetupSchema());
  return r.Read(text, [&](const YAML::Node& root) { return ParseSetupNode(r, root); });
}

}  // namespace gpuplan
