// JSON documents of the analyses that are not plans: `memory`, `tco` and `simulate --json`. Like
// the plan document (plan_document.h) they carry schema_version and catalog_as_of, field names
// carry their units, and every front end (CLI, HTTP API) returns them unchanged.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuplan/catalog.h"
#include "gpuplan/memory_fit.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/simulate.h"
#include "gpuplan/tco.h"

namespace gpuplan {

// A memory breakdown as {weights_bytes, ..., total_bytes, notes}.
nlohmann::json MemoryBreakdownJson(const MemoryBreakdown& b);

// The whole `memory --json` document: {schema_version, catalog_as_of, currency, cny_per_usd,
// train?, infer?}; each section holds the model, the options, the reference breakdown and the
// fits with their cheapest instances per cloud.
nlohmann::json MemoryDocument(const MemoryAnalysis& a);

// The whole `tco --json` document: the cheapest GPU and CPU deployments, the break-even load,
// the horizon totals when both exist, and with a profile the day/night mix.
nlohmann::json TcoDocument(const ServeJobSpec& job, const Catalog& catalog, const TcoRequest& req,
                           const TcoResult& r);

// The whole `simulate --json` document: the trace, the planned deployment, cold start, and per
// policy its hourly timeline, costs, SLO misses and the autoscaling settings as simulated.
nlohmann::json SimulationDocument(const ServeJobSpec& job, const LoadTrace& trace,
                                  const SimulationResult& res);

}  // namespace gpuplan
