// Training memory per GPU. Sources:
//  - Model states: Rajbhandari et al. 2020 (ZeRO), Sec. 3.1 and 5: mixed-precision Adam keeps
//    2 B (fp16/bf16 weights) + 2 B (grads) + K = 12 B (fp32 master, m, v) per parameter;
//    stages 1/2/3 shard optimizer / + gradients / + weights over the data-parallel group.
//  - Activations: Korthikanti et al. 2022, Sec. 4 (eqs. 1-5).
//  - LoRA: Hu et al. 2021; QLoRA: Dettmers et al. 2023 (NF4 + double quantization).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/quant_preset.h"
#include "gpuplan/estimate.h"
#include "base/enum_names.h"
#include "io/csv.h"

namespace gpuplan {

namespace {

// A paged optimizer's states (TrainMemoryOptions::paged_optimizer) leave the GPU's allocated
// peak for CUDA managed memory, which host RAM backs.
void MovePagedStates(const TrainMemoryOptions& opt, MemoryBreakdown& out, Bytes& states) {
  if (!opt.paged_optimizer || states.value() <= 0) return;
  out.host_offload += states;
  states = Bytes(0);
  if (opt.notes)
    out.notes.push_back(
        "paged optimizer: states in CUDA managed memory (outside PyTorch's allocator), paged to "
        "host RAM under memory pressure");
}

// One table per enum (base/enum_names.h): canonical name first, then accepted aliases.
constexpr internal::EnumName<TrainMethod> kTrainMethodNames[] = {
    {TrainMethod::kPretrain, "pretrain", "pretraining continued-pretraining cpt"},
    {TrainMethod::kFull, "full", "full-finetune finetune sft fft full-ft full-parameter"},
    {TrainMethod::kLora, "lora"},
    {TrainMethod::kQlora, "qlora"},
};
// Names are matched case- and separator-insensitively (ParseIn), so "adamw_8bit" and
// "PagedAdamW8bit" need no alias of their own beyond their squashed spelling.
constexpr internal::EnumName<Optimizer> kOptimizerNames[] = {
    // Paged variants (bitsandbytes) page the same states to host memory only under pressure.
    {Optimizer::kAdamW, "adamw",
     "adamw_torch adamw-fused adamw_torch_fused fusedadam fused_adam adamw_hf adamw_apex_fused "
     "paged_adamw paged_adamw_32bit pagedadamw pagedadamw32bit adamw32bit"},
    // LAMB (MLPerf BERT, NVIDIA's FusedLAMB) keeps Adam's two fp32 moments per parameter.
    {Optimizer::kAdam, "adam", "lamb fusedlamb fused_lamb"},
    {Optimizer::kSgd, "sgd"},
    {Optimizer::kLion, "lion", "paged_lion"},
    {Optimizer::kAdamW8bit, "adamw-8bit",
     "adamw8bit adam8bit adamw_bnb_8bit 8bit-adam 8bit-adamw paged_adamw_8bit pagedadamw8bit"},
    {Optimizer::kAdamW4bit, "adamw-4bit", "adamw4bit adam4bit"},
    {Optimizer::kAdafactor, "adafactor"},
    {Optimizer::kAdamMini, "adam-mini"},
    {Optimizer::kMuon, "muon"},
    {Optimizer::kRmsprop, "rmsprop"},
    {Optimizer::kAdagrad, "adagrad"},
    {Optimizer::kLion8bit, "lion-8bit", "lion8bit paged_lion_8bit pagedlion8bit"},
    {Optimizer::kAdemamix, "ademamix"},
};
constexpr internal::EnumName<Recompute> kRecomputeNames[] = {
    {Recompute::kNone, "none", "off no false"},
    {Recompute::kSelective, "selective", "sac selective-recompute"},
    // Megatron's --recompute-method uniform/block recompute whole layers (full granularity).
    {Recompute::kFull, "full",
     "on yes true gradient-checkpointing activation-checkpointing ac uniform block"},
};
constexpr internal::EnumName<Engine> kEngineNames[] = {
    {Engine::kTransformers, "transformers", "hf pytorch torch"},
    {Engine::kVllm, "vllm"},
    {Engine::kTrtLlm, "trt-llm", "tensorrt-llm trtllm"},
    {Engine::kSglang, "sglang"},
    {Engine::kTgi, "tgi"},
};
constexpr internal::EnumName<TrainFramework> kTrainFrameworkNames[] = {
    {TrainFramework::kGeneric, "generic", "pytorch"},
    {TrainFramework::kMegatronLegacy, "megatron", "megatron-lm"},
    {TrainFramework::kMegatronCore, "megatron-core", "mcore nemo"},
    {TrainFramework::kDeepSpeed, "deepspeed"},
    {TrainFramework::kFsdp, "fsdp", "fsdp2"},
    {TrainFramework::kDdp, "ddp"},
    {TrainFramework::kTorchtune, "torchtune"},
    {TrainFramework::kTorchtitan, "torchtitan"},
};
constexpr internal::EnumName<LoraTargets> kLoraTargetNames[] = {
    {LoraTargets::kQv, "qv", "q,v"},
    {LoraTargets::kAttention, "attention", "attn qkvo"},
    {LoraTargets::kAllLinear, "all-linear", "all all_linear"},
};

}  // namespace

void ApplyFrameworkMemory(TrainFramework f, const Parallelism& p, TrainMemoryOptions& o) {
  o.grad_bucket_elements =
      f == TrainFramework::kDeepSpeed && p.zero_stage == 2 ? 2 * kDeepSpeedReduceBucketElements : 0;
  // One process on one GPU under plain PyTorch or torchtune: no DDP buckets, no main_grad or
  // ZeRO partitions, and zero_grad(set_to_none=True) frees the gradients after each step.
  o.grads_freed_each_step =
      p.gpus() == 1 && (f == TrainFramework::kGeneric || f == TrainFramework::kTorchtune);
  // Plain PyTorch mixed precision (a script, the HF Trainer, timm) is autocast over fp32
  // parameters: the fp32 copy is the parameter, so its gradients are fp32 too (HF's "model memory
  // anatomy": "gradients are always kept in fp32"; 4 B), and the 16-bit weights are autocast's
  // per-op copies. (The planner's layouts run under DDP/FSDP/DeepSpeed/Megatron rules.)
  o.autocast_fp32_grads = f == TrainFramework::kGeneric && p.gpus() == 1 && o.master_weights &&
                          (o.precision == Precision::kBf16 || o.precision == Precision::kFp16);
  if (f == TrainFramework::kTorchtune) {
    if (o.precision == Precision::kBf16) {
      o.master_weights = false;
      o.optimizer_state_dtype = Precision::kBf16;
      o.adapter_fp32 = false;
    }
    o.logits_bytes_per_element = o.compiled ? 2.0 : 2.0 + 4.0 / 8.0;
  }
  if (f == TrainFramework::kTorchtitan) {
    // torchtitan (train.py, 2024-12): `cross_entropy(pred.flatten(0, 1).float(), labels)` runs
    // eagerly outside the compiled blocks: the bf16 logits, their fp32 copy and log-softmax's
    // fp32 output (kept for the backward) are alive together, 2 + 4 + 4 B per element.
    o.logits_bytes_per_element = 10.0;
    // Its "selective" mode is the operator policy (train_configs: selective_ac_option = 'op').
    o.op_level_sac = true;
    // FSDP2 under its pipeline schedules keeps the stage unsharded for the step.
    o.fsdp_unsharded_step = p.pp > 1 && p.zero_stage >= 3;
  } else {
    o.op_level_sac = false;
    o.fsdp_unsharded_step = false;
  }
}

const char* TrainMethodName(TrainMethod m) { return internal::NameIn(kTrainMethodNames, m); }
const char* OptimizerName(Optimizer o) { return internal::NameIn(kOptimizerNames, o); }
const char* RecomputeName(Recompute r) { return internal::NameIn(kRecomputeNames, r); }
const char* EngineName(Engine e) { return internal::NameIn(kEngineNames, e); }
const char* TrainFrameworkName(TrainFramework f) {
  return internal::NameIn(kTrainFrameworkNames, f);
}

std::optional<TrainPrecision> ParseTrainPrecision(std::string_view s) {
  const std::string n = internal::SquashName(s);
  if (n == "fp4" || n == "nvfp4" || n == "float4") return TrainPrecision{Precision::kFp8, true};
  auto p = ParsePrecision(s);
  if (!p || *p == Precision::kInt8 || *p == Precision::kInt4 || *p == Precision::kTf32)
    return std::nullopt;
  return TrainPrecision{*p, false};
}

std::vector<std::string> TrainPrecisionNames() {
  return {PrecisionName(Precision::kBf16), PrecisionName(Precision::kFp16),
          PrecisionName(Precision::kFp8), "fp4", PrecisionName(Precision::kFp32)};
}

const char* TrainPrecisionName(Precision p, bool fp4_gemms) {
  return fp4_gemms ? "fp4" : PrecisionName(p);
}

std::optional<TrainMethod> ParseTrainMethod(std::string_view s) {
  return internal::ParseIn(kTrainMethodNames, s);
}
std::optional<Optimizer> ParseOptimizer(std::string_view s) {
  return internal::ParseIn(kOptimizerNames, s, /*class_path=*/true);
}
bool FusedAttentionOn(const Accelerator& acc, TrainFramework f) {
  const bool volta = internal::ToLower(acc.arch).find("volta") != std::string::npos;
  const bool flash_attn_package = f == TrainFramework::kMegatronLegacy ||
                                  f == TrainFramework::kMegatronCore ||
                                  f == TrainFramework::kDeepSpeed;
  return !(volta && flash_attn_package);
}

bool PagedOptimizerName(std::string_view s) {
  return internal::ToLower(std::string(s)).find("paged") != std::string::npos;
}
std::optional<Recompute> ParseRecompute(std::string_view s) {
  return internal::ParseIn(kRecomputeNames, s);
}
std::optional<Engine> ParseEngine(std::string_view s) { return internal::ParseIn(kEngineNames, s); }
std::optional<TrainFramework> ParseTrainFramework(std::string_view s) {
  return internal::ParseIn(kTrainFrameworkNames, s);
}
std::optional<LoraTargets> ParseLoraTargets(std::string_view s) {
  return internal::ParseIn(kLoraTargetNames, s);
}

std::vector<std::string> TrainMethodNames() { return internal::NamesIn(kTrainMethodNames); }
std::vector<std::string> OptimizerNames() { return internal::NamesIn(kOptimizerNames); }
std::vector<std::string> RecomputeNames() { return internal::NamesIn(kRecomputeNames); }
std::vector<std::string> EngineNames() { return internal::NamesIn(kEngineNames); }
std::vector<std::string> TrainFrameworkNames() { return internal::NamesIn(kTrainFrameworkNames); }

std::string RecomputeLabel(Recompute r, int recompute_layers) {
  if (r == Recompute::kFull && recompute_layers > 0)
    return fmt::format("full:{}", recompute_layers);
  return RecomputeName(r);
}

TrainFramework TrainFrameworkFromText(std::string_view text) {
  const std::string v = internal::ToLower(text);
  auto has = [&v](const char* n) { return v.find(n) != std::string::npos; };
  if (has("nemo") || has("megatron-core") || has("megatron core") || has("mcore")) {
    return TrainFramework::kMegatronCore;
  }
  if (has("megatron")) return TrainFramework::kMegatronLegacy;
  if (has("deepspeed")) return TrainFramework::kDeepSpeed;
  if (has("torchtune")) return TrainFramework::kTorchtune;
  if (has("torchtitan")) return TrainFramework::kTorchtitan;
  return TrainFramework::kGeneric;
}
TrainFramework BenchmarkReferenceFramework(const ModelSpec& m) {
  return m.is_decoder_llm() ? TrainFramework::kMegatronCore : TrainFramework::kGeneric;
}

double OptimizerStateBytes(Optimizer o, Precision state_dtype) {
  const double b = BytesPerElement(state_dtype);
  // bitsandbytes' 8-bit states: int8 values with one fp32 absmax per 2048-value block.
  constexpr double kBnb8bitState = 1.0 + 4.0 / 2048.0;
  switch (o) {
    case Optimizer::kAdamW:
    case Optimizer::kAdam:
      return 2 * b;  // m and v
    // One state per parameter. Lion: one momentum; SGD: the momentum buffer. Adam-mini (Zhang
    // et al. 2024, arXiv:2406.16793): Adam's m, and one v per parameter block (a head, a
    // neuron) instead of per parameter. Muon (Jordan et al. 2024; Moonlight,
    // arXiv:2502.16982): one momentum buffer for the hidden matrices, orthogonalised by
    // Newton-Schulz each step (the embeddings and the head, a few percent of a large model,
    // keep AdamW's two states: not counted). RMSprop (torch.optim default momentum 0): the
    // running square average; Adagrad: the running sum of squares.
    case Optimizer::kLion:
    case Optimizer::kSgd:
    case Optimizer::kAdamMini:
    case Optimizer::kMuon:
    case Optimizer::kRmsprop:
    case Optimizer::kAdagrad:
      return b;
    // bitsandbytes 8-bit Adam: m and v.
    case Optimizer::kAdamW8bit:
      return 2 * kBnb8bitState;
    // torchao AdamW4bit (Li et al. 2023, arXiv:2309.01507): m and v as packed 4-bit codes
    // (0.5 B) with one fp32 scale per 128-value block (torchao/optim/subclass_4bit.py,
    // block_size=128).
    case Optimizer::kAdamW4bit:
      return 2 * (0.5 + 4.0 / 128.0);
    // Adafactor (Shazeer & Stern 2018; transformers' and T5X's default beta1=None): no first
    // moment, and the second moment of an n x m matrix factored into n + m values: per
    // parameter nothing measurable.
    case Optimizer::kAdafactor:
      return 0;
    // bitsandbytes Lion8bit: the one momentum.
    case Optimizer::kLion8bit:
      return kBnb8bitState;
    // AdEMAMix (Pagliardini et al. 2024, arXiv:2409.03137): a fast and a slow EMA of the
    // gradient and Adam's second moment: three states.
    case Optimizer::kAdemamix:
      return 3 * b;
  }
  return 2 * b;
}

Bytes ActivationBytesPerLayer(const ModelSpec& m, int micro_batch, int seq, int tp,
                              bool sequence_parallel, Recompute recompute, bool flash_attention,
                              bool dropout, double bytes_per_element, bool fused_kernels,
                              bool fp8_gemm_inputs, bool compiled) {
  if (!m.is_transformer() || m.hidden <= 0) return Bytes(0);
  const double s = seq, b = micro_batch, h = static_cast<double>(m.hidden);
  const double t = std::max(1, tp);
  const double e = bytes_per_element;  // 2 for bf16/fp16
  const double sbh = s * b * h;
  if (recompute == Recompute::kFull) {
    // Only the layer input is kept (Korthikanti eq. 5: 2sbh, /t with sequence parallelism).
    return Bytes(e * sbh / (sequence_parallel ? t : 1.0));
  }
  // Per-layer terms in units of bytes, written for 16-bit activations (the paper's 2-byte
  // convention) and scaled by e/2 at the end.
  const double kv_dim = m.mla ? h : static_cast<double>(m.kv_heads) * m.head_dim;
  const double q_dim = m.mla ? h : static_cast<double>(m.heads) * m.head_dim;
  const double mask = dropout ? 1.0 : 0.0;
  // Attention block, linear parts: QKV input 2sbh; Q 2sb*q; K and V 2sb*kv each; output
  // projection input 2sb*q; dropout mask sbh. (GPT: 11sbh.)
  double attn_rep = 2 * sbh;  // QKV input (LN output)
  double attn_tp = 2 * s * b * q_dim + 4 * s * b * kv_dim + 2 * s * b * q_dim;
  double attn_mask = mask * sbh;
  // Attention scores: softmax output 2as^2b + dropout mask as^2b + dropout output 2as^2b
  // (5as^2b with dropout, 2as^2b without). FlashAttention and selective recompute keep none.
  double scores = 0;
  if (!flash_attention && recompute == Recompute::kNone) {
    scores = (dropout ? 5.0 : 2.0) * m.heads * s * s * b;
  }
  // MLP: input 2sbh; plain GELU: act input + output 4sbf; gated: gate, up, act, product 8sbf.
  // A fused gated activation (Megatron-Core's bias_swiglu_impl, on by default with SwiGLU;
  // Transformer Engine's fused SwiGLU) keeps only its input, the gate and up outputs (4sbf),
  // and recomputes SiLU and the product in its backward: with the down projection's input
  // that is 6sbf.
  const double f = m.moe && m.ffn_hidden <= 0 ? static_cast<double>(m.moe->expert_ffn)
                                              : static_cast<double>(m.ffn_hidden);
  // (torch.compile's partitioner keeps 4sbf of the eager 8sbf: below.)
  const double gated_f = fused_kernels && !compiled ? 6.0 : 8.0;
  double mlp_f = (m.gated_mlp ? gated_f : 4.0) * s * b * f;
  if (m.moe) {
    // Each token goes to top_k experts (+ shared ones) of expert_ffn each.
    const MoeSpec& x = *m.moe;
    double ef = static_cast<double>(x.expert_ffn);
    mlp_f = gated_f * s * b * ef * (x.top_k + x.shared_experts);
  }
  double mlp_rep = 2 * sbh;
  double mlp_mask = mask * sbh;
  if (compiled) {
    // Min-cut rematerialization: the norms' outputs (the QKV and MLP inputs) are recomputed
    // from the norms' inputs, and the activation from the up-projection's output: GELU keeps
    // its input only (2sbf), SwiGLU its gate and up outputs (4sbf).
    attn_rep = 0;
    mlp_rep = 0;
    mlp_f /= 2;
  }
  // Two LayerNorm/RMSNorm inputs 4sbh (replicated under plain TP).
  double norms = 4 * sbh;
  double replicated = attn_rep + mlp_rep + norms + attn_mask + mlp_mask;  // Korthikanti's 10sbh
  double split = attn_tp + mlp_f + scores;
  if (!fused_kernels && m.norm == NormKind::kRmsNorm) {
    // Eager RMSNorm upcasts its input to fp32 and keeps it (2 x 4sbh = 8sbh in 2-byte units);
    // eager RoPE keeps the rotated q and k (2sb(q+kv)).
    replicated += 8 * sbh;
    split += 2 * s * b * (q_dim + kv_dim);
  }
  if (fp8_gemm_inputs && e == 2.0 && !compiled) {
    // QKV and MLP inputs (replicated), output-projection and down-projection inputs (split)
    // at one byte instead of two.
    const double fc2_in =
        m.moe ? static_cast<double>(m.moe->expert_ffn) * (m.moe->top_k + m.moe->shared_experts) : f;
    replicated -= 2 * sbh;
    split -= s * b * q_dim + s * b * fc2_in;
  }
  double total = sequence_parallel ? (replicated + split) / t : replicated + split / t;
  return Bytes(total * e / 2.0);
}

Bytes OpSacBytesPerLayer(const ModelSpec& m, int micro_batch, int seq, int tp,
                         bool sequence_parallel, double bytes_per_element) {
  if (!m.is_transformer() || m.hidden <= 0) return Bytes(0);
  const double sb = static_cast<double>(seq) * micro_batch, h = static_cast<double>(m.hidden);
  const double t = std::max(1, tp);
  const double kv = m.mla ? h : static_cast<double>(m.kv_heads) * m.head_dim;
  const double q = m.mla ? h : static_cast<double>(m.heads) * m.head_dim;
  double f = static_cast<double>(m.ffn_hidden);
  if (m.moe) f = static_cast<double>(m.moe->expert_ffn) * (m.moe->top_k + m.moe->shared_experts);
  // Column-parallel matmul outputs (q, k, v; gate and up, or fc1), split over tp; row-parallel
  // ones (output and down projections), reduce-scattered under sequence parallelism.
  const double column = q + 2 * kv + (m.gated_mlp ? 2 : 1) * f;
  const double row = 2 * h;
  // Every other matmul's output is saved (the policy counts mm calls), so half of each on
  // average; plus the attention kernel's output and the block's input.
  const double split = q + 0.5 * column;
  const double replicated = h + 0.5 * row;
  const double per_token = sequence_parallel ? (split + replicated) / t : split / t + replicated;
  return Bytes(bytes_per_element * sb * per_token);
}

std::int64_t LoraParams(const ModelSpec& m, int rank, LoraTargets targets) {
  if (!m.is_transformer() || m.hidden <= 0) return 0;
  const std::int64_t h = m.hidden, r = rank;
  const std::int64_t q = static_cast<std::int64_t>(m.heads) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(m.kv_heads) * m.head_dim;
  std::int64_t per_layer = 0;
  // LoRA adds r x (in + out) per adapted linear layer.
  per_layer += r * (h + q) + r * (h + kv);                                   // q_proj, v_proj
  if (targets != LoraTargets::kQv) per_layer += r * (h + kv) + r * (q + h);  // k_proj, o_proj
  if (targets == LoraTargets::kAllLinear) {
    std::int64_t f = m.ffn_hidden;
    int mats = m.gated_mlp ? 3 : 2;
    std::int64_t experts = 1;
    if (m.moe) {
      f = m.moe->expert_ffn;
      mats = 3;
      experts = m.moe->experts + m.moe->shared_experts;
    }
    per_layer += experts * mats * r * (h + f);
  }
  return per_layer * m.layers;
}

MemoryBreakdown EstimateTrainingMemory(const ModelSpec& m, const Parallelism& par,
                                       const TrainMemoryOptions& opt) {
  MemoryBreakdown out;
  const ParamCounts pc = CountParams(m);
  const double P = static_cast<double>(pc.total);
  const int tp = std::max(1, par.tp), pp = std::max(1, par.pp), dp = std::max(1, par.dp);
  const int ep = std::max(1, par.ep), cp = std::max(1, par.cp);
  // ZeRO shards over the ranks that hold the same weights: dp, and the cp ranks as well
  // (Megatron-Core's distributed optimizer uses the data-parallel group with context
  // parallelism: cp ranks reduce the same gradients).
  const int shard =
      (par.shard_group > 0 ? std::min(par.shard_group, dp) : dp) * std::max(1, par.cp);

  // Parameters held by the most loaded model-parallel rank. Embedding and LM head are split
  // over TP (vocab-parallel) and sit on the first/last pipeline stage; blocks split over PP.
  // Routed experts are split over EP.
  const double expert_params = pc.per_layer > 0 ? RoutedExpertParams(m) : 0.0;
  const double edge = static_cast<double>(std::max(pc.embedding, pc.lm_head) +
                                          (pp == 1 ? std::min(pc.embedding, pc.lm_head) : 0));
  const double blocks = std::max(0.0, P - static_cast<double>(pc.embedding + pc.lm_head));
  // Routed experts are split over tp x pp x ep; their gradients and optimizer states are
  // sharded (ZeRO) over the expert-data-parallel group only: dp / ep ranks hold the same
  // experts (Megatron-Core's expert_data_parallel group; DeepSpeed-MoE's expert-data group).
  // Parallel folding (ep does not divide dp; Megatron-Core, expert TP 1): experts split over
  // pp x ep only, and the expert-data-parallel group is dp x cp x tp / ep.
  const bool folded = ep > 1 && dp % ep != 0;
  double expert_local = expert_params / ((folded ? 1 : tp) * pp * ep);
  double dense_local = (blocks - expert_params) / (tp * pp) + edge / tp;
  if (pc.per_layer == 0) {  // no breakdown: even split
    dense_local = P / (tp * pp);
    expert_local = 0;
  }
  const double local = dense_local + expert_local;
  const int expert_shard = std::max(1, folded ? shard * tp / ep : shard / ep);

  const double wbytes =
      BytesPerElement(opt.precision == Precision::kFp8 ? Precision::kBf16 : opt.precision);
  const bool peft = opt.method == TrainMethod::kLora || opt.method == TrainMethod::kQlora;
  Bytes step_gradients;  // gradients allocated by each backward pass (full or adapter)

  if (!peft) {
    const double gbytes = BytesPerElement(opt.grad_dtype.value_or(
        opt.autocast_fp32_grads
            ? Precision::kFp32
            : (opt.precision == Precision::kFp8 ? Precision::kBf16 : opt.precision)));
    const double master = opt.master_weights && opt.precision != Precision::kFp32 ? 4.0 : 0.0;
    const double ostate = OptimizerStateBytes(opt.optimizer, opt.optimizer_state_dtype);
    const int z = std::clamp(par.zero_stage, 0, 3);
    // ZeRO: stage >= 1 shards optimizer states (and the master copy), >= 2 gradients,
    // 3 weights, each over the sharding group.
    // Per-GPU parameters held by a ZeRO stage that shards from stage `from` on.
    auto sharded = [&](int from) {
      return z >= from ? dense_local / shard + expert_local / expert_shard : local;
    };
    out.weights = Bytes(sharded(3) * wbytes);
    out.gradients = Bytes(sharded(2) * gbytes);
    if (opt.optimizer_in_backward) {
      // Gradients are consumed as they appear: about one layer's worth is alive.
      out.gradients = Bytes(static_cast<double>(pc.largest_layer) / tp * gbytes);
    }
    // Parameter offload with the optimizer on the CPU also moves the sharded gradients down
    // during the backward (FSDP2 CPUOffloadPolicy: "sharded gradients are copied device-to-host
    // in backward, and the optimizer step runs on CPU"; ZeRO-Infinity likewise).
    if (opt.gradient_offload || (opt.param_offload && z >= 3 && opt.optimizer_offload)) {
      // Streamed to host RAM as produced: one layer in flight (double-buffered copy).
      out.host_offload += out.gradients;
      out.gradients = Bytes(std::min(out.gradients.value(),
                                     2.0 * static_cast<double>(pc.largest_layer) / tp * gbytes));
      if (opt.notes) out.notes.push_back("gradient offload: gradients streamed to host RAM");
    }
    if (opt.grad_bucket_elements > 0) {
      const double bucket_bytes =
          BytesPerElement(opt.precision == Precision::kFp8 ? Precision::kBf16 : opt.precision);
      out.gradients += Bytes(opt.grad_bucket_elements * bucket_bytes);
      if (opt.notes) out.notes.push_back("gradients include the framework's flat reduce buckets");
    }
    step_gradients = out.gradients;
    out.master_weights = Bytes(sharded(1) * master);
    out.optimizer = Bytes(sharded(1) * ostate);
    if (opt.optimizer_offload) {
      // ZeRO-Offload: master copy and optimizer states of this GPU's shard live in host RAM.
      out.host_offload += out.master_weights + out.optimizer;
      out.master_weights = Bytes(0);
      out.optimizer = Bytes(0);
      if (opt.notes)
        out.notes.push_back("optimizer offload: fp32 master + optimizer states in host RAM");
    }
    MovePagedStates(opt, out, out.optimizer);
    if (opt.param_offload && z >= 3) {
      // ZeRO-Infinity offload_param: the 16-bit shard lives in host RAM as well.
      out.host_offload += out.weights;
      out.weights = Bytes(0);
      if (opt.notes) out.notes.push_back("parameter offload: the 16-bit weight shard in host RAM");
    }
    if (z >= 3 && shard > 1 && opt.fsdp_unsharded_step) {
      // The stage's parameters unsharded in the compute dtype, and its gradients accumulated
      // unsharded in fp32 until the step's reduce-scatter (TrainMemoryOptions).
      out.weights += Bytes(local * wbytes);
      out.gradients += Bytes(local * 4.0);
      if (opt.notes)
        out.notes.push_back(
            "FSDP under pipeline parallelism: the stage stays unsharded for the step (weights "
            "in 16-bit, accumulated gradients in fp32) until the last micro-batch's "
            "reduce-scatter");
    } else if (z >= 3 && shard > 1 && (opt.largest_layer_params || pc.largest_layer > 0)) {
      // ZeRO-3/FSDP gathers one unit (a layer) at a time for compute: the largest layer in
      // full, double-buffered for prefetch.
      double largest = opt.largest_layer_params.value_or(static_cast<double>(pc.largest_layer));
      out.weights += Bytes(2.0 * largest / tp * wbytes);
      if (opt.notes)
        out.notes.push_back("ZeRO-3/FSDP: + 2 x largest layer gathered for compute (prefetch)");
    }
    if (!opt.master_weights && opt.precision != Precision::kFp32) {
      if (opt.notes)
        out.notes.push_back(
            "no fp32 master weights (pure 16-bit training, the guides' B4 arithmetic): standard "
            "mixed precision adds 4 B/param");
    }
  } else {
    // Frozen base (no grads, no optimizer states) + trained adapter.
    double base_bits =
        opt.method == TrainMethod::kQlora ? std::min(opt.base_bits, 4.0) : opt.base_bits;
    // FP8 training keeps a frozen base in FP8: a weight that is never updated needs no 16-bit
    // copy to cast from (Transformer Engine fp8_model_init; NeMo's `fp8_params` follows `fp8`,
    // as in the MLPerf Llama-2-70B LoRA reference config).
    if (opt.precision == Precision::kFp8 && !opt.fp4_gemms) base_bits = std::min(base_bits, 8.0);
    double linear = static_cast<double>(pc.linear);
    double rest = P - linear;
    double linear_bits = base_bits;
    if (base_bits <= 4.0) {
      // NF4 blocks of 64 with double-quantized scales: +0.127 bit/param (Dettmers et al.).
      linear_bits = GetQuantPreset(QuantPresetId::kBnbNf4DoubleQuant).Spec().EffectiveBits();
    } else if (base_bits <= 8.0) {
      linear_bits = 8.0 + 32.0 / static_cast<double>(std::max<std::int64_t>(1, m.hidden));
    }
    double base = (linear * linear_bits / 8.0 + rest * 2.0) / (tp * pp);
    out.weights = Bytes(base / (par.zero_stage >= 3 ? shard : 1));
    const double A =
        static_cast<double>(LoraParams(m, opt.lora_rank, opt.lora_targets)) / (tp * pp);
    const double abytes = opt.adapter_fp32 ? 4.0 : 2.0;
    const double ostate = OptimizerStateBytes(opt.optimizer, opt.optimizer_state_dtype);
    out.adapter = Bytes(A * (abytes + abytes));
    Bytes adapter_states(A * ostate);
    MovePagedStates(opt, out, adapter_states);
    out.adapter += adapter_states;
    step_gradients = Bytes(A * abytes);
    if (opt.notes)
      out.notes.push_back(fmt::format("LoRA rank {}: {:.1f}M adapter params, trained in {}",
                                      opt.lora_rank, A * tp * pp / 1e6,
                                      opt.adapter_fp32 ? "fp32" : "16-bit"));
  }

  // Activations on the first pipeline stage (the most loaded under 1F1B): its layers times
  // the micro-batches in flight (pp under 1F1B, bounded by the micro-batch count); interleaving
  // adds (1 + (p-1)/(p*v)) (Korthikanti Sec. 4.2.3).
  const int seq_local = std::max(1, opt.seq_len / cp);
  const double act_bytes =
      BytesPerElement(opt.precision == Precision::kFp8 ? Precision::kBf16 : opt.precision);
  const bool fp8_inputs = opt.precision == Precision::kFp8;
  const bool op_sac =
      opt.op_level_sac && opt.recompute == Recompute::kSelective && m.is_transformer();
  Bytes per_layer =
      op_sac
          ? OpSacBytesPerLayer(m, opt.micro_batch, seq_local, tp, par.sequence_parallel, act_bytes)
          : ActivationBytesPerLayer(m, opt.micro_batch, seq_local, tp, par.sequence_parallel,
                                    opt.recompute, opt.flash_attention, opt.dropout, act_bytes,
                                    opt.fused_kernels, fp8_inputs, opt.compiled);
  const int layers_here = (m.layers + pp - 1) / pp;
  const int in_flight = pp > 1 ? std::min(pp, std::max(1, opt.num_microbatches)) : 1;
  double interleave = (pp > 1 && par.vpp > 1) ? 1.0 + (pp - 1.0) / (pp * par.vpp) : 1.0;
  out.activations = per_layer * (static_cast<double>(layers_here) * in_flight * interleave);
  // Under full recompute, one layer's complete activations (no recompute) matter twice: the
  // layers block recompute leaves alone, and the working set of the layer being recomputed.
  // Operator-level checkpointing recomputes the rest of a layer in its backward as well.
  const bool full_rc =
      (opt.recompute == Recompute::kFull || op_sac) && m.is_transformer() && m.layers > 0;
  const Bytes whole_layer =
      full_rc ? ActivationBytesPerLayer(m, opt.micro_batch, seq_local, tp, par.sequence_parallel,
                                        Recompute::kNone, opt.flash_attention, opt.dropout,
                                        act_bytes, opt.fused_kernels, fp8_inputs, opt.compiled)
              : Bytes(0);
  if (full_rc && opt.recompute_layers > 0 && opt.recompute_layers < layers_here) {
    // Partial (block) recompute: the other layers keep everything.
    out.activations = (per_layer * static_cast<double>(opt.recompute_layers) +
                       whole_layer * static_cast<double>(layers_here - opt.recompute_layers)) *
                      (in_flight * interleave);
  }
  if (opt.activation_offload) {
    // Checkpoints live in host RAM; one layer's input is on the GPU while it is computed.
    out.activations =
        ActivationBytesPerLayer(m, opt.micro_batch, seq_local, tp, par.sequence_parallel,
                                Recompute::kFull, opt.flash_attention, opt.dropout, act_bytes);
  }
  Bytes whole = whole_layer;
  if (m.arch == ModelArch::kEncoderDecoder && m.layers > 0) {
    // The encoder stack keeps its own layers' activations for the backward, at its input's
    // positions (Whisper: 1500), on the first stage (docs/model.md 10.7).
    const auto split = SplitEncoderDecoder(m);
    const EncoderDecoderParts& parts = *split;
    const int s_enc = std::max(1, EncoderInputTokens(m, opt.seq_len) / cp);
    const Bytes enc_layer =
        op_sac ? OpSacBytesPerLayer(parts.encoder, opt.micro_batch, s_enc, tp,
                                    par.sequence_parallel, act_bytes)
               : ActivationBytesPerLayer(
                     parts.encoder, opt.micro_batch, s_enc, tp, par.sequence_parallel,
                     opt.activation_offload ? Recompute::kFull : opt.recompute, opt.flash_attention,
                     opt.dropout, act_bytes, opt.fused_kernels, fp8_inputs, opt.compiled);
    const int enc_layers = (parts.encoder.layers + pp - 1) / pp;
    if (!opt.activation_offload) {
      out.activations += enc_layer * (static_cast<double>(enc_layers) * in_flight * interleave);
    }
    if (full_rc) {
      whole = Bytes(std::max(
          whole.value(),
          ActivationBytesPerLayer(parts.encoder, opt.micro_batch, s_enc, tp, par.sequence_parallel,
                                  Recompute::kNone, opt.flash_attention, opt.dropout, act_bytes,
                                  opt.fused_kernels, fp8_inputs, opt.compiled)
              .value()));
    }
  }
  if (full_rc) out.activations += whole;  // live while a layer is recomputed
  if (opt.logits_buffer && m.is_decoder_llm() && m.vocab > 0) {
    out.logits = Bytes(static_cast<double>(opt.micro_batch) * seq_local *
                       static_cast<double>(m.vocab) / tp * opt.logits_bytes_per_element);
  }
  if (opt.grads_freed_each_step && step_gradients.value() > 0) {
    // Backward frees a layer's saved activations (the logits first) as it allocates that
    // layer's gradients: the allocated peak is max(activations + logits, gradients + the
    // working set of the layer in flight), i.e. the sum less the smaller of the two sides.
    const Bytes working = full_rc ? whole_layer : per_layer;
    const double freed = (out.activations + out.logits - working).value();
    out.backward_overlap = Bytes(std::clamp(freed, 0.0, step_gradients.value()));
    if (opt.notes && out.backward_overlap.value() > 0) {
      out.notes.push_back(fmt::format(
          "gradients are freed each step (zero_grad(set_to_none=True)): backward frees {:.1f} GiB "
          "of activations as it allocates them, so the allocated peak is that much below the sum; "
          "the total keeps it (the caching allocator's reserve)",
          ToGiB(out.backward_overlap)));
    }
  }
  if (!m.is_transformer()) {
    if (m.activation_melems_per_sample) {
      // A CNN keeps each convolution's output for batch norm's backward and the normalised,
      // activated map for the next convolution's weight gradient: 2 tensors per feature map
      // (NVIDIA's ResNet-50 trains 256 images per 16 GB V100 in mixed precision: ~11.6 GB).
      // Frozen norms leave only the activated map (the ReLU's backward reads its output), and
      // frozen leading layers keep nothing: no backward runs through them.
      const double all = *m.activation_melems_per_sample;
      const double kept = all - m.FrozenMelems();
      out.activations =
          Bytes((m.frozen_norm ? 1.0 : 2.0) * kept * 1e6 * opt.micro_batch * act_bytes / (tp * pp));
    } else if (opt.notes) {
      out.notes.push_back(
          "activations of this non-transformer model are not modelled (no feature-map size)");
    }
  }

  if (opt.include_runtime) {
    out.cuda_context = opt.reserve.cuda_context;
    if (par.gpus() > 1) out.nccl_buffers = opt.reserve.nccl_buffers;
    Bytes tensors = out.ModelStates() + out.activations + out.logits;
    out.allocator_slack = tensors * opt.reserve.allocator_slack;
  }
  return out;
}

bool DefaultDropout(const ModelSpec& m) { return !m.gated_mlp && m.arch != ModelArch::kVit; }

ZeroOffloadEstimate DeepSpeedZeroEstimate(double params, double largest_layer_params,
                                          int gpus_per_node, int nodes, int zero_stage,
                                          bool offload_params, bool offload_optimizer,
                                          bool zero_init, double buffer_factor) {
  // Transcribed from DeepSpeed's estimators (bytes): fp16 params 2, grads 2 (+fp32 grads in
  // stage 3: 18 B total with 12 B Adam + master), largest layer gathered in fp32 (4 B).
  const double total_gpus = static_cast<double>(gpus_per_node) * nodes;
  const double gpus_factor = 1.0 / nodes;
  const double gpn = gpus_per_node;
  ZeroOffloadEstimate e;
  if (zero_stage >= 3) {
    const double largest = 4.0 * largest_layer_params;
    if (offload_optimizer) {
      if (offload_params) {
        e.gpu_per_gpu = Bytes(largest);
        e.cpu_per_node =
            Bytes(params * (zero_init ? 18 * gpus_factor : std::max(4 * gpn, 18 * gpus_factor)) *
                  buffer_factor);
      } else {
        e.gpu_per_gpu = Bytes(largest + std::floor(2 * params / total_gpus));
        e.cpu_per_node =
            Bytes(params * (zero_init ? 16 * gpus_factor : std::max(4 * gpn, 16 * gpus_factor)) *
                  buffer_factor);
      }
    } else {
      e.gpu_per_gpu = Bytes(largest + std::floor(18 * params / total_gpus));
      e.cpu_per_node = Bytes(zero_init ? largest_layer_params * 4 * gpn * buffer_factor
                                       : params * 4 * gpn * buffer_factor);
    }
  } else {
    if (offload_optimizer) {
      e.gpu_per_gpu = Bytes(2 * params);
      e.cpu_per_node = Bytes(params * std::max(4 * total_gpus, 16.0) * buffer_factor);
    } else {
      e.gpu_per_gpu = Bytes(4 * params + std::floor(16 * params / total_gpus));
      e.cpu_per_node = Bytes(params * 4 * gpn * buffer_factor);
    }
  }
  return e;
}

}  // namespace gpuplan
