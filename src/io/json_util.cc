#include "io/json_util.h"

#include <cmath>

namespace gpuplan::internal {

int JsonNestingDepth(std::string_view text, int cap) {
  int depth = 0, deepest = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > cap) return deepest;
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return deepest;
}

Result<Json> ParseJson(std::string_view text, std::string_view label, std::uint64_t max_bytes) {
  const std::string L(label);
  if (text.size() > max_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, L,
                     "JSON of " + std::to_string(text.size()) + " bytes is over the limit of " +
                         std::to_string(max_bytes) + " bytes",
                     "see docs/reliability.md for the input limits");
  }
  if (JsonNestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return MakeError(ErrorCode::kParse, L,
                     "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                     "check the file's structure");
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return MakeError(ErrorCode::kParse, L, "malformed JSON at byte " + std::to_string(e.byte),
                     "check the file's syntax (and that it is UTF-8)");
  } catch (const Json::out_of_range&) {
    return MakeError(ErrorCode::kParse, L, "a number is out of range (beyond +-1.8e308)",
                     "check the file's numbers");
  } catch (const Json::exception&) {
    return MakeError(ErrorCode::kParse, L, "malformed JSON", "check the file's syntax");
  } catch (const std::bad_alloc&) {
    return MakeError(ErrorCode::kInvalidArgument, L, "JSON too large to hold in memory");
  }
}

std::string JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::string:
      return "a string of " + std::to_string(v.get_ref<const std::string&>().size()) + " bytes";
    case Json::value_t::array:
      return "an array of " + std::to_string(v.size()) + " items";
    case Json::value_t::object:
      return "an object of " + std::to_string(v.size()) + " keys";
    default:
      return "a value";
  }
}

std::string DumpJson(const Json& v, int indent) {
  return v.dump(indent, ' ', false, Json::error_handler_t::replace);
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
    return MakeError(ErrorCode::kParse, Path(path, key),
                     "expected a number, got " + JsonTypeName(*v));
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
  return MakeError(ErrorCode::kParse, Path(path, key),
                   "expected a whole number, got " + JsonTypeName(*v));
}

Result<std::optional<bool>> GetBool(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<bool>();
  if (!v->is_boolean()) {
    return MakeError(ErrorCode::kParse, Path(path, key),
                     "expected true or false, got " + JsonTypeName(*v));
  }
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<std::string>> GetString(const Json& obj, std::string_view key,
                                             std::string_view path) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) {
    return MakeError(ErrorCode::kParse, Path(path, key),
                     "expected a string, got " + JsonTypeName(*v));
  }
  return std::optional<std::string>(v->get<std::string>());
}

}  // namespace gpuplan::internal
