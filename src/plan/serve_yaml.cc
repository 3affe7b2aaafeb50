// Serving job files (YAML, docs/serve-yaml.md). Every yaml-cpp exception becomes an Error
// naming "label:LINE:yaml.path".
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/serve_planner.h"
#include "io/yaml_util.h"

namespace gpuplan {

namespace {

struct Ctx {
  std::string label;
  Error Fail(const YAML::Node& n, const std::string& path, const std::string& msg,
             const std::string& hint = {}) const {
    std::string f = n.Mark().line >= 0 ? fmt::format("{}:{}", label, n.Mark().line + 1) : label;
    if (!path.empty()) f = fmt::format("{}:{}", f, path);
    return MakeError(ErrorCode::kInvalidArgument, f, msg, hint);
  }
};

Status CheckKeys(const YAML::Node& map, const std::string& path,
                 const std::vector<std::string>& allowed, const Ctx& c) {
  if (!map.IsMap()) return c.Fail(map, path, "expected a mapping of `key: value` pairs");
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar())
      return c.Fail(it->first, path, "expected a key name, got a list or map");
    std::string k = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string best = ClosestMatch(k, allowed);
      return c.Fail(it->first, path.empty() ? FieldKey(k) : path + "." + FieldKey(k),
                    "unknown key " + Excerpt(k),
                    best.empty() ? fmt::format("allowed: {}", fmt::join(allowed, ", "))
                                 : "did you mean \"" + best + "\"?");
    }
  }
  return {};
}

Result<double> Number(const YAML::Node& n, const std::string& path, const Ctx& c, double min_excl) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    return c.Fail(n, path,
                  "expected a number, got " +
                      Excerpt(n.IsScalar() ? n.Scalar() : std::string("a list or map")));
  }
  if (!(v > min_excl) || !std::isfinite(v)) {
    return c.Fail(n, path, fmt::format("must be > {}, got {}", min_excl, v));
  }
  return v;
}

// A whole number in [lo, hi] (checked before any cast to int).
Result<int> WholeNumber(const YAML::Node& n, const std::string& path, const Ctx& c, int lo,
                        int hi) {
  double v = 0;
  GPUPLAN_ASSIGN_OR_RETURN(v, Number(n, path, c, lo - 1.0));
  if (v != std::floor(v) || v > hi) {
    return c.Fail(n, path, fmt::format("must be a whole number in [{}, {}], got {:g}", lo, hi, v));
  }
  return static_cast<int>(v);
}

Result<std::vector<std::string>> List(const YAML::Node& n, const std::string& path, const Ctx& c) {
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.as<std::string>());
    return out;
  }
  if (!n.IsSequence()) return c.Fail(n, path, "expected a list, e.g. [aws, gcp]");
  for (const auto& x : n) out.push_back(x.as<std::string>());
  return out;
}

Result<ServeJobFile> Parse(const YAML::Node& root, const Ctx& c) {
  ServeJobFile f;
  if (auto st = CheckKeys(root, "", {"model", "serve", "slo", "constraints", "top"}, c); !st)
    return st.error();
  if (!root["model"])
    return c.Fail(root, "model", "missing", "name a preset, HF id or config.json path");
  if (!root["model"].IsScalar() ||
      root["model"].Scalar().find_first_not_of(" \t") == std::string::npos) {
    return c.Fail(root["model"], "model", "must be a non-empty name",
                  "name a preset, HF id or config.json path");
  }
  f.model = root["model"].Scalar();
  if (const YAML::Node s = root["serve"]) {
    if (auto st = CheckKeys(s, "serve",
                            {"qps", "input_len", "output_len", "precision", "quant", "kv_precision",
                             "engine", "target_utilization"},
                            c);
        !st) {
      return st.error();
    }
    if (s["qps"]) GPUPLAN_ASSIGN_OR_RETURN(f.qps, Number(s["qps"], "serve.qps", c, 0));
    if (s["input_len"])
      GPUPLAN_ASSIGN_OR_RETURN(f.input_len,
                               WholeNumber(s["input_len"], "serve.input_len", c, 1, kMaxSeqLen));
    if (s["output_len"])
      GPUPLAN_ASSIGN_OR_RETURN(f.output_len,
                               WholeNumber(s["output_len"], "serve.output_len", c, 0, kMaxSeqLen));
    if (s["target_utilization"])
      GPUPLAN_ASSIGN_OR_RETURN(f.target_utilization,
                               Number(s["target_utilization"], "serve.target_utilization", c, 0));
    if (s["precision"]) f.precision = s["precision"].as<std::string>();
    if (s["quant"]) f.quant = s["quant"].as<std::string>();
    if (s["kv_precision"]) f.kv_precision = s["kv_precision"].as<std::string>();
    if (s["engine"]) f.engine = s["engine"].as<std::string>();
  }
  if (const YAML::Node s = root["slo"]) {
    if (auto st = CheckKeys(s, "slo", {"ttft_p99_ms", "tpot_p99_ms", "e2e_p99_ms"}, c); !st)
      return st.error();
    if (s["ttft_p99_ms"])
      GPUPLAN_ASSIGN_OR_RETURN(f.ttft_p99_ms, Number(s["ttft_p99_ms"], "slo.ttft_p99_ms", c, 0));
    if (s["tpot_p99_ms"])
      GPUPLAN_ASSIGN_OR_RETURN(f.tpot_p99_ms, Number(s["tpot_p99_ms"], "slo.tpot_p99_ms", c, 0));
    if (s["e2e_p99_ms"])
      GPUPLAN_ASSIGN_OR_RETURN(f.e2e_p99_ms, Number(s["e2e_p99_ms"], "slo.e2e_p99_ms", c, 0));
  }
  if (const YAML::Node s = root["constraints"]) {
    if (auto st = CheckKeys(s, "constraints",
                            {"clouds", "regions", "gpus", "cpu", "cpu_only", "reserved",
                             "include_suspect", "currency"},
                            c);
        !st) {
      return st.error();
    }
    if (s["clouds"]) GPUPLAN_ASSIGN_OR_RETURN(f.clouds, List(s["clouds"], "constraints.clouds", c));
    if (s["regions"])
      GPUPLAN_ASSIGN_OR_RETURN(f.regions, List(s["regions"], "constraints.regions", c));
    if (s["gpus"]) GPUPLAN_ASSIGN_OR_RETURN(f.gpus, List(s["gpus"], "constraints.gpus", c));
    for (const char* k : {"cpu", "cpu_only", "reserved", "include_suspect"}) {
      if (!s[k]) continue;
      bool v = false;
      try {
        v = s[k].as<bool>();
      } catch (const YAML::Exception&) {
        return c.Fail(s[k], fmt::format("constraints.{}", k), "expected true or false");
      }
      const std::string_view key = k;
      if (key == "cpu")
        f.cpu = v;
      else if (key == "cpu_only")
        f.cpu_only = v;
      else if (key == "reserved")
        f.reserved = v;
      else
        f.include_suspect = v;
    }
    if (s["currency"]) f.currency = s["currency"].as<std::string>();
  }
  if (root["top"]) GPUPLAN_ASSIGN_OR_RETURN(f.top, WholeNumber(root["top"], "top", c, 1, kMaxTop));
  return f;
}

}  // namespace

Result<ServeJobFile> ParseServeJobYaml(std::string_view yaml_text, std::string_view label) {
  Ctx c{std::string(label)};
  try {
    if (yaml_text.size() > kMaxYamlFileBytes) {
      return MakeError(ErrorCode::kInvalidArgument, c.label,
                       "is " + std::to_string(yaml_text.size()) + " bytes, over the limit of " +
                           std::to_string(kMaxYamlFileBytes) + " bytes");
    }
    internal::YamlDocument doc = internal::LoadOneYamlDocument(yaml_text);
    if (doc.extra_content) {
      return MakeError(ErrorCode::kParse, c.label + ":" + std::to_string(doc.extra_line),
                       "holds 2 YAML documents or more", "put one serving job per file");
    }
    YAML::Node root = doc.root;
    if (!root.IsDefined() || root.IsNull()) {
      return MakeError(
          ErrorCode::kInvalidArgument, c.label, "is empty",
          "a serving job needs `model:` and `serve: {qps: ...}`; see docs/serve-yaml.md");
    }
    return Parse(root, c);
  } catch (const YAML::Exception& e) {
    std::string f = c.label;
    if (e.mark.line >= 0) f += ":" + std::to_string(e.mark.line + 1);
    return MakeError(ErrorCode::kParse, f, "invalid YAML: " + e.msg,
                     "check the indentation (spaces, not tabs) and `key: value` pairs");
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, c.label, std::string("unexpected error: ") + e.what());
  }
}

}  // namespace gpuplan
