// JSON helpers around nlohmann::json: parse errors become gpuplan Errors naming the file and
// position, and typed getters name the field path on a type mismatch. Every reader goes through
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

// Typed optional getters: a missing key or null -> nullopt; a wrong type -> Error naming
// "path.key".
Result<std::optional<double>> GetNumber(const Json& obj, std::string_view key,
                                        std::string_view path);
Result<std::optional<std::int64_t>> GetInt(const Json& obj, std::string_view key,
                                           std::string_view path);
Result<std::optional<bool>> GetBool(const Json& obj, std::string_view key, std::string_view path);
Result<std::optional<std::string>> GetString(const Json& obj, std::string_view key,
                                             std::string_view path);

}  // namespace gpuplan::internal
