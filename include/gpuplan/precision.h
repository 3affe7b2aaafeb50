// Numeric precisions of weights, activations and math, with their names and storage sizes.
// Vocabulary layer: used by the catalog (peak FLOP/s per precision), models and estimators.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

// Numeric precision of weights, activations or math.
enum class Precision : std::uint8_t { kFp32, kTf32, kBf16, kFp16, kFp8, kInt8, kInt4 };

const char* PrecisionName(Precision p);
// Parses "fp32", "bf16", "fp16", "fp8", "int8", "int4" (and "float16", "bfloat16", "float32").
std::optional<Precision> ParsePrecision(std::string_view s);
// The canonical names, in enum order (did-you-mean candidates).
std::vector<std::string> PrecisionNames();
// Storage bytes per element (int4 = 0.5; tf32 stored as 4).
double BytesPerElement(Precision p);

}  // namespace gpuplan
