// The `validate --json` document, returned unchanged by the HTTP API's /v1/validate.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuplan/validate.h"

namespace gpuplan {

// The summary per kind (and "all") and every case with its measured and predicted value, error,
// or why it is unsupported.
nlohmann::json ValidationDocument(const ValidationReport& report);

}  // namespace gpuplan
