// Validation harness. Each case line is mapped onto the planner's own types (ModelSpec,
// Parallelism, TrainMemoryOptions, InferMemoryOptions) and evaluated by the same estimator
// functions every command uses. Framework and engine names select the tool's documented
// semantics (what a framework keeps in memory, how a tool reports memory), never an answer.
#include "gpuplan/validate.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/perf.h"
#include "io/csv.h"
#include "io/json_util.h"
#include "validate/adapters.h"

namespace gpuplan {

using internal::Json;

namespace validation {

// Explanation sink for the one case asked to explain (set by RunValidation).
thread_local Trace* g_trace = nullptr;

Predicted Predict(const Json& c, const Catalog& cat, const Calibration& cal) {
  const std::string kind = Str(c, "kind");
  const std::string metric = Str(c, "metric");
  if (kind != "memory") {
    if (kind == "train_throughput" || kind == "train_time") {
      const Json& hw0 =
          c.contains("hardware") && c["hardware"].is_object() ? c["hardware"] : Json();
      auto model0 = CaseModel(c["model"]);
      if (auto* u = std::get_if<Unsupported>(&model0)) return *u;
      const Json* t = Child(c["workload"], "train");
      if (!t) return Unsupported{"training kind without workload.train"};
      return PredictTrainingPerf(std::get<ModelSpec>(model0), *t, hw0, metric, cat, cal,
                                 CaseBenchmark(c, *t), Str(c, "source"));
    }
    if (kind == "infer_throughput" || kind == "infer_latency") {
      const Json& hw0 =
          c.contains("hardware") && c["hardware"].is_object() ? c["hardware"] : Json();
      const Json* i = Child(c["workload"], "infer");
      if (!i) return Unsupported{"serving kind without workload.infer"};
      const InferBenchmark* bench = CaseInferBenchmark(c, *i);
      auto model0 = CaseModel(c["model"]);
      if (std::holds_alternative<Unsupported>(model0) && bench && !bench->model.empty() &&
          Str(c["model"], "preset").empty() && Str(c["model"], "arch").empty() &&
          !Num(c["model"], "params")) {
        // A case that names a public benchmark and no model ran the benchmark's reference model,
        // as `plan infer --benchmark` serves it when no --model is given.
        if (const ModelSpec* ref = FindPreset(bench->model)) model0 = *ref;
      }
      if (auto* u = std::get_if<Unsupported>(&model0)) return *u;
      return PredictInferencePerf(std::get<ModelSpec>(model0), *i, hw0, metric, cat, cal, bench,
                                  Str(c, "source"));
    }
    return Unsupported{"unknown kind \"" + kind + "\""};
  }
  const Json& hw = c.contains("hardware") && c["hardware"].is_object() ? c["hardware"] : Json();
  std::string gpu = Str(hw, "gpu");
  if (gpu.rfind("cpu:", 0) == 0) return Unsupported{"CPU memory is not predicted"};
  const Json& wl = c["workload"];
  if (metric == "kv_budget_tokens" || metric == "kv_budget_bytes") {
    // Engine rule with the memory figures given by the case; no model needed.
    if (const Json* i = Child(wl, "infer"))
      return PredictInferenceMemory(ModelSpec{}, *i, hw, metric, cat);
  }
  auto model = CaseModel(c["model"]);
  if (auto* u = std::get_if<Unsupported>(&model)) return *u;
  const ModelSpec& m = std::get<ModelSpec>(model);
  if (const Json* t = Child(wl, "train")) {
    return PredictTrainingMemory(m, *t, hw, metric, cat, Str(c, "source"));
  }
  if (const Json* i = Child(wl, "infer")) return PredictInferenceMemory(m, *i, hw, metric, cat);
  return Unsupported{"workload has neither train nor infer"};
}

Result<std::vector<LoadedCase>> ParseCases(std::string_view text, std::string_view label,
                                           std::string_view kind_filter) {
  std::vector<LoadedCase> out;
  size_t pos = 0;
  int line = 0;
  int cases = 0;  // before the kind filter
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    std::string l = internal::Trim(raw);
    if (l.empty()) {
      if (eol >= text.size()) break;
      continue;
    }
    std::string where = std::string(label) + ":" + std::to_string(line);
    auto j = internal::ParseJson(l, where, kMaxJsonLineBytes);
    if (!j) return j.error();
    if (auto st = CheckCase(*j, where); !st) return st.error();
    LoadedCase lc;
    lc.json = std::move(*j);
    CaseResult& r = lc.result;
    r.id = lc.json["id"].get<std::string>();
    r.kind = lc.json["kind"].get<std::string>();
    r.metric = lc.json["metric"].get<std::string>();
    r.measured = lc.json["measured"].get<double>();
    r.file = std::string(label);
    r.source = SourceKey(Str(lc.json, "source"));
    ++cases;
    if (kind_filter.empty() || r.kind == kind_filter) out.push_back(std::move(lc));
    if (eol >= text.size()) break;
  }
  // A file without a case would print a 0.0% error over nothing.
  if (cases == 0) {
    return MakeError(ErrorCode::kParse, std::string(label), "holds no case",
                     "give a file with one JSON case per line (../shared/validation/SCHEMA.md)");
  }
  return out;
}

CaseResult Score(const LoadedCase& lc, const Catalog& catalog, const Calibration& cal,
                 Trace* trace) {
  CaseResult r = lc.result;
  g_trace = trace;
  auto p = Predict(lc.json, catalog, cal);
  g_trace = nullptr;
  if (trace) {
    for (const auto& t : trace->terms)
      r.explain.emplace_back(t.name + " [" + t.formula + "]", t.value);
  }
  if (auto* u = std::get_if<Unsupported>(&p)) {
    r.ok = false;
    r.reason = u->reason;
    return r;
  }
  const double v = std::get<double>(p) / Unit(r.metric);
  r.ok = std::isfinite(v);
  if (r.ok) {
    r.predicted = v;
    r.error = v / r.measured - 1.0;
  } else {
    r.reason = "prediction is not finite";
  }
  return r;
}

}  // namespace validation

void SummarizeReport(ValidationReport& report) {
  std::map<std::string, std::vector<const CaseResult*>> by_kind;
  std::vector<const CaseResult*> all;
  for (const auto& r : report.cases) {
    by_kind[r.kind].push_back(&r);
    all.push_back(&r);
  }
  report.summary.clear();
  for (const auto& [k, v] : by_kind) report.summary[k] = Summarize(v);
  report.summary["all"] = Summarize(all);
}

namespace {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Linear interpolation between closest ranks (numpy's default).
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(v.size() - 1, lo + 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

}  // namespace

KindSummary Summarize(const std::vector<const CaseResult*>& cases) {
  KindSummary s;
  std::vector<double> abs_err;
  double sum = 0;
  for (const CaseResult* c : cases) {
    ++s.cases;
    if (!c->ok || !c->error) continue;
    ++s.covered;
    abs_err.push_back(std::fabs(*c->error));
    sum += *c->error;
  }
  if (!abs_err.empty()) {
    s.median_abs_err = Quantile(abs_err, 0.5);
    s.p90_abs_err = Quantile(abs_err, 0.9);
    s.max_abs_err = *std::max_element(abs_err.begin(), abs_err.end());
    s.bias = sum / static_cast<double>(abs_err.size());
  }
  return s;
}

Result<ValidationReport> RunValidation(std::string_view text, std::string_view label,
                                       const Catalog& catalog, std::string_view kind_filter,
                                       std::string_view explain_id) {
  auto cases = validation::ParseCases(text, label, kind_filter);
  if (!cases) return cases.error();
  ValidationReport report;
  const Calibration& cal = DefaultCalibration();
  for (const auto& lc : *cases) {
    Trace trace;
    const bool explain = !explain_id.empty() && explain_id == lc.result.id;
    report.cases.push_back(validation::Score(lc, catalog, cal, explain ? &trace : nullptr));
  }
  SummarizeReport(report);
  return report;
}

}  // namespace gpuplan
