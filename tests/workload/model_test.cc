// Tests of the model layer: exact parameter counts of the built-in presets against the published
// counts (../shared/reference/models.json `computed_params`, which reproduce the official
// figures), KV-cache bytes per token (aiconfigurator's unit cases in
// ../shared/validation/formula_cases.jsonl), preset lookup, Hugging Face config.json parsing
// (nested text_config, explicit head_dim, tied embeddings, GQA, MoE, MLA, quantization_config,
// dtype) with its errors, and the .safetensors header reader
// (../shared/reference/formats.md section 1) on in-memory headers and on files written to a
// scratch directory.
#include <gtest/gtest.h>

#include "testing/test_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "gpuplan/estimate.h"
#include "gpuplan/quant_preset.h"
#include "gpuplan/model.h"
#include "testing/fixtures.h"

#ifndef GPUPLAN_SHARED_DIR
#define GPUPLAN_SHARED_DIR ""
#endif

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool Has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Reads a file of ../shared; nullopt when the shared folder is absent (tests then skip).
std::optional<std::string> ReadShared(const std::string& rel) {
  std::string dir = GPUPLAN_SHARED_DIR;
  if (dir.empty()) return std::nullopt;
  std::ifstream in(fs::path(dir) / rel, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// models.json entries by name.
const json* ModelsJsonEntry(const json& root, std::string_view name) {
  for (const auto& m : root["models"]) {
    if (m.value("name", "") == name) return &m;
  }
  return nullptr;
}

using test::Preset;

ModelSpec Parse(std::string_view json_text, std::string_view label = "config.json") {
  auto r = ParseHfConfig(json_text, label);
  if (!r) {
    ADD_FAILURE() << "ParseHfConfig(" << label << "): " << r.error().ToString();
    return ModelSpec{};
  }
  return *r;
}

using gpuplan::test::TempDir;

// A .safetensors file: 8-byte little-endian header length, the header, then `data_bytes` zero
// bytes (formats.md section 1). `declared_len` overrides the length field when set.
std::string SafetensorsBytes(const std::string& header, std::size_t data_bytes,
                             std::optional<std::uint64_t> declared_len = std::nullopt) {
  std::uint64_t n = declared_len.value_or(header.size());
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += header;
  out.append(data_bytes, '\0');
  return out;
}

// formats.md section 1, "Tiny example (two tensors, written for this sheet)": lm_head BF16 [8,4]
// at [0,64) and norm F32 [4] at [64,80): 36 parameters, 80 bytes.
constexpr const char* kTinyHeader =
    R"({"__metadata__":{"format":"pt"},)"
    R"("lm_head.weight":{"dtype":"BF16","shape":[8,4],"data_offsets":[0,64]},)"
    R"("norm.weight":{"dtype":"F32","shape":[4],"data_offsets":[64,80]}})";

// A tiny but valid Llama config.json for files on disk.
constexpr const char* kTinyConfig =
    R"({"model_type":"llama","hidden_size":4,"intermediate_size":8,"num_hidden_layers":1,)"
    R"("num_attention_heads":1,"num_key_value_heads":1,"vocab_size":8,"torch_dtype":"bfloat16"})";

// ------------------------------------------------------------------------------------------------
// Exact parameter counts of the presets.

struct ParamRow {
  const char* name;     // row name
  const char* preset;   // input: preset name
  std::int64_t total;   // expected: every weight
  std::int64_t active;  // expected: per-token (MoE), -1 = same as total
  const char* source;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const ParamRow& row, std::ostream* os) { *os << row.name; }

// Expected values are models.json `computed_params` / `computed_active_params` (the counts of the
// config, which reproduce the official model-card figures quoted beside them). Tolerance: exact.
const ParamRow kParamRows[] = {
    {"llama2_7b", "Llama-2-7B", 6738415616, -1,
     "models.json Llama-2-7B computed_params; model card 6.74B (6,738,415,616 in the HF "
     "checkpoint)"},
    {"llama2_13b", "Llama-2-13B", 13015864320, -1,
     "models.json Llama-2-13B computed_params; model card 13B"},
    {"llama2_70b", "Llama-2-70B", 68976648192, -1,
     "models.json Llama-2-70B computed_params; model card 69B (GQA, 8 KV heads)"},
    {"llama3_8b", "Llama-3-8B", 8030261248, -1,
     "models.json Llama-3-8B computed_params; model card 8.03B; formats.md index total_parameters"},
    {"llama31_405b", "Llama-3.1-405B", 405853388800, -1,
     "models.json Llama-3.1-405B computed_params; model card 405B"},
    {"llama32_1b_tied", "Llama-3.2-1B", 1235814400, -1,
     "models.json Llama-3.2-1B computed_params (tied embeddings); model card 1.24B"},
    {"mistral_7b", "Mistral-7B-v0.1", 7241732096, -1,
     "models.json Mistral-7B-v0.1 computed_params; model card 7.24B"},
    {"mixtral_8x7b", "Mixtral-8x7B-v0.1", 46702792704, 12879925248,
     "models.json Mixtral-8x7B-v0.1 computed_params / computed_active_params; 46.7B / 12.9B"},
    {"mixtral_8x22b", "Mixtral-8x22B-Instruct-v0.1", 140630071296, 39161468928,
     "models.json Mixtral-8x22B-Instruct-v0.1; 141B / 39B"},
    {"qwen25_7b", "Qwen2.5-7B-Instruct", 7615616512, -1,
     "models.json Qwen2.5-7B-Instruct computed_params (QKV biases); model card 7.61B"},
    {"qwen3_30b_a3b", "Qwen3-30B-A3B", 30532122624, 3353032704,
     "models.json Qwen3-30B-A3B computed_params / computed_active_params; 30.5B / 3.3B"},
    {"qwen3_8b_qknorm", "Qwen3-8B", 8190735360, -1,
     "models.json Qwen3-8B computed_params (q/k norms); model card 8.2B"},
    {"gemma_7b_headdim", "Gemma-7B", 8537680896, -1,
     "models.json Gemma-7B computed_params (head_dim 256 != 3072/16); model card 8.54B"},
    {"gemma2_9b", "Gemma-2-9B", 9241705984, -1,
     "models.json Gemma-2-9B computed_params (4 norms per layer, tied); model card 9.24B"},
    {"phi3_mini", "Phi-3-mini-4k-instruct", 3821079552, -1,
     "models.json Phi-3-mini-4k-instruct computed_params; model card 3.82B"},
    {"deepseek_v3", "DeepSeek-V3", 671026419200, 37552297472,
     "models.json DeepSeek-V3 computed_params / computed_active_params; paper 671B / 37B"},
    {"llama4_maverick", "Llama-4-Maverick-17B-128E", 400711848960, 17184691200,
     "models.json Llama-4-Maverick computed_params (interleaved MoE); 400B / 17B"},
    {"gpt2", "GPT-2", 124439808, -1,
     "models.json GPT-2 computed_params; the well-known 124M (124,439,808) of HF gpt2"},
    {"bert_base", "BERT-base-uncased", 109482240, -1,
     "models.json BERT-base-uncased computed_params (encoder + pooler); 110M"},
    {"vit_b16", "ViT-B/16", 86567656, -1,
     "models.json ViT-B/16 computed_params; torchvision vit_b_16 num_params 86,567,656"},
    // December 2026 presets (data/models/INDEX.md): the count derived from each config.json
    // equals the checkpoint's published total.
    {"qwen3_14b", "Qwen3-14B", 14768307200, -1,
     "Qwen/Qwen3-14B safetensors: 29,536,614,400 bf16 bytes / 2; model card 14.8B"},
    {"qwen3_4b_tied", "Qwen3-4B", 4022468096, -1,
     "Qwen/Qwen3-4B index total_size 8,044,936,192 / 2 (tied embeddings); model card 4.0B"},
    {"qwen25_3b_tied", "Qwen2.5-3B-Instruct", 3085938688, -1,
     "Qwen2.5-3B-Instruct (QKV biases, tied embeddings); model card 3.09B"},
    {"r1_distill_qwen_32b", "DeepSeek-R1-Distill-Qwen-32B", 32763876352, -1,
     "DeepSeek-R1-Distill-Qwen-32B (Qwen2.5-32B shape); model card 32.8B"},
    {"mistral_small_24b", "Mistral-Small-24B-Instruct-2501", 23572403200, -1,
     "Mistral-Small-24B-Instruct-2501 BF16 safetensors total; model card 24B (23.6B)"},
    {"phi4", "Phi-4", 14659507200, -1,
     "microsoft/phi-4 (40 KV-grouped layers, 100,352 vocabulary); model card 14.7B"},
    {"gpt_oss_20b", "gpt-oss-20b", 20914757184, 4187440704,
     "gpt-oss model card: 20.91B total (q/k/v/o biases, sinks, router and expert biases); "
     "3.61B active without the 579,133,440-parameter input embedding"},
    {"gpt_oss_120b", "gpt-oss-120b", 116829156672, 5711982912,
     "gpt-oss model card: 116.83B total; 5.13B active without the input embedding"},
    {"codellama_34b", "CodeLlama-34B", 33743970304, -1,
     "codellama/CodeLlama-34b-hf (GQA 64/8, 32,000 vocabulary); model card 33.7B"},
};

class PresetParams : public ::testing::TestWithParam<ParamRow> {};

TEST_P(PresetParams, MatchesPublishedCount) {
  const ParamRow& row = GetParam();
  SCOPED_TRACE(row.source);
  const ModelSpec* m = FindPreset(row.preset);
  ASSERT_NE(m, nullptr) << row.preset;
  ParamCounts c = CountParams(*m);
  EXPECT_EQ(c.total, row.total) << row.preset;
  EXPECT_EQ(c.active, row.active < 0 ? row.total : row.active) << row.preset;
  EXPECT_TRUE(c.exact) << row.preset;
  EXPECT_GT(c.largest_layer, 0);
  EXPECT_LE(c.largest_layer, c.total);
}

INSTANTIATE_TEST_SUITE_P(Presets, PresetParams, ::testing::ValuesIn(kParamRows),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

// The hard-coded rows above that cite the reference file must agree with it (the others cite
// the checkpoints' published totals).
TEST(PresetParamsReference, RowsAgreeWithModelsJson) {
  auto text = ReadShared("reference/models.json");
  if (!text) GTEST_SKIP() << "../shared/reference/models.json not found";
  json root = json::parse(*text);
  int cited = 0;
  for (const ParamRow& row : kParamRows) {
    if (std::string_view(row.source).rfind("models.json", 0) != 0) continue;
    ++cited;
    const json* e = ModelsJsonEntry(root, row.preset);
    ASSERT_NE(e, nullptr) << row.preset;
    EXPECT_EQ((*e)["computed_params"].get<std::int64_t>(), row.total) << row.preset;
    if (row.active >= 0) {
      EXPECT_EQ((*e)["computed_active_params"].get<std::int64_t>(), row.active) << row.preset;
    }
  }
  EXPECT_GE(cited, 20);
}

// Every models.json decoder/encoder entry that has a preset: exact params and KV bytes per token.
TEST(PresetParamsReference, EveryModelsJsonEntryWithAPreset) {
  auto text = ReadShared("reference/models.json");
  if (!text) GTEST_SKIP() << "../shared/reference/models.json not found";
  json root = json::parse(*text);
  int checked = 0;
  for (const auto& e : root["models"]) {
    const std::string name = e.value("name", "");
    const ModelSpec* m = FindPreset(name);
    if (m == nullptr) continue;
    SCOPED_TRACE(name);
    // DeepSeek-V2: models.json's computed_params (235,741,444,320) is 9,440 = 59 MoE layers x 160
    // above the preset's official_params (235,741,434,880, data/models/INDEX.md), i.e. it counts
    // a per-expert router bias that only DeepSeek-V3 (topk_method noaux_tc) has. Reported as a
    // disagreement between the two references, not checked here.
    if (name == "DeepSeek-V2") continue;
    if (e.contains("computed_params") && e["computed_params"].is_number_integer()) {
      ParamCounts c = CountParams(*m);
      EXPECT_EQ(c.total, e["computed_params"].get<std::int64_t>());
      if (e.contains("computed_active_params") && e["computed_active_params"].is_number_integer()) {
        EXPECT_EQ(c.active, e["computed_active_params"].get<std::int64_t>());
      }
      ++checked;
    }
    // Encoder-decoder KV (Whisper) is checked in KvBytesPerToken.WhisperDecoderSelfAttention.
    if (m->is_decoder_llm() && e.contains("kv_cache_bytes_per_token_16bit") &&
        e["kv_cache_bytes_per_token_16bit"].is_number()) {
      EXPECT_EQ(KvBytesPerToken(*m, 2.0, 1).value(),
                e["kv_cache_bytes_per_token_16bit"].get<double>());
    }
  }
  EXPECT_GE(checked, 30);
}

TEST(PresetLibrary, EveryPresetValidates) {
  ASSERT_GE(Presets().size(), 40u);
  std::set<std::string> names;
  for (const auto& m : Presets()) {
    SCOPED_TRACE(m.name);
    EXPECT_TRUE(names.insert(Lower(m.name)).second) << "duplicate preset name";
    Status st = ValidateModel(m, m.name);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().ToString());
    ParamCounts c = CountParams(m);
    EXPECT_GT(c.total, 0);
    EXPECT_LE(c.active, c.total);
    // Where the preset quotes the official count and derives its own, they agree exactly
    // (INDEX.md: official params are the exact checkpoint count).
    // Gemma-3-4B/12B/27B-it and Llama-4-Scout quote the model card's figure, which includes the
    // vision encoder that the text config does not describe (INDEX.md).
    const bool counts_vision = m.name == "Gemma-3-4B-it" || m.name == "Gemma-3-12B-it" ||
                               m.name == "Gemma-3-27B-it" || m.name == "Llama-4-Scout-17B-16E";
    if (m.official_params && c.exact && !m.params_override && !counts_vision) {
      EXPECT_EQ(c.total, *m.official_params);
      if (m.official_active_params) {
        EXPECT_EQ(c.active, *m.official_active_params);
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// KV-cache bytes per token.

struct KvRow {
  const char* name;
  const char* preset;  // nullptr = the inline 32-layer fixture
  double bytes_per_element;
  int tp;
  double expected;
  const char* source;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const KvRow& row, std::ostream* os) { *os << row.name; }

ModelSpec Fixture32Layers() {
  // aic-kv-per-token-fixture-32l-tp2: layers 32, hidden 4096, heads 32, kv_heads 8, head_dim 128.
  ModelSpec m;
  m.name = "fixture-32l";
  m.arch = ModelArch::kDense;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 14336;
  m.gated_mlp = true;
  m.vocab = 32000;
  return m;
}

const KvRow kKvRows[] = {
    {"llama31_70b_tp1_bf16", "Llama-3.1-70B", 2.0, 1, 327680,
     "2 x 80 layers x 8 KV heads x 128 x 2 B; models.json Llama-3-70B (same shape) 327,680"},
    {"llama31_70b_tp2", "Llama-3.1-70B", 2.0, 2, 163840, "4 KV heads per rank (formats.md 6.2)"},
    {"llama31_70b_tp8", "Llama-3.1-70B", 2.0, 8, 40960, "1 KV head per rank (formats.md 6.2)"},
    {"llama31_70b_tp16", "Llama-3.1-70B", 2.0, 16, 40960,
     "formula_cases aic-kv-per-token-llama31-70b-tp16: heads replicated when tp > kv_heads"},
    {"deepseek_v3_tp1", "DeepSeek-V3", 2.0, 1, 70272,
     "formula_cases aic-kv-per-token-deepseek-v3-tp1: (512 + 64) x 61 x 2 B; models.json 70,272"},
    {"deepseek_v3_tp8_mla_not_split", "DeepSeek-V3", 2.0, 8, 70272,
     "formats.md 6.2: the MLA latent is not divided by TP"},
    {"llama2_7b_bf16", "Llama-2-7B", 2.0, 1, 524288,
     "STYLE.md section 9: 512 KiB/token in bf16; models.json 524,288"},
    {"llama2_7b_fp8", "Llama-2-7B", 1.0, 1, 262144, "fp8 KV: half of 524,288"},
    {"fixture_32l_tp2", nullptr, 2.0, 2, 65536,
     "formula_cases aic-kv-per-token-fixture-32l-tp2: 2 x 32 x 4 x 128 x 2"},
    {"mixtral_8x7b", "Mixtral-8x7B-v0.1", 2.0, 1, 131072, "models.json Mixtral-8x7B 131,072"},
};

class KvBytes : public ::testing::TestWithParam<KvRow> {};

TEST_P(KvBytes, PerTokenPerGpu) {
  const KvRow& row = GetParam();
  SCOPED_TRACE(row.source);
  ModelSpec m = row.preset ? Preset(row.preset) : Fixture32Layers();
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, row.bytes_per_element, row.tp).value(), row.expected);
}

INSTANTIATE_TEST_SUITE_P(Cases, KvBytes, ::testing::ValuesIn(kKvRows),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

TEST(KvBytesReference, FormulaCasesAgree) {
  auto text = ReadShared("validation/formula_cases.jsonl");
  if (!text) GTEST_SKIP() << "../shared/validation/formula_cases.jsonl not found";
  const std::pair<const char*, double> ids[] = {
      {"aic-kv-per-token-llama31-70b-tp16", 40960},
      {"aic-kv-per-token-deepseek-v3-tp1", 70272},
      {"aic-kv-per-token-fixture-32l-tp2", 65536},
  };
  std::istringstream in(*text);
  std::string line;
  int found = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json c = json::parse(line);
    for (const auto& [id, expected] : ids) {
      if (c["id"] == id) {
        EXPECT_EQ(c["measured"].get<double>(), expected) << id;
        ++found;
      }
    }
  }
  EXPECT_EQ(found, 3);
}

TEST(KvBytesPerToken, WhisperDecoderSelfAttention) {
  // models.json Whisper-large-v3 kv_cache_bytes_per_token_16bit = 163,840 = 2 x 32 decoder layers
  // x 20 heads x 64 x 2 B: the decoder's self-attention cache grows per generated token.
  const ModelSpec& m = Preset("Whisper-large-v3");
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, 2.0, 1).value(), 163840.0)
      << "BUG: KvBytesPerToken returns 0 for encoder-decoder models (is_decoder_llm() gate in "
         "src/workload/model.cc), so serving estimates for Whisper/T5 hold no KV cache";
}

// An encoder-decoder model splits into its two stacks with hand-counted parameters.
// Whisper-large-v3's encoder: 32 layers x (4 x 1280^2 attention + 3 biases, 2 x 1280 x 5120 MLP
// + biases, 2 layer norms) + final norm + the 1500 x 1280 position table + the front end's
// conv1d(128 -> 1280, k3) and conv1d(1280 -> 1280, k3) = 636,968,960 (+ the k-projection biases
// the formula counts and Whisper omits, 40,960); the decoder is the rest of 1,543,490,560.
// T5-base's encoder: 12 x (4 x 768^2 + 2 x 768 x 3072 + 2 x 768) + 768 = 84,954,624.
TEST(EncoderDecoder, SplitsIntoHandCountedStacks) {
  const ModelSpec& w = Preset("Whisper-large-v3");
  EXPECT_EQ(w.layers, 32);
  EXPECT_EQ(w.encoder_layers, 32);
  EXPECT_EQ(w.encoder_positions, 1500);
  EXPECT_EQ(w.mel_bins, 128);
  EXPECT_EQ(w.max_positions, 448);  // the decoder's context (max_target_positions)
  const EncoderDecoderParts wp = *SplitEncoderDecoder(w);
  const double enc = static_cast<double>(*wp.encoder.params_override);
  EXPECT_NEAR(enc, 636968960.0, 0.001 * 636968960.0);
  EXPECT_EQ(*wp.encoder.params_override + *wp.decoder.params_override, 1543490560);
  EXPECT_EQ(wp.encoder.layers, 32);
  EXPECT_EQ(wp.encoder.arch, ModelArch::kEncoder);
  EXPECT_TRUE(wp.decoder.is_decoder_llm());
  EXPECT_EQ(KvBytesPerToken(wp.decoder, 2.0, 1).value(), KvBytesPerToken(w, 2.0, 1).value());
  // Front end: 2 x (3000 frames x 3 x 128 x 1280 + 1500 x 3 x 1280^2) FLOPs.
  EXPECT_DOUBLE_EQ(wp.frontend_flops_per_request,
                   2.0 * (3000.0 * 3 * 128 * 1280 + 1500.0 * 3 * 1280 * 1280));
  EXPECT_EQ(EncoderInputTokens(w, 77), 1500);  // the window is fixed
  EXPECT_EQ(DecoderPromptTokens(w), 4);
  const ModelSpec& t5 = Preset("T5-base");
  EXPECT_EQ(t5.encoder_layers, 12);  // T5's num_layers is the encoder's depth
  EXPECT_EQ(t5.layers, 12);          // num_decoder_layers
  const EncoderDecoderParts tp = *SplitEncoderDecoder(t5);
  EXPECT_NEAR(static_cast<double>(*tp.encoder.params_override), 84954624.0, 0.001 * 84954624.0);
  EXPECT_EQ(tp.frontend_params, 0);
  EXPECT_EQ(EncoderInputTokens(t5, 300), 300);
  EXPECT_EQ(DecoderPromptTokens(t5), 1);
}

// A config.json of an encoder-decoder without a parameter count is derived from its shape:
// both stacks, the decoder layers' cross-attention and Whisper's front end. Whisper-large-v3
// comes out 122,880 high (every projection with a bias; its k projections have none: 3 x 32 x
// 1280), T5-base within its norms' biases (T5's layer norms are scale-only).
TEST(EncoderDecoder, ParameterCountFromTheShape) {
  ModelSpec w = Preset("Whisper-large-v3");
  w.params_override.reset();
  EXPECT_EQ(CountParams(w).total, 1543490560 + 3 * 32 * 1280);
  EXPECT_TRUE(ValidateModel(w, "config.json"));
  ModelSpec t5 = Preset("T5-base");
  t5.params_override.reset();
  EXPECT_NEAR(static_cast<double>(CountParams(t5).total), 222903552.0, 0.001 * 222903552.0);
}

// The split is cached per thread (the planners ask for it per layout); a change to any field
// it reads gives a fresh one, never the cached model's.
TEST(EncoderDecoder, SplitCacheFollowsTheModel) {
  ModelSpec w = Preset("Whisper-large-v3");
  const auto first = SplitEncoderDecoder(w);
  EXPECT_EQ(SplitEncoderDecoder(w).get(), first.get());  // same model: the cached split
  w.params_override = 2000000000;
  const auto bigger = SplitEncoderDecoder(w);
  EXPECT_EQ(*bigger->decoder.params_override - *first->decoder.params_override,
            2000000000 - 1543490560);
  w.quant = GetQuantPreset(QuantPresetId::kAwq).Spec();
  const auto quantized = SplitEncoderDecoder(w);
  ASSERT_TRUE(quantized->decoder.quant.has_value());
  EXPECT_EQ(quantized->decoder.quant->method, w.quant->method);
  EXPECT_FALSE(quantized->encoder.quant.has_value());  // EncoderStack keeps it out (as before)
  const ModelSpec& t5 = Preset("T5-base");
  EXPECT_EQ(SplitEncoderDecoder(t5)->encoder.layers, 12);
  EXPECT_NE(SplitEncoderDecoder(w)->encoder.layers, 12);  // Whisper again, after T5
}

// MoeLayerCount is IsMoeLayer summed over the layers, in closed form (a config may declare
// millions of layers: the per-layer loops made `plan train` of one run for minutes).
TEST(MoeLayerCount, MatchesTheLayerByLayerRule) {
  for (const auto& m : Presets()) {
    int n = 0;
    for (int i = 0; i < m.layers; ++i) n += IsMoeLayer(m, i) ? 1 : 0;
    EXPECT_EQ(MoeLayerCount(m), n) << m.name;
  }
  ModelSpec m = Preset("DeepSeek-V3");
  for (int layers : {1, 2, 3, 7, 61, 100}) {
    for (int dense : {0, 1, 3, 5, 200}) {
      for (int every : {1, 2, 3, 4}) {
        m.layers = layers;
        m.moe->dense_layers = dense;
        m.moe->moe_every = every;
        int n = 0;
        for (int i = 0; i < layers; ++i) n += IsMoeLayer(m, i) ? 1 : 0;
        EXPECT_EQ(MoeLayerCount(m), n) << layers << " " << dense << " " << every;
      }
    }
  }
}

TEST(KvBytesPerToken, NonDecodersHaveNone) {
  EXPECT_EQ(KvBytesPerToken(Preset("BERT-base-uncased"), 2.0, 1).value(), 0.0);
  EXPECT_EQ(KvBytesPerToken(Preset("ViT-B/16"), 2.0, 1).value(), 0.0);
  EXPECT_EQ(KvBytesPerToken(Preset("ResNet-50"), 2.0, 1).value(), 0.0);
}

TEST(KvBytesPerToken, NeverRisesWithTp) {
  for (const auto& m : Presets()) {
    double prev = KvBytesPerToken(m, 2.0, 1).value();
    for (int tp : {2, 4, 8, 16, 32}) {
      double now = KvBytesPerToken(m, 2.0, tp).value();
      EXPECT_LE(now, prev) << m.name << " tp " << tp;
      if (m.is_decoder_llm()) {
        EXPECT_GT(now, 0.0) << m.name;
      }
      prev = now;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Preset lookup and --model resolution.

struct LookupRow {
  const char* query;
  const char* expected;  // preset name
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const LookupRow& row, std::ostream* os) { *os << row.query; }

const LookupRow kLookupRows[] = {
    {"Llama-2-7B", "Llama-2-7B"},
    {"LLAMA-2-7B", "Llama-2-7B"},                // case-insensitive name
    {"llama-2-7b", "Llama-2-7B"},                // alias
    {"meta-llama/Llama-2-7b-hf", "Llama-2-7B"},  // HF id
    {"META-LLAMA/llama-2-7B-HF", "Llama-2-7B"},  // HF id, any case
    {"Llama-2-7b-hf", "Llama-2-7B"},             // HF id without the organisation
    {"llama2_7b", "Llama-2-7B"},                 // separators ignored
    {"  llama-2-7b  ", "Llama-2-7B"},            // trimmed
    {"llama-13b", "Llama-2-13B"},
    {"mixtral-8x7b", "Mixtral-8x7B-v0.1"},
    {"MIXTRAL-8X7B", "Mixtral-8x7B-v0.1"},
    {"bert-base", "BERT-base-uncased"},
    {"vit-b/16", "ViT-B/16"},
    {"deepseek-r1", "DeepSeek-V3"},
    {"Qwen/Qwen3-30B-A3B", "Qwen3-30B-A3B"},
    {"qwen3-14b", "Qwen3-14B"},
    {"Qwen/Qwen3-0.6B", "Qwen3-0.6B"},
    {"phi4", "Phi-4"},
    {"deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "DeepSeek-R1-Distill-Llama-70B"},
    {"deepseek-r1-distill-qwen-7b", "DeepSeek-R1-Distill-Qwen-7B"},
    {"mistral-small-24b", "Mistral-Small-24B-Instruct-2501"},
    {"codellama-34b", "CodeLlama-34B"},
    {"openai/gpt-oss-120b", "gpt-oss-120b"},
    {"gptoss20b", "gpt-oss-20b"},
    {"gemma-3-1b", "Gemma-3-1B-it"},
    {"gemma-3-4b", "Gemma-3-4B-it"},
    {"google/gemma-3-12b-it", "Gemma-3-12B-it"},
    {"gemma2-2b", "Gemma-2-2B-it"},
    {"phi-3.5-mini", "Phi-3.5-mini-instruct"},
    {"qwen3-coder-30b-a3b", "Qwen3-Coder-30B-A3B-Instruct"},
};

class Lookup : public ::testing::TestWithParam<LookupRow> {};

TEST_P(Lookup, FindsPreset) {
  const LookupRow& row = GetParam();
  const ModelSpec* m = FindPreset(row.query);
  ASSERT_NE(m, nullptr) << "'" << row.query << "'";
  EXPECT_EQ(m->name, row.expected) << "'" << row.query << "'";
  auto r = ResolveModel(row.query, "--model");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->name, row.expected);
}

INSTANTIATE_TEST_SUITE_P(Names, Lookup, ::testing::ValuesIn(kLookupRows));

TEST(LookupMisc, UnknownNames) {
  EXPECT_EQ(FindPreset("not-a-model"), nullptr);
  EXPECT_EQ(FindPreset(""), nullptr);
  EXPECT_EQ(FindPreset("---"), nullptr);
}

TEST(ResolveModel, UnknownNameSuggestsClosestPreset) {
  auto r = ResolveModel("Llamma-2-7B", "--model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().field, "--model");
  EXPECT_TRUE(Has(r.error().message, "Llamma-2-7B")) << r.error().message;
  EXPECT_TRUE(Has(r.error().hint, "did you mean")) << r.error().hint;
  EXPECT_TRUE(Has(Lower(r.error().hint), "llama-2-7b") || Has(Lower(r.error().hint), "llama2-7b"))
      << r.error().hint;
}

TEST(ResolveModel, EmptyIsInvalidArgument) {
  auto r = ResolveModel("   ", "--model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().field, "--model");
}

TEST(ResolveModel, DirectoryWithoutConfigIsNotFound) {
  TempDir dir;
  auto r = ResolveModel(dir.path().string(), "--model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().field, "--model");
  EXPECT_TRUE(Has(r.error().message, "config.json")) << r.error().message;
}

TEST(ResolveModel, OtherFileIsInvalidArgument) {
  TempDir dir;
  std::string p = dir.Write("weights.bin", "xyz");
  auto r = ResolveModel(p, "--model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().field, "--model");
}

TEST(ResolveModel, ConfigJsonPath) {
  TempDir dir;
  std::string p = dir.Write("config.json", kTinyConfig);
  auto r = ResolveModel(p, "--model");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->hidden, 4);
  EXPECT_EQ(r->layers, 1);
  EXPECT_FALSE(r->params_override.has_value());
}

TEST(ResolveModel, BadConfigJsonNamesTheFile) {
  TempDir dir;
  std::string p = dir.Write("config.json", R"({"model_type":"llama","hidden_size":)");
  auto r = ResolveModel(p, "--model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_TRUE(Has(r.error().field, "config.json")) << r.error().field;
}

// ------------------------------------------------------------------------------------------------
// ParseHfConfig.

// Llama-2-7B's config.json fields (models.json).
constexpr const char* kLlama2_7b =
    R"({"model_type":"llama","architectures":["LlamaForCausalLM"],"hidden_size":4096,)"
    R"("intermediate_size":11008,"num_hidden_layers":32,"num_attention_heads":32,)"
    R"("num_key_value_heads":32,"vocab_size":32000,"max_position_embeddings":4096,)"
    R"("tie_word_embeddings":false,"torch_dtype":"float16")";

std::string Llama2With(const std::string& extra) {
  return std::string(kLlama2_7b) + (extra.empty() ? "" : "," + extra) + "}";
}

TEST(ParseHfConfig, Llama2ReproducesPublishedCount) {
  ModelSpec m = Parse(Llama2With(""));
  EXPECT_EQ(m.arch, ModelArch::kDense);
  EXPECT_EQ(m.family, "llama");
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.max_positions, 4096);
  EXPECT_FALSE(m.quant.has_value());
  EXPECT_EQ(CountParams(m).total, 6738415616);  // models.json Llama-2-7B
}

// The context a serving engine derives (vLLM's _get_and_verify_max_len): linear, dynamic and
// YaRN RoPE scaling multiply max_position_embeddings (YaRN: its original_max_position_embeddings)
// by `factor`; "llama3" and "longrope" configs already state the scaled length; Gemma 3's 128K
// is already scaled too.
TEST(ParseHfConfig, RopeScalingSetsTheContext) {
  EXPECT_EQ(Parse(Llama2With(R"("rope_scaling":{"type":"linear","factor":2.0})")).max_positions,
            8192);
  EXPECT_EQ(Parse(Llama2With(R"("rope_scaling":{"rope_type":"dynamic","factor":4})")).max_positions,
            16384);
  EXPECT_EQ(Parse(Llama2With(R"("rope_scaling":{"rope_type":"yarn","factor":4.0,)"
                             R"("original_max_position_embeddings":2048})"))
                .max_positions,
            8192);
  EXPECT_EQ(
      Parse(Llama2With(R"("rope_scaling":{"rope_type":"llama3","factor":8.0})")).max_positions,
      4096);
  EXPECT_EQ(Parse(Llama2With(R"("rope_scaling":null)")).max_positions, 4096);
  // Transformers v5 spells it rope_parameters.
  EXPECT_EQ(
      Parse(Llama2With(R"("rope_parameters":{"rope_type":"linear","factor":2})")).max_positions,
      8192);
  // A factor out of range is an error naming the field, not a silent context.
  auto bad = ParseHfConfig(Llama2With(R"("rope_scaling":{"type":"linear","factor":-2})"), "c.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.error().field, "rope_scaling.factor")) << bad.error().field;
}

TEST(ParseHfConfig, NestedTextConfig) {
  // LLaVA-1.5-style wrapper: the language model lives under text_config (models.json
  // field_notes.config_path); vision_config must be ignored.
  const char* cfg = R"({
    "model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
    "torch_dtype": "bfloat16",
    "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024,
                      "num_hidden_layers": 24, "num_attention_heads": 16},
    "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
                    "num_hidden_layers": 32, "num_attention_heads": 32,
                    "num_key_value_heads": 32, "vocab_size": 32064}})";
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.family, "llama");
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.vocab, 32064);
  EXPECT_EQ(m.dtype, Precision::kBf16);
  EXPECT_FALSE(m.tied_embeddings);  // llama default
  // Llama-2-7B's 6,738,415,616 + 64 extra tokens x 4096 x 2 (embedding + untied head).
  EXPECT_EQ(CountParams(m).total, 6738415616 + 2 * 64 * 4096);
}

TEST(ParseHfConfig, TopLevelWinsWhenTextConfigHasNoLayers) {
  std::string cfg = Llama2With(R"("text_config":{"vocab_size":99})");
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(CountParams(m).total, 6738415616);
}

TEST(ParseHfConfig, ExplicitHeadDim) {
  // Gemma-7B: hidden 3072, 16 heads, head_dim 256 (not 3072/16 = 192); tied by family default.
  const char* cfg = R"({"model_type":"gemma","hidden_size":3072,"intermediate_size":24576,
    "num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":16,"head_dim":256,
    "vocab_size":256000,"torch_dtype":"bfloat16"})";
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(CountParams(m).total, 8537680896);                // models.json Gemma-7B
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, 2.0).value(), 458752);  // models.json Gemma-7B
}

struct TieRow {
  const char* name;
  std::string config;
  bool tied;
  std::int64_t params;
  const char* source;
};

TEST(ParseHfConfig, TiedEmbeddingsKeyWinsOverFamilyDefault) {
  const std::string gemma =
      R"("model_type":"gemma","hidden_size":3072,"intermediate_size":24576,"num_hidden_layers":28,)"
      R"("num_attention_heads":16,"num_key_value_heads":16,"head_dim":256,"vocab_size":256000)";
  const std::string llama32_1b =
      R"("model_type":"llama","hidden_size":2048,"intermediate_size":8192,"num_hidden_layers":16,)"
      R"("num_attention_heads":32,"num_key_value_heads":8,"head_dim":64,"vocab_size":128256)";
  const std::string gpt2 =
      R"("model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"n_positions":1024,)"
      R"("vocab_size":50257)";
  const std::vector<TieRow> rows = {
      {"gemma_default_tied", "{" + gemma + "}", true, 8537680896, "models.json Gemma-7B"},
      {"gemma_key_false", "{" + gemma + R"(,"tie_word_embeddings":false})", false,
       8537680896 + 256000LL * 3072, "Gemma-7B + an untied 256000 x 3072 head"},
      {"llama_key_true", "{" + llama32_1b + R"(,"tie_word_embeddings":true})", true, 1235814400,
       "models.json Llama-3.2-1B (tie_word_embeddings true)"},
      {"llama_default_untied", "{" + llama32_1b + "}", false, 1235814400 + 128256LL * 2048,
       "Llama-3.2-1B + an untied 128256 x 2048 head"},
      {"gpt2_default_tied", "{" + gpt2 + "}", true, 124439808, "models.json GPT-2"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.name) + ": " + row.source);
    ModelSpec m = Parse(row.config);
    EXPECT_EQ(m.tied_embeddings, row.tied);
    EXPECT_EQ(CountParams(m).total, row.params);
  }
}

TEST(ParseHfConfig, GroupedQueryAttention) {
  // Llama-3-8B: 32 query heads, 8 KV heads.
  const char* cfg = R"({"model_type":"llama","hidden_size":4096,"intermediate_size":14336,
    "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,
    "tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(CountParams(m).total, 8030261248);                // models.json Llama-3-8B
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, 2.0).value(), 131072);  // models.json Llama-3-8B
}

TEST(ParseHfConfig, MultiQueryFlag) {
  const char* cfg = R"({"model_type":"gpt_bigcode","n_embd":256,"n_layer":2,"n_head":8,
    "multi_query":true,"n_positions":128,"vocab_size":1000})";
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.kv_heads, 1);
}

TEST(ParseHfConfig, MixtralStyleMoe) {
  const char* cfg = R"({"model_type":"mixtral","hidden_size":4096,"intermediate_size":14336,
    "num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":32000,
    "tie_word_embeddings":false,"torch_dtype":"bfloat16","num_local_experts":8,
    "num_experts_per_tok":2})";
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.arch, ModelArch::kMoe);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->experts, 8);
  EXPECT_EQ(m.moe->top_k, 2);
  EXPECT_EQ(m.moe->expert_ffn, 14336);
  EXPECT_EQ(m.moe->shared_experts, 0);
  ParamCounts c = CountParams(m);
  EXPECT_EQ(c.total, 46702792704);   // models.json Mixtral-8x7B-v0.1 computed_params
  EXPECT_EQ(c.active, 12879925248);  // computed_active_params
}

TEST(ParseHfConfig, DeepSeekStyleMla) {
  // DeepSeek-V3 config.json fields (models.json / data/models/deepseek-v3.json).
  const char* cfg = R"({"model_type":"deepseek_v3","hidden_size":7168,"intermediate_size":18432,
    "moe_intermediate_size":2048,"num_hidden_layers":61,"num_attention_heads":128,
    "num_key_value_heads":128,"vocab_size":129280,"tie_word_embeddings":false,
    "torch_dtype":"bfloat16","n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,
    "first_k_dense_replace":3,"moe_layer_freq":1,"q_lora_rank":1536,"kv_lora_rank":512,
    "qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"topk_method":"noaux_tc",
    "quantization_config":{"quant_method":"fp8","fmt":"e4m3","weight_block_size":[128,128]}})";
  ModelSpec m = Parse(cfg);
  EXPECT_EQ(m.arch, ModelArch::kMlaMoe);
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.mla->q_lora_rank, 1536);
  EXPECT_EQ(m.mla->qk_rope_head_dim, 64);
  EXPECT_EQ(m.mla->qk_nope_head_dim, 128);
  EXPECT_EQ(m.mla->v_head_dim, 128);
  EXPECT_EQ(m.head_dim, 192);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->experts, 256);
  EXPECT_EQ(m.moe->shared_experts, 1);
  EXPECT_EQ(m.moe->dense_layers, 3);
  EXPECT_TRUE(m.moe->router_bias);
  ASSERT_TRUE(m.quant.has_value());
  EXPECT_EQ(m.quant->method, "fp8");
  EXPECT_EQ(m.quant->bits, 8);
  ParamCounts c = CountParams(m);
  EXPECT_EQ(c.total, 671026419200);  // models.json DeepSeek-V3
  EXPECT_EQ(c.active, 37552297472);
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, 2.0).value(), 70272);  // aic-kv-per-token-deepseek-v3-tp1
}

TEST(ParseHfConfig, MlaWithoutQueryCompression) {
  // DeepSeek-V2-Lite style: q_lora_rank null = no query compression.
  const char* cfg = R"({"model_type":"deepseek_v2","hidden_size":2048,"intermediate_size":10944,
    "moe_intermediate_size":1408,"num_hidden_layers":27,"num_attention_heads":16,
    "num_key_value_heads":16,"vocab_size":102400,"n_routed_experts":64,"n_shared_experts":2,
    "num_experts_per_tok":6,"first_k_dense_replace":1,"q_lora_rank":null,"kv_lora_rank":512,
    "qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128})";
  ModelSpec m = Parse(cfg);
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->q_lora_rank, 0);
  EXPECT_FALSE(m.moe->router_bias);
  EXPECT_DOUBLE_EQ(KvBytesPerToken(m, 2.0, 4).value(), 27.0 * (512 + 64) * 2);
}

// gpt-oss's MXFP4 checkpoints quantize the MoE experts only; attention, router, embeddings and
// LM head stay bf16 (config.json modules_to_not_convert). gpt-oss-20b: 20.9B parameters in a
// ~13.8 GB checkpoint.
TEST(ParseHfConfig, GptOssMxfp4QuantizesTheExpertsOnly) {
  const char* cfg = R"({"model_type":"gpt_oss","hidden_size":2880,"intermediate_size":2880,
    "num_hidden_layers":24,"num_attention_heads":64,"num_key_value_heads":8,"head_dim":64,
    "vocab_size":201088,"num_local_experts":32,"num_experts_per_tok":4,
    "tie_word_embeddings":false,"quantization_config":{"quant_method":"mxfp4",
    "modules_to_not_convert":["model.layers.*.self_attn","model.layers.*.mlp.router",
    "model.embed_tokens","lm_head"]}})";
  ModelSpec m = Parse(cfg);
  ASSERT_TRUE(m.moe.has_value());
  ASSERT_TRUE(m.quant.has_value());
  EXPECT_EQ(m.quant->method, "mxfp4");
  EXPECT_TRUE(m.quant->experts_only);
  EXPECT_NEAR(static_cast<double>(CountParams(m).total) / 1e9, 20.9, 0.1);
  EXPECT_NEAR(RoutedExpertParams(m) / 1e9, 24 * 32 * 3 * 2880.0 * 2880 / 1e9, 1e-9);
}

// Meta's Llama 3.1 FP8 checkpoints (quant_method fbgemm_fp8) leave every attention projection,
// the first and last blocks' MLPs and the head in bf16 (modules_to_not_convert; Llama 3 paper
// section 6.2): Llama-3.1-405B then loads 57.75 GiB per GPU at TP 8 in vLLM (issue 6746's log),
// not the 47.7 GiB of an all-FP8 model.
// Sliding-window attention (docs/model.md 4.3): which layers slide, and over how many tokens.
TEST(SlidingWindow, FamiliesAndLayerTypes) {
  // Gemma-2: every other layer (even layers slide) over 4096 tokens.
  EXPECT_EQ(Preset("Gemma-2-9B").sliding_layers, 21);
  EXPECT_EQ(Preset("Gemma-2-9B").sliding_window, 4096);
  // Gemma-3: five local layers to one global (sliding_window_pattern 6), 1024 tokens.
  EXPECT_EQ(Preset("Gemma-3-27B-it").sliding_layers, 62 - 10);
  EXPECT_EQ(Preset("Gemma-3-27B-it").sliding_window, 1024);
  // Mistral-7B-v0.1 slides on every layer; v0.3 declares no window.
  EXPECT_EQ(Preset("Mistral-7B-v0.1").sliding_layers, 32);
  EXPECT_EQ(Preset("Mistral-7B-Instruct-v0.3").sliding_layers, 0);
  // Qwen2.5's window is off (use_sliding_window false); Phi-3's 2047 is not used.
  EXPECT_EQ(Preset("Qwen2.5-7B-Instruct").sliding_layers, 0);
  EXPECT_EQ(Preset("Qwen2.5-7B-Instruct").sliding_window, 0);
  EXPECT_EQ(Preset("Phi-3-mini-4k-instruct").sliding_layers, 0);
  EXPECT_EQ(Preset("Llama-3.1-8B").sliding_layers, 0);
  // gpt-oss lists its layers: alternating 128-token windows.
  std::string types;
  for (int i = 0; i < 24; ++i) {
    types +=
        std::string(i ? "," : "") + (i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
  }
  const ModelSpec oss = Parse(R"({"model_type":"gpt_oss","hidden_size":2880,
    "intermediate_size":2880,"num_hidden_layers":24,"num_attention_heads":64,
    "num_key_value_heads":8,"head_dim":64,"vocab_size":201088,"num_local_experts":32,
    "num_experts_per_tok":4,"sliding_window":128,"layer_types":[)" +
                              types + "]}");
  EXPECT_EQ(oss.sliding_layers, 12);
  EXPECT_EQ(oss.sliding_window, 128);
  EXPECT_EQ(Preset("gpt-oss-120b").sliding_layers, 18);
  EXPECT_EQ(Preset("gpt-oss-120b").sliding_window, 128);
  // A bad window is named.
  EXPECT_FALSE(ParseHfConfig(R"({"model_type":"mistral","hidden_size":64,"num_hidden_layers":2,
    "num_attention_heads":4,"vocab_size":10,"sliding_window":-5})",
                             "config.json")
                   .ok());
}

TEST(SlidingWindow, KvAndAttentionShares) {
  const ModelSpec& g3 = Preset("Gemma-3-27B-it");
  // (10 global x 131072 + 52 sliding x 1024) / (62 x 131072): a sixth of the global-only cache.
  EXPECT_NEAR(SlidingKvShare(g3, 131072), (10.0 * 131072 + 52.0 * 1024) / (62.0 * 131072), 1e-12);
  EXPECT_NEAR(SlidingKvShare(g3, 131072), 0.1678, 1e-4);
  EXPECT_DOUBLE_EQ(SlidingKvShare(g3, 1024), 1.0);  // within the window nothing is dropped
  EXPECT_DOUBLE_EQ(SlidingKvShare(Preset("Llama-3.1-8B"), 131072), 1.0);
  // Every layer slides over 4096: at 8192 tokens half the KV, and 3/4 of the causal score
  // blocks ((8192 x 4096 - 4096^2 / 2) / (8192^2 / 2)).
  const ModelSpec& mis = Preset("Mistral-7B-v0.1");
  EXPECT_DOUBLE_EQ(SlidingKvShare(mis, 8192), 0.5);
  EXPECT_DOUBLE_EQ(SlidingAttentionShare(mis, 8192), 0.75);
  EXPECT_DOUBLE_EQ(SlidingAttentionShare(mis, 4096), 1.0);
}

TEST(ParseHfConfig, MetaFp8QuantizesTheInnerFeedForwardOnly) {
  std::string skip = R"("lm_head")";
  for (int i = 0; i < 126; ++i) {
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"})
      skip += fmt::format(R"(,"model.layers.{}.self_attn.{}")", i, p);
  }
  for (int i : {0, 125}) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"})
      skip += fmt::format(R"(,"model.layers.{}.mlp.{}")", i, p);
  }
  const std::string cfg =
      R"({"model_type":"llama","hidden_size":16384,"intermediate_size":53248,
    "num_hidden_layers":126,"num_attention_heads":128,"num_key_value_heads":8,
    "vocab_size":128256,"tie_word_embeddings":false,"quantization_config":{
    "quant_method":"fbgemm_fp8","activation_scale_ub":1200.0,"modules_to_not_convert":[)" +
      skip + "]}}";
  ModelSpec m = Parse(cfg.c_str());
  ASSERT_TRUE(m.quant.has_value());
  EXPECT_EQ(m.quant->method, "fbgemm_fp8");
  EXPECT_TRUE(m.quant->mlp_only);
  EXPECT_EQ(m.quant->dense_blocks, 2);
  // Per GPU at TP 8: attention (q, o 16384^2; k, v 16384 x 1024) and the 2 edge MLPs at 2 B, the
  // 124 inner MLPs (3 x 16384 x 53248) at 1 B, embeddings and head at 2 B, all / 8 (norms add
  // ~4 MB).
  const double attn = 2.0 * 16384 * 16384 + 2.0 * 16384 * 1024, mlp = 3.0 * 16384 * 53248;
  const double expect =
      (126 * attn * 2 + 2 * mlp * 2 + 124 * mlp * 1 + 2.0 * 128256 * 16384 * 2) / 8;
  const double got = InferenceWeightBytes(m, Precision::kFp8, m.quant, 8, 1).value();
  EXPECT_NEAR(got / expect, 1.0, 1e-3);
  EXPECT_NEAR(got / kBytesPerGiB, 57.75, 0.03 * 57.75);
  // Without the list every linear layer is FP8.
  ModelSpec all = Parse(R"({"model_type":"llama","hidden_size":16384,"intermediate_size":53248,
    "num_hidden_layers":126,"num_attention_heads":128,"num_key_value_heads":8,
    "vocab_size":128256,"quantization_config":{"quant_method":"fbgemm_fp8"}})");
  ASSERT_TRUE(all.quant.has_value());
  EXPECT_FALSE(all.quant->mlp_only);
  EXPECT_LT(InferenceWeightBytes(all, Precision::kFp8, all.quant, 8, 1).value(), 0.85 * got);
}

struct QuantRow {
  const char* name;
  const char* quantization_config;
  const char* method;
  double bits;
  int group;
  bool zero_points;
  bool double_quant;
  double effective_bits;
  const char* source;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const QuantRow& row, std::ostream* os) { *os << row.name; }

const QuantRow kQuantRows[] = {
    {"awq",
     R"({"quant_method":"awq","bits":4,"group_size":128,"zero_point":true,"version":"gemm"})",
     "awq", 4, 128, true, false, 4.0 + 16.0 / 128 + 4.0 / 128,
     "AWQ: 4-bit weights, one fp16 scale and one packed 4-bit zero per 128-group"},
    {"awq_autoawq_keys", R"({"quant_method":"awq","w_bit":4,"q_group_size":64})", "awq", 4, 64,
     true, false, 4.0 + 16.0 / 64 + 4.0 / 64, "older AutoAWQ key names"},
    {"gptq", R"({"quant_method":"gptq","bits":4,"group_size":128,"sym":true,"desc_act":false})",
     "gptq", 4, 128, true, false, 4.0 + 16.0 / 128 + 4.0 / 128, "GPTQ stores packed qzeros"},
    {"gptq_per_channel", R"({"quant_method":"gptq","bits":8,"group_size":-1})", "gptq", 8, 0, true,
     false, 8.0, "group_size -1 = per-channel"},
    {"bnb_nf4_double_quant",
     R"({"quant_method":"bitsandbytes","load_in_4bit":true,"bnb_4bit_quant_type":"nf4",)"
     R"("bnb_4bit_use_double_quant":true,"bnb_4bit_compute_dtype":"bfloat16"})",
     "bnb-nf4", 4, 64, false, true, 4.0 + (8.0 + 32.0 / 256) / 64,
     "QLoRA (Dettmers et al. 2023) sec. 3: 8/64 + 32/(64 x 256) = 0.127 bit/param"},
    {"bnb_int8", R"({"quant_method":"bitsandbytes","load_in_8bit":true})", "bnb-int8", 8, 0, false,
     false, 8.0, "LLM.int8(): per-row scales"},
    {"fp8", R"({"quant_method":"fp8","fmt":"e4m3"})", "fp8", 8, 0, false, false, 8.0,
     "fp8 checkpoints"},
};

class Quant : public ::testing::TestWithParam<QuantRow> {};

TEST_P(Quant, ParsesQuantizationConfig) {
  const QuantRow& row = GetParam();
  SCOPED_TRACE(row.source);
  ModelSpec m =
      Parse(Llama2With(std::string(R"("quantization_config":)") + row.quantization_config));
  ASSERT_TRUE(m.quant.has_value());
  EXPECT_EQ(m.quant->method, row.method);
  EXPECT_EQ(m.quant->bits, row.bits);
  EXPECT_EQ(m.quant->group_size, row.group);
  EXPECT_EQ(m.quant->zero_points, row.zero_points);
  EXPECT_EQ(m.quant->double_quant, row.double_quant);
  EXPECT_NEAR(m.quant->EffectiveBits(), row.effective_bits, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Methods, Quant, ::testing::ValuesIn(kQuantRows),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

TEST(QuantSpec, BitsandbytesNf4WithoutDoubleQuantUsesFp32Absmax) {
  // QLoRA (Dettmers et al. 2023), sec. 3 "Double Quantization": with blocksize 64 and 32-bit
  // quantization constants, the constants add 32/64 = 0.5 bit per parameter; bitsandbytes stores
  // the per-block absmax in fp32 unless bnb_4bit_use_double_quant is set. Expected 4.5 bits.
  ModelSpec m = Parse(
      Llama2With(R"("quantization_config":{"quant_method":"bitsandbytes","load_in_4bit":true,)"
                 R"("bnb_4bit_quant_type":"nf4","bnb_4bit_use_double_quant":false})"));
  ASSERT_TRUE(m.quant.has_value());
  EXPECT_EQ(m.quant->method, "bnb-nf4");
  EXPECT_NEAR(m.quant->EffectiveBits(), 4.5, 1e-12)
      << "bitsandbytes NF4 without double quant keeps one fp32 absmax per 64-block (fixed in "
         "5c831f2; before it, EffectiveBits charged a 16-bit scale: 4.25 bits)";
}

TEST(QuantSpec, EffectiveBitsEdgeCases) {
  EXPECT_EQ((QuantSpec{"none", 16, 128, true, false}).EffectiveBits(), 16.0);  // not quantized
  EXPECT_EQ((QuantSpec{"int8", 8, 0, false, false}).EffectiveBits(), 8.0);     // per-channel
  EXPECT_NEAR((QuantSpec{"int4", 4, 128, false, false}).EffectiveBits(), 4.125, 1e-12);
}

TEST(ParseHfConfig, UnknownQuantMethodIsUnsupported) {
  auto r =
      ParseHfConfig(Llama2With(R"("quantization_config":{"quant_method":"hqq2"})"), "cfg.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(r.error().field, "cfg.json.quantization_config.quant_method");
  EXPECT_TRUE(Has(r.error().message, "hqq2")) << r.error().message;
  EXPECT_FALSE(r.error().hint.empty());
}

TEST(ParseHfConfig, BitsandbytesWithoutModeIsUnsupported) {
  auto r = ParseHfConfig(Llama2With(R"("quantization_config":{"quant_method":"bitsandbytes"})"),
                         "cfg.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(r.error().field, "cfg.json.quantization_config");
}

TEST(ParseHfConfig, DtypeKeys) {
  // models.json field_notes.torch_dtype: newer transformers write "dtype"; accept both.
  const std::pair<std::string, Precision> rows[] = {
      {R"("dtype":"bfloat16")", Precision::kBf16},
      {R"("dtype":"float32")", Precision::kFp32},
      {R"("torch_dtype":"float32")", Precision::kFp32},
      {R"("torch_dtype":"bfloat16")", Precision::kBf16},
  };
  const std::string base =
      R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_hidden_layers":2,)"
      R"("num_attention_heads":4,"vocab_size":100,)";
  for (const auto& [key, want] : rows) {
    SCOPED_TRACE(key);
    EXPECT_EQ(Parse(base + key + "}").dtype, want);
  }
  // Llama-2-7B writes torch_dtype float16.
  EXPECT_EQ(Parse(Llama2With("")).dtype, Precision::kFp16);
  // Neither key: the default.
  EXPECT_EQ(Parse(base + R"("tie_word_embeddings":false})").dtype, Precision::kBf16);
}

// Errors: code, field and message.
struct ErrorRow {
  const char* name;
  std::string config;
  ErrorCode code;
  const char* field;         // exact field
  const char* message_part;  // substring of the message
};

TEST(ParseHfConfig, Errors) {
  const std::string head = R"({"model_type":"llama","hidden_size":4096,"intermediate_size":11008,)"
                           R"("num_attention_heads":32,"vocab_size":32000)";
  const std::vector<ErrorRow> rows = {
      {"malformed", R"({"hidden_size": 4096,)", ErrorCode::kParse, "my/config.json",
       "malformed JSON"},
      {"not_an_object", "[1, 2, 3]", ErrorCode::kParse, "my/config.json", "JSON object"},
      {"negative_layers", head + R"(,"num_hidden_layers":-4})", ErrorCode::kInvalidArgument,
       "my/config.json.num_hidden_layers", "-4"},
      {"missing_layers", head + "}", ErrorCode::kInvalidArgument,
       "my/config.json.num_hidden_layers", "got 0"},
      {"layers_not_a_number", head + R"(,"num_hidden_layers":"32"})", ErrorCode::kParse,
       "my/config.json.num_hidden_layers", "whole number"},
      {"layers_fraction", head + R"(,"num_hidden_layers":31.5})", ErrorCode::kParse,
       "my/config.json.num_hidden_layers", "whole number"},
      {"kv_heads_not_dividing", head + R"(,"num_hidden_layers":32,"num_key_value_heads":5})",
       ErrorCode::kInvalidArgument, "my/config.json.num_key_value_heads", "5"},
      {"kv_heads_above_heads", head + R"(,"num_hidden_layers":32,"num_key_value_heads":64})",
       ErrorCode::kInvalidArgument, "my/config.json.num_key_value_heads", "64"},
      {"no_hidden",
       R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":4,"vocab_size":9})",
       ErrorCode::kInvalidArgument, "my/config.json.hidden_size", "got 0"},
      {"no_vocab",
       R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4})",
       ErrorCode::kInvalidArgument, "my/config.json.vocab_size", "got 0"},
      {"tie_not_bool", head + R"(,"num_hidden_layers":32,"tie_word_embeddings":"no"})",
       ErrorCode::kParse, "my/config.json.tie_word_embeddings", "true or false"},
      {"quant_not_object", head + R"(,"num_hidden_layers":32,"quantization_config":4})",
       ErrorCode::kParse, "my/config.json.quantization_config", "object"},
      {"moe_top_k_too_big",
       head + R"(,"num_hidden_layers":32,"num_local_experts":8,"num_experts_per_tok":9})",
       ErrorCode::kInvalidArgument, "my/config.json.num_experts_per_tok", "9"},
      {"qwen_mlp_only_layers",
       head + R"(,"num_hidden_layers":32,"num_experts":8,"mlp_only_layers":[0,1]})",
       ErrorCode::kUnsupported, "my/config.json.mlp_only_layers", "not supported"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    auto r = ParseHfConfig(row.config, "my/config.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, row.code) << r.error().ToString();
    EXPECT_EQ(r.error().field, row.field) << r.error().ToString();
    EXPECT_TRUE(Has(r.error().message, row.message_part)) << r.error().ToString();
  }
}

// Issue 10: members the reader used to skip when of the wrong type are errors naming them.
TEST(ParseHfConfig, WrongTypeIsAnErrorNotAbsent) {
  const std::string head = R"({"model_type":"llama","hidden_size":4096,"intermediate_size":11008,)"
                           R"("num_attention_heads":32,"vocab_size":32000,"num_hidden_layers":32)";
  const std::vector<ErrorRow> rows = {
      {"gpuplan_not_object", head + R"(,"gpuplan":"x"})", ErrorCode::kParse,
       "my/config.json.gpuplan", "object"},
      {"aliases_not_array", head + R"(,"gpuplan":{"aliases":"a"}})", ErrorCode::kParse,
       "my/config.json.gpuplan.aliases", "array"},
      {"alias_not_string", head + R"(,"gpuplan":{"aliases":["a",3]}})", ErrorCode::kParse,
       "my/config.json.gpuplan.aliases[1]", "string"},
      {"text_config_not_object", head + R"(,"text_config":[1]})", ErrorCode::kParse,
       "my/config.json.text_config", "object"},
      {"mlp_only_layers_not_array",
       head + R"(,"num_experts":8,"num_experts_per_tok":2,"mlp_only_layers":3})", ErrorCode::kParse,
       "my/config.json.mlp_only_layers", "array"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    auto r = ParseHfConfig(row.config, "my/config.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, row.code) << r.error().ToString();
    EXPECT_EQ(r.error().field, row.field) << r.error().ToString();
    EXPECT_TRUE(Has(r.error().message, row.message_part)) << r.error().ToString();
  }
}

// A CNN's frozen leading layers are a part of its forward: a larger share than the whole, or a
// share of a whole not given, is an error naming the field; frozen_norm must be a boolean.
TEST(ParseHfConfig, FrozenLayersMustBeAPartOfTheForward) {
  const std::string head = R"({"model_type":"resnet","gpuplan":{"arch":"cnn","params":25557032,)"
                           R"("gflops_per_sample":8.18,"activation_melems_per_sample":11.31,)";
  auto ok = ParseHfConfig(head + R"("frozen_norm":true,"frozen_gflops_per_sample":1.5,)"
                                 R"("frozen_activation_melems_per_sample":3}})",
                          "cnn.json");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_TRUE(ok->frozen_norm);
  EXPECT_DOUBLE_EQ(ok->frozen_gflops_per_sample.value_or(0), 1.5);
  for (const std::string bad :
       {R"("frozen_gflops_per_sample":9}})", R"("frozen_activation_melems_per_sample":12}})",
        R"("frozen_norm":"yes"}})"}) {
    SCOPED_TRACE(bad);
    auto r = ParseHfConfig(head + bad, "cnn.json");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Has(r.error().ToString(), "frozen")) << r.error().ToString();
  }
}

// A Hugging Face ResNet config is the whole network: its parameters, FLOPs and feature maps
// follow from the stage lists, and match torchvision's published counts exactly (resnet18 ...
// resnet152: 11,689,512 / 21,797,672 / 25,557,032 / 44,549,160 / 60,192,808 parameters; ResNet-50
// 4.09 GMAC = 8.18 GFLOPs at 224 x 224). The largest single weight is layer4's 3x3 convolution
// (512 x 512 x 9 = 2,359,296), which accelerate's estimate-memory reports for timm's resnet50.
TEST(ResNet, CountsFollowTheStagesExactly) {
  struct Row {
    std::vector<int> depths;
    bool bottleneck;
    std::int64_t params;
  };
  const std::vector<int> wide = {256, 512, 1024, 2048}, narrow = {64, 128, 256, 512};
  for (const Row& r : {Row{{2, 2, 2, 2}, false, 11689512}, Row{{3, 4, 6, 3}, false, 21797672},
                       Row{{3, 4, 6, 3}, true, 25557032}, Row{{3, 4, 23, 3}, true, 44549160},
                       Row{{3, 8, 36, 3}, true, 60192808}}) {
    ResNetSpec s;
    s.depths = r.depths;
    s.widths = r.bottleneck ? wide : narrow;
    s.bottleneck = r.bottleneck;
    const ResNetCounts c = CountResNet(s, 3, 224);
    EXPECT_EQ(c.params, r.params);
    EXPECT_EQ(c.largest_layer, 2359296);
  }
  ResNetSpec r50;
  r50.depths = {3, 4, 6, 3};
  r50.widths = wide;
  const ResNetCounts c = CountResNet(r50, 3, 224);
  EXPECT_NEAR(2 * c.macs / 1e9, 8.18, 0.005);
  EXPECT_NEAR(c.feature_elems / 1e6, 11.31, 0.005);
  // ResNet v1 strides a bottleneck's first 1x1 (transformers' downsample_in_bottleneck): the
  // same weights, 3.86 GMAC (He et al. 2016, Table 1: 3.8 x 10^9 multiply-adds).
  ResNetSpec v1 = r50;
  v1.stride_in_first_1x1 = true;
  const ResNetCounts c1 = CountResNet(v1, 3, 224);
  EXPECT_EQ(c1.params, c.params);
  EXPECT_NEAR(c1.macs / 1e9, 3.86, 0.005);
  // The presets' own figures are these counts.
  for (const char* name : {"ResNet-50", "ResNet-152"}) {
    const ModelSpec& m = Preset(name);
    ASSERT_TRUE(m.resnet.has_value()) << name;
    const ResNetCounts pc = CountResNet(*m.resnet, m.channels, 224);
    EXPECT_EQ(pc.params, m.params_override.value_or(0)) << name;
    EXPECT_NEAR(2 * pc.macs / 1e9, m.gflops_per_sample.value_or(0), 0.01) << name;
    EXPECT_NEAR(pc.feature_elems / 1e6, m.activation_melems_per_sample.value_or(0), 0.01) << name;
    EXPECT_TRUE(CountParams(m).exact) << name;
    EXPECT_EQ(CountParams(m).largest_layer, 2359296) << name;
  }
}

// A plain ResNet config (no gpuplan block, as the Hub serves microsoft/resnet-101) loads as a
// CNN with its counts; a malformed stage list is an error naming the field.
TEST(ParseHfConfig, ResNetConfigWithoutAPresetBlock) {
  const std::string body =
      R"({"model_type":"resnet","num_channels":3,"embedding_size":64,)"
      R"("hidden_sizes":[256,512,1024,2048],"layer_type":"bottleneck","num_labels":1000,)";
  auto m = ParseHfConfig(body + R"("depths":[3,4,23,3]})", "resnet101.json");
  ASSERT_TRUE(m.ok()) << m.error().ToString();
  EXPECT_EQ(m->arch, ModelArch::kCnn);
  EXPECT_EQ(CountParams(*m).total, 44549160);
  EXPECT_NEAR(m->gflops_per_sample.value_or(0), 15.60, 0.01);  // torchvision: 7.80 GMAC
  EXPECT_EQ(m->sample, "224x224 image");
  for (const auto& [bad, field] :
       std::vector<std::pair<std::string, std::string>>{{R"("depths":[3,4,23]})", "hidden_sizes"},
                                                        {R"("depths":[3,4,"23",3]})", "depths[2]"},
                                                        {R"("depths":[3,4,0,3]})", "depths[2]"},
                                                        {R"("depths":[]})", "depths"}}) {
    SCOPED_TRACE(bad);
    auto r = ParseHfConfig(body + bad, "resnet.json");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(Has(r.error().ToString(), "resnet.json." + field)) << r.error().ToString();
  }
  auto basic = ParseHfConfig(
      R"({"model_type":"resnet","hidden_sizes":[64],"depths":[2],"layer_type":"dense"})",
      "resnet.json");
  ASSERT_FALSE(basic.ok());
  EXPECT_TRUE(Has(basic.error().ToString(), "layer_type")) << basic.error().ToString();
}

TEST(ParseHfConfig, ErrorToStringNamesFieldAndHint) {
  auto r = ParseHfConfig("{", "cfg.json");
  ASSERT_FALSE(r.ok());
  std::string s = r.error().ToString();
  EXPECT_TRUE(Has(s, "cfg.json")) << s;
  EXPECT_TRUE(Has(s, "malformed JSON")) << s;
}

// ------------------------------------------------------------------------------------------------
// safetensors headers.

TEST(Safetensors, TinyExampleFromFormatsMd) {
  auto r = ParseSafetensorsHeader(kTinyHeader, "tiny.safetensors");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 36);
  EXPECT_EQ(r->bytes, 80);
  EXPECT_EQ(r->tensors, 2);
  using P = std::pair<std::string, std::int64_t>;
  EXPECT_EQ(r->params_by_dtype, (std::vector<P>{{"BF16", 32}, {"F32", 4}}));
}

TEST(Safetensors, HeaderPaddedWithSpaces) {
  // formats.md: the header may be right-padded with ASCII spaces.
  auto r = ParseSafetensorsHeader(std::string(kTinyHeader) + "       ", "tiny");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 36);
}

TEST(Safetensors, ScalarsEmptyTensorsAndUnknownDtypes) {
  // Shape [] = 1 element; a 0 dimension = empty; an unknown dtype is counted, not sized.
  const char* h = R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                  R"("e":{"dtype":"F16","shape":[0,7],"data_offsets":[4,4]},)"
                  R"("q":{"dtype":"Q4_K","shape":[10],"data_offsets":[4,10]},)"
                  R"("f4":{"dtype":"F4","shape":[4,2],"data_offsets":[10,14]}})";
  auto r = ParseSafetensorsHeader(h, "x");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 1 + 0 + 10 + 8);
  EXPECT_EQ(r->bytes, 14);
  EXPECT_EQ(r->tensors, 4);
}

struct HeaderErrorRow {
  const char* name;
  const char* header;
  const char* field_part;
  const char* message_part;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const HeaderErrorRow& row, std::ostream* os) { *os << row.name; }

const HeaderErrorRow kHeaderErrors[] = {
    {"offsets_vs_shape", R"({"w":{"dtype":"BF16","shape":[8,4],"data_offsets":[0,60]}})",
     "h.safetensors:w", "data_offsets"},
    {"overlap",
     R"({"a":{"dtype":"BF16","shape":[8,4],"data_offsets":[0,64]},)"
     R"("b":{"dtype":"F32","shape":[4],"data_offsets":[48,64]}})",
     "h.safetensors", "overlap"},
    {"end_before_begin", R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})",
     "h.safetensors:w.data_offsets", "begin"},
    {"negative_dim", R"({"w":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,16]}})",
     "h.safetensors:w.shape", ">= 0"},
    {"missing_shape", R"({"w":{"dtype":"F32","data_offsets":[0,16]}})", "h.safetensors:w", "shape"},
    {"three_offsets", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})",
     "h.safetensors:w", "malformed"},
    {"not_object", "[]", "h.safetensors", "JSON object"},
    {"malformed_json", R"({"w":{"dtype":)", "h.safetensors", "malformed JSON"},
};

class SafetensorsHeaderError : public ::testing::TestWithParam<HeaderErrorRow> {};

TEST_P(SafetensorsHeaderError, IsParseError) {
  const HeaderErrorRow& row = GetParam();
  auto r = ParseSafetensorsHeader(row.header, "h.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_TRUE(Has(r.error().field, row.field_part)) << r.error().ToString();
  EXPECT_TRUE(Has(r.error().message, row.message_part)) << r.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(Headers, SafetensorsHeaderError, ::testing::ValuesIn(kHeaderErrors),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

TEST(Safetensors, DuplicateTensorNamesAreRejected) {
  // formats.md section 1: "Rules the reference reader enforces (a robust reader should too): no
  // duplicate keys". A duplicate silently drops one tensor from the count.
  const char* h = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                  R"("w":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})";
  auto r = ParseSafetensorsHeader(h, "dup.safetensors");
  EXPECT_FALSE(r.ok()) << "BUG: ParseSafetensorsHeader (src/workload/safetensors.cc) accepts a "
                          "duplicate tensor name; nlohmann keeps the last one, params = "
                       << (r.ok() ? r->params : -1) << " instead of an error";
  if (!r.ok()) {
    EXPECT_EQ(r.error().code, ErrorCode::kParse);
  }
}

// ------------------------------------------------------------------------------------------------
// safetensors files.

TEST(SafetensorsFile, ValidFile) {
  TempDir dir;
  std::string p = dir.Write("model.safetensors", SafetensorsBytes(kTinyHeader, 80));
  auto r = ReadSafetensors(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 36);
  EXPECT_EQ(r->bytes, 80);
  EXPECT_EQ(r->tensors, 2);
}

TEST(SafetensorsFile, PaddedHeaderFile) {
  TempDir dir;
  std::string header = kTinyHeader;
  header.append((8 - header.size() % 8) % 8, ' ');  // writers pad to a multiple of 8
  std::string p = dir.Write("model.safetensors", SafetensorsBytes(header, 80));
  auto r = ReadSafetensors(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 36);
}

TEST(SafetensorsFile, TruncatedHeader) {
  TempDir dir;
  // The length field says 1000 bytes of header; the file holds far fewer.
  std::string p =
      dir.Write("model.safetensors",
                SafetensorsBytes(std::string(kTinyHeader).substr(0, 50), 0, std::uint64_t{1000}));
  auto r = ReadSafetensors(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().field, p);
  EXPECT_TRUE(Has(r.error().message, "truncated")) << r.error().message;
}

// Fuzz finding (fuzz_safetensors_index, 2026-12-03): a 256-byte shard name passes the name
// check but the file system rejects it (ENAMETOOLONG); std::filesystem::exists threw and the
// process aborted. It is an absent shard now, and the index without total_size an error.
TEST(SafetensorsFile, IndexWithAShardNameTooLongForTheFileSystem) {
  TempDir dir;
  const std::string shard = std::string(244, 'a') + ".safetensors";  // 256 bytes
  std::string p = dir.Write("model.safetensors.index.json",
                            R"({"metadata": {}, "weight_map": {"w": ")" + shard + R"("}})");
  auto r = ReadSafetensors(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParse) << r.error().ToString();
  EXPECT_TRUE(Has(r.error().field, "total_size")) << r.error().ToString();
}

TEST(SafetensorsFile, ThreeByteFile) {
  TempDir dir;
  std::string p = dir.Write("model.safetensors", "abc");
  auto r = ReadSafetensors(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().field, p);
  EXPECT_TRUE(Has(r.error().message, "truncated")) << r.error().message;
}

TEST(SafetensorsFile, ZeroOrHugeHeaderLength) {
  TempDir dir;
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{200} * 1024 * 1024}) {
    SCOPED_TRACE(n);
    std::string p = dir.Write("model.safetensors", SafetensorsBytes("{}", 0, n));
    auto r = ReadSafetensors(p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kParse);
    EXPECT_TRUE(Has(r.error().message, "out of range")) << r.error().message;
  }
}

TEST(SafetensorsFile, MissingFileIsIo) {
  TempDir dir;
  auto r = ReadSafetensors((dir.path() / "absent.safetensors").string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kIo);
  auto j = ReadSafetensors((dir.path() / "absent.index.json").string());
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, ErrorCode::kIo);
}

TEST(SafetensorsFile, DataBufferShorterThanOffsets) {
  // formats.md section 1: offsets must be in bounds. The header is whole but the data buffer
  // holds 10 of the 80 bytes it declares (a download cut after the header).
  TempDir dir;
  std::string p = dir.Write("model.safetensors", SafetensorsBytes(kTinyHeader, 10));
  auto r = ReadSafetensors(p);
  EXPECT_FALSE(r.ok()) << "BUG: ReadSafetensors (src/workload/safetensors.cc, ReadOneFile) does "
                          "not check data_offsets against the file size; a file truncated inside "
                          "its data buffer reads as valid";
  if (!r.ok()) {
    EXPECT_EQ(r.error().code, ErrorCode::kParse);
  }
}

std::string Shard1() {
  return SafetensorsBytes(
      R"({"lm_head.weight":{"dtype":"BF16","shape":[8,4],"data_offsets":[0,64]}})", 64);
}
std::string Shard2() {
  return SafetensorsBytes(
      R"({"__metadata__":{"format":"pt"},"norm.weight":{"dtype":"F32","shape":[4],)"
      R"("data_offsets":[0,16]},"embed.weight":{"dtype":"BF16","shape":[2,3],)"
      R"("data_offsets":[16,28]}})",
      28);
}
constexpr const char* kIndex =
    R"({"metadata":{"total_size":16060522496,"total_parameters":8030261248},)"
    R"("weight_map":{"lm_head.weight":"model-00001-of-00002.safetensors",)"
    R"("norm.weight":"model-00002-of-00002.safetensors",)"
    R"("embed.weight":"model-00002-of-00002.safetensors"}})";

TEST(SafetensorsIndex, ShardsPresentAreSummed) {
  TempDir dir;
  dir.Write("model-00001-of-00002.safetensors", Shard1());
  dir.Write("model-00002-of-00002.safetensors", Shard2());
  std::string p = dir.Write("model.safetensors.index.json", kIndex);
  auto r = ReadSafetensors(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 32 + 4 + 6);
  EXPECT_EQ(r->bytes, 64 + 16 + 12);
  EXPECT_EQ(r->tensors, 3);
  using P = std::pair<std::string, std::int64_t>;
  EXPECT_EQ(r->params_by_dtype, (std::vector<P>{{"BF16", 38}, {"F32", 4}}));
}

TEST(SafetensorsIndex, ShardsAbsentUseMetadata) {
  // formats.md section 1 example index (Llama-3-8B): total_size 16,060,522,496 bytes,
  // total_parameters 8,030,261,248.
  TempDir dir;
  std::string p = dir.Write("model.safetensors.index.json", kIndex);
  auto r = ReadSafetensors(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->bytes, 16060522496);
  EXPECT_EQ(r->params, 8030261248);
  EXPECT_EQ(r->tensors, 3);
}

TEST(SafetensorsIndex, OneShardMissingFallsBackToMetadata) {
  TempDir dir;
  dir.Write("model-00001-of-00002.safetensors", Shard1());
  std::string p = dir.Write("model.safetensors.index.json", kIndex);
  auto r = ReadSafetensors(p);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params, 8030261248);
}

TEST(SafetensorsIndex, Errors) {
  TempDir dir;
  struct Row {
    const char* name;
    const char* text;
    const char* field_suffix;
  };
  const Row rows[] = {
      {"no_weight_map", R"({"metadata":{"total_size":10}})", ".weight_map"},
      {"no_metadata_no_shards", R"({"weight_map":{"a":"x.safetensors"}})", ".metadata.total_size"},
      {"shard_not_string", R"({"weight_map":{"a":5}})", ".weight_map.a"},
      {"total_size_not_number",
       R"({"metadata":{"total_size":"big"},"weight_map":{"a":"x.safetensors"}})",
       ".metadata.total_size"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    std::string p = dir.Write("model.safetensors.index.json", row.text);
    auto r = ReadSafetensors(p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kParse);
    EXPECT_EQ(r.error().field, p + row.field_suffix);
  }
}

TEST(ResolveModel, SafetensorsBesideConfigGivesExactCount) {
  TempDir dir;
  dir.Write("config.json", kTinyConfig);
  std::string st = dir.Write("model.safetensors", SafetensorsBytes(kTinyHeader, 80));
  auto r = ResolveModel(st, "--model");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->hidden, 4);  // architecture from config.json
  ASSERT_TRUE(r->params_override.has_value());
  EXPECT_EQ(*r->params_override, 36);  // the header's exact count
  ASSERT_TRUE(r->checkpoint_bytes.has_value());
  EXPECT_EQ(*r->checkpoint_bytes, 80);
  EXPECT_EQ(CountParams(*r).total, 36);
  EXPECT_EQ(r->source, st);
}

TEST(ResolveModel, SafetensorsAlone) {
  TempDir dir;
  std::string st = dir.Write("model.safetensors", SafetensorsBytes(kTinyHeader, 80));
  auto r = ResolveModel(st, "--model");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->arch, ModelArch::kDense);
  EXPECT_EQ(r->layers, 0);
  EXPECT_EQ(r->params_override.value_or(0), 36);
  EXPECT_EQ(CountParams(*r).total, 36);
  EXPECT_FALSE(r->name.empty());
}

TEST(ResolveModel, IndexBesideConfig) {
  TempDir dir;
  dir.Write("config.json", kTinyConfig);
  std::string p = dir.Write("model.safetensors.index.json", kIndex);
  auto r = ResolveModel(p, "--model");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->params_override.value_or(0), 8030261248);
  EXPECT_EQ(r->checkpoint_bytes.value_or(0), 16060522496);
}

TEST(ResolveModel, TruncatedSafetensorsIsParseError) {
  TempDir dir;
  std::string p = dir.Write("model.safetensors", "abc");
  auto r = ResolveModel(p, "--model");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
}

TEST(ResolveModel, DirectoryReadsItsConfigJson) {
  // A directory resolves to its config.json. Current behaviour: a model.safetensors beside it is
  // not read, so the count comes from the formula, not the header (noted in the test report).
  TempDir dir;
  dir.Write("config.json", kTinyConfig);
  dir.Write("model.safetensors", SafetensorsBytes(kTinyHeader, 80));
  auto r = ResolveModel(dir.path().string(), "--model");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->hidden, 4);
  EXPECT_EQ(r->layers, 1);
}

}  // namespace
}  // namespace gpuplan
