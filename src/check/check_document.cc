// `check --json` (include/gpuplan/check_document.h).
#include "gpuplan/check_document.h"

#include "gpuplan/plan_document.h"

namespace gpuplan {

using nlohmann::json;

nlohmann::json CheckDocument(std::string_view label, const std::vector<Finding>& findings) {
  int errors = 0, warnings = 0, infos = 0;
  for (const auto& f : findings) {
    if (f.severity == Severity::kError) ++errors;
    if (f.severity == Severity::kWarning) ++warnings;
    if (f.severity == Severity::kInfo) ++infos;
  }
  json j = {{"schema_version", kPlanSchemaVersion},
            {"file", std::string(label)},
            {"errors", errors},
            {"warnings", warnings},
            {"infos", infos},
            {"findings", json::array()}};
  for (const auto& f : findings) {
    j["findings"].push_back(FindingJson(f));
  }
  return j;
}

}  // namespace gpuplan
