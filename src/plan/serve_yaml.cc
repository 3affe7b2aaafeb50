// Serving job files (YAML, docs/serve-yaml.md), read with the shared YamlReader: every yaml-cpp
// exception becomes an Error naming "label:LINE:yaml.path".
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpuplan/input.h"
#include "gpuplan/serve_planner.h"
#include "base/strings.h"
#include "io/yaml_reader.h"

namespace gpuplan {

namespace {

using internal::Entry;
using internal::Section;
using Reader = internal::YamlReader;

const internal::YamlSchema& ServeSchema() {
  static const internal::YamlSchema k{
      {{"", {"model", "serve", "slo", "constraints", "top"}},
       {"serve",
        {"qps", "benchmark", "input_len", "output_len", "denoise_steps", "precision", "quant",
         "kv_precision", "engine", "target_utilization"}},
       {"slo", {"ttft_p99_ms", "tpot_p99_ms", "e2e_p99_ms"}},
       {"constraints",
        {"clouds", "regions", "gpus", "cpu", "cpu_only", "reserved", "include_suspect",
         "marketplace", "currency"}}},
      "docs/serve-yaml.md",
      "the serving job file",
      "a serving job file is a map: `model: ...`, `serve: {qps: ...}`; see docs/serve-yaml.md",
      "a serving job needs `model:` and `serve: {qps: ...}`; see docs/serve-yaml.md",
      "put one serving job per file (remove the `---` separators)"};
  return k;
}

// The optional section `key` of `top`, read and checked against the schema.
Result<std::optional<Section>> SubSection(const Reader& r, const Section& top,
                                          std::string_view key) {
  const Entry* e = top.Get(key);
  if (e == nullptr) return std::optional<Section>();
  auto s = r.ReadSection(e->value, &e->key_node, key);
  if (!s) return s.error();
  return std::optional<Section>(std::move(*s));
}

// Reads `key` of `sec` (when given) with `read` into `out`, and records where it sits.
template <class T, class F>
Status Opt(const Reader& r, ServeJobFile& f, const std::optional<Section>& sec,
           std::string_view key, F read, T& out) {
  const Entry* e = sec ? sec->Get(key) : nullptr;
  if (e == nullptr) return {};
  auto v = read(*e);
  if (!v) return v.error();
  out = std::move(*v);
  f.where[e->path] = r.Field(*e);
  return {};
}

Result<ServeJobFile> Parse(const YAML::Node& root, const Reader& r) {
  ServeJobFile f;
  // Structure first (maps, unknown and duplicate keys in every section), then values.
  auto top_r = r.ReadSection(root, nullptr, "");
  if (!top_r) return top_r.error();
  const Section& top = *top_r;
  std::optional<Section> serve, slo, constraints;
  GPUPLAN_ASSIGN_OR_RETURN(serve, SubSection(r, top, "serve"));
  GPUPLAN_ASSIGN_OR_RETURN(slo, SubSection(r, top, "slo"));
  GPUPLAN_ASSIGN_OR_RETURN(constraints, SubSection(r, top, "constraints"));

  // The model may be left out when serve.benchmark names one (its reference model is served).
  const Entry* model = top.Raw("model");
  if (model == nullptr && !(serve && serve->Raw("benchmark") != nullptr)) {
    return r.Fail(root, "model", "missing",
                  "name a preset, HF id or config.json path (or serve.benchmark)");
  }
  if (model != nullptr) {
    if (!model->present() || !model->value.IsScalar() ||
        model->value.Scalar().find_first_not_of(" \t") == std::string::npos) {
      return r.Fail(*model, "must be a non-empty name", "name a preset, HF id or config.json path");
    }
    f.model = model->value.Scalar();
    f.where["model"] = r.Field(*model);
  }

  auto positive = [&](const Entry& e) { return r.Number(e, 0); };
  auto text = [&](const Entry& e) { return r.Text(e); };
  auto names = [&](const Entry& e) { return r.Names(e, false); };
  auto flag = [&](const Entry& e) { return r.Bool(e); };
  const std::optional<Section> top_opt(top);
  for (Status st : {
           Opt(r, f, serve, "qps", positive, f.qps),
           Opt(r, f, serve, "benchmark", text, f.benchmark),
           Opt(
               r, f, serve, "input_len", [&](const Entry& e) { return r.Int(e, 1, kMaxSeqLen); },
               f.input_len),
           Opt(
               r, f, serve, "output_len", [&](const Entry& e) { return r.Int(e, 0, kMaxSeqLen); },
               f.output_len),
           Opt(
               r, f, serve, "denoise_steps",
               [&](const Entry& e) { return r.Int(e, 1, kMaxDenoiseSteps); }, f.denoise_steps),
           Opt(r, f, serve, "target_utilization", positive, f.target_utilization),
           Opt(r, f, serve, "precision", text, f.precision),
           Opt(r, f, serve, "quant", text, f.quant),
           Opt(r, f, serve, "kv_precision", text, f.kv_precision),
           Opt(r, f, serve, "engine", text, f.engine),
           Opt(r, f, slo, "ttft_p99_ms", positive, f.ttft_p99_ms),
           Opt(r, f, slo, "tpot_p99_ms", positive, f.tpot_p99_ms),
           Opt(r, f, slo, "e2e_p99_ms", positive, f.e2e_p99_ms),
           Opt(r, f, constraints, "clouds", names, f.clouds),
           Opt(r, f, constraints, "regions", names, f.regions),
           Opt(r, f, constraints, "gpus", names, f.gpus),
           Opt(r, f, constraints, "cpu", flag, f.cpu),
           Opt(r, f, constraints, "cpu_only", flag, f.cpu_only),
           Opt(r, f, constraints, "reserved", flag, f.reserved),
           Opt(r, f, constraints, "include_suspect", flag, f.include_suspect),
           Opt(r, f, constraints, "marketplace", flag, f.marketplace),
           Opt(r, f, constraints, "currency", text, f.currency),
           Opt(
               r, f, top_opt, "top", [&](const Entry& e) { return r.Int(e, 1, kMaxTop); }, f.top),
       }) {
    if (!st) return st.error();
  }
  if (model == nullptr && internal::Trim(f.benchmark).empty()) {
    return r.Fail(*serve->Raw("benchmark"), "is empty, and there is no model",
                  "name a preset, HF id or config.json path in model (or a benchmark here)");
  }
  return f;
}

}  // namespace

Result<ServeJobFile> ParseServeJobYaml(std::string_view yaml_text, std::string_view label) {
  const Reader r(label, ServeSchema());
  return r.Read(yaml_text, [&](const YAML::Node& root) { return Parse(root, r); });
}

}  // namespace gpuplan
