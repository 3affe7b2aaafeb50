// Tests of the memory estimators against published arithmetic:
//  - ZeRO (Rajbhandari et al. 2020, Fig. 1 / Sec. 5): 7.5B params on 64 GPUs, mixed-precision
//    Adam (K = 12) -> 120 / 31.4 / 16.6 / 1.9 GB per GPU for stages 0-3;
//  - activations per layer (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
//    Transformer Models", Table 2 / eqs. 1-5), and the Figure 1 cases of
//    ../shared/validation/formula_cases.jsonl (calc-korthikanti-fig1-*);
//  - the guide's LLaMA-7B arithmetic (../shared/seeds/README.md, B4);
//  - DeepSpeed's model-state estimators (formula_cases ds-zero2-*, ds-zero3-*);
//  - serving: the TRT-LLM KV budget case of aiconfigurator (aic-kv-budget-trtllm-tokens), vLLM's
//    KV sizing rule (../shared/reference/formats.md section 6.2), quantized weights;
//  - LoRA parameter counts (PEFT's printouts) and monotonicity properties (STYLE.md section 9).
// Formula comparisons set include_runtime = false so only model tensors are compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuplan/estimate.h"
#include "gpuplan/serve.h"
#include "gpuplan/model.h"
#include "gpuplan/quant_preset.h"
#include "testing/fixtures.h"

#ifndef GPUPLAN_SHARED_DIR
#define GPUPLAN_SHARED_DIR ""
#endif

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<std::string> ReadShared(const std::string& rel) {
  std::string dir = GPUPLAN_SHARED_DIR;
  if (dir.empty()) return std::nullopt;
  std::ifstream in(fs::path(dir) / rel, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// formula_cases.jsonl by id (empty when ../shared is absent).
std::map<std::string, json> FormulaCases() {
  std::map<std::string, json> out;
  auto text = ReadShared("validation/formula_cases.jsonl");
  if (!text) return out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json c = json::parse(line);
    out[c["id"].get<std::string>()] = c;
  }
  return out;
}

using test::Acc;
using test::Preset;

// A model known only by its parameter count (no breakdown): the ZeRO paper's Psi.
ModelSpec ParamsOnly(std::int64_t params) {
  ModelSpec m;
  m.name = "params-only";
  m.arch = ModelArch::kDense;
  m.layers = 0;
  m.params_override = params;
  return m;
}

// A GPT-style model (LayerNorm, plain GELU MLP, biases omitted): the shapes of Korthikanti et
// al.'s Table 3 / formula_cases calc-korthikanti-fig1-*.
ModelSpec GptStyle(const char* name, int layers, std::int64_t hidden, int heads, int head_dim,
                   std::int64_t ffn, std::int64_t vocab) {
  ModelSpec m;
  m.name = name;
  m.arch = ModelArch::kDense;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = head_dim;
  m.ffn_hidden = ffn;
  m.gated_mlp = false;
  m.vocab = vocab;
  m.norm = NormKind::kLayerNorm;
  return m;
}

// GPT-3 175B: hidden 12288, 96 heads of 128, ffn 4h, 96 layers, vocab 51200.
ModelSpec Gpt3() { return GptStyle("GPT-3-175B-like", 96, 12288, 96, 128, 49152, 51200); }

// Options that compare the formula only: no runtime reserve, no ZeRO-3 gather buffer.
TrainMemoryOptions FormulaOptions() {
  TrainMemoryOptions o;
  o.include_runtime = false;
  o.largest_layer_params = 0.0;
  return o;
}

double RelErr(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

// ------------------------------------------------------------------------------------------------
// ZeRO: model states per GPU.

struct ZeroRow {
  const char* name;
  int stage;
  double expected_gb;  // the paper's figure (decimal GB)
  double exact_psi;    // the exact formula in units of Psi bytes
  const char* source;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const ZeroRow& row, std::ostream* os) { *os << row.name; }

// Psi = 7.5e9, Nd = 64, K = 12: stage 0 (2 + 2 + K) Psi; stage 1 (P_os) 4 Psi + K Psi / Nd;
// stage 2 (P_os+g) 2 Psi + (2 + K) Psi / Nd; stage 3 (P_os+g+p) (2 + 2 + K) Psi / Nd.
const ZeroRow kZeroRows[] = {
    {"baseline", 0, 120.0, 16.0, "ZeRO (Rajbhandari et al. 2020) Fig. 1: 120 GB"},
    {"stage1_pos", 1, 31.4, 4.0 + 12.0 / 64, "ZeRO Fig. 1: P_os 31.4 GB"},
    {"stage2_posg", 2, 16.6, 2.0 + 14.0 / 64, "ZeRO Fig. 1: P_os+g 16.6 GB"},
    {"stage3_posgp", 3, 1.9, 16.0 / 64, "ZeRO Fig. 1: P_os+g+p 1.9 GB"},
};

class ZeroPaper : public ::testing::TestWithParam<ZeroRow> {};

TEST_P(ZeroPaper, ModelStatesPerGpu) {
  const ZeroRow& row = GetParam();
  SCOPED_TRACE(row.source);
  const double psi = 7.5e9;
  ModelSpec m = ParamsOnly(7500000000);
  Parallelism par;
  par.dp = 64;
  par.zero_stage = row.stage;
  TrainMemoryOptions opt = FormulaOptions();
  opt.method = TrainMethod::kPretrain;
  opt.precision = Precision::kFp16;
  opt.optimizer = Optimizer::kAdam;  // K = 12: fp32 master (4) + m (4) + v (4)
  MemoryBreakdown b = EstimateTrainingMemory(m, par, opt);
  EXPECT_NEAR(ToGB(b.ModelStates()), row.expected_gb, 0.05);
  EXPECT_LT(RelErr(b.ModelStates().value(), row.exact_psi * psi), 1e-12);
  // K = 12 splits into the master copy (4) and Adam's m and v (8), sharded from stage 1.
  const double shard = row.stage >= 1 ? 64.0 : 1.0;
  EXPECT_LT(RelErr(b.master_weights.value(), 4.0 * psi / shard), 1e-12);
  EXPECT_LT(RelErr(b.optimizer.value(), 8.0 * psi / shard), 1e-12);
  EXPECT_LT(RelErr(b.gradients.value(), 2.0 * psi / (row.stage >= 2 ? 64.0 : 1.0)), 1e-12);
  EXPECT_LT(RelErr(b.weights.value(), 2.0 * psi / (row.stage >= 3 ? 64.0 : 1.0)), 1e-12);
  EXPECT_EQ(b.activations.value(), 0.0);
  EXPECT_EQ(b.cuda_context.value(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Stages, ZeroPaper, ::testing::ValuesIn(kZeroRows),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

TEST(ZeroStage3, GatherBufferIsTwoLargestLayers) {
  // ZeRO-3/FSDP gathers one unit at a time, double-buffered for prefetch: + 2 x largest layer.
  ModelSpec m = ParamsOnly(7500000000);
  Parallelism par;
  par.dp = 64;
  par.zero_stage = 3;
  TrainMemoryOptions opt = FormulaOptions();
  opt.precision = Precision::kFp16;
  MemoryBreakdown without = EstimateTrainingMemory(m, par, opt);
  opt.largest_layer_params = 1e8;
  MemoryBreakdown with = EstimateTrainingMemory(m, par, opt);
  EXPECT_DOUBLE_EQ(with.weights.value() - without.weights.value(), 2.0 * 1e8 * 2.0);
}

// An experts-only format (gpt-oss MXFP4) reads the routed experts at 4.25 bits and everything
// else at 16: gpt-oss-20b's ~13.8 GB checkpoint, not the 12.8 GB of all-linear MXFP4.
TEST(InferenceWeights, ExpertsOnlyFormatKeepsTheRest16Bit) {
  ModelSpec m;
  m.arch = ModelArch::kMoe;
  m.layers = 24;
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 64;
  m.ffn_hidden = 2880;
  m.gated_mlp = true;
  m.vocab = 201088;
  MoeSpec moe;
  moe.experts = 32;
  moe.top_k = 4;
  moe.expert_ffn = 2880;
  m.moe = moe;
  const std::optional<QuantSpec> q = GetQuantPreset(QuantPresetId::kMxfp4).Spec();
  ASSERT_TRUE(q->experts_only);
  const double total = static_cast<double>(CountParams(m).total);
  const double experts = RoutedExpertParams(m);
  const double weights = InferenceWeightBytes(m, Precision::kBf16, q, 1, 1).value();
  EXPECT_NEAR(weights, experts * 4.25 / 8 + (total - experts) * 2, 0.01 * weights);
  EXPECT_NEAR(weights / 1e9, 13.8, 0.3);
  QuantSpec all = *q;
  all.experts_only = false;
  EXPECT_LT(InferenceWeightBytes(m, Precision::kBf16, all, 1, 1).value(), weights - 0.5e9);
}

// bitsandbytes' paged optimizers keep their states in CUDA managed memory: host RAM, not the
// allocator's peak (torchtune README: Llama-2-7B full fine-tune with PagedAdamW in 24 GB).
TEST(PagedOptimizer, StatesLeaveTheGpuForHostRam) {
  const ModelSpec& m = Preset("Llama-2-7B");
  Parallelism par;
  TrainMemoryOptions opt;
  opt.method = TrainMethod::kFull;
  opt.optimizer = Optimizer::kAdamW8bit;
  opt.notes = false;
  const MemoryBreakdown plain = EstimateTrainingMemory(m, par, opt);
  opt.paged_optimizer = true;
  const MemoryBreakdown paged = EstimateTrainingMemory(m, par, opt);
  EXPECT_GT(plain.optimizer.value(), 0);
  EXPECT_EQ(paged.optimizer.value(), 0);
  EXPECT_NEAR(paged.host_offload.value(), plain.optimizer.value(), 1.0);
  EXPECT_LT(paged.Total().value(), plain.Total().value() - 0.9 * plain.optimizer.value());
  EXPECT_TRUE(PagedOptimizerName("bitsandbytes.optim.PagedAdamW8bit"));
  EXPECT_TRUE(PagedOptimizerName("paged_adamw_32bit"));
  EXPECT_FALSE(PagedOptimizerName("adamw_bnb_8bit"));
}

// FSDP2's CPUOffloadPolicy (parameters and optimizer on the CPU) copies the sharded gradients
// to host RAM during the backward: about one layer of them stays on the GPU.
TEST(ParamOffload, GradientsFollowTheOptimizerToTheHost) {
  const ModelSpec& m = Preset("Llama-3.1-70B");
  Parallelism par;
  par.dp = 8;
  par.zero_stage = 3;
  TrainMemoryOptions opt;
  opt.method = TrainMethod::kFull;
  opt.optimizer_offload = true;
  opt.notes = false;
  const MemoryBreakdown opt_only = EstimateTrainingMemory(m, par, opt);
  opt.param_offload = true;
  const MemoryBreakdown both = EstimateTrainingMemory(m, par, opt);
  EXPECT_LE(both.gradients.value(), opt_only.gradients.value());
  EXPECT_GE(both.host_offload.value(), opt_only.host_offload.value() + opt_only.gradients.value());
}

// Fused attention needs the flash-attn package's GPUs (Ampere+) under Megatron and DeepSpeed;
// PyTorch's SDPA keeps a memory-efficient kernel on Volta.
TEST(FusedAttention, LlmFrameworksStoreScoresOnVolta) {
  EXPECT_FALSE(FusedAttentionOn(Acc("V100-SXM2-32GB"), TrainFramework::kMegatronLegacy));
  EXPECT_FALSE(FusedAttentionOn(Acc("V100-SXM2-32GB"), TrainFramework::kDeepSpeed));
  EXPECT_TRUE(FusedAttentionOn(Acc("V100-SXM2-32GB"), TrainFramework::kGeneric));
  EXPECT_TRUE(FusedAttentionOn(Acc("A100-SXM4-80GB"), TrainFramework::kMegatronCore));
}

// ------------------------------------------------------------------------------------------------
// Activations per layer: Korthikanti et al. 2022, Table 2 (bytes, 16-bit activations, with
// dropout, no FlashAttention, plain GELU MLP with f = 4h).

enum class Korth { kNone, kTp, kTpSp, kTpSelective, kTpSpSelective, kFull, kFullSp };

struct ActRow {
  const char* name;
  int seq;
  int micro_batch;
  int tp;
  Korth config;
  const char* source;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const ActRow& row, std::ostream* os) { *os << row.name; }

double KorthikantiBytes(const ActRow& r, double h, double a) {
  const double s = r.seq, b = r.micro_batch, t = r.tp;
  const double sbh = s * b * h;
  switch (r.config) {
    case Korth::kNone:
      return sbh * (34.0 + 5.0 * a * s / h);
    case Korth::kTp:
      return sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
    case Korth::kTpSp:
      return sbh / t * (34.0 + 5.0 * a * s / h);
    case Korth::kTpSelective:
      return sbh * (10.0 + 24.0 / t);
    case Korth::kTpSpSelective:
      return 34.0 * sbh / t;
    case Korth::kFull:
      return 2.0 * sbh;
    case Korth::kFullSp:
      return 2.0 * sbh / t;
  }
  return 0;
}

const ActRow kActRows[] = {
    {"no_parallelism", 2048, 1, 1, Korth::kNone, "Korthikanti eq. 1: sbh(34 + 5as/h)"},
    {"no_parallelism_b4", 2048, 4, 1, Korth::kNone, "eq. 1, micro-batch 4"},
    {"short_seq", 512, 2, 1, Korth::kNone, "eq. 1, s = 512"},
    {"tp8", 2048, 1, 8, Korth::kTp, "eq. 2 / Table 2: sbh(10 + 24/t + 5as/(ht))"},
    {"tp4", 2048, 1, 4, Korth::kTp, "eq. 2, t = 4"},
    {"tp8_sp", 2048, 1, 8, Korth::kTpSp, "eq. 4 / Table 2: sbh/t (34 + 5as/h)"},
    {"tp8_selective", 2048, 1, 8, Korth::kTpSelective, "Table 2: sbh(10 + 24/t)"},
    {"tp8_sp_selective", 2048, 1, 8, Korth::kTpSpSelective, "eq. 6 / Table 2: 34 sbh / t"},
    {"full_recompute", 2048, 1, 1, Korth::kFull, "Table 2 full recompute: 2 sbh"},
    {"full_recompute_tp8", 2048, 1, 8, Korth::kFull, "full recompute without SP: 2 sbh"},
    {"full_recompute_sp", 2048, 1, 8, Korth::kFullSp, "full recompute with SP: 2 sbh / t"},
};

class Korthikanti : public ::testing::TestWithParam<ActRow> {};

TEST_P(Korthikanti, PerLayerBytes) {
  const ActRow& row = GetParam();
  SCOPED_TRACE(row.source);
  ModelSpec m = Gpt3();
  bool sp = row.config == Korth::kTpSp || row.config == Korth::kTpSpSelective ||
            row.config == Korth::kFullSp;
  Recompute rc = Recompute::kNone;
  if (row.config == Korth::kTpSelective || row.config == Korth::kTpSpSelective) {
    rc = Recompute::kSelective;
  }
  if (row.config == Korth::kFull || row.config == Korth::kFullSp) rc = Recompute::kFull;
  Bytes got = ActivationBytesPerLayer(m, row.micro_batch, row.seq, row.tp, sp, rc,
                                      /*flash_attention=*/false, /*dropout=*/true,
                                      /*bytes_per_element=*/2.0, /*fused_kernels=*/true);
  double want = KorthikantiBytes(row, 12288.0, 96.0);
  EXPECT_LT(RelErr(got.value(), want), 1e-9) << "got " << got.value() << " want " << want;
}

INSTANTIATE_TEST_SUITE_P(Table2, Korthikanti, ::testing::ValuesIn(kActRows),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

TEST(ActivationBytesPerLayer, ScalesWithElementSize) {
  ModelSpec m = Gpt3();
  Bytes b16 = ActivationBytesPerLayer(m, 1, 2048, 1, false, Recompute::kNone, false, true, 2.0);
  Bytes b32 = ActivationBytesPerLayer(m, 1, 2048, 1, false, Recompute::kNone, false, true, 4.0);
  EXPECT_DOUBLE_EQ(b32.value(), 2.0 * b16.value());
}

// torch.compile's min-cut partitioner recomputes the norms' outputs and the MLP activation:
// GPT-3 (plain GELU, f = 4h) loses the two norm outputs (4sbh) and half of 4sbf (8sbh);
// Llama-2-7B (SwiGLU, f = 2.6875h) the norm outputs and half of the eager 8sbf: 22.75 sbh.
// Fused kernels without compile keep the gate and up outputs and the down projection's input
// (6sbf: Megatron-Core's bias-SwiGLU recomputes SiLU and the product): 37.5 - 2sbf = 32.125 sbh.
TEST(ActivationBytesPerLayer, CompiledGraphsRecomputePointwiseOutputs) {
  const double s = 2048;
  ModelSpec gpt = Gpt3();
  const double h = 12288;
  Bytes eager = ActivationBytesPerLayer(gpt, 1, 2048, 1, false, Recompute::kNone, true, false, 2.0,
                                        true, false, false);
  Bytes compiled = ActivationBytesPerLayer(gpt, 1, 2048, 1, false, Recompute::kNone, true, false,
                                           2.0, true, false, true);
  EXPECT_LT(RelErr(eager.value() - compiled.value(), 12.0 * s * h), 1e-9);
  const ModelSpec* llama = FindPreset("llama-2-7b");
  ASSERT_NE(llama, nullptr);
  const double sbh = s * 4096;
  Bytes fused = ActivationBytesPerLayer(*llama, 1, 2048, 1, false, Recompute::kNone, true, false,
                                        2.0, true, false, false);
  Bytes comp = ActivationBytesPerLayer(*llama, 1, 2048, 1, false, Recompute::kNone, true, false,
                                       2.0, true, false, true);
  EXPECT_LT(RelErr(fused.value(), 32.125 * sbh), 1e-9);
  EXPECT_LT(RelErr(comp.value(), 22.75 * sbh), 1e-9);
  // Full recompute keeps the layer input either way.
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(*llama, 1, 2048, 1, false, Recompute::kFull, true, false,
                                           2.0, true, false, true)
                       .value(),
                   2.0 * sbh);
}

// A fused gated MLP (Megatron-Core's bias-SwiGLU) keeps the gate and up outputs and the down
// projection's input, 6 s b f, where eager PyTorch also keeps SiLU's output and the product
// (8 s b f); for an MoE layer per routed expert: 2 s b f_e (top_k + shared) less.
TEST(ActivationBytesPerLayer, FusedGatedMlpKeepsSixOfEightSbf) {
  const double s = 4096;
  for (const char* name : {"llama-3.1-8b", "qwen3-30b-a3b"}) {
    const ModelSpec* m = FindPreset(name);
    ASSERT_NE(m, nullptr) << name;
    const double f =
        m->moe ? static_cast<double>(m->moe->expert_ffn) * (m->moe->top_k + m->moe->shared_experts)
               : static_cast<double>(m->ffn_hidden);
    for (int tp : {1, 4}) {
      // Eager RMSNorm and RoPE extras aside (fused_kernels also drops them), the difference is
      // the MLP's 2 s b f over tp, in 2-byte elements.
      const Bytes eager = ActivationBytesPerLayer(*m, 1, 4096, tp, true, Recompute::kNone, true,
                                                  false, 2.0, false, false, false);
      const Bytes fused = ActivationBytesPerLayer(*m, 1, 4096, tp, true, Recompute::kNone, true,
                                                  false, 2.0, true, false, false);
      const double h = static_cast<double>(m->hidden);
      const double q = static_cast<double>(m->heads) * m->head_dim;
      const double kv = static_cast<double>(m->kv_heads) * m->head_dim;
      const double eager_extras = (8 * s * h + 2 * s * (q + kv)) / tp;  // RMSNorm fp32, RoPE
      EXPECT_LT(RelErr(eager.value() - fused.value(), eager_extras + 2 * s * f / tp), 1e-9)
          << name << " tp " << tp;
    }
  }
}

TEST(ActivationBytesPerLayer, FlashAttentionDropsTheScores) {
  // FlashAttention keeps no s x s matrices: the 5as^2b term (2as^2b without dropout) goes.
  ModelSpec m = Gpt3();
  const double s = 2048, a = 96;
  Bytes eager = ActivationBytesPerLayer(m, 1, 2048, 1, false, Recompute::kNone, false, true, 2.0);
  Bytes flash = ActivationBytesPerLayer(m, 1, 2048, 1, false, Recompute::kNone, true, true, 2.0);
  EXPECT_LT(RelErr(eager.value() - flash.value(), 5.0 * a * s * s), 1e-9);
  Bytes eager_nodrop =
      ActivationBytesPerLayer(m, 1, 2048, 1, false, Recompute::kNone, false, false, 2.0);
  Bytes flash_nodrop =
      ActivationBytesPerLayer(m, 1, 2048, 1, false, Recompute::kNone, true, false, 2.0);
  EXPECT_LT(RelErr(eager_nodrop.value() - flash_nodrop.value(), 2.0 * a * s * s), 1e-9);
  // Without dropout the two masks (sbh each) go too: 34 - 2 = 32 sbh.
  EXPECT_LT(RelErr(flash_nodrop.value(), 32.0 * s * 12288.0), 1e-9);
}

// ------------------------------------------------------------------------------------------------
// Korthikanti et al. Figure 1 cases (formula_cases.jsonl calc-korthikanti-fig1-*), through the
// full training estimator: first pipeline stage, layers x in-flight micro-batches x interleave.

struct FigRow {
  const char* id;  // formula_cases.jsonl id
  const char* model;
  int layers;
  std::int64_t hidden;
  int heads;
  int head_dim;
  int tp, pp, vpp;
  bool sequence_parallel;
  Recompute recompute;
  int micro_batch;
  int global_batch;
  bool model_states;  // metric: model_states_gib_per_gpu (else activations_gib_per_gpu)
  double expected_gib;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const FigRow& row, std::ostream* os) { *os << row.id; }

const FigRow kFigRows[] = {
    {"calc-korthikanti-fig1-22b-act-none", "22B", 48, 6144, 64, 96, 8, 1, 1, false,
     Recompute::kNone, 4, 4, false, 59.25},
    {"calc-korthikanti-fig1-175b-act-none", "175B", 96, 12288, 96, 128, 8, 8, 3, false,
     Recompute::kNone, 1, 64, false, 66.84375},
    {"calc-korthikanti-fig1-530b-act-seqsel", "530B", 105, 20480, 128, 160, 8, 35, 3, true,
     Recompute::kSelective, 1, 280, false, 23.076171875},
    {"calc-korthikanti-fig1-1t-act-seqsel", "1T", 128, 25600, 160, 160, 8, 64, 1, true,
     Recompute::kSelective, 1, 512, false, 26.5625},
    {"calc-korthikanti-fig1-22b-model-states", "22B", 48, 6144, 64, 96, 8, 1, 1, false,
     Recompute::kNone, 4, 4, true, 45.5625},
    {"calc-korthikanti-fig1-175b-model-states", "175B", 96, 12288, 96, 128, 8, 8, 3, false,
     Recompute::kNone, 1, 64, true, 45.5625},
};

MemoryBreakdown RunFig(const FigRow& row) {
  // vocab null in the case: no embedding, no logits (the paper's 12Lh^2 / per-layer terms).
  ModelSpec m =
      GptStyle(row.model, row.layers, row.hidden, row.heads, row.head_dim, 4 * row.hidden, 0);
  Parallelism par;
  par.tp = row.tp;
  par.pp = row.pp;
  par.vpp = row.vpp;
  par.dp = 1;
  par.sequence_parallel = row.sequence_parallel;
  TrainMemoryOptions opt = FormulaOptions();
  opt.method = TrainMethod::kPretrain;
  opt.precision = Precision::kFp16;
  opt.grad_dtype = Precision::kFp32;  // Megatron main_grad: 2 + 4 + 4 + 8 = 18 B/param
  opt.optimizer = Optimizer::kAdam;
  opt.micro_batch = row.micro_batch;
  opt.seq_len = 2048;
  opt.num_microbatches = row.global_batch / row.micro_batch;  // dp = 1
  opt.recompute = row.recompute;
  opt.flash_attention = false;
  opt.dropout = true;
  opt.fused_kernels = true;  // Megatron's fused kernels: the paper's terms only
  opt.logits_buffer = false;
  return EstimateTrainingMemory(m, par, opt);
}

class KorthikantiFigure1 : public ::testing::TestWithParam<FigRow> {};

TEST_P(KorthikantiFigure1, PerGpu) {
  const FigRow& row = GetParam();
  SCOPED_TRACE(row.id);
  MemoryBreakdown b = RunFig(row);
  double got = ToGiB(row.model_states ? b.ModelStates() : b.activations);
  // Activations reproduce the paper exactly; model states count the LayerNorm weights
  // (4h per layer) that 12Lh^2 omits (~5e-5 relative): 0.1% either way.
  EXPECT_LT(RelErr(got, row.expected_gib), 1e-3) << "got " << got << " GiB";
  if (!row.model_states) {
    EXPECT_LT(RelErr(got, row.expected_gib), 1e-9) << "got " << got;
  }
}

INSTANTIATE_TEST_SUITE_P(FormulaCases, KorthikantiFigure1, ::testing::ValuesIn(kFigRows),
                         [](const auto& row_info) {
                           std::string n = row_info.param.id;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(KorthikantiFigure1Reference, RowsAgreeWithFormulaCases) {
  auto cases = FormulaCases();
  if (cases.empty()) GTEST_SKIP() << "../shared/validation/formula_cases.jsonl not found";
  for (const FigRow& row : kFigRows) {
    SCOPED_TRACE(row.id);
    auto it = cases.find(row.id);
    ASSERT_NE(it, cases.end());
    const json& c = it->second;
    const json& md = c["model"];
    const json& tr = c["workload"]["train"];
    EXPECT_EQ(c["measured"].get<double>(), row.expected_gib);
    EXPECT_EQ(c["metric"].get<std::string>(),
              row.model_states ? "model_states_gib_per_gpu" : "activations_gib_per_gpu");
    EXPECT_EQ(md["layers"].get<int>(), row.layers);
    EXPECT_EQ(md["hidden"].get<std::int64_t>(), row.hidden);
    EXPECT_EQ(md["heads"].get<int>(), row.heads);
    EXPECT_EQ(md["head_dim"].get<int>(), row.head_dim);
    EXPECT_EQ(md["ffn_hidden"].get<std::int64_t>(), 4 * row.hidden);
    EXPECT_FALSE(md["gated_mlp"].get<bool>());
    EXPECT_EQ(tr["tp"].get<int>(), row.tp);
    EXPECT_EQ(tr["pp"].get<int>(), row.pp);
    EXPECT_EQ(tr["vpp"].is_null() ? 1 : tr["vpp"].get<int>(), row.vpp);
    EXPECT_EQ(tr["sequence_parallel"].get<bool>(), row.sequence_parallel);
    EXPECT_EQ(tr["recompute"].get<std::string>(), RecomputeName(row.recompute));
    EXPECT_EQ(tr["micro_batch"].get<int>(), row.micro_batch);
    EXPECT_EQ(tr["global_batch"].get<int>(), row.global_batch);
    EXPECT_EQ(tr["seq_len"].get<int>(), 2048);
    EXPECT_EQ(tr["precision"].get<std::string>(), "fp16");
  }
}

// ------------------------------------------------------------------------------------------------
// The guide's LLaMA-7B arithmetic (../shared/seeds/README.md, B4): 14 GB fp16 params + 14 GB
// grads + 56 GB Adam (fp32 m and v, 4 B x 2) + ~2 GB batch; it omits the fp32 master copy of
// standard mixed precision (16 B/param).

TEST(GuideB4, PureBf16ModelStates) {
  ModelSpec m = ParamsOnly(7000000000);
  TrainMemoryOptions opt = FormulaOptions();
  opt.precision = Precision::kBf16;
  opt.master_weights = false;
  opt.optimizer = Optimizer::kAdamW;
  opt.optimizer_state_dtype = Precision::kFp32;
  MemoryBreakdown b = EstimateTrainingMemory(m, Parallelism{}, opt);
  EXPECT_DOUBLE_EQ(ToGB(b.weights), 14.0);
  EXPECT_DOUBLE_EQ(ToGB(b.gradients), 14.0);
  EXPECT_DOUBLE_EQ(ToGB(b.optimizer), 56.0);
  EXPECT_DOUBLE_EQ(ToGB(b.master_weights), 0.0);
  EXPECT_DOUBLE_EQ(ToGB(b.ModelStates()), 84.0);
  EXPECT_FALSE(b.notes.empty());  // says what pure bf16 leaves out
}

TEST(GuideB4, MixedPrecisionIs16BytesPerParam) {
  ModelSpec m = ParamsOnly(7000000000);
  TrainMemoryOptions opt = FormulaOptions();
  opt.precision = Precision::kBf16;
  opt.master_weights = true;
  MemoryBreakdown b = EstimateTrainingMemory(m, Parallelism{}, opt);
  EXPECT_DOUBLE_EQ(ToGB(b.master_weights), 28.0);
  EXPECT_DOUBLE_EQ(ToGB(b.ModelStates()), 112.0);
}

TEST(GuideB4, Llama2_7bActivationsAreAFewGB) {
  // The guide's "~2 GB batch" for LLaMA-7B: micro-batch 1 with FlashAttention, no recompute.
  const ModelSpec& m = Preset("Llama-2-7B");
  for (bool fused : {true, false}) {
    for (int seq : {512, 1024, 2048}) {
      TrainMemoryOptions opt = FormulaOptions();
      opt.micro_batch = 1;
      opt.seq_len = seq;
      opt.flash_attention = true;
      opt.fused_kernels = fused;
      MemoryBreakdown b = EstimateTrainingMemory(m, Parallelism{}, opt);
      std::printf("[ info     ] Llama-2-7B mb 1 seq %4d %s: activations %.2f GB, logits %.2f GB\n",
                  seq, fused ? "fused" : "eager", ToGB(b.activations), ToGB(b.logits));
      if (seq == 512) {
        EXPECT_GE(ToGB(b.activations), 1.0);
        EXPECT_LE(ToGB(b.activations), 6.0);
      }
    }
  }
}

// ------------------------------------------------------------------------------------------------
// DeepSpeed's estimators (microsoft/DeepSpeed docs/code-docs/source/memory.rst), via
// formula_cases.jsonl ds-zero2-* and ds-zero3-*.

enum class Print { kGiB2, kWholeMiB };

struct DsRow {
  const char* id;
  double params;
  double largest_layer;
  int gpus_per_node;
  int nodes;
  int stage;
  bool offload_params;
  bool offload_optimizer;
  bool zero_init;
  double buffer_factor;
  bool cpu;  // metric: per-node host RAM (else per-GPU memory)
  Print print;
  double expected_gib;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const DsRow& row, std::ostream* os) { *os << row.id; }

const DsRow kDsRows[] = {
    {"ds-zero2-cold-3b-8gpu-offload-cpu-cpu", 2851e6, 0, 8, 1, 2, false, true, false, 1.5, true,
     Print::kGiB2, 127.45},
    {"ds-zero2-cold-3b-8gpu-offload-none-cpu", 2851e6, 0, 8, 1, 2, false, false, false, 1.5, true,
     Print::kGiB2, 127.45},
    {"ds-zero3-cold-3b-8gpu-pcpu-ocpu-init0-cpu", 2851e6, 32e6, 8, 1, 3, true, true, false, 1.5,
     true, Print::kGiB2, 127.45},
    {"ds-zero3-cold-3b-8gpu-pcpu-ocpu-init1-cpu", 2851e6, 32e6, 8, 1, 3, true, true, true, 1.5,
     true, Print::kGiB2, 71.69},
    {"ds-zero3-cold-3b-8gpu-pnone-ocpu-init0-cpu", 2851e6, 32e6, 8, 1, 3, false, true, false, 1.5,
     true, Print::kGiB2, 127.45},
    {"ds-zero3-cold-3b-8gpu-pnone-ocpu-init1-cpu", 2851e6, 32e6, 8, 1, 3, false, true, true, 1.5,
     true, Print::kGiB2, 63.72},
    {"ds-zero3-cold-3b-8gpu-pnone-onone-init0-cpu", 2851e6, 32e6, 8, 1, 3, false, false, false, 1.5,
     true, Print::kGiB2, 127.45},
    {"ds-zero3-cold-3b-8gpu-pnone-onone-init1-cpu", 2851e6, 32e6, 8, 1, 3, false, false, true, 1.5,
     true, Print::kGiB2, 1.43},
    {"ds-zero3-t5-large-4gpu-no-offload", 737.67e6, 32.9e6, 4, 1, 3, false, false, true, 1.5, false,
     Print::kWholeMiB, 3.2138671875},
    {"ds-zero3-t5-large-4gpu-offload-optimizer", 737.67e6, 32.9e6, 4, 1, 3, false, true, true, 1.5,
     false, Print::kWholeMiB, 0.4658203125},
};

class DeepSpeedEstimator : public ::testing::TestWithParam<DsRow> {};

TEST_P(DeepSpeedEstimator, MatchesPrintout) {
  const DsRow& row = GetParam();
  SCOPED_TRACE(row.id);
  ZeroOffloadEstimate e = DeepSpeedZeroEstimate(
      row.params, row.largest_layer, row.gpus_per_node, row.nodes, row.stage, row.offload_params,
      row.offload_optimizer, row.zero_init, row.buffer_factor);
  Bytes b = row.cpu ? e.cpu_per_node : e.gpu_per_gpu;
  double printed = row.print == Print::kGiB2
                       ? std::round(ToGiB(b) * 100.0) / 100.0
                       : std::floor(b.value() / kBytesPerMiB) / 1024.0;  // bytes >> 20, as GiB
  EXPECT_NEAR(printed, row.expected_gib, 1e-9) << "raw " << ToGiB(b) << " GiB";
}

INSTANTIATE_TEST_SUITE_P(FormulaCases, DeepSpeedEstimator, ::testing::ValuesIn(kDsRows),
                         [](const auto& row_info) {
                           std::string n = row_info.param.id;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(DeepSpeedEstimatorReference, RowsAgreeWithFormulaCases) {
  auto cases = FormulaCases();
  if (cases.empty()) GTEST_SKIP() << "../shared/validation/formula_cases.jsonl not found";
  int ds_cases = 0;
  for (const auto& [id, c] : cases) {
    if (id.rfind("ds-", 0) == 0) ++ds_cases;
  }
  EXPECT_EQ(ds_cases, static_cast<int>(std::size(kDsRows)));
  for (const DsRow& row : kDsRows) {
    SCOPED_TRACE(row.id);
    auto it = cases.find(row.id);
    ASSERT_NE(it, cases.end());
    const json& c = it->second;
    const json& tr = c["workload"]["train"];
    EXPECT_EQ(c["measured"].get<double>(), row.expected_gib);
    EXPECT_EQ(c["model"]["params"].get<double>(), row.params);
    EXPECT_EQ(tr["zero"].get<int>(), row.stage);
    EXPECT_EQ(tr["offload_optimizer"].get<std::string>(), row.offload_optimizer ? "cpu" : "none");
    if (tr.contains("offload_param") && tr["offload_param"].is_string()) {
      EXPECT_EQ(tr["offload_param"].get<std::string>(), row.offload_params ? "cpu" : "none");
    }
    if (tr.contains("zero_init")) {
      EXPECT_EQ(tr["zero_init"].get<int>() != 0, row.zero_init);
    }
    if (tr.contains("largest_layer_params")) {
      EXPECT_EQ(tr["largest_layer_params"].get<double>(), row.largest_layer);
    }
    if (tr.contains("buffer_factor")) {
      EXPECT_EQ(tr["buffer_factor"].get<double>(), 1.5);
    }
    EXPECT_EQ(c["metric"].get<std::string>(),
              row.cpu ? "model_states_gib_per_node_cpu" : "model_states_gib_per_gpu");
  }
}

// ------------------------------------------------------------------------------------------------
// Serving memory.

InferMemoryOptions NoReserve(InferMemoryOptions o) {
  o.reserve.cuda_context = Bytes(0);
  o.reserve.nccl_buffers = Bytes(0);
  return o;
}

TEST(InferenceKvBudget, TrtLlmAiconfiguratorCase) {
  // aic-kv-budget-trtllm-tokens (ai-dynamo/aiconfigurator tests/unit/sdk/
  // test_memory_estimation.py): 141 GiB GPU, 60 GiB non-KV, kv_cache_free_gpu_mem_fraction 0.9,
  // 327,680 B/token -> 238,878 tokens. The API takes no "non-KV" figure directly, so the case is
  // expressed as a params-only model whose bf16 weights are exactly 60 GiB (no activations
  // without a hidden size), a zero CUDA-context reserve, and the KV shape of Llama-3.1-70B
  // (80 layers x 8 KV heads x 128 x 2 x 2 B = 327,680 B/token).
  ModelSpec m;
  m.name = "aic-trtllm-fixture";
  m.arch = ModelArch::kDense;
  m.layers = 80;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.params_override = static_cast<std::int64_t>(30.0 * kBytesPerGiB);  // 2 B each = 60 GiB
  InferMemoryOptions opt = NoReserve({});
  opt.engine = Engine::kTrtLlm;
  opt.memory_fraction = 0.9;
  opt.weight_precision = Precision::kBf16;
  opt.kv_precision = Precision::kBf16;
  ASSERT_DOUBLE_EQ(KvBytesPerToken(m, 2.0, 1).value(), 327680.0);
  InferMemory r = EstimateInferenceMemory(m, opt, GiB(141));
  EXPECT_DOUBLE_EQ(ToGiB(r.non_kv), 60.0);
  EXPECT_DOUBLE_EQ(r.kv_budget.value(), (GiB(141) - GiB(60)).value() * 0.9);
  EXPECT_EQ(r.kv_tokens, 238878);
}

TEST(InferenceKvBudget, TrtLlmCaseAgreesWithFormulaCases) {
  auto cases = FormulaCases();
  if (cases.empty()) GTEST_SKIP() << "../shared/validation/formula_cases.jsonl not found";
  const json& c = cases.at("aic-kv-budget-trtllm-tokens");
  const json& in = c["workload"]["infer"];
  EXPECT_EQ(c["measured"].get<std::int64_t>(), 238878);
  EXPECT_EQ(in["gpu_mem_gib"].get<double>(), 141);
  EXPECT_EQ(in["non_kv_gib"].get<double>(), 60);
  EXPECT_EQ(in["kv_fraction"].get<double>(), 0.9);
  EXPECT_EQ(in["kv_per_token_bytes"].get<double>(), 327680);
  EXPECT_EQ(in["engine"].get<std::string>(), "trt-llm");
}

// DeepSpeed ZeRO-2 holds two flat gradient buckets of reduce_bucket_size (5e8) elements at the
// model's dtype (overlap_comm on); ZeRO-1/3 and the other frameworks add nothing here.
TEST(FrameworkMemory, DeepSpeedZero2AddsTwoReduceBuckets) {
  const ModelSpec& m = Preset("Llama-2-7B");
  Parallelism p;
  p.dp = 8;
  TrainMemoryOptions base;
  base.seq_len = 2048;
  base.notes = false;
  for (int z : {0, 1, 2, 3}) {
    p.zero_stage = z;
    for (TrainFramework f : {TrainFramework::kDeepSpeed, TrainFramework::kFsdp,
                             TrainFramework::kMegatronCore, TrainFramework::kGeneric}) {
      TrainMemoryOptions o = base;
      ApplyFrameworkMemory(f, p, o);
      const double plain = EstimateTrainingMemory(m, p, base).gradients.value();
      const double with = EstimateTrainingMemory(m, p, o).gradients.value();
      const bool buckets = f == TrainFramework::kDeepSpeed && z == 2;
      EXPECT_NEAR(with - plain, buckets ? 2 * 5e8 * 2.0 : 0.0, 1e-3)
          << TrainFrameworkName(f) << " zero " << z;
    }
  }
}

// torchtune's recipes: pure bf16 (no fp32 master, bf16 AdamW states) and the chunked loss
// (bf16 logits + one fp32 chunk of 8; compiled: 2 B): 8 B per parameter of model states with
// AdamW instead of the 16 of standard mixed precision.
TEST(FrameworkMemory, TorchtuneTrainsInPureBf16WithTheChunkedLoss) {
  const ModelSpec& m = Preset("Llama-2-7B");
  Parallelism p;
  TrainMemoryOptions o;
  o.seq_len = 2048;
  o.notes = false;
  const MemoryBreakdown mixed = EstimateTrainingMemory(m, p, o);
  ApplyFrameworkMemory(TrainFramework::kTorchtune, p, o);
  EXPECT_FALSE(o.master_weights);
  EXPECT_EQ(o.optimizer_state_dtype, Precision::kBf16);
  EXPECT_FALSE(o.adapter_fp32);
  EXPECT_DOUBLE_EQ(o.logits_bytes_per_element, 2.5);
  const MemoryBreakdown tt = EstimateTrainingMemory(m, p, o);
  const double params = static_cast<double>(CountParams(m).total);
  EXPECT_NEAR(tt.ModelStates().value(), 8.0 * params, 1e-6 * params);
  EXPECT_NEAR(mixed.ModelStates().value(), 16.0 * params, 1e-6 * params);
  o.compiled = true;
  ApplyFrameworkMemory(TrainFramework::kTorchtune, p, o);
  EXPECT_DOUBLE_EQ(o.logits_bytes_per_element, 2.0);
  EXPECT_EQ(TrainFrameworkFromText("torchtune full_finetune_single_device"),
            TrainFramework::kTorchtune);
}

// One process that frees its gradients each step (zero_grad(set_to_none=True)): backward frees
// saved activations as it allocates gradients, so the allocated peak is the sum less
// min(gradients, activations + logits - the layer in flight). Persistent gradient buffers
// (Megatron's main_grad, several data-parallel ranks) overlap nothing; Total() keeps the sum.
TEST(FrameworkMemory, FreedGradientsOverlapTheBackwardPass) {
  const ModelSpec& m = Preset("Llama-3.2-3B");
  Parallelism p;
  TrainMemoryOptions o;
  o.seq_len = 4096;
  o.micro_batch = 2;
  o.notes = false;
  ApplyFrameworkMemory(TrainFramework::kTorchtune, p, o);
  ASSERT_TRUE(o.grads_freed_each_step);
  // Without recompute the activations dwarf the gradients: all of the gradients overlap.
  MemoryBreakdown none = EstimateTrainingMemory(m, p, o);
  EXPECT_GT(none.activations.value(), none.gradients.value());
  EXPECT_DOUBLE_EQ(none.backward_overlap.value(), none.gradients.value());
  EXPECT_DOUBLE_EQ(none.PeakAllocated().value(),
                   (none.ModelStates() + none.activations + none.logits - none.gradients).value());
  EXPECT_GT(none.Total().value(), none.PeakAllocated().value() + none.gradients.value());
  // Full recompute: checkpoints + logits are smaller than the gradients; the layer being
  // recomputed stays on top of the gradients.
  o.recompute = Recompute::kFull;
  MemoryBreakdown rc = EstimateTrainingMemory(m, p, o);
  const double layer =
      ActivationBytesPerLayer(m, 2, 4096, 1, false, Recompute::kNone, true, false, 2.0).value();
  EXPECT_LT((rc.activations + rc.logits).value(), rc.gradients.value() + layer);
  EXPECT_NEAR(rc.backward_overlap.value(), (rc.activations + rc.logits).value() - layer,
              1e-6 * layer);
  // LoRA: the adapters' gradients (16-bit under torchtune) are the ones backward allocates.
  TrainMemoryOptions lora = o;
  lora.method = TrainMethod::kLora;
  lora.lora_rank = 64;
  ApplyFrameworkMemory(TrainFramework::kTorchtune, p, lora);
  const MemoryBreakdown lb = EstimateTrainingMemory(m, p, lora);
  const double adapter_grads = static_cast<double>(LoraParams(m, 64, lora.lora_targets)) * 2.0;
  EXPECT_NEAR(lb.backward_overlap.value(), adapter_grads, 1e-6 * adapter_grads);
  // Persistent gradient buffers: Megatron-Core, or DDP over two GPUs.
  TrainMemoryOptions mc;
  mc.seq_len = 4096;
  mc.notes = false;
  ApplyFrameworkMemory(TrainFramework::kMegatronCore, p, mc);
  EXPECT_FALSE(mc.grads_freed_each_step);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(m, p, mc).backward_overlap.value(), 0.0);
  Parallelism dp2;
  dp2.dp = 2;
  TrainMemoryOptions g;
  ApplyFrameworkMemory(TrainFramework::kGeneric, dp2, g);
  EXPECT_FALSE(g.grads_freed_each_step);
}

// Plain PyTorch mixed precision on one GPU is autocast over fp32 parameters: fp32 gradients
// (HF's model memory anatomy). The planner's frameworks keep their own gradient dtypes.
TEST(FrameworkMemory, AutocastOverFp32ParametersKeepsFp32Gradients) {
  const ModelSpec& m = Preset("Llama-2-7B");
  const double params = static_cast<double>(CountParams(m).total);
  Parallelism p;
  TrainMemoryOptions o;
  o.notes = false;
  ApplyFrameworkMemory(TrainFramework::kGeneric, p, o);
  EXPECT_TRUE(o.autocast_fp32_grads);
  EXPECT_NEAR(EstimateTrainingMemory(m, p, o).gradients.value(), 4.0 * params, 1e-6 * params);
  TrainMemoryOptions ddp;
  ddp.notes = false;
  ApplyFrameworkMemory(TrainFramework::kDdp, p, ddp);
  EXPECT_FALSE(ddp.autocast_fp32_grads);
  EXPECT_NEAR(EstimateTrainingMemory(m, p, ddp).gradients.value(), 2.0 * params, 1e-6 * params);
  TrainMemoryOptions pure;  // pure bf16 (no master copy): the gradients stay bf16
  pure.master_weights = false;
  ApplyFrameworkMemory(TrainFramework::kGeneric, p, pure);
  EXPECT_FALSE(pure.autocast_fp32_grads);
}

TEST(InferenceKvBudget, VllmBudgetIsFractionOfTotalMinusNonKv) {
  // formats.md 6.2: budget = total x gpu_memory_utilization; KV = budget - weights - activation
  // peak - non-torch; whole 16-token blocks.
  const ModelSpec& m = Preset("Llama-3-8B");
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.memory_fraction = 0.9;
  const Bytes total = GiB(79.22);  // one H100 as vLLM sees it (formats.md 6.2)
  InferMemory r = EstimateInferenceMemory(m, opt, total);
  // vLLM counts the non-torch memory its profiling run adds, not the CUDA context and NCCL
  // communicators created before its start-up snapshot (RuntimeReserve::profiled_non_torch).
  EXPECT_NEAR(r.kv_budget.value(), total.value() * 0.9 - r.engine_non_kv.value(), 1.0);
  EXPECT_NEAR(r.engine_non_kv.value(),
              (r.breakdown.weights + r.breakdown.activations + r.breakdown.logits +
               opt.reserve.profiled_non_torch)
                  .value(),
              1.0);
  EXPECT_LT(r.engine_non_kv.value(), r.non_kv.value());
  const double per_token = KvBytesPerToken(m, 2.0, 1).value();
  EXPECT_EQ(r.kv_tokens % 16, 0);
  EXPECT_LE(static_cast<double>(r.kv_tokens) * per_token, r.kv_budget.value());
  EXPECT_GT(static_cast<double>(r.kv_tokens + 16) * per_token, r.kv_budget.value());
  EXPECT_NEAR(r.non_kv.value(),
              (r.breakdown.weights + r.breakdown.activations + r.breakdown.logits +
               r.breakdown.cuda_context + r.breakdown.nccl_buffers)
                  .value(),
              1.0);
  std::printf(
      "[ info     ] Llama-3-8B, vLLM util 0.9 on 79.22 GiB: weights %.2f GiB, KV %.2f GiB "
      "= %lld tokens (vLLM log in formats.md 6.2: 14.96 GiB weights, 53.29 GiB KV)\n",
      ToGiB(r.breakdown.weights), ToGiB(r.kv_budget), static_cast<long long>(r.kv_tokens));
  // Another utilisation moves the budget by exactly the difference in allowed memory.
  opt.memory_fraction = 0.8;
  InferMemory r8 = EstimateInferenceMemory(m, opt, total);
  EXPECT_NEAR(r.kv_budget.value() - r8.kv_budget.value(), 0.1 * total.value(), 1.0);
}

TEST(InferenceKvBudget, SlidingWindowLayersHoldTheirWindow) {
  // Gemma-3-27B at a 131072-token context: 52 of 62 layers keep 1024 tokens where the engine
  // allocates by window (vLLM >= 0.10's hybrid KV cache manager: "GPU KV cache size" is
  // max_concurrency x max_model_len, each request costing every group's KV at max_model_len).
  const ModelSpec& m = Preset("Gemma-3-27B-it");
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.context = 131072;
  const Bytes total = GiB(139.8);  // one H200
  const double full = KvBytesPerToken(m, 2.0, 1).value();
  const double share = SlidingKvShare(m, 131072);
  const InferMemory win = EstimateInferenceMemory(m, opt, total);
  EXPECT_NEAR(win.breakdown.kv_cache.value(), full * share * 131072, 1.0);
  EXPECT_NEAR(static_cast<double>(win.kv_tokens), win.kv_budget.value() / (full * share), 16.0);
  // Releases before the hybrid manager (and TGI) hold the whole context on every layer.
  opt.window_interleaved_kv = KeepsInterleavedWindowKv(Engine::kVllm, "0.9.2");
  EXPECT_FALSE(opt.window_interleaved_kv);
  const InferMemory old = EstimateInferenceMemory(m, opt, total);
  EXPECT_NEAR(old.breakdown.kv_cache.value(), full * 131072, 1.0);
  EXPECT_NEAR(static_cast<double>(win.kv_tokens) / static_cast<double>(old.kv_tokens), 1.0 / share,
              0.01 / share);
  EXPECT_FALSE(KeepsInterleavedWindowKv(Engine::kVllm, "~0.6.6 (V0)"));
  EXPECT_FALSE(KeepsInterleavedWindowKv(Engine::kTgi, ""));
  EXPECT_TRUE(KeepsInterleavedWindowKv(Engine::kVllm, "0.10.1"));
  EXPECT_TRUE(KeepsInterleavedWindowKv(Engine::kVllm, ""));
  EXPECT_FALSE(KeepsInterleavedWindowKv(Engine::kSglang, ""));
  // SGLang's hybrid pool gives the sliding layers 0.8 of the full pool's tokens whatever the
  // context; below the window/0.8 the sliding pool binds. TensorRT-LLM holds the whole context
  // of interleaved models.
  InferMemoryOptions sg;
  sg.engine = Engine::kSglang;
  sg.context = 131072;
  EXPECT_NEAR(SlidingKvEngineShare(m, sg), (10 + 0.8 * 52) / 62.0, 1e-12);
  sg.context = 512;
  EXPECT_NEAR(SlidingKvEngineShare(m, sg), (10 + 0.8 * 52) / 62.0 / 0.8, 1e-12);
  sg.engine = Engine::kTrtLlm;
  EXPECT_DOUBLE_EQ(SlidingKvEngineShare(m, sg), 1.0);
  // A model whose every layer slides keeps the window on vLLM of any release, not on TGI.
  const ModelSpec& mis = Preset("Mistral-7B-v0.1");
  opt.context = 32768;
  EXPECT_NEAR(EstimateInferenceMemory(mis, opt, total).breakdown.kv_cache.value(),
              KvBytesPerToken(mis, 2.0, 1).value() * 4096, 1.0);
  opt.sliding_kv = false;  // vLLM V0's logged block count: every layer's whole context
  EXPECT_NEAR(EstimateInferenceMemory(mis, opt, total).breakdown.kv_cache.value(),
              KvBytesPerToken(mis, 2.0, 1).value() * 32768, 1.0);
  opt.sliding_kv = true;
  opt.engine = Engine::kTrtLlm;  // its cyclic KV cache
  EXPECT_NEAR(EstimateInferenceMemory(mis, opt, total).breakdown.kv_cache.value(),
              KvBytesPerToken(mis, 2.0, 1).value() * 4096, 1.0);
  opt.engine = Engine::kTgi;
  EXPECT_NEAR(EstimateInferenceMemory(mis, opt, total).breakdown.kv_cache.value(),
              KvBytesPerToken(mis, 2.0, 1).value() * 32768, 1.0);
}

TEST(InferenceKvBudget, VllmTensorParallelOnNvlsNodesPaysNcclMulticastBuffers) {
  // NCCL's NVLink SHARP all-reduce allocates ~1.85 GiB per GPU inside vLLM's profiling run on
  // NVSwitch nodes of Hopper or newer (vLLM 0.19 on H100: non-torch 2.06-2.17 GiB at TP 2-4,
  // 0.24-0.27 at TP 1). No NVLS on A100 (NVSwitch gen 2), PCIe boards, or at TP 1; SGLang
  // turns it off.
  EXPECT_TRUE(NvlsAllReduce(Acc("H100-SXM5-80GB")));
  EXPECT_TRUE(NvlsAllReduce(Acc("B200-HGX")));
  EXPECT_FALSE(NvlsAllReduce(Acc("A100-SXM4-80GB")));
  EXPECT_FALSE(NvlsAllReduce(Acc("H100-PCIe-80GB")));
  EXPECT_FALSE(NvlsAllReduce(Acc("L40S")));
  const ModelSpec& m = Preset("Llama-3.1-8B");
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.nvls = true;
  opt.tp = 2;
  const Bytes total = GiB(79.19);
  const InferMemory tp2 = EstimateInferenceMemory(m, opt, total);
  EXPECT_NEAR(ToGiB(tp2.engine_non_torch), 2.05, 0.01);  // measured 2.07 (llm-d, 0.19.0)
  opt.nvls = false;
  const InferMemory plain = EstimateInferenceMemory(m, opt, total);
  EXPECT_NEAR(ToGiB(plain.engine_non_torch), 0.2, 1e-9);
  EXPECT_NEAR(ToGiB(plain.kv_budget) - ToGiB(tp2.kv_budget), 1.85, 1e-6);
  opt.nvls = true;
  opt.tp = 1;
  EXPECT_NEAR(ToGiB(EstimateInferenceMemory(m, opt, total).engine_non_torch), 0.2, 1e-9);
  opt.tp = 2;
  opt.engine = Engine::kSglang;
  const InferMemory sg = EstimateInferenceMemory(m, opt, total);
  opt.nvls = false;
  EXPECT_DOUBLE_EQ(sg.kv_budget.value(), EstimateInferenceMemory(m, opt, total).kv_budget.value());
}

TEST(InferenceKvBudget, VllmV1ActivationPeakIsTheLargerOfForwardAndSamplerSort) {
  // V1 samples 1024 sequences after the forward with top-k/top-p: 16 B per vocabulary entry.
  // vLLM 0.19.0 on H100 (llm-d-planner accuracy report): Gemma-2-9B 3.65 GiB, Llama-3.1-8B
  // 1.89 GiB, both sampler-bound; forward-bound models keep the forward's peak.
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.max_num_seqs = 1024;
  opt.max_num_batched_tokens = 8192;
  auto peak = [&](const ModelSpec& m) {
    const MemoryBreakdown b = EstimateInferenceMemory(m, opt, GiB(79.19)).breakdown;
    return ToGiB(b.activations + b.logits);
  };
  const ModelSpec& gemma = Preset("gemma-2-9b");
  EXPECT_NEAR(peak(gemma), 1024.0 * static_cast<double>(gemma.vocab) * 16 / kBytesPerGiB, 1e-6);
  EXPECT_NEAR(peak(gemma), 3.65, 0.3);
  EXPECT_NEAR(peak(Preset("Llama-3.1-8B")), 1.89, 0.1);
  // Fewer sequences: the forward (8192 tokens x (3h + 3f) x 2 B) is the peak.
  opt.max_num_seqs = 128;
  const ModelSpec& llama = Preset("Llama-3.1-8B");
  EXPECT_NEAR(peak(llama), 8192.0 * (3 * 4096 + 3 * 14336) * 2 / kBytesPerGiB, 1e-6);
}

// vLLM V1's fused-MoE buffers come from the persistent WorkspaceManager: per token and routed
// expert max(2 f_e/tp, h) + f_e/tp elements stay allocated under the sampler (vLLM 0.19 on H100,
// llm-d-planner logs: Qwen3-30B-A3B 2.68 GiB = the sampler's 2.32 + the workspace; Mixtral TP 2
// 1.21 GiB). V0 freed them after each layer.
TEST(InferenceKvBudget, VllmV1MoeWorkspaceStaysUnderTheSampler) {
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.max_num_seqs = 1024;
  opt.max_num_batched_tokens = 8192;
  const ModelSpec& m = Preset("qwen3-30b-a3b");
  ASSERT_TRUE(m.moe.has_value());
  const MemoryBreakdown b = EstimateInferenceMemory(m, opt, GiB(79.19)).breakdown;
  const double ef = static_cast<double>(m.moe->expert_ffn);
  const double ws =
      8192.0 * m.moe->top_k * (std::max(2 * ef, static_cast<double>(m.hidden)) + ef) * 2;
  const double sampler = 1024.0 * static_cast<double>(m.vocab) * 16;
  EXPECT_NEAR((b.activations + b.logits).value(), sampler + ws, 1.0);
  EXPECT_NEAR(ToGiB(b.activations + b.logits), 2.68, 0.1);
  // V0 keeps the per-layer buffers inside the forward and profiles its own sampler.
  opt.sort_sampler_profile = true;
  opt.max_num_seqs = 256;
  const MemoryBreakdown v0 = EstimateInferenceMemory(m, opt, GiB(79.19)).breakdown;
  EXPECT_NEAR(v0.activations.value(),
              8192.0 * (3.0 * static_cast<double>(m.hidden) + 3 * ef * m.moe->top_k) * 2, 1.0);
}

// Under pipeline parallelism vLLM's log reports its first worker's profile: the first stage
// runs the forward of its layers and hands hidden states and residual on, with no LM head and
// no sampler (vLLM 0.19 on H100, llm-d-planner's report: Llama-3.1-8B 1.89 GiB at PP 1, 1.10 at
// PP 2, 1.05 at PP 4). The KV pool still follows the last stage (logits and sampler).
TEST(InferenceKvBudget, VllmPipelineFirstStageReportsNoSampler) {
  const ModelSpec& m = Preset("Llama-3.1-8B");
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.max_num_seqs = 1024;
  opt.max_num_batched_tokens = 8192;
  const InferMemory one = EstimateInferenceMemory(m, opt, GiB(79.19));
  EXPECT_DOUBLE_EQ(one.reported_activation_peak.value(),
                   (one.breakdown.activations + one.breakdown.logits).value());
  for (int pp : {2, 4}) {
    opt.pp = pp;
    const InferMemory r = EstimateInferenceMemory(m, opt, GiB(79.19));
    const double forward = 8192.0 * (3 * 4096 + 3 * 14336) * 2;
    const double sends = 2.0 * 8192 * 4096 * 2;
    EXPECT_NEAR(r.reported_activation_peak.value(), forward + sends, 1.0) << "pp " << pp;
    EXPECT_NEAR(ToGiB(r.reported_activation_peak), 1.08, 0.12) << "pp " << pp;
    // The pool is sized by the stage that samples.
    EXPECT_GT((r.breakdown.activations + r.breakdown.logits).value(),
              r.reported_activation_peak.value());
    // Nor does it add the sampler's non-torch memory (0.07 GiB logged at PP 2 and 4).
    EXPECT_NEAR(ToGiB(r.reported_non_torch), 0.07, 1e-9) << "pp " << pp;
    EXPECT_GT(r.engine_non_torch.value(), r.reported_non_torch.value());
  }
  EXPECT_DOUBLE_EQ(one.reported_non_torch.value(), one.engine_non_torch.value());
}

TEST(InferenceKvBudget, Llama70bBf16OnTwoA100sLeavesTensOfThousandsOfTokens) {
  // The example: Llama-2-70B in bf16 on 2 x A100-80GB (81,920 MiB each), vLLM util 0.9,
  // TP 2: only a few GiB per GPU are left for KV, "~17k tokens" in the issue.
  const ModelSpec& m = Preset("Llama-2-70B");
  InferMemoryOptions opt;
  opt.engine = Engine::kVllm;
  opt.memory_fraction = 0.9;
  opt.tp = 2;
  opt.weight_precision = Precision::kBf16;
  InferMemory r = EstimateInferenceMemory(m, opt, GiB(80));
  std::printf(
      "[ info     ] Llama-2-70B bf16 TP2 on A100-80GB, vLLM 0.9: weights %.2f GiB/GPU, "
      "non-KV %.2f GiB, KV %.2f GiB -> %lld tokens\n",
      ToGiB(r.breakdown.weights), ToGiB(r.non_kv), ToGiB(r.kv_budget),
      static_cast<long long>(r.kv_tokens));
  EXPECT_GE(r.kv_tokens, 5000);
  EXPECT_LE(r.kv_tokens, 50000);
}

TEST(InferenceWeights, TensorParallelHalvesLlama2_70bFp16) {
  const ModelSpec& m = Preset("Llama-2-70B");
  double tp1 = InferenceWeightBytes(m, Precision::kFp16, std::nullopt, 1, 1).value();
  double tp2 = InferenceWeightBytes(m, Precision::kFp16, std::nullopt, 2, 1).value();
  // TP 1 holds every weight at 2 B: 2 x 68,976,648,192 (models.json).
  EXPECT_DOUBLE_EQ(tp1, 2.0 * 68976648192.0);
  // Norm weights are replicated, so TP 2 holds a hair more than half.
  EXPECT_GE(tp2 / tp1, 0.5);
  EXPECT_LE(tp2 / tp1, 0.5 + 1e-4);
}

TEST(InferenceWeights, Int4AwqUnderThirtyPercentOfBf16) {
  const ModelSpec& m = Preset("Llama-2-7B");
  double bf16 = InferenceWeightBytes(m, Precision::kBf16, std::nullopt, 1, 1).value();
  QuantSpec awq{"awq", 4, 128, true, false};
  double int4 = InferenceWeightBytes(m, Precision::kBf16, awq, 1, 1).value();
  double int4_default = InferenceWeightBytes(m, Precision::kInt4, std::nullopt, 1, 1).value();
  std::printf("[ info     ] Llama-2-7B weights: bf16 %.3f GB, AWQ int4-g128 %.3f GB (%.3f x)\n",
              bf16 / 1e9, int4 / 1e9, int4 / bf16);
  EXPECT_LT(int4, 0.3 * bf16);
  EXPECT_DOUBLE_EQ(int4, int4_default);  // --precision int4 means AWQ/GPTQ-style g128
  // Linear layers at 4.15625 bits, embeddings + head + norms at 16 bits.
  const ParamCounts pc = CountParams(m);
  const double lin = static_cast<double>(pc.linear);
  const double rest = static_cast<double>(pc.total) - lin;
  EXPECT_LT(RelErr(int4, lin * 4.15625 / 8.0 + rest * 2.0), 1e-12);
}

TEST(InferenceWeights, KvProjectionsReplicatedWhenTpExceedsKvHeads) {
  // formats.md 6.2 step 2: "K/V projections are replicated when kv_heads < TP" (vLLM's
  // QKVParallelLinear gives each rank one whole KV head). Llama-3.1-70B (8 KV heads) at TP 16:
  // each rank holds q, o and the MLP / 16, k and v for one 128-wide head, replicated norms, and
  // 1/16 of the vocab-parallel embedding and head.
  const ModelSpec& m = Preset("Llama-3.1-70B");
  const double h = 8192, f = 28672, v = 128256, L = 80, hd = 128, tp = 16;
  const double per_layer = (2 * h * h + 3 * h * f) / tp + 2 * h * hd + 2 * h;
  const double want = 2.0 * (L * per_layer + h + 2 * v * h / tp);
  double got = InferenceWeightBytes(m, Precision::kBf16, std::nullopt, 16, 1).value();
  EXPECT_LT(RelErr(got, want), 1e-9)
      << "BUG: InferenceWeightBytes (src/estimate/inference_memory.cc) divides the K/V "
         "projections by TP even when tp > kv_heads; got "
      << got / 1e9 << " GB, want " << want / 1e9 << " GB per GPU";
}

// ------------------------------------------------------------------------------------------------
// LoRA parameter counts.

struct LoraRow {
  const char* name;
  const char* preset;
  int rank;
  LoraTargets targets;
  std::int64_t expected;
  const char* source;
};

// Readable names in test output (gtest would print the bytes).
void PrintTo(const LoraRow& row, std::ostream* os) { *os << row.name; }

const LoraRow kLoraRows[] = {
    {"llama2_7b_r8_qv", "Llama-2-7B", 8, LoraTargets::kQv, 4194304,
     "PEFT print_trainable_parameters for Llama-2-7B, r=8, q_proj+v_proj: 4,194,304"},
    {"llama2_7b_r16_all_linear", "Llama-2-7B", 16, LoraTargets::kAllLinear, 39976960,
     "16 x [4 x (4096+4096) + 3 x (4096+11008)] x 32 layers = 39,976,960"},
    {"llama2_7b_r8_attention", "Llama-2-7B", 8, LoraTargets::kAttention, 8388608,
     "8 x 4 x (4096+4096) x 32 layers"},
    {"llama3_8b_r16_qv_gqa", "Llama-3-8B", 16, LoraTargets::kQv, 6815744,
     "16 x [(4096+4096) + (4096+1024)] x 32 layers (v_proj out = 8 KV heads x 128)"},
};

class Lora : public ::testing::TestWithParam<LoraRow> {};

TEST_P(Lora, AdapterParams) {
  const LoraRow& row = GetParam();
  SCOPED_TRACE(row.source);
  EXPECT_EQ(LoraParams(Preset(row.preset), row.rank, row.targets), row.expected);
}

INSTANTIATE_TEST_SUITE_P(Counts, Lora, ::testing::ValuesIn(kLoraRows),
                         [](const auto& row_info) { return std::string(row_info.param.name); });

TEST(LoraMemory, AdapterIsFp32WeightsGradsAndAdam) {
  const ModelSpec& m = Preset("Llama-2-7B");
  TrainMemoryOptions opt = FormulaOptions();
  opt.method = TrainMethod::kLora;
  opt.lora_rank = 16;
  opt.lora_targets = LoraTargets::kAllLinear;
  MemoryBreakdown b = EstimateTrainingMemory(m, Parallelism{}, opt);
  // fp32 adapter (4) + fp32 grads (4) + Adam m, v (8) per adapter parameter.
  EXPECT_DOUBLE_EQ(b.adapter.value(), 39976960.0 * 16.0);
  // Frozen 16-bit base: 2 B per parameter, no grads, no optimizer state.
  EXPECT_DOUBLE_EQ(b.weights.value(), 2.0 * 6738415616.0);
  EXPECT_EQ(b.gradients.value(), 0.0);
  EXPECT_EQ(b.optimizer.value(), 0.0);
  EXPECT_EQ(b.master_weights.value(), 0.0);
}

// FP8 training stores the frozen base in FP8 (NeMo fp8_params, Transformer Engine
// fp8_model_init): the linear weights at 8 bits plus a fp32 row scale (8 + 32/h), the embeddings,
// head and norms at 16. The adapter is unchanged.
TEST(LoraMemory, Fp8TrainingKeepsTheFrozenBaseInFp8) {
  const ModelSpec& m = Preset("Llama-2-7B");
  TrainMemoryOptions opt = FormulaOptions();
  opt.method = TrainMethod::kLora;
  MemoryBreakdown bf16 = EstimateTrainingMemory(m, Parallelism{}, opt);
  opt.precision = Precision::kFp8;
  MemoryBreakdown fp8 = EstimateTrainingMemory(m, Parallelism{}, opt);
  const double linear = static_cast<double>(CountParams(m).linear);
  const double rest = 6738415616.0 - linear;
  EXPECT_NEAR(fp8.weights.value(), linear * (8.0 + 32.0 / 4096) / 8.0 + rest * 2.0, 1.0);
  EXPECT_LT(fp8.weights.value(), 0.55 * bf16.weights.value());
  EXPECT_DOUBLE_EQ(fp8.adapter.value(), bf16.adapter.value());
}

// ------------------------------------------------------------------------------------------------
// Properties over the preset library.

std::vector<const ModelSpec*> DecoderPresets() {
  std::vector<const ModelSpec*> out;
  for (const auto& m : Presets()) {
    if (m.is_decoder_llm()) out.push_back(&m);
  }
  return out;
}

TEST(Properties, MoreTpNeverRaisesWeightBytesPerGpu) {
  int checked = 0;
  for (const auto& m : Presets()) {
    for (Precision p : {Precision::kBf16, Precision::kFp8, Precision::kInt4}) {
      double prev = InferenceWeightBytes(m, p, std::nullopt, 1, 1).value();
      EXPECT_GT(prev, 0.0) << m.name;
      for (int tp : {2, 4, 8}) {
        double now = InferenceWeightBytes(m, p, std::nullopt, tp, 1).value();
        EXPECT_LE(now, prev) << m.name << " " << PrecisionName(p) << " tp " << tp;
        prev = now;
      }
      ++checked;
    }
    if (!m.is_transformer()) continue;
    // Training: weights and model states per GPU.
    double prev_w = 0, prev_s = 0;
    for (int tp : {1, 2, 4, 8}) {
      Parallelism par;
      par.tp = tp;
      MemoryBreakdown b = EstimateTrainingMemory(m, par, FormulaOptions());
      if (tp > 1) {
        EXPECT_LE(b.weights.value(), prev_w) << m.name << " tp " << tp;
        EXPECT_LE(b.ModelStates().value(), prev_s) << m.name << " tp " << tp;
      }
      prev_w = b.weights.value();
      prev_s = b.ModelStates().value();
    }
  }
  EXPECT_GE(checked, 120);
}

TEST(Properties, HigherZeroStageNeverUsesMoreModelStateMemory) {
  std::vector<ModelSpec> models;
  for (const auto& m : Presets()) models.push_back(m);
  models.push_back(ParamsOnly(7500000000));
  for (const auto& m : models) {
    for (int dp : {2, 8, 64}) {
      double prev = 0;
      for (int stage = 0; stage <= 3; ++stage) {
        Parallelism par;
        par.dp = dp;
        par.zero_stage = stage;
        double now = EstimateTrainingMemory(m, par, FormulaOptions()).ModelStates().value();
        if (stage > 0) {
          EXPECT_LE(now, prev) << m.name << " dp " << dp << " stage " << stage;
        }
        prev = now;
      }
    }
  }
}

TEST(Properties, HigherZeroStageWithGatherBufferForModelsOver1B) {
  // With the ZeRO-3 gather buffer (2 x largest layer) the ordering still holds once the largest
  // layer is under a quarter of the model: true for every preset of 1B parameters or more whose
  // architecture gives a layer breakdown (params-only presets: see the next test).
  for (const auto& m : Presets()) {
    const ParamCounts pc = CountParams(m);
    if (pc.total < 1000000000 || pc.per_layer == 0) continue;
    for (int dp : {2, 8, 64}) {
      double prev = 0;
      for (int stage = 0; stage <= 3; ++stage) {
        Parallelism par;
        par.dp = dp;
        par.zero_stage = stage;
        TrainMemoryOptions opt = FormulaOptions();
        opt.largest_layer_params.reset();
        double now = EstimateTrainingMemory(m, par, opt).ModelStates().value();
        if (stage > 0) {
          EXPECT_LE(now, prev) << m.name << " dp " << dp << " stage " << stage;
        }
        prev = now;
      }
    }
  }
}

TEST(ZeroStage3, ParamsOnlyModelKeepsStageOrdering) {
  // A model known only by its count (Whisper/T5/UNet presets, a bare .safetensors file) has no
  // layer breakdown; CountParams then reports largest_layer = total, and the ZeRO-3 gather buffer
  // (2 x largest layer) becomes two copies of the whole model. The ZeRO paper's Psi = 7.5B on 64
  // GPUs would then need 1.875 + 30 = 31.9 GB at stage 3 instead of Fig. 1's 1.9 GB, more than
  // stage 2's 16.6 GB.
  std::vector<ModelSpec> models = {ParamsOnly(7500000000), Preset("Whisper-large-v3"),
                                   Preset("Stable-Diffusion-XL-base-1.0 UNet")};
  for (const auto& m : models) {
    Parallelism par;
    par.dp = 64;
    TrainMemoryOptions opt = FormulaOptions();
    opt.precision = Precision::kFp16;
    opt.largest_layer_params.reset();  // the default: derived from the model
    par.zero_stage = 2;
    double stage2 = EstimateTrainingMemory(m, par, opt).ModelStates().value();
    par.zero_stage = 3;
    double stage3 = EstimateTrainingMemory(m, par, opt).ModelStates().value();
    EXPECT_LE(stage3, stage2)
        << "BUG: " << m.name << " dp 64: ZeRO-3 " << stage3 / 1e9 << " GB > ZeRO-2 " << stage2 / 1e9
        << " GB; CountParams (src/workload/model.cc) sets largest_layer = total "
        << "for params-only models and EstimateTrainingMemory (src/estimate/memory.cc) adds "
        << "2 x largest_layer as the ZeRO-3 gather buffer";
  }
}

TEST(Properties, RecomputeFullLeSelectiveLeNone) {
  for (const ModelSpec* m : DecoderPresets()) {
    for (int tp : {1, 8}) {
      for (bool sp : {false, true}) {
        if (sp && tp == 1) continue;
        for (bool flash : {true, false}) {
          for (bool fused : {true, false}) {
            double act[3];
            int i = 0;
            for (Recompute rc : {Recompute::kFull, Recompute::kSelective, Recompute::kNone}) {
              Parallelism par;
              par.tp = tp;
              par.sequence_parallel = sp;
              TrainMemoryOptions opt = FormulaOptions();
              opt.recompute = rc;
              opt.flash_attention = flash;
              opt.fused_kernels = fused;
              opt.seq_len = 4096;
              act[i++] = EstimateTrainingMemory(*m, par, opt).activations.value();
            }
            EXPECT_LE(act[0], act[1]) << m->name << " tp " << tp << " sp " << sp;
            EXPECT_LE(act[1], act[2]) << m->name << " tp " << tp << " sp " << sp;
            EXPECT_GT(act[0], 0.0) << m->name;
          }
        }
      }
    }
  }
}

TEST(Properties, LoraBelowFullAndQloraBaseBelowLoraBase) {
  for (const ModelSpec* m : DecoderPresets()) {
    TrainMemoryOptions opt = FormulaOptions();
    opt.method = TrainMethod::kFull;
    MemoryBreakdown full = EstimateTrainingMemory(*m, Parallelism{}, opt);
    opt.method = TrainMethod::kLora;
    MemoryBreakdown lora = EstimateTrainingMemory(*m, Parallelism{}, opt);
    opt.method = TrainMethod::kQlora;
    MemoryBreakdown qlora = EstimateTrainingMemory(*m, Parallelism{}, opt);
    EXPECT_LT(lora.Total().value(), full.Total().value()) << m->name;
    EXPECT_LT(lora.ModelStates().value(), full.ModelStates().value()) << m->name;
    EXPECT_LT(qlora.weights.value(), lora.weights.value()) << m->name;
    EXPECT_LT(qlora.Total().value(), lora.Total().value()) << m->name;
    EXPECT_GT(lora.adapter.value(), 0.0) << m->name;
  }
}

TEST(QloraMemory, NF4DoubleQuantBase) {
  // QLoRA (Dettmers et al. 2023): NF4 with blocks of 64 and double-quantized constants costs
  // 4 + 0.127 bits per linear weight; embeddings, norms and the head stay at 16 bits.
  const ModelSpec& m = Preset("Llama-2-7B");
  TrainMemoryOptions opt = FormulaOptions();
  opt.method = TrainMethod::kQlora;
  MemoryBreakdown b = EstimateTrainingMemory(m, Parallelism{}, opt);
  const ParamCounts pc = CountParams(m);
  const double lin = static_cast<double>(pc.linear);
  const double rest = static_cast<double>(pc.total) - lin;
  const double bits = 4.0 + (8.0 + 32.0 / 256.0) / 64.0;
  EXPECT_LT(RelErr(b.weights.value(), lin * bits / 8.0 + rest * 2.0), 1e-12);
  std::printf("[ info     ] Llama-2-7B QLoRA base %.2f GB\n", ToGB(b.weights));
}

TEST(RuntimeReserve, AddedOnlyWhenAsked) {
  const ModelSpec& m = Preset("Llama-2-7B");
  TrainMemoryOptions opt;
  Parallelism par;
  par.dp = 8;
  MemoryBreakdown with = EstimateTrainingMemory(m, par, opt);
  EXPECT_DOUBLE_EQ(with.cuda_context.value(), opt.reserve.cuda_context.value());
  EXPECT_DOUBLE_EQ(with.nccl_buffers.value(), opt.reserve.nccl_buffers.value());
  EXPECT_NEAR(
      with.allocator_slack.value(),
      (with.ModelStates() + with.activations + with.logits).value() * opt.reserve.allocator_slack,
      1.0);
  par.dp = 1;
  MemoryBreakdown single = EstimateTrainingMemory(m, par, opt);
  EXPECT_EQ(single.nccl_buffers.value(), 0.0);  // one GPU: no communicator
  opt.include_runtime = false;
  MemoryBreakdown bare = EstimateTrainingMemory(m, par, opt);
  EXPECT_EQ(bare.cuda_context.value() + bare.nccl_buffers.value() + bare.allocator_slack.value(),
            0.0);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {
// SGLang before 0.5.3: the default static fraction shrinks with the TP/PP group
// (server_args.py), so the KV pool of one GPU of a TP 8 group is smaller than the same GPU's
// alone would be at 0.88.
TEST(SglangMemory, DefaultFractionFollowsTheWorldSize) {
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(1), 0.88);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(2), 0.87);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(4), 0.85);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(8), 0.81);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFraction(16), 0.79);
  const ModelSpec* m = FindPreset("llama-3.1-70b");
  ASSERT_NE(m, nullptr);
  InferMemoryOptions o;
  o.engine = Engine::kSglang;
  o.sglang_gpu_memory_rule = false;
  o.tp = 8;
  const InferMemory def = EstimateInferenceMemory(*m, o, GiB(80));
  o.memory_fraction = 0.88;
  const InferMemory at88 = EstimateInferenceMemory(*m, o, GiB(80));
  EXPECT_LT(def.kv_budget.value(), at88.kv_budget.value());
  EXPECT_NEAR(at88.kv_budget.value() - def.kv_budget.value(), 0.07 * (80.0 * kBytesPerGiB),
              1.0 * kBytesPerGiB);
}

// SGLang from 0.5.3 reserves, below its static fraction, a prefill chunk's activations, its
// CUDA graphs and a share per GPU of the group, from the GPU's memory (server_args.py
// _handle_gpu_memory_settings). An H100 (79.2 GiB visible) at TP 1: 512 + 8192 x 1.5 + 256 x 2 +
// 128 + 58 piecewise sizes x 8 = 13904 MiB, 0.829 (SGLang issue 29092 logged 0.828 for Qwen3-32B
// on an H100); at TP 8 0.811; a 24 GB card 0.832; a T4 0.749; a B200 0.853.
TEST(SglangMemory, DefaultFractionFollowsTheGpuFromZeroFiveThree) {
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionForGpu(GiB(79.2), 1, 1, false), 0.829);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionForGpu(GiB(79.2), 8, 1, false), 0.811);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionForGpu(GiB(23.76), 1, 1, false), 0.832);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionForGpu(GiB(15.84), 1, 1, false), 0.749);
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionForGpu(GiB(178.2), 1, 1, false), 0.853);
  // An MLA model captures piecewise graphs up to 2048 tokens only (42 sizes, not 58).
  EXPECT_DOUBLE_EQ(SglangDefaultMemFractionForGpu(GiB(79.2), 1, 1, true), 0.83);
  EXPECT_TRUE(SglangSizesFractionByGpu(""));
  EXPECT_TRUE(SglangSizesFractionByGpu("0.5.3"));
  EXPECT_TRUE(SglangSizesFractionByGpu("v0.5.18"));
  EXPECT_FALSE(SglangSizesFractionByGpu("0.5.2"));
  EXPECT_FALSE(SglangSizesFractionByGpu("~0.4.9 (not stated)"));
  const ModelSpec* m = FindPreset("llama-3.1-8b");
  ASSERT_NE(m, nullptr);
  InferMemoryOptions o;
  o.engine = Engine::kSglang;
  const InferMemory def = EstimateInferenceMemory(*m, o, GiB(79.2));
  o.memory_fraction = 0.829;
  EXPECT_DOUBLE_EQ(def.kv_budget.value(),
                   EstimateInferenceMemory(*m, o, GiB(79.2)).kv_budget.value());
}
// Optimizer states per parameter, from each optimizer's own state tensors (fp32 states, 4 B):
// Adam-family two moments, one for momentum-only or square-average methods, none measurable
// for Adafactor's factored second moment, three for AdEMAMix; 8-bit bitsandbytes states keep an
// fp32 absmax per 2048 values.
TEST(OptimizerStateBytes, FollowsEachOptimizersStateTensors) {
  const Precision f32 = Precision::kFp32;
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdamW, f32), 8.0);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdafactor, f32), 0.0);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdamMini, f32), 4.0);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kMuon, f32), 4.0);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kRmsprop, f32), 4.0);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdagrad, f32), 4.0);
  EXPECT_EQ(OptimizerStateBytes(Optimizer::kAdemamix, f32), 12.0);
  EXPECT_DOUBLE_EQ(OptimizerStateBytes(Optimizer::kLion8bit, f32), 1.0 + 4.0 / 2048);
  EXPECT_DOUBLE_EQ(OptimizerStateBytes(Optimizer::kAdamW8bit, f32),
                   2 * OptimizerStateBytes(Optimizer::kLion8bit, f32));
  // Every optimizer has a name that parses back to it (the planner's YAML and flags).
  for (const std::string& n : OptimizerNames()) {
    auto o = ParseOptimizer(n);
    ASSERT_TRUE(o.has_value()) << n;
    EXPECT_GE(OptimizerStateBytes(*o, f32), 0.0) << n;
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// torchtitan's "selective" mode is an operator policy (parallelize_llama.py `_save_list`): each
// block keeps its input, the attention output and every other matmul's output. Llama-3.1-8B
// per token: 4096 (input) + 4096 (attention output) + half of q 4096, k 1024, v 1024, o 4096,
// gate 14336, up 14336, down 4096 = 29696 values, 59392 bytes in bf16; sequence parallelism
// splits all of it over tp.
TEST(TorchtitanMemory, OperatorLevelSelectiveCheckpointing) {
  const ModelSpec& m = Preset("Llama-3.1-8B");
  EXPECT_DOUBLE_EQ(OpSacBytesPerLayer(m, 2, 8192, 1, false, 2.0).value(), 59392.0 * 2 * 8192);
  EXPECT_DOUBLE_EQ(OpSacBytesPerLayer(m, 1, 8192, 8, true, 2.0).value(), 59392.0 * 8192 / 8);
  // Between Megatron's full recompute (the input only) and its selective one, which with flash
  // attention keeps the whole layer.
  const Bytes op = OpSacBytesPerLayer(m, 1, 4096, 1, false, 2.0);
  EXPECT_GT(op, ActivationBytesPerLayer(m, 1, 4096, 1, false, Recompute::kFull, true, false, 2));
  EXPECT_LT(op,
            ActivationBytesPerLayer(m, 1, 4096, 1, false, Recompute::kSelective, true, false, 2));

  Parallelism par;
  par.dp = 8;
  par.zero_stage = 3;
  TrainMemoryOptions opt;
  opt.micro_batch = 2;
  opt.seq_len = 8192;
  opt.recompute = Recompute::kSelective;
  ApplyFrameworkMemory(TrainFramework::kTorchtitan, par, opt);
  EXPECT_TRUE(opt.op_level_sac);
  EXPECT_FALSE(opt.fsdp_unsharded_step);  // no pipeline
  // Its eager fp32 cross-entropy: bf16 logits, their fp32 copy and log-softmax's fp32 output.
  EXPECT_DOUBLE_EQ(opt.logits_bytes_per_element, 10.0);
  const MemoryBreakdown titan = EstimateTrainingMemory(m, par, opt);
  EXPECT_DOUBLE_EQ(titan.logits.value(), 2.0 * 8192 * 128256 * 10.0);
  // The saved layers, plus one layer recomputed in full during its backward.
  const Bytes whole =
      ActivationBytesPerLayer(m, 2, 8192, 1, false, Recompute::kNone, true, false, 2);
  EXPECT_DOUBLE_EQ(titan.activations.value(),
                   32 * OpSacBytesPerLayer(m, 2, 8192, 1, false, 2.0).value() + whole.value());
  // The same options under another framework keep Megatron's meaning of "selective".
  TrainMemoryOptions other = opt;
  ApplyFrameworkMemory(TrainFramework::kFsdp, par, other);
  EXPECT_FALSE(other.op_level_sac);
  EXPECT_GT(EstimateTrainingMemory(m, par, other).activations, titan.activations);
}

// FSDP2 under torch.distributed.pipelining keeps the stage unsharded for the step: its 16-bit
// weights instead of two gathered layers, and fp32 gradients accumulated until the last
// micro-batch's reduce-scatter. The pipeline also gathers the weights once per step, not twice
// per micro-batch.
TEST(TorchtitanMemory, PipelinedFsdpStaysUnshardedForTheStep) {
  const ModelSpec& m = Preset("Llama-3.1-405B");
  Parallelism par;
  par.tp = 8;
  par.pp = 8;
  par.dp = 8;
  par.sequence_parallel = true;
  par.zero_stage = 3;
  TrainMemoryOptions opt;
  opt.seq_len = 8192;
  opt.micro_batch = 4;
  opt.num_microbatches = 8;
  opt.recompute = Recompute::kFull;
  opt.include_runtime = false;
  ApplyFrameworkMemory(TrainFramework::kTorchtitan, par, opt);
  ASSERT_TRUE(opt.fsdp_unsharded_step);
  TrainMemoryOptions resharded = opt;
  resharded.fsdp_unsharded_step = false;
  const MemoryBreakdown kept = EstimateTrainingMemory(m, par, opt);
  const MemoryBreakdown usual = EstimateTrainingMemory(m, par, resharded);
  // About 405.9e9 / 64 = 6.3e9 parameters per GPU: +11.8 GiB of bf16 weights and +23.6 GiB of
  // fp32 gradients, less the two gathered layers the resharding layout holds.
  const double local = (kept.gradients - usual.gradients).value() / 4.0;
  EXPECT_NEAR(local, 405.9e9 / 64, 0.05 * 405.9e9 / 64);
  EXPECT_NEAR((kept.weights - usual.weights).value(),
              2.0 * local - 2.0 * static_cast<double>(CountParams(m).largest_layer) / 8 * 2.0, 1e6);
  // Without a pipeline, FSDP reshards after each block's forward.
  par.pp = 1;
  TrainMemoryOptions flat = opt;
  ApplyFrameworkMemory(TrainFramework::kTorchtitan, par, flat);
  EXPECT_FALSE(flat.fsdp_unsharded_step);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// TGI's launcher defaults and start-up KV rule follow the release (launcher docs and
// flash_causal_lm.py `warmup` of each tag).
TEST(TgiStartup, DefaultsFollowTheRelease) {
  const TgiLaunchDefaults v09 = TgiDefaults("~0.9.3", 8192);
  EXPECT_EQ(v09.max_total_tokens, 2048);
  EXPECT_EQ(v09.max_input_tokens, 1024);
  EXPECT_EQ(v09.max_batch_prefill_tokens, 4096);
  EXPECT_DOUBLE_EQ(v09.rule.wiggle, 1.0);  // all the free memory before 1.4.1
  EXPECT_FALSE(v09.rule.of_total);
  EXPECT_DOUBLE_EQ(TgiDefaults("1.4.0", 8192).rule.wiggle, 1.0);
  EXPECT_DOUBLE_EQ(TgiDefaults("1.4.1", 8192).rule.wiggle, 0.95);
  const TgiLaunchDefaults v20 = TgiDefaults("2.0.2", 8192);
  EXPECT_EQ(v20.max_total_tokens, 4096);  // min(max_position_embeddings, 4096)
  EXPECT_EQ(v20.max_input_tokens, 4095);
  EXPECT_EQ(v20.max_batch_prefill_tokens, 4145);  // max_input_tokens + 50
  EXPECT_DOUBLE_EQ(v20.rule.wiggle, 0.95);
  EXPECT_EQ(TgiDefaults("2.0.2", 2048).max_total_tokens, 2048);
  EXPECT_DOUBLE_EQ(TgiDefaults("v2.4.1", 8192).rule.wiggle, 0.90);
  EXPECT_FALSE(TgiDefaults("v2.4.1", 8192).rule.of_total);
  EXPECT_DOUBLE_EQ(TgiDefaults("3.0.1", 8192).rule.wiggle, 0.95);
  EXPECT_TRUE(TgiDefaults("3.0.1", 8192).rule.of_total);
  EXPECT_DOUBLE_EQ(TgiDefaults("3.1.0", 8192).rule.wiggle, 0.93);
  EXPECT_DOUBLE_EQ(TgiDefaults("", 8192).rule.wiggle, 0.90);  // the current release
  EXPECT_TRUE(TgiDefaults("", 8192).rule.of_total);
  // The user's limits: the prefill budget never falls below the longest prompt.
  const TgiLaunchDefaults user = TgiDefaults("2.4.0", 131072, 10000, 9999);
  EXPECT_EQ(user.max_batch_prefill_tokens, 10049);
  EXPECT_EQ(TgiDefaults("2.0.0", 131072, 9000, 8000).max_batch_prefill_tokens, 8050);
  // From 3.0 longer prompts are chunked: the budget stays at the launcher's default.
  EXPECT_EQ(TgiDefaults("", 131072, 9000, 8000).max_batch_prefill_tokens, 4096);
}

// Before 2.4 the warm-up prefill asks for logprobs of every prompt token: the full logits and
// their log_softmax in the model's dtype (plus the local shard while TP gathers), and the KV
// cache is what the release's rule leaves after that peak, with the warm-up batch's blocks
// added back. 2.4 takes the log_softmax in place (through a contiguous temporary at TP > 1);
// from 3.0 the warm-up asks for no prefill logprobs: the LM head runs on each request's last
// token.
TEST(TgiStartup, WarmupLogitsAndKvRule) {
  const ModelSpec* m = FindPreset("llama-3-8b");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(TgiDefaults("2.2.0", 8192).rule.prefill_logit_copies, 2);
  EXPECT_EQ(TgiDefaults("2.4.1", 8192).rule.prefill_logit_copies, -1);
  EXPECT_EQ(TgiDefaults("3.0.0", 8192).rule.prefill_logit_copies, 0);
  EXPECT_EQ(TgiDefaults("", 8192).rule.prefill_logit_copies, 0);
  InferMemoryOptions o;
  o.engine = Engine::kTgi;
  o.max_num_batched_tokens = 4096;
  o.context = 2048;
  o.tgi = {0.95, false, 1024, 2};
  const Bytes total = GiB(23.6);
  const InferMemory r = EstimateInferenceMemory(*m, o, total);
  const double logits = 4096.0 * 128256 * 2 * 2;
  EXPECT_DOUBLE_EQ(r.breakdown.logits.value(), logits);
  const double per_token = KvBytesPerToken(*m, 2.0, 1).value();
  const double warm = 4 * 2048 * per_token;  // ceil(4096 / 1024) requests of 2048 tokens
  const double used = r.engine_non_kv.value();
  EXPECT_GT(used, r.breakdown.weights.value() + logits);
  EXPECT_NEAR(r.kv_budget.value(), 0.95 * (total.value() - used - warm) + warm, 1.0);
  // 3.x's margin is a share of the total (with the same warm-up peak).
  o.tgi = {0.95, true, 1024, 2};
  EXPECT_NEAR(EstimateInferenceMemory(*m, o, total).kv_budget.value(), 0.95 * total.value() - used,
              1.0);
  // 2.4: one copy; at TP 2 the gathered view, its contiguous temporary and the local half.
  o.tgi = {0.95, false, 1024, -1};
  EXPECT_DOUBLE_EQ(EstimateInferenceMemory(*m, o, total).breakdown.logits.value(),
                   4096.0 * 128256 * 2 * 1);
  // 3.0 and later: the last token of each of the ceil(4096 / 1024) warm-up requests.
  o.tgi = {0.95, true, 1024, 0};
  EXPECT_DOUBLE_EQ(EstimateInferenceMemory(*m, o, total).breakdown.logits.value(),
                   4.0 * 128256 * 2);
  o.tp = 2;
  o.tgi = {0.95, false, 1024, 2};
  EXPECT_DOUBLE_EQ(EstimateInferenceMemory(*m, o, total).breakdown.logits.value(),
                   4096.0 * 128256 * 2 * 2.5);
  o.tgi = {0.95, false, 1024, -1};
  EXPECT_DOUBLE_EQ(EstimateInferenceMemory(*m, o, total).breakdown.logits.value(),
                   4096.0 * 128256 * 2 * 2.5);
}

// vLLM serves a weight format only where its platform has kernels for it (docs.vllm.ai
// "Quantization: Supported Hardware"; vllm/platforms; each method's get_min_capability).
TEST(VllmWeightFormats, OnlyWhereThePlatformHasKernels) {
  const auto awq = GetQuantPreset(QuantPresetId::kAwq).Spec();
  const auto gptq = GetQuantPreset(QuantPresetId::kGptq).Spec();
  const auto nf4 = GetQuantPreset(QuantPresetId::kBnbNf4).Spec();
  const auto gguf = GetQuantPreset(QuantPresetId::kGgufQ4KM).Spec();
  const std::optional<QuantSpec> none;
  // 16-bit weights run everywhere.
  for (const char* id : {"V100-SXM2-32GB", "Inferentia2", "MI250X", "Gaudi2", "P100-PCIe-16GB"}) {
    EXPECT_EQ(VllmWeightFormatUnsupported(Acc(id), Precision::kFp16, none), "") << id;
  }
  // AWQ needs Turing (7.5): not Volta, yes on a T4, a 3060 and an H100.
  const std::string v100 =
      VllmWeightFormatUnsupported(Acc("V100-SXM2-32GB"), Precision::kFp16, awq);
  EXPECT_NE(v100.find("7.5"), std::string::npos) << v100;
  EXPECT_NE(v100.find("7.0"), std::string::npos) << v100;
  for (const char* id : {"T4", "RTX-3060", "H100-SXM5-80GB", "B200-HGX"}) {
    EXPECT_EQ(VllmWeightFormatUnsupported(Acc(id), Precision::kFp16, awq), "") << id;
  }
  // GPTQ and GGUF need 6.0 (a V100 runs them); bitsandbytes 7.0 (a P100 does not).
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("V100-SXM2-32GB"), Precision::kFp16, gptq), "");
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("V100-SXM2-32GB"), Precision::kFp16, gguf), "");
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("P100-PCIe-16GB"), Precision::kFp16, nf4), "");
  // FP8 and INT8 weights need 7.5 on NVIDIA; FP8 on ROCm from MI300; no bitsandbytes on ROCm.
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("V100-SXM2-32GB"), Precision::kFp8, none), "");
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("V100-SXM2-32GB"), Precision::kInt8, none), "");
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("A100-SXM4-80GB"), Precision::kFp8, none), "");
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("MI250X"), Precision::kFp8, none), "");
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("MI300X"), Precision::kFp8, none), "");
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("MI300X"), Precision::kFp16, awq), "");
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("MI300X"), Precision::kFp16, nf4), "");
  // AWS Neuron: int8 and FP8 weights only.
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("Inferentia2"), Precision::kFp16, awq), "");
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("Inferentia2"), Precision::kInt8, none), "");
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("Inferentia2"), Precision::kFp8, none), "");
  // Gaudi: AWQ and GPTQ (awq_hpu, gptq_hpu) but no GGUF.
  EXPECT_EQ(VllmWeightFormatUnsupported(Acc("Gaudi2"), Precision::kFp16, awq), "");
  EXPECT_NE(VllmWeightFormatUnsupported(Acc("Gaudi2"), Precision::kFp16, gguf), "");
}

// Engines other than vLLM: TensorRT-LLM runs on NVIDIA Ampere or newer, FP8 from Ada, and loads
// neither bitsandbytes nor GGUF; SGLang has no Neuron backend and vLLM's NVIDIA minimums; TGI is
// not filtered.
TEST(EngineHardware, EachEngineOnlyWhereItRuns) {
  const std::optional<QuantSpec> none;
  const auto nf4 = GetQuantPreset(QuantPresetId::kBnbNf4).Spec();
  EXPECT_NE(EngineCannotServe(Engine::kTrtLlm, Acc("MI300X"), Precision::kFp16, none), "");
  EXPECT_NE(EngineCannotServe(Engine::kTrtLlm, Acc("T4"), Precision::kFp16, none), "");
  EXPECT_NE(EngineCannotServe(Engine::kTrtLlm, Acc("Inferentia2"), Precision::kFp16, none), "");
  EXPECT_EQ(EngineCannotServe(Engine::kTrtLlm, Acc("A100-SXM4-80GB"), Precision::kFp16, none), "");
  EXPECT_NE(EngineCannotServe(Engine::kTrtLlm, Acc("A100-SXM4-80GB"), Precision::kFp8, none), "");
  EXPECT_EQ(EngineCannotServe(Engine::kTrtLlm, Acc("L40S"), Precision::kFp8, none), "");
  EXPECT_NE(EngineCannotServe(Engine::kTrtLlm, Acc("H100-SXM5-80GB"), Precision::kFp16, nf4), "");
  EXPECT_NE(EngineCannotServe(Engine::kSglang, Acc("Inferentia2"), Precision::kFp16, none), "");
  EXPECT_NE(EngineCannotServe(Engine::kSglang, Acc("V100-SXM2-32GB"), Precision::kFp8, none), "");
  EXPECT_EQ(EngineCannotServe(Engine::kSglang, Acc("MI300X"), Precision::kFp8, none), "");
  EXPECT_EQ(EngineCannotServe(Engine::kTgi, Acc("Inferentia2"), Precision::kFp16, none), "");
  // vLLM is VllmWeightFormatUnsupported.
  EXPECT_EQ(EngineCannotServe(Engine::kVllm, Acc("V100-SXM2-32GB"), Precision::kFp8, none),
            VllmWeightFormatUnsupported(Acc("V100-SXM2-32GB"), Precision::kFp8, none));
}

}  // namespace
}  // namespace gpuplan
