// Training step time: GEMM roofline with a size-dependent efficiency, FlashAttention, element-
// wise passes at memory bandwidth, ring collectives over the link each group spans, the
// pipeline bubble (p-1)/(v*m), ZeRO/FSDP traffic with overlap, and the optimizer step.
// Sources: Narayanan et al. 2021 (Megatron PTD-P: FLOPs, bubble, TP comm), Korthikanti et al.
// 2022 (selective recompute), Rajbhandari et al. 2020 (ZeRO traffic), NCCL ring algorithms
// (2(n-1)/n bus factor), Dao 2023 (FlashAttention-2 efficiency). docs/model.md has each term.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/strings.h"
#include "estimate/hardware.h"
#include "estimate/roofline.h"
#include "gpuplan/perf.h"

namespace gpuplan {

using internal::AllGatherSeconds;
using internal::AllReduceSeconds;
using internal::HostLink;

namespace {

struct Ctx {
  const Accelerator& acc;
  double peak;  // FLOP/s at the training precision
  double gemm_eff;
  double knee;  // FLOP/byte
  double hbm;   // bytes/s achievable
  double attn_eff;
  double kernel_s;
  double power_cap;
};

// One GEMM (M x K) x (K x N) at `elem_bytes` per element, on the roofline of roofline.h.
double GemmSeconds(const Ctx& c, double M, double N, double K, double elem_bytes) {
  return internal::GemmSeconds(M, N, K, elem_bytes, c.peak, c.gemm_eff, c.knee, c.hbm, c.kernel_s,
                               c.power_cap);
}

// One MoE all-to-all (dispatch or combine) of a rank's `token_bytes` (tokens x hidden x element
// bytes) over an expert group of `ep` ranks, each token going to top_k experts.
double EpAllToAllSeconds(const ModelSpec& m, double token_bytes, int ep, bool node_dedup,
                         const HardwareView& hw, double intra_eff, double inter_bw,
                         double lat_intra, double lat_inter) {
  const double k = m.moe->top_k;
  const double bytes = token_bytes * k * (ep - 1.0) / ep;
  // EP ranks in one node: with expert tensor parallelism 1 Megatron-Core builds the expert
  // groups with their own rank generator, ep innermost (parallel folding,
  // parallel_state.initialize_model_parallel: order tp-ep-dp-pp with tp = expert TP = 1), so an
  // expert group is ep consecutive ranks, whatever the attention's tp.
  const int ep_local = std::clamp(hw.ScaleUpGpus(), 1, ep);
  const double intra_share = (ep_local - 1.0) / (ep - 1.0);
  double fabric_bytes = bytes * (1 - intra_share);
  if (node_dedup && ep_local < ep) {
    // DeepEP's / HybridEP's internode kernels send a token once to each remote node that hosts
    // one of its experts and fan it out there over NVLink (DeepEP README, "normal kernels"):
    // with n nodes and uniform routing, (n - 1)(1 - (1 - 1/n)^k) remote nodes per token instead
    // of k (n - 1) / n expert copies.
    const double n = std::ceil(static_cast<double>(ep) / ep_local);
    fabric_bytes = token_bytes * (n - 1) * (1 - std::pow(1 - 1 / n, k));
  }
  // Peers inside the node go over NVLink, the others over the fabric, at the same time. Every
  // peer's transfer is posted at once (NCCL's grouped send/recv, DeepEP's single kernel), so each
  // link class pays its latency once, not once per peer as a ring's sequential steps do.
  const double ep_intra_bw = hw.IntraBwFor(ep_local).value() * intra_eff;
  const double intra = ep_local > 1 ? bytes * intra_share / ep_intra_bw + lat_intra : 0.0;
  const double fabric = ep_local < ep ? fabric_bytes / inter_bw + lat_inter : 0.0;
  return std::max(intra, fabric);
}

}  // namespace

namespace {
Flop FlopsPerToken(const ModelSpec& m, const ParamCounts& pc, int seq_len, TrainMethod method,
                   Recompute rc, bool include_recompute);
}  // namespace

Flop TrainingFlopsPerToken(const ModelSpec& m, int seq_len, TrainMethod method, Recompute rc,
                           bool include_recompute) {
  return FlopsPerToken(m, CountParams(m), seq_len, method, rc, include_recompute);
}

namespace {
// Attention scores and weighted sum: 2 x 2 x s x (heads x head_dim) per layer per token
// (the full-square convention of Narayanan et al. 2021).
double AttentionFwdFlopsPerToken(const ModelSpec& m, int seq_len) {
  const double qdim =
      m.mla ? static_cast<double>(m.heads) * (m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
            : static_cast<double>(m.heads) * m.head_dim;
  return 4.0 * m.layers * seq_len * qdim;
}

// Share of the s x s score square a FlashAttention kernel computes: decoders skip the masked
// upper triangle; encoders (BERT) and vision transformers attend both ways.
double CausalShare(const ModelSpec& m) { return m.is_decoder_llm() ? 0.5 : 1.0; }

// The same for a whole `seq_len`-token sequence, whose sliding-window layers compute only their
// window's score blocks (FlashAttention's window_size; docs/model.md 4.3).
double ScoreShare(const ModelSpec& m, double seq_len) {
  return CausalShare(m) * SlidingAttentionShare(m, seq_len);
}

// Forward and backward attention-core FLOPs per token (no recompute): 3x the forward.
Flop AttentionFlopsPerToken(const ModelSpec& m, int seq_len) {
  return Flop(3.0 * AttentionFwdFlopsPerToken(m, seq_len));
}

Flop FlopsPerToken(const ModelSpec& m, const ParamCounts& pc, int seq_len, TrainMethod method,
                   Recompute rc, bool include_recompute) {
  if (m.arch == ModelArch::kEncoderDecoder) {
    // Per decoder token: the decoder's FLOPs, its cross-attention over the encoder positions,
    // and the encoder's FLOPs for its input shared over the decoder's tokens (docs/model.md
    // 10.7). The cross K/V projections run per encoder position.
    const auto split = SplitEncoderDecoder(m);
    const EncoderDecoderParts& parts = *split;
    const double s_dec = std::max(1, seq_len);
    const double s_enc = EncoderInputTokens(m, seq_len);
    const double per = s_enc / s_dec;
    const double q = static_cast<double>(m.heads) * m.head_dim;
    const double cross_kv =
        2.0 * static_cast<double>(m.hidden) * m.kv_heads * m.head_dim * m.layers;
    const Flop dec = FlopsPerToken(parts.decoder, CountParams(parts.decoder), seq_len, method, rc,
                                   include_recompute);
    const Flop enc = FlopsPerToken(parts.encoder, CountParams(parts.encoder),
                                   static_cast<int>(s_enc), method, rc, include_recompute);
    const double passes = method == TrainMethod::kLora || method == TrainMethod::kQlora ? 2.0 : 3.0;
    const double rc_pass = include_recompute && rc == Recompute::kFull ? 1.0 : 0.0;
    const double cross = (passes + rc_pass) * (4.0 * m.layers * s_enc * q +    // attention
                                               2.0 * cross_kv * (per - 1.0));  // K/V per position
    const double frontend = 3.0 * parts.frontend_flops_per_request / s_dec;
    return Flop(dec.value() + enc.value() * per + cross + frontend);
  }
  // Matmul parameters touched per token: active params minus input embeddings (a lookup).
  double matmul = static_cast<double>(pc.active - pc.embedding);
  if (m.tied_embeddings && m.is_decoder_llm()) matmul += static_cast<double>(m.vocab * m.hidden);
  if (!m.is_transformer() && m.gflops_per_sample) {
    return Flop(0);  // per-sample models use gflops_per_sample instead
  }
  double fwd = 2 * matmul;
  const double attn = AttentionFwdFlopsPerToken(m, seq_len);
  fwd += attn;
  bool peft = method == TrainMethod::kLora || method == TrainMethod::kQlora;
  double total = peft ? 2 * (fwd - attn) + 3 * attn : 3 * fwd;  // frozen weights: no wgrad
  if (include_recompute) {
    if (rc == Recompute::kFull) total += fwd;
    if (rc == Recompute::kSelective) total += attn;
  }
  return Flop(total);
}
}  // namespace

namespace {
// The NVFP4 GEMM factor of this accelerator (Fp4GemmFactor over its FP4 and FP8 peaks).
double Fp4Factor(const Accelerator& acc, double fp8_factor) {
  return internal::Fp4GemmFactor(fp8_factor, acc.fp4 ? acc.fp4->value() : 0.0,
                                 acc.fp8 ? acc.fp8->value() : 0.0);
}
}  // namespace

std::optional<FlopPerSec> TrainGemmPeak(const Accelerator& acc, Precision p, bool fp4_gemms) {
  if (fp4_gemms) return acc.fp4;
  // FP8 training casts the GEMM inputs to FP8 on FP8 tensor cores (Transformer Engine and torchao
  // float8 need compute capability 8.9; MI300, Gaudi 2): a device without them has no FP8 recipe.
  if (p == Precision::kFp8) return acc.fp8;
  return acc.PeakFor(p == Precision::kFp32 ? Precision::kTf32 : p);
}

std::string BitsandbytesUnsupported(const Accelerator& acc) {
  if (acc.AwsNeuron()) return "bitsandbytes has no AWS Neuron backend";
  if (internal::ToLower(acc.arch).rfind("tpu", 0) == 0) return "bitsandbytes has no TPU backend";
  return "";
}

std::optional<CannotTrain> TrainingUnsupported(const Accelerator& acc, Precision precision,
                                               bool fp4_gemms, TrainMethod method) {
  if (!TrainGemmPeak(acc, precision, fp4_gemms)) {
    if (fp4_gemms)
      return CannotTrain{true,
                         "no FP4 tensor cores: NVFP4 training needs Blackwell (B200, GB200, "
                         "B300, GB300)",
                         "train in fp8"};
    if (precision == Precision::kFp8)
      return CannotTrain{true,
                         "no FP8 tensor cores: FP8 training (Transformer Engine, torchao "
                         "float8) needs compute capability 8.9 (Ada, Hopper, Blackwell), MI300 "
                         "or Gaudi 2",
                         "train in bf16"};
    return CannotTrain{true,
                       fmt::format("no {} path: Volta and Turing have no bf16 tensor cores",
                                   PrecisionName(precision)),
                       "train in fp16"};
  }
  if (method == TrainMethod::kQlora) {
    if (std::string no = BitsandbytesUnsupported(acc); !no.empty())
      return CannotTrain{false, "QLoRA's NF4 base needs bitsandbytes, and " + no,
                         "fine-tune with LoRA"};
  }
  return std::nullopt;
}

StepTime EstimateTrainStep(const ModelSpec& m, const Parallelism& par,
                           const TrainMemoryOptions& opt, int global_batch, const HardwareView& hw,
                           const Calibration& cal, Trace* trace, const StepConstants* kp) {
  StepTime st;
  const StepConstants K = kp ? *kp : StepConstants::From(cal, hw);
  const Accelerator& acc = *hw.acc;
  const int tp = std::max(1, par.tp), pp = std::max(1, par.pp), dp = std::max(1, par.dp);
  const int cp = std::max(1, par.cp), ep = std::max(1, par.ep);
  const int gpus = tp * pp * dp * cp;
  const int b = std::max(1, opt.micro_batch);
  if (global_batch % (b * dp) != 0) {
    st.reason = fmt::format("global batch {} is not a multiple of micro-batch {} x dp {}",
                            global_batch, b, dp);
    return st;
  }
  const int mb = global_batch / (b * dp);
  st.num_microbatches = mb;
  const Precision math = opt.precision;
  auto peak_opt = TrainGemmPeak(acc, opt.precision, opt.fp4_gemms);
  if (!peak_opt) {
    st.reason = opt.fp4_gemms ? acc.id +
                                    " has no FP4 tensor cores (NVFP4 training needs "
                                    "Blackwell: B200, GB200, B300, GB300)"
                              : std::string("no ") + PrecisionName(math) + " peak for " + acc.id;
    return st;
  }
  // fp8 training keeps attention and element-wise work in bf16; GEMMs run at the fp8 rate.
  Ctx c{acc,        peak_opt->value(), K.gemm_eff, K.gemm_knee, acc.memory_bw.value() * K.hbm_eff,
        K.attn_eff, K.kernel_s,        K.power_cap};
  const double bf16_peak = acc.PeakFor(Precision::kBf16).value_or(*peak_opt).value();
  // NVFP4 GEMMs keep FP8's quantisation casts around a GEMM that runs at the FP4 rate
  // (Fp4GemmFactor, as in serving); their operands are 4-bit.
  if (opt.fp4_gemms) {
    c.gemm_eff *= Fp4Factor(acc, K.fp8_factor);
  } else if (math == Precision::kFp8 && acc.fp8) {
    c.gemm_eff *= K.fp8_factor;
  }
  const double e = math == Precision::kFp32 ? 4.0 : 2.0;  // activation bytes
  const double gemm_e = opt.fp4_gemms ? 0.5 : math == Precision::kFp8 ? 1.0 : e;

  const double s = std::max(1, opt.seq_len / cp);
  const double T = b * s;  // tokens per micro-batch on this GPU
  const double h = static_cast<double>(m.hidden);
  const bool peft = opt.method == TrainMethod::kLora || opt.method == TrainMethod::kQlora;
  const double bwd_factor = peft ? 1.0 : 2.0;  // frozen weights: dgrad only

  // ---- compute per micro-batch for the most loaded stage --------------------------------------
  // An encoder-decoder model (docs/model.md 10.7) trains both stacks: its decoder's layers on
  // the sequence (the decoder's tokens) and its encoder's on the encoder input (Whisper: the
  // fixed 1500 positions; a text model: as long as the sequence), plus the decoder's
  // cross-attention over the encoder positions.
  const bool encdec = m.arch == ModelArch::kEncoderDecoder;
  std::shared_ptr<const EncoderDecoderParts> parts;
  if (encdec) parts = SplitEncoderDecoder(m);
  struct LayerTimes {
    double layer_fwd = 0, attn_fwd = 0, attn_bwd = 0, elem_fwd = 0, permute_fwd = 0;
  };
  auto layer_times = [&](const ModelSpec& lm, double ls, double lT) {
    LayerTimes lt;
    double& layer_fwd = lt.layer_fwd;
    double& attn_fwd = lt.attn_fwd;
    double& attn_bwd = lt.attn_bwd;
    double& elem_fwd = lt.elem_fwd;
    double& permute_fwd = lt.permute_fwd;
    const double q = lm.mla ? static_cast<double>(lm.heads) *
                                  (lm.mla->qk_nope_head_dim + lm.mla->qk_rope_head_dim)
                            : static_cast<double>(lm.heads) * lm.head_dim;
    const double kv = lm.mla ? 0 : static_cast<double>(lm.kv_heads) * lm.head_dim;
    const double vdim = lm.mla ? static_cast<double>(lm.heads) * lm.mla->v_head_dim : q;
    if (lm.mla) {
      const MlaSpec& a = *lm.mla;
      if (a.q_lora_rank > 0) {
        layer_fwd += GemmSeconds(c, lT, a.q_lora_rank, h, gemm_e);
        layer_fwd += GemmSeconds(c, lT, q / tp, a.q_lora_rank, gemm_e);
      } else {
        layer_fwd += GemmSeconds(c, lT, q / tp, h, gemm_e);
      }
      layer_fwd += GemmSeconds(c, lT, a.kv_lora_rank + a.qk_rope_head_dim, h, gemm_e);
      layer_fwd += GemmSeconds(c, lT, lm.heads * (a.qk_nope_head_dim + a.v_head_dim) / tp,
                               a.kv_lora_rank, gemm_e);
    } else {
      layer_fwd += GemmSeconds(c, lT, (q + 2 * kv) / tp, h, gemm_e);
    }
    layer_fwd += GemmSeconds(c, lT, h, vdim / tp, gemm_e);  // output projection
    // MLP (dense or MoE, averaged over layers).
    const int moe_layers = MoeLayerCount(lm);
    const double moe_frac = lm.layers > 0 ? static_cast<double>(moe_layers) / lm.layers : 0;
    const double f = static_cast<double>(lm.ffn_hidden);
    const double up = (lm.gated_mlp ? 2.0 : 1.0);
    double dense_mlp = 0, moe_mlp = 0;
    if (f > 0) {
      dense_mlp =
          GemmSeconds(c, lT, up * f / tp, h, gemm_e) + GemmSeconds(c, lT, h, f / tp, gemm_e);
    }
    if (lm.moe) {
      const MoeSpec& x = *lm.moe;
      const double ef = static_cast<double>(x.expert_ffn);
      // Tokens reaching one local expert: lT x top_k x ep / experts (balanced routing); each
      // GPU holds experts / ep experts.
      const double local_experts = std::max(1.0, static_cast<double>(x.experts) / ep);
      const double tok = lT * x.top_k * ep / x.experts;
      moe_mlp = local_experts * (GemmSeconds(c, tok, 2 * ef / tp, h, gemm_e) +
                                 GemmSeconds(c, tok, h, ef / tp, gemm_e));
      double sf = static_cast<double>(x.shared_ffn > 0 ? x.shared_ffn : x.expert_ffn);
      for (int i = 0; i < x.shared_experts; ++i) {
        moe_mlp +=
            GemmSeconds(c, lT, 2 * sf / tp, h, gemm_e) + GemmSeconds(c, lT, h, sf / tp, gemm_e);
      }
      moe_mlp += GemmSeconds(c, lT, x.experts, h, gemm_e);  // router
    }
    layer_fwd += (1 - moe_frac) * dense_mlp + moe_frac * moe_mlp;
    // Attention core. FlashAttention: 4 ls^2 b (heads x head_dim), the causal half for decoders
    // (encoders and ViTs attend both ways: the whole square), at attention efficiency (bf16).
    // Without it, the score matrix is written and read at HBM bandwidth.
    const double attn_flops = 4.0 * b * ls * ls * q / tp * ScoreShare(lm, ls * cp) * cp;
    attn_fwd = attn_flops / (bf16_peak * c.attn_eff);
    attn_bwd = K.attn_bwd_factor * attn_fwd;
    if (!opt.flash_attention) {
      // Scores in HBM (Korthikanti et al. 2022: 5as^2b bytes of activations): forward writes
      // QK^lT, reads and writes the softmax, writes and applies the dropout mask and reads the
      // probabilities for AV, ~12 B per score. The backward runs the two score GEMMs twice and
      // moves ~17 B per score (probabilities, their gradient, softmax and dropout backward).
      const double gemms = 4.0 * b * ls * ls * q / tp / (bf16_peak * c.gemm_eff);
      const double scores = b * lm.heads / tp * ls * ls / c.hbm;
      attn_fwd = gemms + 12.0 * scores;
      attn_bwd = 2.0 * gemms + 17.0 * scores;
    }
    // Element-wise passes (norms, residuals, activation, rotary, dropout) over token x hidden,
    // plus the MLP activation over token x ffn.
    const double passes = opt.fused_kernels ? K.passes_fused : K.passes_eager;
    const double hidden_here = par.sequence_parallel ? h / tp : h;
    double mlp_act =
        lm.moe ? static_cast<double>(lm.moe->expert_ffn) * (lm.moe->top_k + lm.moe->shared_experts)
               : f;
    elem_fwd = (passes * lT * hidden_here + 5.0 * lT * mlp_act / tp) * e / c.hbm +
               K.kernels_per_layer * c.kernel_s * 0.5;
    // MoE token permutation (Megatron-Core moe_utils.permute/unpermute): each routed copy of a
    // token is written grouped by expert and read back into the weighted sum, and with EP > 1
    // the chunks from each peer are sorted by local expert and back (sort_chunks_by_idxs); the
    // backward moves the gradients the same way once. Fused kernels save launches, not bytes.
    if (lm.moe) {
      const double routed = (par.sequence_parallel ? lT / tp : lT) * lm.moe->top_k * h;
      permute_fwd = moe_frac * (ep > 1 ? 4.0 : 2.0) * routed * e / c.hbm;
    }
    return lt;
  };
  const int layers_here = (m.layers + pp - 1) / pp;
  LayerTimes dec;
  if (m.is_transformer() && m.layers > 0 && h > 0) {
    dec = layer_times(encdec ? parts->decoder : m, s, T);
  }
  double layer_fwd = dec.layer_fwd, attn_fwd = dec.attn_fwd, attn_bwd = dec.attn_bwd,
         elem_fwd = dec.elem_fwd, permute_fwd = dec.permute_fwd;
  double encoder_micro = 0;  // the encoder stack's forward + backward (+ recompute)
  if (encdec && h > 0) {
    const double s_enc = EncoderInputTokens(m, opt.seq_len);
    const double T_enc = b * s_enc;
    const double q = static_cast<double>(m.heads) * m.head_dim;
    const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
    // Every decoder layer: cross-attention q and output projections on its tokens, K/V
    // projections of the encoder output, attention over the encoder positions (both ways).
    layer_fwd += GemmSeconds(c, T, q / tp, h, gemm_e) + GemmSeconds(c, T, h, q / tp, gemm_e) +
                 GemmSeconds(c, T_enc, 2 * kv / tp, h, gemm_e);
    const double cross = 4.0 * b * s * s_enc * q / tp / (bf16_peak * c.attn_eff);
    attn_fwd += cross;
    attn_bwd += K.attn_bwd_factor * cross;
    const LayerTimes enc = layer_times(parts->encoder, s_enc, T_enc);
    const double enc_fwd = enc.layer_fwd + enc.attn_fwd + enc.elem_fwd;
    const double enc_bwd = bwd_factor * enc.layer_fwd + enc.attn_bwd + 2.0 * enc.elem_fwd;
    const double enc_rc = opt.recompute == Recompute::kFull        ? enc_fwd
                          : opt.recompute == Recompute::kSelective ? enc.attn_fwd
                                                                   : 0.0;
    // Whisper's convolutional front end, forward and backward at the GEMM rate.
    const double frontend = 3.0 * parts->frontend_flops_per_request * b / tp /
                            (c.peak * std::min(c.gemm_eff, c.power_cap));
    encoder_micro = (parts->encoder.layers * (enc_fwd + enc_bwd + enc_rc) + frontend) / pp;
  }
  double per_layer_fwd = layer_fwd + attn_fwd + elem_fwd + permute_fwd;
  double per_layer_bwd = bwd_factor * layer_fwd + attn_bwd + 2.0 * elem_fwd + permute_fwd;
  double per_layer_recompute = 0;
  if (opt.recompute == Recompute::kFull) per_layer_recompute = per_layer_fwd;
  if (opt.recompute == Recompute::kSelective) per_layer_recompute = attn_fwd;
  // LM head on the last stage (forward + backward); non-transformers from FLOPs per sample.
  double head = 0;
  if (m.generates_tokens() && m.vocab > 0) {
    head = (1 + bwd_factor) * GemmSeconds(c, T, static_cast<double>(m.vocab) / tp, h, gemm_e) +
           3.0 * T * static_cast<double>(m.vocab) / tp * 4.0 / c.hbm;  // softmax/CE in fp32
  }
  // Partial (block) recompute: only `recompute_layers` of the stage's layers run forward twice.
  const int rc_layers = opt.recompute == Recompute::kFull && opt.recompute_layers > 0
                            ? std::min(opt.recompute_layers, layers_here)
                            : layers_here;
  double micro = layers_here * (per_layer_fwd + per_layer_bwd) + rc_layers * per_layer_recompute +
                 head + encoder_micro;
  if (opt.method == TrainMethod::kQlora && m.is_transformer() && m.layers > 0) {
    // bitsandbytes dequantises each NF4 weight to 16 bits before every matmul that uses it:
    // forward, the backward's input gradient, and a recomputed forward (read 0.5 B + scales,
    // write 2 B, at HBM bandwidth; QLoRA, Dettmers et al. 2023, Sec. 3).
    const double linear_local = static_cast<double>(CountParams(m).linear) / (tp * pp);
    const double passes = 2.0 + (opt.recompute == Recompute::kFull
                                     ? static_cast<double>(rc_layers) / std::max(1, layers_here)
                                     : 0.0);
    micro += passes * linear_local * K.nf4_dequant_bytes / c.hbm;
  }
  if (!m.is_transformer() || m.layers == 0) {
    if (!m.gflops_per_sample) {
      st.reason = "model has neither a transformer shape nor FLOPs per sample";
      return st;
    }
    // Frozen leading layers (a pretrained backbone's first stages) run forward only.
    const double g = *m.gflops_per_sample;
    const double g_frozen = m.FrozenGflops();
    double flops = (3.0 * g - 2.0 * g_frozen) * 1e9 * b / (tp * pp);
    // Convolutions (implicit GEMM) run below GEMM efficiency, and a small forward does not fill
    // the GPU (ConvFill: the knee is work, so ResNet-50 keeps b / (b + cnn_batch_knee) and a
    // UNet of ~100 ResNet-50s per sample is full at a few samples per GPU).
    const double fill =
        internal::ConvFill(*m.gflops_per_sample * 1e9 * b / (tp * pp), K.cnn_knee_flops);
    micro = flops / (c.peak * std::min(c.gemm_eff * K.cnn_factor * fill, c.power_cap));
    // Batch norm, ReLU and residual adds read and write every feature map forward and
    // backward (fused NHWC kernels: ~8 passes of 16-bit elements; eager PyTorch runs ReLU as
    // its own kernel both ways: 13), at memory bandwidth. Frozen
    // norms fold into the convolution (its epilogue applies scale, bias and ReLU): the forward
    // keeps the residual adds and the backward the ReLU gradient, and frozen layers take no
    // backward.
    if (m.activation_melems_per_sample) {
      const double all = *m.activation_melems_per_sample;
      const double frozen = m.FrozenMelems();
      const double passes =
          m.frozen_norm ? K.cnn_frozen_fwd_passes * all + K.cnn_frozen_bwd_passes * (all - frozen)
                        : (opt.fused_kernels ? K.cnn_train_passes : K.cnn_train_passes_eager) *
                                  (all - frozen) +
                              K.cnn_frozen_fwd_passes * frozen;
      micro += passes * 1e6 * b * e / (tp * pp) / c.hbm;
    }
  }
  st.compute = Seconds(micro * mb);

  // ---- tensor parallel: 2 all-reduces per layer forward, 2 backward (+2 recompute) -------------
  const bool tp_in_node = tp <= hw.ScaleUpGpus();
  const double inter_bw = hw.inter_bw.value() * K.inter_link_eff;
  const double lat_intra = K.lat_intra_s;
  const double lat_inter = K.lat_inter_s;
  if (tp > 1 && m.is_transformer()) {
    double bytes = T * h * e;
    double one = AllReduceSeconds(
        bytes, tp, tp_in_node ? hw.IntraBwFor(tp).value() * K.intra_link_eff : inter_bw,
        tp_in_node ? lat_intra : lat_inter);
    // Frameworks that pipeline TP collectives with the GEMMs that produce or consume them
    // (Transformer Engine userbuffers in Megatron-Core/NeMo) hide a share of it.
    const double rc_ar = opt.recompute == Recompute::kFull ? 2.0 * rc_layers : 0.0;
    st.tp_comm = Seconds((4.0 * layers_here + rc_ar) * one * (1.0 - K.tp_overlap) * mb);
  }
  if (cp > 1 && m.is_transformer()) {
    // Ring attention passes K and V around the CP group, partly hidden behind attention.
    double kvb = T * 2 * (m.kv_heads * m.head_dim) * e;
    double ring = AllGatherSeconds(
        kvb * cp, cp,
        tp * cp <= hw.ScaleUpGpus() ? hw.IntraBwFor(cp).value() * K.intra_link_eff : inter_bw,
        lat_inter);
    double exposed = std::max(0.0, 3 * ring - (attn_fwd + attn_bwd));
    st.tp_comm += Seconds(exposed * layers_here * mb);
  }
  // ---- MoE all-to-all: dispatch + combine, forward and backward ------------------------------
  if (m.moe && ep > 1) {
    // Each rank dispatches its own tokens: with sequence parallelism the MoE layer's input is
    // split over the TP ranks (Megatron-Core's all-to-all dispatcher takes [s/t, b, h] with
    // expert TP 1), so a rank sends T/t tokens, each to top_k experts, (ep-1)/ep of them to
    // other ranks.
    const double sent_tokens = par.sequence_parallel ? T / tp : T;
    const double a2a = EpAllToAllSeconds(m, sent_tokens * h * e, ep, opt.ep_node_dedup, hw,
                                         K.intra_link_eff, inter_bw, lat_intra, lat_inter);
    st.ep_comm = Seconds(4 * a2a * layers_here * mb);
  }
  // ---- pipeline: bubble (p-1)/(v m) of the ideal time, plus fill/drain point-to-point ---------
  if (pp > 1) {
    double vpp = std::max(1, par.vpp);
    st.bubble = Seconds(micro * (pp - 1) / vpp);
    bool stage_in_node = tp * cp * dp * pp <= hw.ScaleUpGpus();
    // A stage boundary is one GPU sending to one: a single link on a mesh.
    double p2p =
        T * h * e / (stage_in_node ? hw.IntraBwFor(2).value() * K.intra_link_eff : inter_bw);
    // Interleaving sends each micro-batch across v times as many stage boundaries (Narayanan
    // et al. 2021, Sec. 2.2.2: "the amount of communication also increases by v"): the extra
    // (v - 1) forward and backward transfers per micro-batch are counted exposed, each split
    // over the TP ranks (Megatron's scatter/gather optimisation, Sec. 4.1: b s h / t per rank).
    st.pp_comm = Seconds(2 * (pp - 1) * p2p + mb * 2.0 * (vpp - 1) * p2p / tp);
  }
  // ---- data parallel / ZeRO ---------------------------------------------------------------------
  ParamCounts pc = CountParams(m);
  double trained = peft ? static_cast<double>(LoraParams(m, opt.lora_rank, opt.lora_targets))
                        : static_cast<double>(pc.total);
  // Routed experts are split over ep as well; their gradients are reduced over the
  // expert-data-parallel group (dp / ep ranks), the rest over dp.
  const double expert_frac =
      !peft && pc.total > 0 ? std::min(1.0, RoutedExpertParams(m) / static_cast<double>(pc.total))
                            : 0.0;
  const double dense_params = trained * (1 - expert_frac) / (tp * pp);
  const bool folded = ep > 1 && dp % ep != 0;  // Megatron-Core parallel folding (expert TP 1)
  const double expert_params = trained * expert_frac / ((folded ? 1 : tp) * pp * ep);
  const double local_params = dense_params + expert_params;
  const int edp = std::max(1, folded ? dp * cp * tp / ep : dp / ep);
  double grad_bytes = peft ? 4.0
                           : BytesPerElement(opt.grad_dtype.value_or(
                                 math == Precision::kFp8 ? Precision::kBf16 : math));
  if (math == Precision::kFp32) grad_bytes = 4.0;
  // Bus bandwidth and latency of a collective over `n` ranks placed every `stride`-th GPU
  // (Megatron's rank order tp-cp-dp-pp; experts etp-ep-edp-pp). A group that spans machines has
  // `local` members in each; the machine's NICs serve its `stride` groups alike, and NCCL runs
  // one ring per NIC with the hops inside the machine over NVLink, so a group's ring crosses
  // machines at local x the per-GPU fabric share (8 GPUs with 8 HDR NICs and tp = 1: 200 GB/s
  // of bus bandwidth, as nccl-tests measure on DGX A100 clusters), capped by the NVLink hops
  // between its members in a machine. docs/model.md 5.6.
  auto group_link = [&](int n, int stride) -> std::pair<double, double> {
    stride = std::max(1, stride);
    if (n * stride <= hw.ScaleUpGpus())
      return {hw.IntraBwFor(n).value() * K.intra_link_eff, lat_intra};
    const int local = std::clamp(hw.ScaleUpGpus() / stride, 1, std::max(1, n));
    if (local == 1) return {inter_bw, lat_inter};
    return {std::min(local * inter_bw, hw.IntraBwFor(local).value() * K.intra_link_eff), lat_inter};
  };
  const auto [dp_bw, dp_lat] = group_link(dp, tp * cp);
  const auto [edp_bw, edp_lat] = group_link(edp, (folded ? 1 : tp) * ep);
  double dp_time = 0;
  if (dp > 1) {
    if (par.zero_stage >= 3) {
      // FSDP/ZeRO-3: all-gather the weights for forward and again for backward of every
      // micro-batch (they are resharded in between), reduce-scatter gradients once per step.
      // LoRA/QLoRA shard and gather the frozen base too, at its storage width.
      // Kept unsharded for the whole step (FSDP2 under pipeline schedules,
      // TrainMemoryOptions::fsdp_unsharded_step): one all-gather per step.
      const double gathers = opt.fsdp_unsharded_step ? 1.0 : mb * 2.0;
      if (peft) {
        const double base_local = static_cast<double>(pc.total) / (tp * pp);
        dp_time = gathers * AllGatherSeconds(base_local * opt.base_bits / 8.0, dp, dp_bw, dp_lat);
      } else {
        dp_time = gathers * (AllGatherSeconds(dense_params * 2.0, dp, dp_bw, dp_lat) +
                             AllGatherSeconds(expert_params * 2.0, edp, edp_bw, edp_lat));
      }
      dp_time += AllGatherSeconds(dense_params * grad_bytes, dp, dp_bw, dp_lat) +
                 AllGatherSeconds(expert_params * grad_bytes, edp, edp_bw, edp_lat);
    } else {
      dp_time = AllReduceSeconds(dense_params * grad_bytes, dp, dp_bw, dp_lat) +
                AllReduceSeconds(expert_params * grad_bytes, edp, edp_bw, edp_lat);
    }
  }
  st.dp_comm_total = Seconds(dp_time);
  double bwd_time = layers_here * per_layer_bwd;  // last micro-batch's backward hides the sync
  double fwd_time = layers_here * per_layer_fwd;
  if (!m.is_transformer() || m.layers == 0) {
    bwd_time = micro * 2.0 / 3.0;  // per-sample models: backward is two thirds of a step
    fwd_time = micro / 3.0;
  }
  const double pg_overlap = K.param_gather_overlap;
  if (par.zero_stage >= 3) {
    st.dp_comm = Seconds(std::max(0.0, dp_time - K.zero3_overlap * st.compute.value()));
  } else if (par.zero_stage >= 1) {
    // ZeRO-1/2: the gradient reduce-scatter hides behind the last micro-batch's backward; the
    // updated parameters' all-gather follows the optimizer step, exposed (DeepSpeed) unless the
    // framework overlaps it with the next step's first forward (Megatron-Core
    // overlap_param_gather: param_gather_overlap).
    const double half = dp_time / 2;
    st.dp_comm = Seconds(std::max(0.0, half - K.dp_overlap * bwd_time) +
                         std::max(0.0, half - pg_overlap * fwd_time));
  } else {
    st.dp_comm = Seconds(std::max(0.0, dp_time - K.dp_overlap * bwd_time));
  }
  // ---- optimizer step --------------------------------------------------------------------------
  const double opt_params =
      par.zero_stage >= 1
          ? dense_params / (dp * cp) +
                expert_params / std::max(1, folded ? dp * cp * tp / ep : dp * cp / ep)
          : local_params;
  // Bytes the update moves per parameter: read the gradient; read and write the weights it
  // updates (the fp32 master copy, or the 16-bit weights themselves) and every state; write the
  // 16-bit copy of an fp32 master. AdamW mixed precision with bf16 gradients: 2 + 8 + 16 + 2 =
  // 28 B; pure bf16 AdamW (bf16 weights and states): 2 + 4 + 8 = 14 B.
  const bool master = opt.master_weights && math != Precision::kFp32;
  const double updated = master ? 4.0 : (math == Precision::kFp32 ? 4.0 : 2.0);
  const double step_bytes = grad_bytes + 2.0 * updated +
                            2.0 * OptimizerStateBytes(opt.optimizer, opt.optimizer_state_dtype) +
                            (master ? 2.0 : 0.0);
  st.optimizer = Seconds(opt_params * step_bytes / c.hbm);
  if (!peft && (opt.optimizer_offload || (opt.param_offload && par.zero_stage >= 3))) {
    const double host_bw = HostLink(hw).value() * K.host_link_eff;
    if (opt.optimizer_offload) {
      // ZeRO-Offload: this GPU's gradient shard goes to host RAM, the CPU runs the optimizer
      // over its states at host-memory bandwidth, the updated 16-bit shard comes back.
      // Exposed (Calculon's no-overlap mode; DeepSpeed's one-step delayed update is off by
      // default).
      st.optimizer = Seconds(opt_params * step_bytes / K.host_memory_bw);
      st.offload = Seconds(opt_params * (grad_bytes + 2.0) / host_bw);
      if (opt.offload_step_overlaps_backward) {
        // The CPU updates each parameter as its gradient arrives, behind the last micro-batch's
        // backward (and its recompute): only the step's remainder past the backward, and the
        // updated 16-bit weights' return trip, are exposed.
        const double window = bwd_time + rc_layers * per_layer_recompute;
        const double grads_down = opt_params * grad_bytes / host_bw;
        st.optimizer = Seconds(std::max(0.0, st.optimizer.value() - window));
        st.offload = Seconds(std::max(0.0, grads_down - window) + opt_params * 2.0 / host_bw);
      }
    }
    if (opt.param_offload && par.zero_stage >= 3) {
      // ZeRO-Infinity: the weight shard is read from host RAM for every forward and backward,
      // prefetched behind compute like the all-gathers.
      const double shard_bytes = (dense_params / dp + expert_params / edp) * 2.0;
      const double reads = mb * 2.0 * shard_bytes / host_bw;
      st.offload += Seconds(std::max(0.0, reads - K.zero3_overlap * st.compute.value()));
    }
  }

  if (opt.paged_spill_bytes > 0) {
    // A paged optimizer whose states outgrow the GPU's free memory: each step pages the spilled
    // states in over the host link and evicts as many back (dirty), exposed before each update.
    st.offload += Seconds(2.0 * opt.paged_spill_bytes / (HostLink(hw).value() * K.host_link_eff));
  }
  st.total = st.compute + st.tp_comm + st.dp_comm + st.pp_comm + st.ep_comm + st.bubble +
             st.optimizer + st.offload;
  // ---- throughput and MFU ----------------------------------------------------------------------
  double tokens_step = static_cast<double>(global_batch) * opt.seq_len;
  if (m.is_transformer() && m.layers > 0) {
    st.model_flops =
        FlopsPerToken(m, pc, opt.seq_len, opt.method, opt.recompute, false) * tokens_step;
    st.hardware_flops =
        FlopsPerToken(m, pc, opt.seq_len, opt.method, opt.recompute, true) * tokens_step;
    st.attention_flops = AttentionFlopsPerToken(m, opt.seq_len) * tokens_step;
    if (rc_layers < layers_here && layers_here > 0) {
      // Partial recompute: only that share of the recomputed forward is extra work.
      const double share = static_cast<double>(rc_layers) / layers_here;
      st.hardware_flops = st.model_flops + (st.hardware_flops - st.model_flops) * share;
    }
  } else if (m.gflops_per_sample) {
    st.model_flops = Flop(3.0 * *m.gflops_per_sample * 1e9 * global_batch);
    st.hardware_flops = st.model_flops;
  }
  double t = st.total.value();
  if (t > 0) {
    st.mfu = st.model_flops.value() / (t * gpus * peak_opt->value());
    st.tokens_per_s_per_gpu = tokens_step / t / gpus;
    st.samples_per_s = global_batch / t;
  }
  st.valid = t > 0;
  if (trace) {
    trace->Add("micro-batches per step", "global_batch / (micro_batch x dp)", mb, "");
    trace->Add("compute", "m x layers/pp x (fwd + bwd + recompute) + LM head", st.compute.value(),
               "s");
    trace->Add("TP communication", "4 all-reduces of b s h bytes per layer, ring 2(t-1)/t",
               st.tp_comm.value(), "s");
    trace->Add("DP communication (total)",
               "ring all-reduce of gradients (ZeRO-3: 2 all-gathers + reduce-scatter)",
               st.dp_comm_total.value(), "s");
    trace->Add("DP communication (exposed)", "total - overlap x backward", st.dp_comm.value(), "s");
    if (st.ep_comm.value() > 0) {
      trace->Add("EP all-to-all",
                 "4 per layer x (T/t with SP) x top_k x h bytes, NVLink peers || fabric peers",
                 st.ep_comm.value(), "s");
    }
    trace->Add("pipeline bubble", "(p-1)/v x one micro-batch", st.bubble.value(), "s");
    trace->Add("optimizer step",
               "params/(tp pp [dp]) x (grad + 2 x (weight or master + states) [+ 2]) B / HBM "
               "(offload: / host memory bandwidth; overlapped offload: minus the backward)",
               st.optimizer.value(), "s");
    if (st.offload.value() > 0) {
      trace->Add("offload transfers",
                 "shard x (grad + 2 B) / host link (+ parameter reads; overlapped offload: "
                 "the weights' return; paged optimizer: 2 x spilled states / host link)",
                 st.offload.value(), "s");
    }
    trace->Add("step time", "sum of the above", t, "s");
    trace->Add("MFU", "6N+attention FLOPs / (step x GPUs x peak)", st.mfu, "");
  }
  return st;
}

}  // namespace gpuplan

namespace gpuplan {

Seconds TrainStepLowerBound(const ModelSpec& m, const Parallelism& par,
                            const TrainMemoryOptions& opt, int global_batch, const HardwareView& hw,
                            const StepConstants& k) {
  if (!m.is_transformer() || m.layers <= 0 || m.hidden <= 0 || global_batch <= 0) return Seconds(0);
  const Accelerator& acc = *hw.acc;
  const Precision math = opt.precision;
  auto peak = TrainGemmPeak(acc, opt.precision, opt.fp4_gemms);
  if (!peak) return Seconds(0);
  const int tp = std::max(1, par.tp), pp = std::max(1, par.pp), dp = std::max(1, par.dp);
  const int cp = std::max(1, par.cp), ep = std::max(1, par.ep);
  double eff = k.gemm_eff;
  if (opt.fp4_gemms) {
    eff *= Fp4Factor(acc, k.fp8_factor);
  } else if (math == Precision::kFp8 && acc.fp8) {
    eff *= k.fp8_factor;
  }
  const double e = math == Precision::kFp32 ? 4.0 : 2.0;
  const double h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(global_batch / dp) * std::max(1, opt.seq_len / cp);
  const int layers_here = (m.layers + pp - 1) / pp;
  // GEMM FLOPs per token of one layer's forward on one GPU: the same shapes as the step.
  const double q =
      m.mla ? static_cast<double>(m.heads) * (m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
            : static_cast<double>(m.heads) * m.head_dim;
  const double kv = m.mla ? 0 : static_cast<double>(m.kv_heads) * m.head_dim;
  const double vdim = m.mla ? static_cast<double>(m.heads) * m.mla->v_head_dim : q;
  double attn = 0;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    attn +=
        a.q_lora_rank > 0 ? 2 * h * a.q_lora_rank + 2.0 * a.q_lora_rank * q / tp : 2 * h * q / tp;
    attn += 2 * h * (a.kv_lora_rank + a.qk_rope_head_dim) +
            2.0 * a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim) / tp;
  } else {
    attn += 2 * h * (q + 2 * kv) / tp;
  }
  attn += 2 * h * vdim / tp;
  const int moe_layers = MoeLayerCount(m);
  const double moe_frac = static_cast<double>(moe_layers) / m.layers;
  const double f = static_cast<double>(m.ffn_hidden);
  const double dense = f > 0 ? 2 * h * f * ((m.gated_mlp ? 2.0 : 1.0) + 1.0) / tp : 0.0;
  double moe = 0;
  if (m.moe) {
    const MoeSpec& x = *m.moe;
    const double sf = static_cast<double>(x.shared_ffn > 0 ? x.shared_ffn : x.expert_ffn);
    moe = x.top_k * 6.0 * static_cast<double>(x.expert_ffn) * h / tp +
          x.shared_experts * 6.0 * sf * h / tp + 2.0 * x.experts * h;
  }
  const double layer = attn + (1 - moe_frac) * dense + moe_frac * moe;
  const bool peft = opt.method == TrainMethod::kLora || opt.method == TrainMethod::kQlora;
  const double passes = 1.0 + (peft ? 1.0 : 2.0);
  double head = 0;
  if (m.is_decoder_llm() && m.vocab > 0) head = 2 * static_cast<double>(m.vocab) * h / tp;
  double t = tokens * passes * (layers_here * layer + head) / (peak->value() * eff);
  // FlashAttention's 4 s (heads x head_dim) FLOPs per token (causal half for decoders) at the
  // attention efficiency, forward + backward; element-wise passes at HBM bandwidth (forward,
  // backward 2x), over the smallest hidden slice a rank can hold (h / tp under sequence
  // parallelism).
  if (opt.flash_attention) {
    const double bf16 = acc.PeakFor(Precision::kBf16).value_or(*peak).value();
    const double s_local = std::max(1, opt.seq_len / cp);
    t += tokens * layers_here * (1.0 + k.attn_bwd_factor) * 4.0 * s_local * q / tp *
         ScoreShare(m, opt.seq_len) * cp / (bf16 * k.attn_eff);
  }
  {
    // The caller's kernels (ApplyFrameworkMemory leaves fused_kernels as it is, so each
    // layout's step uses these passes too).
    const double ep_passes = opt.fused_kernels ? k.passes_fused : k.passes_eager;
    const double mlp_act =
        m.moe ? static_cast<double>(m.moe->expert_ffn) * (m.moe->top_k + m.moe->shared_experts) : f;
    const double hbm = acc.memory_bw.value() * k.hbm_eff;
    t += tokens * layers_here * 3.0 * (ep_passes * h / tp + 5.0 * mlp_act / tp) * e / hbm;
  }
  const double inter_bw = hw.inter_bw.value() * k.inter_link_eff;
  if (tp > 1) {
    const bool in_node = tp <= hw.ScaleUpGpus();
    const double bw = in_node ? hw.IntraBwFor(tp).value() * k.intra_link_eff : inter_bw;
    const double lat = in_node ? k.lat_intra_s : k.lat_inter_s;
    t += 4.0 * layers_here * (1.0 - k.tp_overlap) *
         (2.0 * (tp - 1) / tp * tokens * h * e / bw + 2.0 * (tp - 1) * lat);
  }
  if (m.moe && ep > 1) {
    // The step's all-to-all (EstimateTrainStep), summed over the step's tokens; the latency
    // terms are counted once per layer pass (a lower bound of once per micro-batch).
    const double sent = par.sequence_parallel ? tokens / tp : tokens;
    t += 4.0 * layers_here *
         EpAllToAllSeconds(m, sent * h * e, ep, opt.ep_node_dedup, hw, k.intra_link_eff, inter_bw,
                           k.lat_intra_s, k.lat_inter_s);
  }
  return Seconds(t);
}

}  // namespace gpuplan
