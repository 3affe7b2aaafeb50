// The one table of weight-quantization presets (issue 10): every caller that turns a method
// name (--quant awq, vLLM's --quantization bitsandbytes, a precision of int4, a case's
// load_in_4bit) into a QuantSpec takes it from here, so the bits, group sizes, zero points and
// scale widths are written once, each with its source.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/model.h"
#include "gpuplan/precision.h"
#include "gpuplan/result.h"

namespace gpuplan {

enum class QuantPresetId {
  kAwq,                // AWQ, 4-bit, group 128, zero points
  kGptq,               // GPTQ, 4-bit, group 128, packed qzeros
  kBnbNf4DoubleQuant,  // bitsandbytes NF4 as QLoRA trains it (double-quantized scales)
  kBnbNf4,             // bitsandbytes NF4 as transformers' load_in_4bit defaults it
  kBnbInt8,            // bitsandbytes LLM.int8()
  kInt8,               // int8 weights, per-channel scales
  kFp8,                // fp8 weights, per-tensor/channel scales
  kInt4G128,           // generic 4-bit weight-only, group 128 (what "int4" means)
  kGgufQ4_0,           // llama.cpp GGUF Q4_0
  kGgufQ4KM,           // llama.cpp GGUF Q4_K_M (the common GGUF download)
  kNvfp4,              // NVIDIA NVFP4: FP4 E2M1 in blocks of 16 with an FP8 E4M3 scale
  kMxfp4,              // OCP MXFP4: FP4 E2M1 in blocks of 32 with an E8M0 scale
  kFbgemmFp8,          // Meta's Llama 3.1 FP8 (fbgemm): row-wise FP8 FFNs of the inner blocks
};

// One preset: the QuantSpec it stands for and where its numbers come from.
struct QuantPreset {
  QuantPresetId id;
  std::string_view method;  // QuantSpec::method, shown in plans ("awq", "bnb-nf4", ...)
  // Names a user may give for it (--quant, serve.quant); empty for presets chosen by precision
  // or engine only.
  std::vector<std::string_view> user_names;
  double bits = 16;
  int group_size = 0;
  bool zero_points = false;
  bool double_quant = false;
  double scale_bits = 16;
  std::string_view source;  // paper, documentation or code the figures come from
  // Only the routed experts' weights are in this format (QuantSpec::experts_only).
  bool experts_only = false;
  // Only the MLPs, not in `dense_blocks` edge blocks (QuantSpec::mlp_only, dense_blocks).
  bool mlp_only = false;
  int dense_blocks = 0;

  // The QuantSpec of this preset.
  QuantSpec Spec() const;
};

// Every preset, in QuantPresetId order.
const std::vector<QuantPreset>& QuantPresets();

// The preset `id`.
const QuantPreset& GetQuantPreset(QuantPresetId id);

// The preset a user-given name selects ("awq", "gptq", "nf4", "bnb-nf4"; case-insensitive), or
// nullptr when the name is no quantization method (it may still be a precision: int8, fp8).
const QuantPreset* FindQuantPreset(std::string_view name);

// The user names of every preset, for did-you-mean lists and help texts.
std::vector<std::string> QuantPresetNames();

// Applies a user-given quantization name (--quant, serve.quant) to the weights: a preset's name
// sets `quant`; a precision name (int8, fp8) sets `weight_precision` and clears `quant`. Any
// other name is an error naming `field`, and leaves both unchanged.
Status ApplyQuantName(std::string_view name, std::string_view field, Precision& weight_precision,
                      std::optional<QuantSpec>& quant);

// The KV-cache precision when none is given: FP8 with FP8 weights (the planner then passes
// --kv-cache-dtype fp8 to the engine), else 16-bit.
Precision DefaultKvPrecision(Precision weight_precision);

// A KV-cache precision a user may choose (bf16, fp16, fp8, int8; "auto", the engines' spelling
// for the default, is DefaultKvPrecision); any other name (int4, tf32, a typo) is an error
// naming `field` with the choices.
Result<Precision> ParseKvPrecision(std::string_view name, std::string_view field,
                                   Precision weight_precision = Precision::kBf16);

}  // namespace gpuplan
