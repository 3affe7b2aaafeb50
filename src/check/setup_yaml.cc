// `gpuplan check` setup files (YAML): the reader. yaml-cpp exceptions are caught in
// ParseSetupYaml and become Errors naming "label:LINE:yaml.path" (docs/check.md).
#include <yaml-cpp/yaml.h>

#include <exception>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "check/check_internal.h"
#include "gpuplan/check.h"
#include "gpuplan/input.h"
#include "gpuplan/job.h"
#include "io/csv.h"
#include "io/yaml_util.h"

namespace gpuplan {

using internal::Join;

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
// YAML reading.

const std::vector<std::string> kTopKeys = {"hardware",         "nodes",    "zones", "spot",
                                           "checkpoint_every", "headroom", "train", "serve"};
const std::vector<std::string> kHardwareKeys = {
    "instance",     "region", "accelerator", "gpus_per_node", "intra_link",  "inter_fabric",
    "network_gbps", "ram_gb", "vcpus",       "storage",       "storage_gbps"};
const std::vector<std::string> kTrainKeys = {"model",
                                             "method",
                                             "precision",
                                             "micro_batch",
                                             "seq_len",
                                             "global_batch",
                                             "gradient_accumulation",
                                             "recompute",
                                             "zero",
                                             "tp",
                                             "pp",
                                             "dataset_size"};
const std::vector<std::string> kServeKeys = {"model",      "precision",   "qps", "input_len",
                                             "output_len", "autoscaling", "load"};

std::string Describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "\"" + n.Scalar() + "\"";
}

class Reader {
 public:
  explicit Reader(std::string_view label)
      : label_(label.empty() ? std::string("<yaml>") : std::string(label)) {}

  std::string Field(const YAML::Node& at, std::string_view path) const {
    std::string f = label_;
    if (at.IsDefined() && at.Mark().line >= 0) f += ":" + std::to_string(at.Mark().line + 1);
    if (!path.empty()) f += ":" + std::string(path);
    return f;
  }
  Error Fail(const YAML::Node& at, std::string_view path, std::string message,
             std::string hint = {}, ErrorCode code = ErrorCode::kInvalidArgument) const {
    return MakeError(code, Field(at, path), std::move(message), std::move(hint));
  }

  // A map whose keys are all in `known` (unknown keys get a did-you-mean).
  Status CheckMap(const YAML::Node& node, std::string_view path,
                  const std::vector<std::string>& known) const {
    if (!node.IsMap()) {
      return Fail(node, path, "expected a map of keys, got " + Describe(node),
                  "see docs/check.md for the setup schema");
    }
    std::set<std::string> seen;
    for (const auto& kv : node) {
      const YAML::Node& k = kv.first;
      const std::string key = k.IsScalar() ? k.Scalar() : std::string();
      const std::string p = path.empty() ? key : std::string(path) + "." + key;
      if (key.empty()) return Fail(k, path, "expected a key name, got " + Describe(k));
      if (!seen.insert(key).second) return Fail(k, p, "duplicate key", "keep one `" + key + ":`");
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        const std::string best = ClosestMatch(key, known);
        return Fail(k, p, "unknown key \"" + key + "\"",
                    best.empty()
                        ? "known keys: " + Join(known)
                        : "did you mean \"" + best + "\"? (known keys: " + Join(known) + ")");
      }
    }
    return {};
  }

  // Scalar text of `map[key]`; empty optional when absent or null.
  Result<std::optional<std::string>> Str(const YAML::Node& map, std::string_view key,
                                         std::string_view path) const {
    const YAML::Node n = map[std::string(key)];
    if (!n.IsDefined() || n.IsNull()) return std::optional<std::string>();
    if (!n.IsScalar()) return Fail(n, path, "expected a value, got " + Describe(n));
    return std::optional<std::string>(internal::Trim(n.Scalar()));
  }

  Result<std::optional<double>> Number(const YAML::Node& map, std::string_view key,
                                       std::string_view path, double min_exclusive) const {
    auto s = Str(map, key, path);
    if (!s) return s.error();
    if (!*s) return std::optional<double>();
    const YAML::Node n = map[std::string(key)];
    auto v = ParseCount(**s, Field(n, path));
    if (!v) return Fail(n, path, "expected a number, got \"" + **s + "\"");
    if (!(*v > min_exclusive)) {
      return Fail(n, path, fmt::format("must be > {}, got {}", min_exclusive, **s));
    }
    return std::optional<double>(*v);
  }

  Result<std::optional<int>> Int(const YAML::Node& map, std::string_view key, std::string_view path,
                                 int min) const {
    auto s = Str(map, key, path);
    if (!s) return s.error();
    if (!*s) return std::optional<int>();
    const YAML::Node n = map[std::string(key)];
    const std::string& t = **s;
    long v = 0;
    size_t used = 0;
    try {
      v = std::stol(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != t.size()) {
      return Fail(n, path, "expected a whole number, got \"" + t + "\"");
    }
    if (v < min || v > 1000000000L) {
      return Fail(n, path, fmt::format("must be >= {}, got {}", min, t));
    }
    return std::optional<int>(static_cast<int>(v));
  }

  Result<std::optional<bool>> Bool(const YAML::Node& map, std::string_view key,
                                   std::string_view path) const {
    auto s = Str(map, key, path);
    if (!s) return s.error();
    if (!*s) return std::optional<bool>();
    const std::string t = internal::ToLower(**s);
    if (t == "true" || t == "yes" || t == "on") return std::optional<bool>(true);
    if (t == "false" || t == "no" || t == "off") return std::optional<bool>(false);
    return Fail(map[std::string(key)], path, "expected true or false, got \"" + **s + "\"");
  }

  // A choice parsed by `parse`; unknown values get a did-you-mean over `choices`.
  template <class T, class F>
  Result<std::optional<T>> Choice(const YAML::Node& map, std::string_view key,
                                  std::string_view path, F parse,
                                  const std::vector<std::string>& choices) const {
    auto s = Str(map, key, path);
    if (!s) return s.error();
    if (!*s) return std::optional<T>();
    if (auto v = parse(**s)) return std::optional<T>(*v);
    const std::string best = ClosestMatch(**s, choices);
    return Fail(map[std::string(key)], path, "unknown value \"" + **s + "\"",
                best.empty() ? "use one of: " + Join(choices)
                             : "did you mean \"" + best + "\"? (one of: " + Join(choices) + ")");
  }

 private:
  std::string label_;
};

Result<ModelSpec> ReadModel(const Reader& r, const YAML::Node& sec, std::string_view path,
                            std::string& arg) {
  std::optional<std::string> s;
  GPUPLAN_ASSIGN_OR_RETURN(s, r.Str(sec, "model", std::string(path) + ".model"));
  if (!s || s->empty()) {
    return r.Fail(sec, std::string(path) + ".model", "missing model",
                  "give a preset name (`gpuplan models`), a config.json or a .safetensors path");
  }
  arg = *s;
  return ResolveModel(*s, r.Field(sec["model"], std::string(path) + ".model"));
}

Result<SetupHardware> ReadHardware(const Reader& r, const YAML::Node& n) {
  SetupHardware h;
  if (auto st = r.CheckMap(n, "hardware", kHardwareKeys); !st) return st.error();
  std::optional<std::string> s;
  GPUPLAN_ASSIGN_OR_RETURN(s, r.Str(n, "instance", "hardware.instance"));
  if (s) h.instance_type = *s;
  h.instance_field = r.Field(n["instance"], "hardware.instance");
  GPUPLAN_ASSIGN_OR_RETURN(s, r.Str(n, "region", "hardware.region"));
  if (s) h.region = *s;
  GPUPLAN_ASSIGN_OR_RETURN(s, r.Str(n, "accelerator", "hardware.accelerator"));
  if (s) h.accelerator = *s;
  h.accelerator_field = r.Field(n["accelerator"], "hardware.accelerator");
  static const char* kCustomOnly[] = {"accelerator",  "gpus_per_node", "intra_link", "inter_fabric",
                                      "network_gbps", "ram_gb",        "vcpus"};
  if (!h.instance_type.empty()) {
    for (const char* k : kCustomOnly) {
      if (n[k].IsDefined() && !n[k].IsNull()) {
        return r.Fail(n[k], std::string("hardware.") + k,
                      "given together with hardware.instance, which defines it",
                      "remove it, or describe custom hardware without `instance:`");
      }
    }
  } else {
    if (h.accelerator.empty()) {
      return r.Fail(n, "hardware",
                    "needs `instance:` (a catalog instance type) or "
                    "`accelerator:` (custom hardware)",
                    "e.g. `instance: p5.48xlarge` or `accelerator: A100-PCIe-80GB`");
    }
    std::optional<int> i;
    GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "gpus_per_node", "hardware.gpus_per_node", 1));
    if (!i) {
      return r.Fail(n, "hardware.gpus_per_node", "missing gpus_per_node for custom hardware");
    }
    h.gpus_per_node = *i;
    std::optional<IntraNodeLink> intra;
    GPUPLAN_ASSIGN_OR_RETURN(
        intra, r.Choice<IntraNodeLink>(n, "intra_link", "hardware.intra_link", ParseIntraNodeLink,
                                       {"none", "pcie", "nvlink", "nvswitch"}));
    h.intra = intra.value_or(h.gpus_per_node > 1 ? IntraNodeLink::kPcie : IntraNodeLink::kNone);
    std::optional<InterNodeFabric> inter;
    GPUPLAN_ASSIGN_OR_RETURN(
        inter,
        r.Choice<InterNodeFabric>(n, "inter_fabric", "hardware.inter_fabric", ParseInterNodeFabric,
                                  {"none", "efa", "infiniband", "roce", "erdma"}));
    h.inter = inter.value_or(InterNodeFabric::kNone);
    std::optional<double> d;
    GPUPLAN_ASSIGN_OR_RETURN(d, r.Number(n, "network_gbps", "hardware.network_gbps", 0));
    if (d) h.network = Gbps(*d);
    GPUPLAN_ASSIGN_OR_RETURN(d, r.Number(n, "ram_gb", "hardware.ram_gb", 0));
    if (d) h.ram = GB(*d);
    GPUPLAN_ASSIGN_OR_RETURN(h.vcpus, r.Int(n, "vcpus", "hardware.vcpus", 1));
  }
  GPUPLAN_ASSIGN_OR_RETURN(h.storage,
                           r.Choice<StorageKind>(n, "storage", "hardware.storage", ParseStorageKind,
                                                 {"nvme", "ssd", "network", "hdd"}));
  std::optional<double> bw;
  GPUPLAN_ASSIGN_OR_RETURN(bw, r.Number(n, "storage_gbps", "hardware.storage_gbps", 0));
  if (bw) h.storage_bw = GBps(*bw);
  return h;
}

Result<SetupTraining> ReadTraining(const Reader& r, const YAML::Node& n) {
  SetupTraining t;
  if (auto st = r.CheckMap(n, "train", kTrainKeys); !st) return st.error();
  t.field = r.Field(n, "train");
  GPUPLAN_ASSIGN_OR_RETURN(t.model, ReadModel(r, n, "train", t.model_arg));
  std::optional<TrainMethod> m;
  GPUPLAN_ASSIGN_OR_RETURN(m, r.Choice<TrainMethod>(n, "method", "train.method", ParseTrainMethod,
                                                    {"pretrain", "full", "lora", "qlora"}));
  t.method = m.value_or(TrainMethod::kFull);
  std::optional<Precision> p;
  GPUPLAN_ASSIGN_OR_RETURN(p, r.Choice<Precision>(n, "precision", "train.precision", ParsePrecision,
                                                  {"fp32", "bf16", "fp16", "fp8"}));
  t.precision = p.value_or(Precision::kBf16);
  std::optional<int> i;
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "micro_batch", "train.micro_batch", 1));
  t.micro_batch = i.value_or(1);
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "seq_len", "train.seq_len", 1));
  t.seq_len = i.value_or(0);
  GPUPLAN_ASSIGN_OR_RETURN(t.global_batch, r.Int(n, "global_batch", "train.global_batch", 1));
  GPUPLAN_ASSIGN_OR_RETURN(t.gradient_accumulation,
                           r.Int(n, "gradient_accumulation", "train.gradient_accumulation", 1));
  std::optional<Recompute> rc;
  GPUPLAN_ASSIGN_OR_RETURN(rc, r.Choice<Recompute>(n, "recompute", "train.recompute",
                                                   ParseRecompute, {"none", "selective", "full"}));
  t.recompute = rc.value_or(Recompute::kNone);
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "zero", "train.zero", 0));
  t.zero_stage = i.value_or(0);
  if (t.zero_stage > 3) {
    return r.Fail(n["zero"], "train.zero", fmt::format("must be 0-3, got {}", t.zero_stage));
  }
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "tp", "train.tp", 1));
  t.tp = i.value_or(1);
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "pp", "train.pp", 1));
  t.pp = i.value_or(1);
  std::optional<std::string> s;
  GPUPLAN_ASSIGN_OR_RETURN(s, r.Str(n, "dataset_size", "train.dataset_size"));
  if (s) {
    auto b = ParseSize(*s, r.Field(n["dataset_size"], "train.dataset_size"));
    if (!b) return b.error();
    t.dataset = *b;
  }
  return t;
}

Result<SetupServing> ReadServing(const Reader& r, const YAML::Node& n) {
  SetupServing s;
  if (auto st = r.CheckMap(n, "serve", kServeKeys); !st) return st.error();
  GPUPLAN_ASSIGN_OR_RETURN(s.model, ReadModel(r, n, "serve", s.model_arg));
  std::optional<Precision> p;
  GPUPLAN_ASSIGN_OR_RETURN(p, r.Choice<Precision>(n, "precision", "serve.precision", ParsePrecision,
                                                  {"fp32", "bf16", "fp16", "fp8", "int8", "int4"}));
  s.precision = p.value_or(Precision::kBf16);
  std::optional<double> q;
  GPUPLAN_ASSIGN_OR_RETURN(q, r.Number(n, "qps", "serve.qps", 0));
  if (!q) return r.Fail(n, "serve.qps", "missing qps (peak requests per second)");
  s.qps = *q;
  std::optional<int> i;
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "input_len", "serve.input_len", 1));
  s.input_len = i.value_or(s.input_len);
  GPUPLAN_ASSIGN_OR_RETURN(i, r.Int(n, "output_len", "serve.output_len", 0));
  s.output_len = i.value_or(s.model.is_decoder_llm() ? s.output_len : 0);
  std::optional<bool> b;
  GPUPLAN_ASSIGN_OR_RETURN(b, r.Bool(n, "autoscaling", "serve.autoscaling"));
  s.autoscaling = b.value_or(false);
  std::optional<LoadPattern> l;
  GPUPLAN_ASSIGN_OR_RETURN(
      l, r.Choice<LoadPattern>(n, "load", "serve.load",
                               [](std::string_view v) -> std::optional<LoadPattern> {
                                 const std::string t = internal::ToLower(internal::Trim(v));
                                 if (t == "steady") return LoadPattern::kSteady;
                                 if (t == "variable") return LoadPattern::kVariable;
                                 return std::nullopt;
                               },
                               {"steady", "variable"}));
  s.load = l.value_or(LoadPattern::kSteady);
  return s;
}

Result<Setup> ParseSetupNode(const Reader& r, const YAML::Node& root) {
  Setup s;
  if (auto st = r.CheckMap(root, "", kTopKeys); !st) return st.error();
  if (!root["hardware"].IsDefined()) {
    return r.Fail(root, "hardware", "missing hardware",
                  "add `hardware: {instance: p5.48xlarge}` or custom hardware (docs/check.md)");
  }
  GPUPLAN_ASSIGN_OR_RETURN(s.hardware, ReadHardware(r, root["hardware"]));
  std::optional<int> nodes;
  GPUPLAN_ASSIGN_OR_RETURN(nodes, r.Int(root, "nodes", "nodes", 1));
  s.nodes = nodes.value_or(1);
  const YAML::Node z = root["zones"];
  if (z.IsDefined() && !z.IsNull()) {
    if (z.IsScalar()) {
      s.zones.push_back(internal::Trim(z.Scalar()));
    } else if (z.IsSequence()) {
      for (size_t k = 0; k < z.size(); ++k) {
        if (!z[k].IsScalar()) {
          return r.Fail(z[k], fmt::format("zones[{}]", k),
                        "expected a zone name, got " + Describe(z[k]));
        }
        s.zones.push_back(internal::Trim(z[k].Scalar()));
      }
    } else {
      return r.Fail(z, "zones", "expected a list of zone names, got " + Describe(z));
    }
  }
  std::optional<bool> spot;
  GPUPLAN_ASSIGN_OR_RETURN(spot, r.Bool(root, "spot", "spot"));
  s.spot = spot.value_or(false);
  std::optional<std::string> ck;
  GPUPLAN_ASSIGN_OR_RETURN(ck, r.Str(root, "checkpoint_every", "checkpoint_every"));
  if (ck) {
    const std::string t = internal::ToLower(*ck);
    if (t == "none" || t == "never" || t == "0") {
      s.checkpoint_interval_hours = 0.0;
    } else {
      auto h = ParseHours(*ck, r.Field(root["checkpoint_every"], "checkpoint_every"));
      if (!h) return h.error();
      s.checkpoint_interval_hours = *h;
    }
  }
  std::optional<double> headroom;
  GPUPLAN_ASSIGN_OR_RETURN(headroom, r.Number(root, "headroom", "headroom", 0));
  if (headroom) {
    if (*headroom > 1) {
      return r.Fail(root["headroom"], "headroom",
                    fmt::format("must be a fraction in (0, 1], got {}", *headroom),
                    "B5: 0.8 = stay under 80% of GPU memory");
    }
    s.headroom = *headroom;
  }
  const bool has_train = root["train"].IsDefined() && !root["train"].IsNull();
  const bool has_serve = root["serve"].IsDefined() && !root["serve"].IsNull();
  if (has_train == has_serve) {
    return r.Fail(root, has_train ? "serve" : "train",
                  has_train ? "give either train or serve, not both"
                            : "missing the job: `train:` or `serve:`",
                  "one setup file checks one job");
  }
  if (has_train) {
    SetupTraining t;
    GPUPLAN_ASSIGN_OR_RETURN(t, ReadTraining(r, root["train"]));
    s.train = std::move(t);
  } else {
    SetupServing v;
    GPUPLAN_ASSIGN_OR_RETURN(v, ReadServing(r, root["serve"]));
    s.serve = std::move(v);
  }
  return s;
}

}  // namespace

Result<Setup> ParseSetupYaml(std::string_view text, std::string_view label) {
  Reader r(label);
  try {
    if (text.size() > kMaxYamlFileBytes) {
      return MakeError(ErrorCode::kInvalidArgument, r.Field(YAML::Node(), ""),
                       "is " + std::to_string(text.size()) + " bytes, over the limit of " +
                           std::to_string(kMaxYamlFileBytes) + " bytes");
    }
    internal::YamlDocument doc = internal::LoadOneYamlDocument(text);
    if (doc.extra_content) {
      return MakeError(ErrorCode::kParse,
                       (label.empty() ? std::string("<yaml>") : std::string(label)) + ":" +
                           std::to_string(doc.extra_line),
                       "holds 2 YAML documents or more", "put one setup per file");
    }
    YAML::Node root = doc.root;
    if (!root.IsDefined() || root.IsNull()) {
      return MakeError(ErrorCode::kParse, r.Field(YAML::Node(), ""), "empty setup file",
                       "see docs/check.md for the schema");
    }
    return ParseSetupNode(r, root);
  } catch (const YAML::Exception& e) {
    std::string f = label.empty() ? std::string("<yaml>") : std::string(label);
    if (e.mark.line >= 0) f += ":" + std::to_string(e.mark.line + 1);
    return MakeError(ErrorCode::kParse, f, "malformed YAML: " + e.msg,
                     "check indentation and quoting");
  }
}

}  // namespace gpuplan
