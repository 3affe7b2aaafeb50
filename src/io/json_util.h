// JSON helpers around nlohmann::json: parse errors become gpuplan Errors naming the file and
// position, and typed getters name the field path on a type mismatch.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "gpuplan/result.h"

namespace gpuplan::internal {

using Json = nlohmann::json;

// Parses `text`; a syntax error names "label" and the byte offset.
Result<Json> ParseJson(std::string_view text, std::string_view label);

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
