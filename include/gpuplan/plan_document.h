// The plan document: the typed result of `plan train` and `plan infer` as JSON, one schema,
// versioned by kPlanSchemaVersion. `--json` writes it, `emit --plan` reads it back, and any other
// front end (an HTTP API) returns it unchanged, so a plan means the same thing everywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gpuplan/catalog.h"
#include "gpuplan/job.h"
#include "gpuplan/perf.h"
#include "gpuplan/planner.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {

// The plan document's schema version (field names carry their units).
inline constexpr const char* kPlanSchemaVersion = "1";

// A price rounded to 1/10000 of the currency unit, or null when the catalog has none.
nlohmann::json PriceJson(std::optional<double> v);

// One finding of the guides' pitfall rules: {severity, rule, message, fix}, as `plan --json`
// (per training plan) and `check --json` write it.
nlohmann::json FindingJson(const Finding& f);

// The model reference a plan document carries so that emit (or any reader) resolves exactly
// the model that was planned: a preset name as given, or an absolute path for a config.json,
// a model directory or a .safetensors file. Empty `arg` falls back to the model's name.
std::string ModelReference(const std::string& arg, const ModelSpec& model);

// One ranked training plan (instance, layout, memory terms, step split, cost, host, warnings).
nlohmann::json TrainPlanJson(const TrainPlan& p, Currency cur);

// The whole `plan train --json` document. With `explain`, the chosen plan's formula trace is
// included (re-evaluated once with a trace sink).
nlohmann::json TrainPlanDocument(const TrainJobSpec& job, const TrainPlanResult& res,
                                 const Catalog& catalog, const Calibration& cal, bool explain);

// One serving deployment (instance, replicas, batch, latencies, cost).
nlohmann::json ServePlanJson(const ServePlan& p, Currency cur);

// The whole `plan infer --json` document. `model_arg` is the model as the user gave it.
nlohmann::json ServePlanDocument(const ServeJobSpec& job, const std::string& model_arg,
                                 const ServePlanResult& res);

}  // namespace gpuplan
