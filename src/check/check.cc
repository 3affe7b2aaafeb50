// `gpuplan check`: setup files (YAML) and the pitfall rules of the guides (docs/check.md).
// Every number a finding quotes comes from the library's prediction path: EvaluateTraining and
// BestTrainLayout for memory, step time and communication; SizeHost/CheckHost for the host;
// EstimateLlmServing / EstimateForwardThroughput and PlanServing for serving. yaml-cpp
// exceptions are caught in ParseSetupYaml and become Errors naming "label:LINE:yaml.path".
#include "gpuplan/check.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "gpuplan/job.h"
#include "gpuplan/plan.h"
#include "gpuplan/serve.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/sizing.h"
#include "gpuplan/input.h"
#include "io/csv.h"
#include "io/yaml_util.h"

namespace gpuplan {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "info";
  }
  return "info";
}

const char* StorageKindName(StorageKind s) {
  switch (s) {
    case StorageKind::kNvme: return "nvme";
    case StorageKind::kSsd: return "ssd";
    case StorageKind::kNetwork: return "network";
    case StorageKind::kHdd: return "hdd";
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

const std::vector<std::string> kTopKeys = {"hardware", "nodes",           "zones", "spot",
                                           "checkpoint_every", "headroom", "train", "serve"};
const std::vector<std::string> kHardwareKeys = {
    "instance", "region",  "accelerator", "gpus_per_node", "intra_link",  "inter_fabric",
    "network_gbps", "ram_gb", "vcpus",     "storage",       "storage_gbps"};
const std::vector<std::string> kTrainKeys = {
    "model",      "method",       "precision", "micro_batch", "seq_len", "global_batch",
    "gradient_accumulation", "recompute", "zero", "tp", "pp", "dataset_size"};
const std::vector<std::string> kServeKeys = {"model",      "precision",   "qps",  "input_len",
                                             "output_len", "autoscaling", "load"};

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

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
                    best.empty() ? "known keys: " + Join(known)
                                 : "did you mean \"" + best + "\"? (known keys: " + Join(known) +
                                       ")");
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

  Result<std::optional<int>> Int(const YAML::Node& map, std::string_view key,
                                 std::string_view path, int min) const {
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
  static const char* kCustomOnly[] = {"accelerator", "gpus_per_node", "intra_link",
                                      "inter_fabric", "network_gbps",  "ram_gb", "vcpus"};
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
      return r.Fail(n, "hardware", "needs `instance:` (a catalog instance type) or "
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
    GPUPLAN_ASSIGN_OR_RETURN(intra, r.Choice<IntraNodeLink>(
                                  n, "intra_link", "hardware.intra_link", ParseIntraNodeLink,
                                  {"none", "pcie", "nvlink", "nvswitch"}));
    h.intra = intra.value_or(h.gpus_per_node > 1 ? IntraNodeLink::kPcie : IntraNodeLink::kNone);
    std::optional<InterNodeFabric> inter;
    GPUPLAN_ASSIGN_OR_RETURN(inter, r.Choice<InterNodeFabric>(
                                  n, "inter_fabric", "hardware.inter_fabric",
                                  ParseInterNodeFabric,
                                  {"none", "efa", "infiniband", "roce", "erdma"}));
    h.inter = inter.value_or(InterNodeFabric::kNone);
    std::optional<double> d;
    GPUPLAN_ASSIGN_OR_RETURN(d, r.Number(n, "network_gbps", "hardware.network_gbps", 0));
    if (d) h.network = Gbps(*d);
    GPUPLAN_ASSIGN_OR_RETURN(d, r.Number(n, "ram_gb", "hardware.ram_gb", 0));
    if (d) h.ram = GB(*d);
    GPUPLAN_ASSIGN_OR_RETURN(h.vcpus, r.Int(n, "vcpus", "hardware.vcpus", 1));
  }
  GPUPLAN_ASSIGN_OR_RETURN(h.storage, r.Choice<StorageKind>(n, "storage", "hardware.storage",
                                                      ParseStorageKind,
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
  GPUPLAN_ASSIGN_OR_RETURN(rc, r.Choice<Recompute>(n, "recompute", "train.recompute", ParseRecompute,
                                             {"none", "selective", "full"}));
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
  GPUPLAN_ASSIGN_OR_RETURN(l, r.Choice<LoadPattern>(
                            n, "load", "serve.load",
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
          return r.Fail(z[k], fmt::format("zones[{}]", k), "expected a zone name, got " +
                                                               Describe(z[k]));
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

// ---------------------------------------------------------------------------------------------
// Resolution against the catalog.

namespace {

struct Resolved {
  InstanceType inst;  // the catalog row, or one built from the custom description
  const Accelerator* acc = nullptr;
  bool custom = false;
  std::optional<double> price_usd;  // per node-hour, on demand (spot when `spot` and known)
  int gpus() const { return inst.accelerator_count; }
};

std::optional<double> UsdPerHour(const Catalog& cat, const InstanceType& i, bool spot) {
  std::optional<double> p = spot && i.price_spot ? i.price_spot : i.price_on_demand;
  if (!p) return std::nullopt;
  return cat.Convert(*p, i.currency, Currency::kUsd);
}

Result<Resolved> Resolve(const Setup& s, const Catalog& cat) {
  Resolved r;
  const SetupHardware& h = s.hardware;
  if (!h.instance_type.empty()) {
    const InstanceType* found = nullptr;
    std::vector<std::string> types, regions;
    for (const auto& i : cat.instances) {
      types.push_back(i.instance_type);
      if (internal::ToLower(i.instance_type) != internal::ToLower(h.instance_type)) continue;
      regions.push_back(i.region);
      if (!h.region.empty() && i.region != h.region) continue;
      if (found == nullptr) found = &i;
    }
    if (found == nullptr && regions.empty()) {
      const std::string best = ClosestMatch(h.instance_type, types);
      return MakeError(ErrorCode::kNotFound, h.instance_field,
                       "unknown instance type \"" + h.instance_type + "\"",
                       best.empty() ? "`gpuplan instances` lists the catalog"
                                    : "did you mean \"" + best + "\"?");
    }
    if (found == nullptr) {
      return MakeError(ErrorCode::kNotFound, h.instance_field,
                       "instance type \"" + h.instance_type + "\" is not in region \"" +
                           h.region + "\"",
                       "regions in the catalog: " + Join(regions));
    }
    if (found->is_cpu_only()) {
      return MakeError(ErrorCode::kUnsupported, h.instance_field,
                       "\"" + h.instance_type + "\" has no accelerator",
                       "check covers GPU setups; use `gpuplan tco` for CPU serving");
    }
    r.inst = *found;
    r.acc = cat.FindAccelerator(found->accelerator);
    if (r.acc == nullptr) {
      return MakeError(ErrorCode::kInternal, h.instance_field,
                       "accelerator \"" + found->accelerator + "\" of the instance is not in "
                       "the catalog");
    }
    r.price_usd = UsdPerHour(cat, r.inst, s.spot);
    return r;
  }
  auto acc = cat.ResolveAccelerator(h.accelerator, h.accelerator_field);
  if (!acc) return acc.error();
  r.acc = *acc;
  r.custom = true;
  r.inst.cloud = "custom";
  r.inst.instance_type = "custom";
  r.inst.accelerator = r.acc->id;
  r.inst.accelerator_count = h.gpus_per_node;
  r.inst.vcpus = h.vcpus.value_or(0);
  r.inst.ram = h.ram.value_or(Bytes(0));
  r.inst.network = h.network.value_or(BitsPerSec(0));
  r.inst.intra_node_link = h.intra;
  r.inst.inter_node_fabric = h.inter;
  r.inst.inter_node_bw = h.network;
  if (h.storage == StorageKind::kNvme) r.inst.local_nvme = Bytes(1e18);  // size not a check here
  // A price for custom hardware: the cheapest catalog rental of the same GPU, per GPU.
  for (const auto& i : cat.instances) {
    if (i.accelerator != r.acc->id || i.accelerator_count <= 0) continue;
    if (auto p = UsdPerHour(cat, i, s.spot)) {
      const double per_node = *p / i.accelerator_count * h.gpus_per_node;
      if (!r.price_usd || per_node < *r.price_usd) r.price_usd = per_node;
    }
  }
  return r;
}

// The training layout and batch of a setup on `gpus` GPUs.
struct TrainShape {
  Parallelism par;
  TrainMemoryOptions opt;
  TrainJob job;
  int accumulation = 1;
};

Result<TrainShape> ShapeTraining(const SetupTraining& t, int gpus) {
  TrainShape s;
  const int mp = t.tp * t.pp;
  if (gpus % mp != 0) {
    return MakeError(ErrorCode::kInvalidArgument, t.field + ".tp",
                     fmt::format("tp x pp = {} does not divide the {} GPUs", mp, gpus),
                     "pick tp and pp whose product divides GPUs per node x nodes");
  }
  s.par.tp = t.tp;
  s.par.pp = t.pp;
  s.par.dp = gpus / mp;
  s.par.zero_stage = t.zero_stage;
  s.par.sequence_parallel = t.tp > 1;
  TrainJobSpec spec;
  spec.model = t.model;
  spec.method = t.method;
  spec.seq_len = t.seq_len;
  spec.global_batch = t.global_batch.value_or(0);
  s.opt.method = t.method;
  s.opt.precision = t.precision;
  s.opt.micro_batch = t.micro_batch;
  s.opt.seq_len = EffectiveSeqLen(spec);
  s.opt.recompute = t.recompute;
  s.opt.dropout = DefaultDropout(t.model);
  if (t.method == TrainMethod::kQlora) s.opt.base_bits = 4;
  const int per_step = t.micro_batch * s.par.dp;
  if (t.global_batch && t.gradient_accumulation &&
      *t.global_batch != per_step * *t.gradient_accumulation) {
    return MakeError(ErrorCode::kInvalidArgument, t.field + ".global_batch",
                     fmt::format("global_batch {} != micro_batch {} x data-parallel {} x "
                                 "gradient_accumulation {}",
                                 *t.global_batch, t.micro_batch, s.par.dp,
                                 *t.gradient_accumulation),
                     "give one of global_batch and gradient_accumulation, or make them agree");
  }
  if (t.gradient_accumulation) {
    s.accumulation = *t.gradient_accumulation;
  } else {
    const int gb = t.global_batch ? *t.global_batch : DefaultGlobalBatch(spec);
    if (gb % per_step != 0) {
      return MakeError(ErrorCode::kInvalidArgument, t.field + ".global_batch",
                       fmt::format("global batch {} is not a multiple of micro_batch {} x "
                                   "data-parallel {} = {}",
                                   gb, t.micro_batch, s.par.dp, per_step),
                       "change global_batch or micro_batch");
    }
    s.accumulation = gb / per_step;
  }
  s.opt.num_microbatches = s.accumulation;
  s.job.global_batch = per_step * s.accumulation;
  return s;
}

}  // namespace

Status ValidateSetup(const Setup& setup, const Catalog& catalog) {
  auto r = Resolve(setup, catalog);
  if (!r) return r.error();
  if (setup.train) {
    auto s = ShapeTraining(*setup.train, r->gpus() * setup.nodes);
    if (!s) return s.error();
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Rules.

namespace {

// A3's "small card": under the 64 GiB class (RTX 4090 24 GB, A100 40 GB, L40S 48 GB), where
// training is forced into recompute or accumulation that an 80 GB-class card avoids.
constexpr Bytes kSmallCardLimit = GiB(64);

double Pct(double x) { return 100.0 * x; }

Seconds ExposedComm(const StepTime& s) { return s.tp_comm + s.dp_comm + s.pp_comm + s.ep_comm; }

double CommShare(const StepTime& s) {
  return s.total.value() > 0 ? ExposedComm(s) / s.total : 0.0;
}

std::string HwName(const Resolved& r, int nodes) {
  const std::string shape = fmt::format("{} x {}", r.gpus(), r.acc->id);
  const std::string per = r.custom ? "custom " + shape : r.inst.instance_type + " (" + shape + ")";
  return nodes > 1 ? fmt::format("{} x {}", nodes, per) : per;
}

class Rules {
 public:
  Rules(const Setup& s, const Catalog& cat, const Calibration& cal, const Resolved& r)
      : s_(s), cat_(cat), cal_(cal), r_(r) {}

  std::vector<Finding> Run() {
    if (s_.train) Training(*s_.train);
    if (s_.serve) Serving(*s_.serve);
    std::stable_sort(out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
      return static_cast<int>(a.severity) < static_cast<int>(b.severity);
    });
    return std::move(out_);
  }

 private:
  void Add(Severity sev, std::string rule, std::string message, std::string fix) {
    out_.push_back({sev, std::move(rule), std::move(message), std::move(fix)});
  }

  HardwareView Hw(const InstanceType& inst) const {
    return HardwareFromInstance(inst, *r_.acc, s_.nodes);
  }

  // ---- training --------------------------------------------------------------------------
  void Training(const SetupTraining& t) {
    auto shape_r = ShapeTraining(t, r_.gpus() * s_.nodes);
    if (!shape_r) return;  // ValidateSetup reports it
    const TrainShape sh = *shape_r;
    const HardwareView hw = Hw(r_.inst);
    const TrainEval ev =
        EvaluateTraining(t.model, sh.par, sh.opt, sh.job, hw, cal_, s_.headroom);
    const double cap = r_.acc->memory.value();
    const double used = ev.memory.Total().value();
    const MemoryBreakdown& m = ev.memory;
    const std::string terms = fmt::format(
        "weights {:.1f} + master {:.1f} + grads {:.1f} + optimizer {:.1f} + activations {:.1f} "
        "+ logits {:.1f} + runtime {:.1f} GiB",
        ToGiB(m.weights), ToGiB(m.master_weights), ToGiB(m.gradients),
        ToGiB(m.optimizer + m.adapter), ToGiB(m.activations), ToGiB(m.logits),
        ToGiB(m.cuda_context + m.nccl_buffers + m.allocator_slack));
    const std::string layout =
        fmt::format("tp {} pp {} dp {} ZeRO-{} micro-batch {} x {} tokens, recompute {}",
                    sh.par.tp, sh.par.pp, sh.par.dp, sh.par.zero_stage, sh.opt.micro_batch,
                    sh.opt.seq_len, RecomputeName(sh.opt.recompute));
    // B5: memory over the headroom.
    if (used > s_.headroom * cap) {
      Add(used > cap ? Severity::kError : Severity::kWarning, "B5-memory-headroom",
          fmt::format("predicted {:.1f} GiB per GPU ({}) is {:.0f}% of the {:.0f} GiB {}{}; "
                      "guide B5: real use runs 20-30% above theory, stay under {:.0f}% "
                      "({:.1f} GiB) [{}]",
                      ToGiB(ev.memory.Total()), terms, Pct(used / cap), ToGiB(r_.acc->memory),
                      r_.acc->id, used > cap ? ": it does not fit" : "", Pct(s_.headroom),
                      ToGiB(r_.acc->memory) * s_.headroom, layout),
          "shard model states (ZeRO-3 / FSDP), recompute activations, lower the micro-batch, "
          "or use a larger-memory GPU (`gpuplan memory` shows each term)");
    }
    if (!ev.step.valid) {
      Add(Severity::kError, "layout-invalid",
          "the layout cannot run: " + ev.step.reason + " [" + layout + "]",
          "change tp/pp/micro_batch (`gpuplan plan train` finds a layout)");
      return;
    }
    const double share = CommShare(ev.step);
    PcieOnly(t, sh, ev, share);
    MultiNode(ev);
    SpotCheckpoint(ev);
    SmallCard(t, sh, ev);
    SmallBatch(t, sh, ev);
    Host(t);
  }

  // A12 / B8: multi-GPU training over PCIe only.
  void PcieOnly(const SetupTraining&, const TrainShape& sh, const TrainEval& ev, double share) {
    const IntraNodeLink l = r_.inst.intra_node_link;
    if (r_.gpus() <= 1 || (l != IntraNodeLink::kPcie && l != IntraNodeLink::kNone)) return;
    if (sh.par.gpus() <= 1) return;
    InstanceType nv = r_.inst;
    nv.intra_node_link = IntraNodeLink::kNvlink;
    const TrainEval alt =
        EvaluateTraining(s_.train->model, sh.par, sh.opt, sh.job, Hw(nv), cal_, s_.headroom);
    const double alt_share = CommShare(alt.step);
    std::string nvlink =
        alt.step.valid && std::abs(alt_share - share) > 0.005
            ? fmt::format("; with NVLink on the same GPUs it would be {:.0f}%", Pct(alt_share))
            : fmt::format("; {} has no NVLink, so an NVLink GPU is the fix", r_.acc->id);
    Add(share >= 0.3 ? Severity::kError : Severity::kWarning, "A12-pcie-multi-gpu",
        fmt::format("{} GPUs train over PCIe only ({:.0f} GB/s per GPU): exposed communication "
                    "is {:.0f}% of the {:.2f} s step{} (guide A12: ~40% on PCIe vs ~15% on "
                    "NVLink for 8 x A100 on a 6.7B model)",
                    sh.par.gpus(), Hw(r_.inst).intra_bw.value() / 1e9, Pct(share),
                    ev.step.total.value(), nvlink),
        "train multi-GPU on NVLink/NVSwitch machines (p4d/p5, ND A100/H100, A3) (guide B8)");
  }

  // A13 / B8: multi-node without RDMA, nodes in different zones.
  void MultiNode(const TrainEval& ev) {
    if (s_.nodes <= 1) return;
    if (r_.inst.inter_node_fabric == InterNodeFabric::kNone) {
      const double gbit = (r_.inst.inter_node_bw ? *r_.inst.inter_node_bw : r_.inst.network)
                              .value() / 1e9;
      Add(Severity::kError, "A13-multi-node-rdma",
          fmt::format("{} nodes without RDMA (EFA/InfiniBand/RoCE): gradients cross {} TCP; "
                      "exposed data-parallel communication is {:.0f}% of the {:.2f} s step "
                      "(guide A13, B8)",
                      s_.nodes, gbit > 0 ? fmt::format("{:.0f} Gbit/s", gbit)
                                         : std::string("an unspecified network"),
                      Pct(ev.step.dp_comm / ev.step.total), ev.step.total.value()),
          "use instances with RDMA (EFA, InfiniBand, RoCE) in one placement group, or train on "
          "one node");
    }
    std::vector<std::string> zones;
    for (const auto& z : s_.zones) {
      if (std::find(zones.begin(), zones.end(), z) == zones.end()) zones.push_back(z);
    }
    if (zones.size() > 1) {
      Add(Severity::kError, "A13-same-zone",
          fmt::format("{} nodes spread over {} zones ({}): cross-zone latency is far above the "
                      "5 us the guide asks for, and cross-zone traffic is billed (guide A13, B8: "
                      "no cross-zone training)",
                      s_.nodes, zones.size(), Join(zones)),
          "place all nodes in one availability zone and one placement group");
    } else if (zones.empty()) {
      Add(Severity::kInfo, "A13-same-zone",
          fmt::format("{} nodes, zones not given: they must share one availability zone "
                      "(guide A13: latency under 5 us)",
                      s_.nodes),
          "list the zones (`zones: [us-east-1a]`) to have this checked");
    }
  }

  // A15: spot without checkpointing.
  void SpotCheckpoint(const TrainEval& ev) {
    if (!s_.spot) return;
    if (s_.checkpoint_interval_hours && *s_.checkpoint_interval_hours > 0) return;
    const double rate = cal_.Get("spot_interruptions_per_node_hour", 0.02) * s_.nodes;
    std::string run = ev.job_seconds > 0
                          ? fmt::format("; over the {:.0f} h run that is {:.1f} interruptions",
                                        ev.job_seconds / 3600, rate * ev.job_seconds / 3600)
                          : std::string();
    Add(Severity::kError, "A15-spot-checkpoint",
        fmt::format("spot capacity without checkpoints: at {:.3f} interruptions per hour for {} "
                    "node(s) (calibration spot_interruptions_per_node_hour), each one loses the "
                    "run so far{} (guide A15)",
                    rate, s_.nodes, run),
        "checkpoint every ~1 h (or 1000 steps) to local NVMe, sync to object storage, and "
        "resume on restart (`checkpoint_every: 1h`); or use on-demand");
  }

  // A3: a small card forced into recompute / accumulation when a larger card is cheaper.
  void SmallCard(const SetupTraining& t, const TrainShape& sh, const TrainEval& ev) {
    if (!ev.fits || ev.step.samples_per_s <= 0 || !r_.price_usd) return;
    if (r_.acc->memory >= kSmallCardLimit) return;
    bool forced_recompute = false, forced_accum = false;
    if (sh.opt.recompute != Recompute::kNone) {
      TrainMemoryOptions o = sh.opt;
      o.recompute = Recompute::kNone;
      forced_recompute =
          !EvaluateTraining(t.model, sh.par, o, sh.job, Hw(r_.inst), cal_, s_.headroom).fits;
    }
    if (sh.accumulation > 1) {
      TrainMemoryOptions o = sh.opt;
      o.micro_batch *= 2;
      o.num_microbatches = std::max(1, sh.accumulation / 2);
      forced_accum =
          !EvaluateTraining(t.model, sh.par, o, sh.job, Hw(r_.inst), cal_, s_.headroom).fits;
    }
    if (!forced_recompute && !forced_accum) return;
    const double tokens_per_sample = sh.opt.seq_len;
    const double my_cost = *r_.price_usd * s_.nodes / 3600.0 /
                           (ev.step.samples_per_s * tokens_per_sample) * 1e6;
    // Candidates: one machine of a GPU with >= 1.5x the memory and no more GPUs in all.
    struct Key {
      std::string acc;
      int count;
      IntraNodeLink intra;
      bool operator<(const Key& o) const {
        return std::tie(acc, count, intra) < std::tie(o.acc, o.count, o.intra);
      }
    };
    std::map<Key, std::pair<const InstanceType*, double>> cheapest;
    for (const auto& i : cat_.instances) {
      if (i.is_cpu_only() || i.accelerator_count > r_.gpus() * s_.nodes) continue;
      if (i.accelerator.rfind("Inferentia", 0) == 0) continue;
      const Accelerator* a = cat_.FindAccelerator(i.accelerator);
      if (a == nullptr || a->memory.value() < 1.5 * r_.acc->memory.value()) continue;
      auto p = UsdPerHour(cat_, i, s_.spot);
      if (!p) continue;
      Key k{i.accelerator, i.accelerator_count, i.intra_node_link};
      auto it = cheapest.find(k);
      if (it == cheapest.end() || *p < it->second.second) cheapest[k] = {&i, *p};
    }
    TrainMemoryOptions base = sh.opt;
    base.notes = false;
    TrainJob job = sh.job;
    double best_cost = my_cost;
    std::string best_desc;
    for (const auto& [k, v] : cheapest) {
      const Accelerator& a = *cat_.FindAccelerator(k.acc);
      const HardwareView hw = HardwareFromInstance(*v.first, a, 1);
      auto choice = BestTrainLayout(t.model, base, job, hw, cal_, s_.headroom, LayoutConstraints{});
      if (!choice || choice->eval.step.samples_per_s <= 0) continue;
      const double c =
          v.second / 3600.0 / (choice->eval.step.samples_per_s * tokens_per_sample) * 1e6;
      if (c < best_cost) {
        best_cost = c;
        best_desc = fmt::format(
            "{} {} ({} x {}, {:.0f} GiB each, micro-batch {}, recompute {}) at ${:.2f}/h",
            v.first->cloud, v.first->instance_type, k.count, k.acc, ToGiB(a.memory),
            choice->opt.micro_batch, RecomputeName(choice->opt.recompute), v.second);
      }
    }
    if (best_desc.empty() || best_cost > 0.9 * my_cost) return;
    Add(Severity::kWarning, "A3-small-gpu-forced",
        fmt::format("{} GiB {} needs {}{}{} to fit; this setup costs ${:.2f} per 1M training "
                    "tokens ({:.0f} tokens/s at ${:.2f}/h), while {} would cost ${:.2f} "
                    "({:.0f}% less) (guide A3: one A100 80GB out-produces 4 x RTX 4090)",
                    ToGiB(r_.acc->memory), r_.acc->id,
                    forced_recompute ? fmt::format("{} recompute", RecomputeName(sh.opt.recompute))
                                     : std::string(),
                    forced_recompute && forced_accum ? " and " : "",
                    forced_accum ? fmt::format("gradient accumulation x{} at micro-batch {}",
                                               sh.accumulation, sh.opt.micro_batch)
                                 : std::string(),
                    my_cost, ev.step.samples_per_s * tokens_per_sample,
                    *r_.price_usd * s_.nodes, best_desc, best_cost,
                    Pct(1 - best_cost / my_cost)),
        "train on the larger-memory GPU; keep small cards for development and serving");
  }

  // B17: the micro-batch is too small for the GPU (a larger one fits and is faster).
  void SmallBatch(const SetupTraining& t, const TrainShape& sh, const TrainEval& ev) {
    if (ev.step.tokens_per_s_per_gpu <= 0) return;
    double best = ev.step.tokens_per_s_per_gpu;
    double best_mfu = ev.step.mfu;
    int best_mb = sh.opt.micro_batch;
    for (int f = 2; f <= 16; f *= 2) {
      if (sh.accumulation % f != 0) break;  // same global batch
      TrainMemoryOptions o = sh.opt;
      o.micro_batch = sh.opt.micro_batch * f;
      o.num_microbatches = sh.accumulation / f;
      o.notes = false;
      const TrainEval e =
          EvaluateTraining(t.model, sh.par, o, sh.job, Hw(r_.inst), cal_, s_.headroom);
      if (!e.fits || !e.step.valid) break;
      if (e.step.tokens_per_s_per_gpu > best) {
        best = e.step.tokens_per_s_per_gpu;
        best_mfu = e.step.mfu;
        best_mb = o.micro_batch;
      }
    }
    if (best < 1.15 * ev.step.tokens_per_s_per_gpu) return;
    Add(Severity::kWarning, "B17-small-batch",
        fmt::format("micro-batch {} x {} tokens leaves the {} underused: {:.0f} tokens/s per GPU "
                    "at {:.0f}% MFU; micro-batch {} (same global batch {}, still within the "
                    "{:.0f}% memory headroom) reaches {:.0f} tokens/s at {:.0f}% MFU (+{:.0f}%) "
                    "(guide B17: too-small batch)",
                    sh.opt.micro_batch, sh.opt.seq_len, r_.acc->id,
                    ev.step.tokens_per_s_per_gpu, Pct(ev.step.mfu), best_mb,
                    sh.job.global_batch, Pct(s_.headroom), best, Pct(best_mfu),
                    Pct(best / ev.step.tokens_per_s_per_gpu - 1)),
        fmt::format("raise micro_batch to {} and lower gradient accumulation to match",
                    best_mb));
  }

  // A9 / B6 / B7 and the host: storage kind and bandwidth, RAM for the dataset, CPU cores.
  void Host(const SetupTraining& t) {
    SizingInput in;
    in.training = true;
    in.gpus_per_node = r_.gpus();
    in.nodes = s_.nodes;
    in.gpu_memory = r_.acc->memory;
    in.model_files = InferenceWeightBytes(t.model, t.precision, std::nullopt, 1, 1);
    in.dataset = t.dataset;
    const HostNeeds guide_b = SizeHost(SizingPolicy::kGuideB, in);
    std::optional<StorageKind> kind = s_.hardware.storage;
    if (!kind && !r_.custom && r_.inst.local_nvme.value() > 0) kind = StorageKind::kNvme;
    const std::optional<BytesPerSec> bw = s_.hardware.storage_bw;
    const std::string need_bw =
        fmt::format("{} GPUs per node x 2 GB/s = {:.0f} GB/s", r_.gpus(),
                    guide_b.storage_bw.value() / 1e9);
    if (kind == StorageKind::kHdd || kind == StorageKind::kNetwork) {
      const bool hdd = kind == StorageKind::kHdd;
      Add(hdd ? Severity::kError : Severity::kWarning, "A9-B6-training-storage",
          fmt::format("training reads from {} storage{}; the GPUs need {} (guide B7); {}",
                      StorageKindName(*kind),
                      bw ? fmt::format(" at {:.1f} GB/s", bw->value() / 1e9) : std::string(),
                      need_bw,
                      hdd ? "guide B6: an HDD (~100 MB/s) cannot feed GPUs"
                          : "guide A9: network storage gives 1-2 GB/s vs ~7 GB/s per local "
                            "NVMe drive"),
          "stage the dataset on local NVMe (RAID0 for bandwidth); keep network storage for "
          "checkpoint sync and serving");
    }
    if (bw) {
      if (*bw < guide_b.storage_bw) {
        Add(Severity::kWarning, "B7-storage-bandwidth",
            fmt::format("storage delivers {:.1f} GB/s; guide B7 asks for {}", bw->value() / 1e9,
                        need_bw),
            "add NVMe drives in RAID0 or cache the dataset locally");
      }
    } else {
      Add(Severity::kInfo, "B7-storage-bandwidth",
          fmt::format("storage bandwidth not given; guide B7 asks for {}", need_bw),
          "set hardware.storage_gbps to have it checked");
    }
    const bool ram_known = r_.inst.ram.value() > 0;
    if (ram_known && t.dataset.value() > 0) {
      // The dataset term of B6 alone: SizeHost's guide-B RAM with no GPU memory term.
      SizingInput data_only = in;
      data_only.gpu_memory = Bytes(0);
      const Bytes need = SizeHost(SizingPolicy::kGuideB, data_only).ram;
      if (r_.inst.ram < need) {
        Add(Severity::kWarning, "B6-ram-dataset",
            fmt::format("{:.0f} GB RAM per node is under 1.5 x the {:.0f} GB dataset ({:.0f} GB): "
                        "the page cache cannot hold it and data loading swaps (guide B6)",
                        ToGB(r_.inst.ram), ToGB(t.dataset), ToGB(need)),
            "use a host with more RAM, shard the dataset across nodes, or stream it from "
            "local NVMe with a bounded prefetch");
      }
    }
    // CPU cores and RAM for the GPUs (gpuplan's default sizing policy, docs/sizing.md).
    const HostNeeds needs = SizeHost(SizingPolicy::kDefault, in);
    for (const HostFinding& f : CheckHost(needs, r_.inst)) {
      if (f.ok) continue;
      if (f.item == "cpu" && r_.inst.vcpus > 0) {
        Add(Severity::kWarning, "A4-host-cpu", f.text + " (guide A4: GPUs x 8-12 cores)",
            "pick a host with more cores, or fewer data-loader workers per GPU");
      } else if (f.item == "ram" && ram_known) {
        Add(Severity::kWarning, "A5-host-ram", f.text + " (guides A5/B6)",
            "pick a host with more RAM");
      }
    }
  }

  // ---- serving ---------------------------------------------------------------------------
  void Serving(const SetupServing& v) {
    const ComputeDevice dev = DeviceFromAccelerator(*r_.acc, cal_, r_.inst.intra_node_link);
    ServePerf perf;
    int tp = 1;
    if (v.model.is_decoder_llm()) {
      for (tp = 1; tp <= r_.gpus(); tp *= 2) {
        ServeSetup ss;
        ss.weight_precision = v.precision;
        ss.tp = tp;
        perf = EstimateLlmServing(v.model, ss, dev, v.input_len, v.output_len, 0, cal_);
        if (perf.fits) break;
      }
    } else {
      perf = EstimateForwardThroughput(v.model, v.precision, dev, v.input_len, 256, cal_);
    }
    if (!perf.fits || perf.samples_per_s <= 0) {
      Add(Severity::kError, "B5-memory-headroom",
          fmt::format("{} does not fit for serving on {} GPUs of {}: {}", v.model.name,
                      r_.gpus(), r_.acc->id, perf.why),
          "use more or larger GPUs per replica, or quantize the weights (int8/int4)");
      return;
    }
    tp = std::min(tp, r_.gpus());
    const int replicas = r_.gpus() / tp * s_.nodes;
    const double capacity = perf.samples_per_s * replicas;
    const double util = v.qps / capacity;
    const std::string cap_text = fmt::format(
        "{} replica(s) of {} GPU(s) carry {:.1f} req/s ({:.2f} req/s each at batch {}); the "
        "peak of {:.2f} req/s uses {:.0f}%",
        replicas, tp, capacity, perf.samples_per_s, perf.batch, v.qps, Pct(util));
    if (util > 1) {
      Add(Severity::kError, "serve-capacity", cap_text + ": the setup cannot carry the load",
          "add replicas or nodes (`gpuplan plan infer` sizes the fleet)");
    }
    TrainingInstanceServing(v, cap_text);
    if (v.load == LoadPattern::kVariable && !v.autoscaling) {
      Add(Severity::kWarning, "B12-autoscaling",
          fmt::format("variable load served by a fixed fleet: {}; off-peak the same GPUs idle "
                      "and are billed (guide B12: autoscaling saves 40-60%)",
                      cap_text),
          "autoscale (Kubernetes HPA: GPU utilization target 60%, scale-down window 300 s, at "
          "most 20% per 60 s; `gpuplan emit` writes one)");
    }
  }

  // B1: a training-class instance (NVLink/NVSwitch + RDMA fabric) serving a load that a much
  // cheaper deployment carries.
  void TrainingInstanceServing(const SetupServing& v, const std::string& cap_text) {
    if (r_.custom || !r_.price_usd) return;
    const IntraNodeLink l = r_.inst.intra_node_link;
    const bool training_class = (l == IntraNodeLink::kNvlink || l == IntraNodeLink::kNvswitch) &&
                                r_.inst.inter_node_fabric != InterNodeFabric::kNone;
    if (!training_class) return;
    ServeJobSpec job;
    job.model = v.model;
    job.weight_precision = v.precision;
    job.qps = v.qps;
    job.input_len = v.input_len;
    job.output_len = v.output_len;
    job.clouds = {r_.inst.cloud};
    job.top = 1;
    auto res = PlanServing(job, cat_, cal_);
    if (!res || res->plans.empty() || !res->plans.front().cost_per_hour) return;
    const ServePlan& p = res->plans.front();
    const double mine = *r_.price_usd * s_.nodes;
    const double best = *p.cost_per_hour;
    if (mine < 2 * best) return;
    Add(Severity::kWarning, "B1-training-instance-serving",
        fmt::format("{} is a training-class machine ({} + {}) at ${:.2f}/h (${:.0f}/month) for "
                    "serving: {}; {} x {} ({} x {} GPU(s)) carries the load at ${:.2f}/h "
                    "(${:.0f}/month, {:.1f}x cheaper) (guide B1: 50k vs <8k USD/month)",
                    HwName(r_, s_.nodes), IntraNodeLinkName(l),
                    InterNodeFabricName(r_.inst.inter_node_fabric), mine, mine * 730, cap_text,
                    p.instances, p.instance->instance_type, p.replicas, p.tp, best, best * 730,
                    mine / best),
        "serve on inference instances (`gpuplan plan infer`); keep the training machine for "
        "training");
  }

  const Setup& s_;
  const Catalog& cat_;
  const Calibration& cal_;
  const Resolved& r_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> CheckSetup(const Setup& setup, const Catalog& catalog,
                                const Calibration& cal) {
  if (Status st = ValidateSetup(setup, catalog); !st) {
    return {Finding{Severity::kError, "setup-invalid", st.error().ToString(),
                    "fix the setup file (docs/check.md)"}};
  }
  const Resolved r = *Resolve(setup, catalog);
  return Rules(setup, catalog, cal, r).Run();
}

}  // namespace gpuplan
