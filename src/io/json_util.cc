#include "io/json_util.h"

#include <cmath>

namespace gpuplan::internal {

Result<Json> ParseJson(std::string_view text, std::string_view label) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return MakeError(ErrorCode::kParse, std::string(label),
                     "malformed JSON at byte " + std::to_string(e.byte), "check the file's syntax");
  }
}

namespace {
std::string Path(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}
const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}
}  // namespace

Result<std::optional<double>> GetNumber(const Json& obj, std::string_view key,
                                        std::string_view path) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<double>();
  if (!v->is_number()) {
    return MakeError(ErrorCode::kParse, Path(path, key), "expected a number, got " + v->dump());
  }
  double d = v->get<double>();
  if (!std::isfinite(d)) {
    return MakeError(ErrorCode::kParse, Path(path, key), "expected a finite number");
  }
  return std::optional<double>(d);
}

Result<std::optional<std::int64_t>> GetInt(const Json& obj, std::string_view key,
                                           std::string_view path) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<std::int64_t>();
  if (v->is_number_integer()) return std::optional<std::int64_t>(v->get<std::int64_t>());
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
      return std::optional<std::int64_t>(static_cast<std::int64_t>(d));
    }
  }
  return MakeError(ErrorCode::kParse, Path(path, key),
                   "expected a whole number, got " + v->dump());
}

Result<std::optional<bool>> GetBool(const Json& obj, std::string_view key,
                                    std::string_view path) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<bool>();
  if (!v->is_boolean()) {
    return MakeError(ErrorCode::kParse, Path(path, key), "expected true or false, got " + v->dump());
  }
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<std::string>> GetString(const Json& obj, std::string_view key,
                                             std::string_view path) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) {
    return MakeError(ErrorCode::kParse, Path(path, key), "expected a string, got " + v->dump());
  }
  return std::optional<std::string>(v->get<std::string>());
}

}  // namespace gpuplan::internal
