// `validate --json` (include/gpuplan/validate_document.h).
#include "gpuplan/validate_document.h"

#include <cmath>

#include "gpuplan/plan_document.h"

namespace gpuplan {

using nlohmann::json;

namespace {
json Finite(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}
json SummaryJson(const KindSummary& s) {
  return {{"cases", s.cases},
          {"covered", s.covered},
          {"median_abs_err", s.median_abs_err},
          {"p90_abs_err", s.p90_abs_err},
          {"max_abs_err", s.max_abs_err},
          {"bias", s.bias}};
}
}  // namespace

nlohmann::json ValidationDocument(const ValidationReport& all) {
  json j = {{"schema_version", kPlanSchemaVersion},
            {"summary", json::object()},
            {"cases", json::array()}};
  for (const auto& [k, s] : all.summary) j["summary"][k] = SummaryJson(s);
  for (const auto& c : all.cases) {
    j["cases"].push_back({{"id", c.id},
                          {"kind", c.kind},
                          {"metric", c.metric},
                          {"measured", c.measured},
                          {"predicted", Finite(c.predicted)},
                          {"error", Finite(c.error)},
                          {"status", c.ok ? "ok" : "unsupported"},
                          {"reason", c.ok ? json(nullptr) : json(c.reason)}});
  }
  return j;
}

}  // namespace gpuplan
