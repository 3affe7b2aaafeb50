#include "gpuplan/quant_preset.h"

#include <string>

#include "base/enum_names.h"
#include "base/strings.h"
#include "gpuplan/input.h"

namespace gpuplan {

QuantSpec QuantPreset::Spec() const {
  QuantSpec q;
  q.method = std::string(method);
  q.bits = bits;
  q.group_size = group_size;
  q.zero_points = zero_points;
  q.double_quant = double_quant;
  q.scale_bits = scale_bits;
  q.experts_only = experts_only;
  q.mlp_only = mlp_only;
  q.dense_blocks = dense_blocks;
  return q;
}

const std::vector<QuantPreset>& QuantPresets() {
  // Scales are 16-bit (fp16) unless noted; EffectiveBits() adds scale and zero-point bits.
  static const std::vector<QuantPreset> k = {
      {QuantPresetId::kAwq,
       "awq",
       {"awq", "awq-marlin", "int4-awq"},
       4,
       128,
       true,
       false,
       16,
       "Lin et al. 2024 (AWQ), AutoAWQ defaults: w_bit 4, q_group_size 128, zero_point true"},
      {QuantPresetId::kGptq,
       "gptq",
       {"gptq", "gptq-marlin", "int4-gptq"},
       4,
       128,
       true,
       false,
       16,
       "Frantar et al. 2023 (GPTQ), AutoGPTQ defaults: bits 4, group_size 128; checkpoints store "
       "packed qzeros even when sym"},
      {QuantPresetId::kBnbNf4DoubleQuant,
       "bnb-nf4",
       {"nf4", "bnb-nf4"},
       4,
       64,
       false,
       true,
       32,
       "Dettmers et al. 2023 (QLoRA): NF4 blocks of 64, fp32 absmax double-quantized to 8 bits "
       "per 256 blocks (0.127 bits/param)"},
      {QuantPresetId::kBnbNf4,
       "bnb-nf4",
       // vLLM's --quantization bitsandbytes quantizes in flight to NF4 with these defaults.
       {"bitsandbytes", "bnb-4bit"},
       4,
       64,
       false,
       false,
       32,
       "transformers BitsAndBytesConfig(load_in_4bit=True): blocksize 64, fp32 absmax, "
       "bnb_4bit_use_double_quant=False by default"},
      {QuantPresetId::kBnbInt8,
       "bnb-int8",
       {},
       8,
       0,
       false,
       false,
       16,
       "Dettmers et al. 2022 (LLM.int8()): per-row scales, negligible per weight"},
      {QuantPresetId::kInt8,
       "int8",
       {},
       8,
       0,
       false,
       false,
       16,
       "int8 weight-only with per-channel scales (SmoothQuant/TensorRT-LLM W8)"},
      {QuantPresetId::kFp8,
       "fp8",
       {},
       8,
       0,
       false,
       false,
       16,
       "FP8 E4M3 weights with per-tensor or per-channel scales (vLLM fp8, Micikevicius et al. "
       "2022)"},
      {QuantPresetId::kInt4G128,
       "int4-g128",
       {},
       4,
       128,
       true,
       false,
       16,
       "4-bit weight-only as AWQ/GPTQ ship it: group 128, 16-bit scales, packed zero points"},
      {QuantPresetId::kGgufQ4_0,
       "gguf-q4_0",
       {"q4_0", "gguf-q4_0"},
       4,
       32,
       false,
       false,
       16,
       "llama.cpp ggml-quants: block_q4_0 = 32 weights + one fp16 scale (4.5 bits/weight)"},
      {QuantPresetId::kGgufQ4KM,
       "gguf-q4_k_m",
       {"q4_k_m", "gguf-q4_k_m"},
       4.81,
       0,
       false,
       false,
       16,
       "llama.cpp ggml-common.h: block_q4_K = 256 weights in 144 bytes (4.5 bits/weight); "
       "Q4_K_M (llama-quantize) stores attn_v, half of the ffn_down tensors and the output "
       "matrix as Q6_K (210 bytes per 256, 6.56 bits): ~15% of a 7B model's weights, 4.81 "
       "bits/weight on average"},
      // FP4 weights are read at their bits. NVFP4 GEMMs run W4A4 at the device's FP4 tensor rate
      // where it has one (gpus.csv fp4_tflops: B200, GB200; Fp4TensorMath), else as 16-bit
      // (W4A16, as the other 4-bit formats: MathPrecision). MXFP4 (gpt-oss) keeps W4A16.
      {QuantPresetId::kNvfp4,
       "nvfp4",
       {"nvfp4", "fp4", "modelopt-fp4", "modelopt_fp4"},
       4,
       16,
       false,
       false,
       8,
       "NVIDIA NVFP4 (Blackwell; TensorRT Model Optimizer, vLLM modelopt_fp4): FP4 E2M1 values in "
       "16-element micro-blocks with one FP8 E4M3 scale each (plus one FP32 scale per tensor): "
       "4.5 bits/weight"},
      {QuantPresetId::kMxfp4,
       "mxfp4",
       {"mxfp4"},
       4,
       32,
       false,
       false,
       8,
       "OCP Microscaling spec v1.0 MXFP4 (gpt-oss checkpoints): FP4 E2M1 values in 32-element "
       "blocks with one E8M0 scale each: 4.25 bits/weight. gpt-oss quantizes only the MoE "
       "experts' weights (its config's modules_to_not_convert: attention, router, embeddings, "
       "LM head stay bf16)",
       true},
      {QuantPresetId::kFbgemmFp8,
       "fbgemm-fp8",
       {"fbgemm_fp8", "fbgemm-fp8"},
       8,
       0,
       false,
       false,
       32,
       "Meta's Llama 3.1 FP8 checkpoints (quant_method fbgemm_fp8; Llama 3 paper section 6.2): "
       "FP8 E4M3 feed-forward weights with one fp32 scale per row; the attention layers and the "
       "first and last Transformer blocks are not quantized (modules_to_not_convert), nor are "
       "embeddings and head",
       false,
       true,
       2},
  };
  return k;
}

const QuantPreset& GetQuantPreset(QuantPresetId id) {
  return QuantPresets()[static_cast<std::size_t>(id)];
}

const QuantPreset* FindQuantPreset(std::string_view name) {
  // Case- and separator-insensitive: vLLM's "awq_marlin" is "awq-marlin", "Q4_K_M" "q4_k_m".
  const std::string n = internal::SquashName(internal::Trim(name));
  if (n.empty()) return nullptr;
  for (const auto& p : QuantPresets()) {
    for (std::string_view u : p.user_names) {
      if (n == internal::SquashName(u)) return &p;
    }
  }
  return nullptr;
}

std::vector<std::string> QuantPresetNames() {
  std::vector<std::string> out;
  for (const auto& p : QuantPresets()) {
    for (std::string_view u : p.user_names) out.emplace_back(u);
  }
  return out;
}

Status ApplyQuantName(std::string_view name, std::string_view field, Precision& weight_precision,
                      std::optional<QuantSpec>& quant) {
  if (const QuantPreset* preset = FindQuantPreset(name)) {
    quant = preset->Spec();
    return {};
  }
  if (auto p = ParsePrecision(name)) {
    weight_precision = *p;
    quant.reset();
    return {};
  }
  return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                   "unknown quantization \"" + std::string(name) + "\"",
                   "use awq, gptq, nf4, nvfp4, mxfp4, int8, int4 or fp8");
}

Precision DefaultKvPrecision(Precision weight_precision) {
  return weight_precision == Precision::kFp8 ? Precision::kFp8 : Precision::kBf16;
}

Result<Precision> ParseKvPrecision(std::string_view name, std::string_view field,
                                   Precision weight_precision) {
  if (internal::ToLower(internal::Trim(name)) == "auto")
    return DefaultKvPrecision(weight_precision);
  auto p = ParsePrecision(name);
  if (p && *p != Precision::kInt4 && *p != Precision::kTf32) return *p;
  return MakeError(
      ErrorCode::kInvalidArgument, std::string(field),
      "unknown KV precision \"" + std::string(name) + "\"",
      ChoiceHint(name, {PrecisionName(Precision::kBf16), PrecisionName(Precision::kFp16),
                        PrecisionName(Precision::kFp8), PrecisionName(Precision::kInt8)}));
}

}  // namespace gpuplan
