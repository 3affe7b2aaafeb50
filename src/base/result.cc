#include "gpuplan/result.h"

#include <string>
#include <string_view>

namespace gpuplan {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kParse:
      return "parse_error";
    case ErrorCode::kIo:
      return "io_error";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

namespace {

std::string RangeFix(std::string_view message) {
  constexpr std::string_view kMust = "must be ";
  const size_t got = message.find(", got ");
  if (message.rfind(kMust, 0) != 0 || got == std::string_view::npos) return {};
  const std::string_view rule = message.substr(kMust.size(), got - kMust.size());
  for (std::string_view value_rule : {"in ", ">", "<", "at most ", "at least "}) {
    if (rule.rfind(value_rule, 0) == 0) return "use a value " + std::string(rule);
  }
  if (rule.rfind("a whole number in ", 0) == 0) return "use " + std::string(rule);
  return {};
}

}  // namespace

Error MakeError(ErrorCode code, std::string field, std::string message, std::string hint) {
  if (hint.empty()) hint = RangeFix(message);
  return Error{code, std::move(field), std::move(message), std::move(hint)};
}

std::string Error::ToString() const {
  std::string s = field.empty() ? message : field + ": " + message;
  if (!hint.empty()) s += " (" + hint + ")";
  return s;
}

}  // namespace gpuplan
