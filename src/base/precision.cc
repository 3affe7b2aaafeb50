#include "gpuplan/precision.h"

#include <string>

#include "base/enum_names.h"

namespace gpuplan {

namespace {

constexpr internal::EnumName<Precision> kPrecisionNames[] = {
    {Precision::kFp32, "fp32", "float32 float"},
    {Precision::kTf32, "tf32"},
    // Mixed precision as trainers spell it (Lightning "bf16-mixed"/"16-mixed", Composer
    // "amp_bf16", torch.cuda.amp's fp16 default): 16-bit math with fp32 master weights.
    {Precision::kBf16, "bf16", "bfloat16 bf16-mixed amp-bf16 mixed-bf16 bf16-amp"},
    {Precision::kFp16, "fp16", "float16 half fp16-mixed 16-mixed amp-fp16 mixed-fp16 fp16-amp amp"},
    // FP8 in either format: E4M3 weights/activations, E5M2 (KV caches, gradients), Transformer
    // Engine's hybrid recipe, Blackwell's block-scaled MXFP8, llm-compressor's FP8_DYNAMIC.
    {Precision::kFp8, "fp8", "float8 fp8-e4m3 e4m3 fp8-e5m2 e5m2 fp8-hybrid mxfp8 fp8-dynamic"},
    {Precision::kInt8, "int8", "w8a8 w8a16 8bit int8-sq smoothquant w8a8-int8 q8-0"},
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
