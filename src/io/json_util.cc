#include "io/json_util.h"

#include <cmath>

#include "gpuplan/input.h"

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
  // Scalars show their value (quoted and cut short for text), so the reader sees what to fix.
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return v.dump();
    case Json::value_t::string:
      return "the text " + Excerpt(v.get_ref<const std::string&>());
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

}  // namespace gpuplan::internal
