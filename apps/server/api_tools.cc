// The routes around the planners: check, emit, validate, simulate.
#include <algorithm>
#include <climits>
#include <fmt/format.h>

#include "api_internal.h"
#include "gpuplan/check.h"
#include "gpuplan/check_document.h"
#include "gpuplan/documents.h"
#include "gpuplan/emit.h"
#include "gpuplan/input.h"
#include "gpuplan/job_checks.h"
#include "gpuplan/plan_document.h"
#include "gpuplan/simulate.h"
#include "gpuplan/validate.h"
#include "gpuplan/validate_document.h"
#include "io/json_fields.h"

namespace gpuplan::server::internal {

namespace {

// Optional number/integer/string members into `dst` (Into in api_internal.h).
Status GetNum(const json& j, const char* key, double& dst, std::string_view path = {}) {
  return Into(gpuplan::internal::GetNumber(j, key, path), dst);
}
Status GetInt(const json& j, const char* key, int& dst, std::string_view path = {}) {
  return Into(gpuplan::internal::GetIntIn(j, key, path, INT_MIN, INT_MAX), dst);
}
Status GetStr(const json& j, const char* key, std::string& dst, std::string_view path = {}) {
  return Into(gpuplan::internal::GetString(j, key, path), dst);
}

// Every key of `j` must be in `allowed`.
Status OnlyKeys(const json& j, std::initializer_list<const char*> allowed,
                const std::string& prefix) {
  for (const auto& item : j.items()) {
    const std::string& k = item.key();  // a named copy: clang 14 cannot capture bindings
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; })) {
      return MakeError(ErrorCode::kInvalidArgument, prefix + FieldKey(k), "unknown key",
                       "see docs/api.md for this route's body");
    }
  }
  return {};
}

}  // namespace

ApiResponse Check(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  // The setup's models must be presets (the setup reader would otherwise resolve paths).
  for (const char* sec : {"train", "serve"}) {
    auto it = j->find(sec);
    if (it == j->end() || !it->is_object() || !it->contains("model")) continue;
    if (auto m = RequestModel(*it, "model", std::string(sec) + ".model"); !m) return Bad(m.error());
  }
  auto setup = ParseSetupYaml(body, "request");
  if (!setup) return Bad(setup.error());
  if (Status st = ValidateSetup(*setup, ctx.catalog); !st) return Bad(st.error());
  return Ok(CheckDocument("request", CheckSetup(*setup, ctx.catalog, DefaultCalibration())));
}

ApiResponse EmitFiles(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  if (auto st = OnlyKeys(*j,
                         {"target", "plan", "rank", "autoscaler", "image", "min_replicas",
                          "off_peak_qps", "k8s_training", "peak_qps"},
                         "");
      !st) {
    return Bad(st.error());
  }
  std::string target;
  if (auto st = GetStr(*j, "target", target); !st) return Bad(st.error());
  if (target.empty()) {
    return Bad(MakeError(ErrorCode::kInvalidArgument, "target", "is missing",
                         "one of k8s, skypilot, slurm, vllm, hf, deepspeed, monitoring"));
  }
  auto plan = j->find("plan");
  if (plan == j->end() || !plan->is_object()) {
    return Bad(MakeError(ErrorCode::kInvalidArgument, "plan", "must be a plan document (object)",
                         "the JSON of POST /v1/plan/train or /v1/plan/infer"));
  }
  // The document's model reference must be a preset: emit would otherwise read a path.
  if (auto job = plan->find("job"); job != plan->end() && job->is_object()) {
    json ref = json::object();
    if (job->contains("model_ref"))
      ref["model"] = (*job)["model_ref"];
    else if (job->contains("model"))
      ref["model"] = (*job)["model"];
    if (ref.contains("model")) {
      if (auto m = RequestModel(ref, "model", "plan.job.model_ref"); !m) return Bad(m.error());
    }
  }
  EmitOptions opt;
  double off_peak = -1, peak = -1;
  if (auto st = GetInt(*j, "rank", opt.rank); !st) return Bad(st.error());
  if (auto st = GetStr(*j, "autoscaler", opt.autoscaler); !st) return Bad(st.error());
  if (auto st = GetStr(*j, "image", opt.image); !st) return Bad(st.error());
  if (auto st = GetInt(*j, "min_replicas", opt.min_replicas); !st) return Bad(st.error());
  if (auto st = GetStr(*j, "k8s_training", opt.k8s_training); !st) return Bad(st.error());
  if (auto st = GetNum(*j, "off_peak_qps", off_peak); !st) return Bad(st.error());
  if (auto st = GetNum(*j, "peak_qps", peak); !st) return Bad(st.error());
  if (j->contains("off_peak_qps")) opt.off_peak_qps = off_peak;
  if (j->contains("peak_qps")) opt.peak_qps = peak;
  auto files = Emit(plan->dump(), target, opt, ctx.catalog);
  if (!files) {
    Error e = files.error();
    if (e.field.rfind("--", 0) == 0) {
      e.field = e.field.substr(2);
      std::replace(e.field.begin(), e.field.end(), '-', '_');
    }
    return Bad(e);
  }
  json out = {{"schema_version", kPlanSchemaVersion}, {"target", target}, {"files", json::array()}};
  for (const auto& f : *files) out["files"].push_back({{"name", f.name}, {"contents", f.contents}});
  return Ok(out);
}

ApiResponse Validate(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  if (auto st = OnlyKeys(*j, {"cases", "kind"}, ""); !st) return Bad(st.error());
  std::string kind;
  if (auto st = GetStr(*j, "kind", kind); !st) return Bad(st.error());
  auto cases = j->find("cases");
  if (cases == j->end() || !(cases->is_array() || cases->is_string())) {
    return Bad(MakeError(ErrorCode::kInvalidArgument, "cases",
                         "must be a list of case objects or JSON-lines text",
                         "the schema of ../shared/validation/SCHEMA.md"));
  }
  std::string text;
  if (cases->is_string()) {
    text = cases->get<std::string>();
  } else {
    for (const auto& c : *cases) text += c.dump() + "\n";
  }
  auto r = RunValidation(text, "cases", ctx.catalog, kind);
  if (!r) return Bad(r.error());
  // RunValidation summarises per kind and "all", as `gpuplan validate --json` does.
  return Ok(ValidationDocument(*r));
}

ApiResponse SimulateDay(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  // The load: the seeded synthetic diurnal trace (trace files are not read by the server).
  SyntheticTraceOptions syn;
  json s = j->contains("synthetic") ? (*j)["synthetic"] : json::object();
  j->erase("synthetic");
  if (!s.is_object())
    return Bad(MakeError(ErrorCode::kInvalidArgument, "synthetic",
                         "must be an object, got " + gpuplan::internal::JsonTypeName(s),
                         "give the synthetic day's settings, e.g. \"synthetic\": {\"days\": 1, "
                         "\"peak_rps\": 6}"));
  if (auto st = OnlyKeys(s,
                         {"days", "interval_s", "peak_rps", "trough", "peak_hour", "weekend_factor",
                          "noise", "bursts", "burst_factor", "burst_minutes", "seed"},
                         "synthetic.");
      !st) {
    return Bad(st.error());
  }
  int seed = 1;
  for (auto [key, dst] : {std::pair{"interval_s", &syn.interval_s},
                          {"peak_rps", &syn.peak_rps},
                          {"trough", &syn.trough_fraction},
                          {"peak_hour", &syn.peak_hour},
                          {"weekend_factor", &syn.weekend_factor},
                          {"noise", &syn.noise},
                          {"bursts", &syn.bursts_per_day},
                          {"burst_factor", &syn.burst_factor},
                          {"burst_minutes", &syn.burst_minutes}}) {
    if (auto st = GetNum(s, key, *dst, "synthetic"); !st) return Bad(st.error());
  }
  if (auto st = GetInt(s, "days", syn.days, "synthetic"); !st) return Bad(st.error());
  if (auto st = GetInt(s, "seed", seed, "synthetic"); !st) return Bad(st.error());
  if (seed < 0)
    return Bad(MakeError(ErrorCode::kInvalidArgument, "synthetic.seed",
                         fmt::format("must be >= 0, got {}", seed),
                         "give a seed of 0 or more (the same seed gives the same day)"));
  syn.seed = static_cast<std::uint64_t>(seed);
  auto trace = SyntheticTrace(syn);
  if (!trace) {
    Error e = trace.error();
    if (e.field.rfind("--", 0) == 0) {  // the flag -> the body key
      e.field = "synthetic." + e.field.substr(2);
      std::replace(e.field.begin(), e.field.end(), '-', '_');
    }
    return Bad(e);
  }
  std::vector<std::string> names = {"hpa", "kpa", "saturation", "schedule", "static"};
  if (auto it = j->find("policies"); it != j->end()) {
    const std::string policies_hint =
        "give a list of policy names, e.g. \"policies\": [\"hpa\", \"static\"] (hpa, kpa, "
        "saturation, schedule, static)";
    if (!it->is_array())
      return Bad(
          MakeError(ErrorCode::kInvalidArgument, "policies",
                    "must be a list of policy names, got " + gpuplan::internal::JsonTypeName(*it),
                    policies_hint));
    names.clear();
    for (const auto& p : *it) {
      if (!p.is_string())
        return Bad(MakeError(
            ErrorCode::kInvalidArgument, "policies",
            "must be a list of policy names, got an item " + gpuplan::internal::JsonTypeName(p),
            policies_hint));
      names.push_back(p.get<std::string>());
    }
    j->erase(it);
  }
  SimulationOptions o;
  o.policies.clear();
  for (const auto& p : names) {
    auto k = ParseScalingPolicy(p);
    if (!k) {
      return Bad(MakeError(ErrorCode::kInvalidArgument, "policies", "unknown policy " + Excerpt(p),
                           "use hpa, kpa, saturation, schedule or static"));
    }
    if (std::find(o.policies.begin(), o.policies.end(), *k) == o.policies.end())
      o.policies.push_back(*k);
  }
  // The job is sized at the trace's peak, as `gpuplan simulate` does.
  if (!(*j)["serve"].is_object()) (*j)["serve"] = json::object();
  (*j)["serve"]["qps"] = trace->PeakRps() > 0 ? trace->PeakRps() : 1;
  std::optional<ModelSpec> pasted;
  if (j->contains("model_config")) {
    auto m = RequestModel(*j, "model", "model");
    if (!m) return Bad(m.error());
    pasted = std::move(*m);
    if (!j->contains("model")) (*j)["model"] = pasted->name;
  } else if (auto m = RequestModel(*j, "model", "model"); !m) {
    return Bad(m.error());
  }
  auto f = ParseServeJobYaml(j->dump(1), "request");
  if (!f) return Bad(f.error());
  ServeRequest r;
  MergeServeJobFile(r, *f);
  auto job = BuildServeJob(r, ctx.currency, pasted ? &*pasted : nullptr);
  if (!job) return Bad(ServeFieldOfFlag(job.error()));
  auto res = Simulate(*job, ctx.catalog, DefaultCalibration(), *trace, o, ctx.cny_per_usd);
  if (!res) {
    Error e = res.error();
    if (e.field == "--peak-rps") e.field = "synthetic.peak_rps";  // the run's size (its load)
    if (e.field == "--trace") e.field = "synthetic";
    return Bad(ServeFieldOfFlag(e));
  }
  return Ok(SimulationDocument(*job, *trace, *res));
}

}  // namespace gpuplan::server::internal
