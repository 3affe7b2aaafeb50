#include "gpuplan/precision.h"

#include <string>

#include "base/enum_names.h"

namespace gpuplan {

namespace {

constexpr internal::EnumName<Precision> kPrecisionNames[] = {
    {Precision::kFp32, "fp32", "float32 float"},      {Precision::kTf32, "tf32"},
    {Precision::kBf16, "bf16", "bfloat16"},           {Precision::kFp16, "fp16", "float16 half"},
    {Precision::kFp8, "fp8", "float8 fp8_e4m3 e4m3"}, {Precision::kInt8, "int8", "w8a8 w8a16 8bit"},
    {Precision::kInt4, "int4", "w4a16 4bit nf4"},
};

}  // namespace

const char* PrecisionName(Precision p) { return internal::NameIn(kPrecisionNames, p); }

std::optional<Precision> ParsePrecision(std::string_view s) {
  return internal::ParseIn(kPrecisionNames, s);
}

std::vector<std::string> PrecisionNames() { return internal::NamesIn(kPrecisionNames); }

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
