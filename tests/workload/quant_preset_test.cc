// The quantization preset table: one row per QuantPresetId, in order, each with a source, and
// bits per weight that match the formats' published layouts.
#include "gpuplan/quant_preset.h"

#include <gtest/gtest.h>

namespace gpuplan {
namespace {

TEST(QuantPreset, TableIsInIdOrderWithASourcePerRow) {
  const auto& table = QuantPresets();
  ASSERT_EQ(table.size(), static_cast<std::size_t>(QuantPresetId::kFbgemmFp8) + 1);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].id), i) << table[i].method;
    EXPECT_FALSE(table[i].source.empty()) << table[i].method;
    EXPECT_EQ(&GetQuantPreset(table[i].id), &table[i]);
  }
}

struct BitsRow {
  QuantPresetId id;
  double effective_bits;
  const char* source;
};

TEST(QuantPreset, EffectiveBitsMatchThePublishedLayouts) {
  const BitsRow rows[] = {
      // 4 bits + one fp16 scale and one 4-bit zero point per 128 weights.
      {QuantPresetId::kAwq, 4 + 16.0 / 128 + 4.0 / 128, "AutoAWQ w_bit 4, group 128"},
      {QuantPresetId::kGptq, 4 + 16.0 / 128 + 4.0 / 128, "AutoGPTQ bits 4, group 128"},
      // QLoRA paper, section 3: double quantization costs 8/64 + 32/(64*256) = 0.127 bits.
      {QuantPresetId::kBnbNf4DoubleQuant, 4.127, "Dettmers et al. 2023"},
      // Without double quantization: one fp32 absmax per 64 weights = 0.5 bits.
      {QuantPresetId::kBnbNf4, 4.5, "bitsandbytes blocksize 64"},
      // llama.cpp block_q4_0: 16 bytes of nibbles + a 2-byte fp16 scale per 32 weights.
      {QuantPresetId::kGgufQ4_0, 18.0 * 8 / 32, "ggml-quants.h block_q4_0"},
      // Q4_K_M: block_q4_K (144 bytes per 256 weights) with ~15% of the weights in Q6_K
      // (210 bytes per 256).
      {QuantPresetId::kGgufQ4KM, 0.85 * 144 * 8 / 256 + 0.15 * 210 * 8 / 256, "Q4_K_M"},
      {QuantPresetId::kInt8, 8, "per-channel scales"},
      // NVFP4: an FP8 scale per 16 FP4 values; MXFP4: an E8M0 scale per 32.
      {QuantPresetId::kNvfp4, 4.5, "NVIDIA NVFP4"},
      {QuantPresetId::kMxfp4, 4.25, "OCP MX v1.0 MXFP4"},
      {QuantPresetId::kFp8, 8, "per-tensor scales"},
  };
  for (const auto& r : rows) {
    EXPECT_NEAR(GetQuantPreset(r.id).Spec().EffectiveBits(), r.effective_bits, 1e-3) << r.source;
  }
}

TEST(QuantPreset, UserNamesSelectTheWeightOnlyMethods) {
  ASSERT_NE(FindQuantPreset("awq"), nullptr);
  EXPECT_EQ(FindQuantPreset("awq")->id, QuantPresetId::kAwq);
  EXPECT_EQ(FindQuantPreset(" GPTQ ")->id, QuantPresetId::kGptq);
  EXPECT_EQ(FindQuantPreset("nf4")->id, QuantPresetId::kBnbNf4DoubleQuant);
  EXPECT_EQ(FindQuantPreset("bnb-nf4")->id, QuantPresetId::kBnbNf4DoubleQuant);
  // Precisions are not quantization methods: callers parse them as precisions.
  EXPECT_EQ(FindQuantPreset("int8"), nullptr);
  EXPECT_EQ(FindQuantPreset("fp8"), nullptr);
  EXPECT_EQ(FindQuantPreset("int4"), nullptr);
  EXPECT_EQ(QuantPresetNames(),
            (std::vector<std::string>{
                "awq",    "awq-marlin",  "int4-awq",     "gptq",     "gptq-marlin",  "int4-gptq",
                "nf4",    "bnb-nf4",     "bitsandbytes", "bnb-4bit", "q4_0",         "gguf-q4_0",
                "q4_k_m", "gguf-q4_k_m", "nvfp4",        "fp4",      "modelopt-fp4", "modelopt_fp4",
                "mxfp4",  "fbgemm_fp8",  "fbgemm-fp8"}));
}

}  // namespace
}  // namespace gpuplan
