// JSON helpers around nlohmann::json: parse errors become gpuplan Errors naming the file and
// position (the typed field getters are in io/json_fields.h). Every reader goes through
// ParseJson, which caps size and nesting depth and turns every library exception into an Error;
// messages name a value's type, never dump it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "gpuplan/input.h"
#include "gpuplan/result.h"

namespace gpuplan::internal {

using Json = nlohmann::json;

// Deepest nesting of [ and { in `text` (outside strings); stops counting past `cap`.
int JsonNestingDepth(std::string_view text, int cap);

// Parses `text`; a syntax error names "label" and the byte offset. Rejects text over
// `max_bytes`, nesting deeper than kMaxJsonDepth, numbers out of double range and invalid UTF-8.
Result<Json> ParseJson(std::string_view text, std::string_view label,
                       std::uint64_t max_bytes = kMaxJsonFileBytes);

// "a number", "an array of 3 items", "a string of 12 bytes": what a value is, for messages.
std::string JsonTypeName(const Json& v);

// dump() that never throws on invalid UTF-8 (replaced with U+FFFD).
std::string DumpJson(const Json& v, int indent = -1);

}  // namespace gpuplan::internal
