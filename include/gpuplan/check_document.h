// The `check --json` document (schema_version, file, counts by severity, findings), returned
// unchanged by the HTTP API's /v1/check.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "gpuplan/check.h"

namespace gpuplan {

// The document for `findings` of the setup read from `label` (a file name, or "request").
nlohmann::json CheckDocument(std::string_view label, const std::vector<Finding>& findings);

}  // namespace gpuplan
