// The one set of JSON field getters (issue 10): every reader of JSON members (plan documents,
// validation cases, config.json, safetensors headers, API bodies) goes through these, so a
// value of the wrong type is always an Error naming its field path, never silently "absent".
//
// Each getter reads member `key` of `obj` and names errors "path.key" ("key" when `path` is
// empty). A missing key or null is absent: the optional getters return std::nullopt and the
// caller picks the default; Require turns absence into an Error. Errors are kParse: the value
// is in a file or body the caller handed over.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gpuplan/result.h"
#include "io/json_util.h"

namespace gpuplan::internal {

// "path.key", or "key" when `path` is empty.
std::string JsonFieldPath(std::string_view path, std::string_view key);

// The member, or nullptr when `obj` is not an object, the key is missing or the value is null.
const Json* FindMember(const Json& obj, std::string_view key);

// A finite number.
Result<std::optional<double>> GetNumber(const Json& obj, std::string_view key,
                                        std::string_view path);
// A finite number in [lo, hi].
Result<std::optional<double>> GetNumberIn(const Json& obj, std::string_view key,
                                          std::string_view path, double lo, double hi);
// A whole number (1.0 counts; 1.5 does not) within int64.
Result<std::optional<std::int64_t>> GetInt(const Json& obj, std::string_view key,
                                           std::string_view path);
// A whole number in [lo, hi], as int.
Result<std::optional<int>> GetIntIn(const Json& obj, std::string_view key, std::string_view path,
                                    int lo, int hi);
// true or false.
Result<std::optional<bool>> GetBool(const Json& obj, std::string_view key, std::string_view path);
// true/false or a number (0 is false): the spelling of hand-written data such as zero_init: 1.
Result<std::optional<bool>> GetFlag(const Json& obj, std::string_view key, std::string_view path);
// A string (possibly empty).
Result<std::optional<std::string>> GetString(const Json& obj, std::string_view key,
                                             std::string_view path);
// An object or an array; nullptr when absent.
Result<const Json*> GetObject(const Json& obj, std::string_view key, std::string_view path);
Result<const Json*> GetArray(const Json& obj, std::string_view key, std::string_view path);

// The value of an optional getter, or Error "missing field" at "path.key" when absent.
template <class T>
Result<T> Require(Result<std::optional<T>> v, std::string_view key, std::string_view path) {
  if (!v) return v.error();
  if (!v->has_value()) {
    return MakeError(ErrorCode::kParse, JsonFieldPath(path, key), "missing field");
  }
  return std::move(**v);
}
inline Result<const Json*> Require(Result<const Json*> v, std::string_view key,
                                   std::string_view path) {
  if (!v) return v.error();
  if (*v == nullptr) return MakeError(ErrorCode::kParse, JsonFieldPath(path, key), "missing field");
  return *v;
}

}  // namespace gpuplan::internal
