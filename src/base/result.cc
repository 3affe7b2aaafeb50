#include "gpuplan/result.h"

#include <string>

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

std::string Error::ToString() const {
  std::string s = field.empty() ? message : field + ": " + message;
  if (!hint.empty()) s += " (" + hint + ")";
  return s;
}

}  // namespace gpuplan
