#include "io/json_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace gpuplan::internal {

std::string JsonFieldPath(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

const Json* FindMember(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

namespace {

// The JSON spelling a value of `wanted` takes, for the fix.
std::string Example(std::string_view key, std::string_view wanted) {
  const std::string k(key);
  if (wanted == "true or false") return "\"" + k + "\": true";
  if (wanted == "a whole number") return "\"" + k + "\": 4";
  if (wanted == "a number") return "\"" + k + "\": 2.5";
  if (wanted == "a string") return "\"" + k + "\": \"...\"";
  return "";
}

Error WrongType(std::string_view path, std::string_view key, std::string_view wanted,
                const Json& got) {
  std::string hint = "give " + std::string(wanted);
  const std::string example = Example(key, wanted);
  if (!example.empty()) hint += " (JSON, unquoted unless a string), e.g. " + example;
  return MakeError(ErrorCode::kParse, JsonFieldPath(path, key),
                   "expected " + std::string(wanted) + ", got " + JsonTypeName(got), hint);
}

}  // namespace

Result<std::optional<double>> GetNumber(const Json& obj, std::string_view key,
                                        std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (!v) return std::optional<double>();
  if (!v->is_number()) return WrongType(path, key, "a number", *v);
  double d = v->get<double>();
  if (!std::isfinite(d)) {
    return MakeError(ErrorCode::kParse, JsonFieldPath(path, key), "expected a finite number",
                     "give a finite number, e.g. \"" + std::string(key) + "\": 2.5");
  }
  return std::optional<double>(d);
}

Result<std::optional<double>> GetNumberIn(const Json& obj, std::string_view key,
                                          std::string_view path, double lo, double hi) {
  auto v = GetNumber(obj, key, path);
  if (!v || !*v) return v;
  if (!(**v >= lo && **v <= hi)) {
    return MakeError(ErrorCode::kParse, JsonFieldPath(path, key),
                     fmt::format("must be in [{:g}, {:g}], got {:g}", lo, hi, **v));
  }
  return v;
}

Result<std::optional<std::int64_t>> GetInt(const Json& obj, std::string_view key,
                                           std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (!v) return std::optional<std::int64_t>();
  if (v->is_number_unsigned()) {
    if (v->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
      return std::optional<std::int64_t>(static_cast<std::int64_t>(v->get<std::uint64_t>()));
    }
  } else if (v->is_number_integer()) {
    return std::optional<std::int64_t>(v->get<std::int64_t>());
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
      return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
    }
  }
  return WrongType(path, key, "a whole number", *v);
}

Result<std::optional<int>> GetIntIn(const Json& obj, std::string_view key, std::string_view path,
                                    int lo, int hi) {
  auto v = GetInt(obj, key, path);
  if (!v) return v.error();
  if (!*v) return std::optional<int>();
  if (**v < lo || **v > hi) {
    return MakeError(ErrorCode::kParse, JsonFieldPath(path, key),
                     fmt::format("must be a whole number in [{}, {}], got {}", lo, hi, **v));
  }
  return std::optional<int>(static_cast<int>(**v));
}

Result<std::optional<bool>> GetBool(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (!v) return std::optional<bool>();
  if (!v->is_boolean()) return WrongType(path, key, "true or false", *v);
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<bool>> GetFlag(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (v != nullptr && v->is_number()) return std::optional<bool>(v->get<double>() != 0);
  return GetBool(obj, key, path);
}

Result<std::optional<std::string>> GetString(const Json& obj, std::string_view key,
                                             std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(path, key, "a string", *v);
  return std::optional<std::string>(v->get<std::string>());
}

Result<const Json*> GetObject(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (v != nullptr && !v->is_object()) return WrongType(path, key, "an object", *v);
  return v;
}

Result<const Json*> GetArray(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = FindMember(obj, key);
  if (v != nullptr && !v->is_array()) return WrongType(path, key, "an array", *v);
  return v;
}

}  // namespace gpuplan::internal
