// Checks a plan document (the JSON of `gpuplan --json plan train|infer`) read back by `emit`
// before any value reaches a deployment file: identifiers in the strict character set, free
// text (model names, paths) without control or shell/YAML metacharacters, counts within the
// planner's own bounds (so no product of them can overflow).
#pragma once

#include "gpuplan/result.h"
#include "io/json_util.h"

namespace gpuplan::internal {

Status CheckPlanDocument(const Json& doc);

// Printable text without control characters, quotes, backslashes, `$` or backticks: model
// display names and paths.
bool IsSafeText(std::string_view s, std::size_t max_bytes);

}  // namespace gpuplan::internal
