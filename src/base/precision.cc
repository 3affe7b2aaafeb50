#include "gpuplan/precision.h"

#include <string>

#include "base/strings.h"

namespace gpuplan {

using internal::ToLower;

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kInt8:
      return "int8";
    case Precision::kInt4:
      return "int4";
  }
  return "?";
}

std::optional<Precision> ParsePrecision(std::string_view s) {
  std::string t = ToLower(internal::Trim(s));
  if (t == "fp32" || t == "float32" || t == "float") return Precision::kFp32;
  if (t == "tf32") return Precision::kTf32;
  if (t == "bf16" || t == "bfloat16") return Precision::kBf16;
  if (t == "fp16" || t == "float16" || t == "half") return Precision::kFp16;
  if (t == "fp8" || t == "float8" || t == "fp8_e4m3" || t == "e4m3") return Precision::kFp8;
  if (t == "int8" || t == "w8a8" || t == "w8a16" || t == "8bit") return Precision::kInt8;
  if (t == "int4" || t == "w4a16" || t == "4bit" || t == "nf4") return Precision::kInt4;
  return std::nullopt;
}

double BytesPerElement(Precision p) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32:
      return 4.0;
    case Precision::kBf16:
    case Precision::kFp16:
      return 2.0;
    case Precision::kFp8:
    case Precision::kInt8:
      return 1.0;
    case Precision::kInt4:
      return 0.5;
  }
  return 2.0;
}

}  // namespace gpuplan
