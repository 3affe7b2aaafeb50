#include <algorithm>
#include <fmt/format.h>
#include <tuple>
#include <utility>
#include <cmath>
#include <string>

#include "gpuplan/model.h"
#include "base/enum_names.h"
#include "io/csv.h"

namespace gpuplan {

bool IsMoeLayer(const ModelSpec& m, int i) {
  if (!m.moe) return false;
  if (i < m.moe->dense_layers) return false;
  int every = std::max(1, m.moe->moe_every);
  return (i + 1) % every == 0;
}

int MoeLayerCount(const ModelSpec& m) {
  if (!m.moe || m.layers <= 0) return 0;
  // Layers i in [dense_layers, layers) with (i + 1) a multiple of `every`: the multiples of
  // `every` in (dense_layers, layers].
  const int every = std::max(1, m.moe->moe_every);
  const int dense = std::clamp(m.moe->dense_layers, 0, m.layers);
  return m.layers / every - dense / every;
}

double RoutedExpertParams(const ModelSpec& m) {
  if (!m.moe) return 0;
  const int moe_layers = MoeLayerCount(m);
  return static_cast<double>(moe_layers) * m.moe->experts * 3.0 * static_cast<double>(m.hidden) *
         static_cast<double>(m.moe->expert_ffn);
}

ResNetCounts CountResNet(const ResNetSpec& r, int channels, int side) {
  ResNetCounts c;
  // A convolution (no bias) and its batch norm (scale and shift per channel), writing
  // `cout` x h x h outputs.
  auto conv = [&c](std::int64_t cin, std::int64_t cout, int k, double h) {
    const std::int64_t w = cin * cout * k * k;
    c.params += w + 2 * cout;
    c.macs += static_cast<double>(w) * h * h;
    c.feature_elems += static_cast<double>(cout) * h * h;
    c.largest_layer = std::max(c.largest_layer, w);
  };
  // Padded convolutions and pools: a stride-s layer maps h to ceil(h / s).
  auto down = [](double h, int s) { return std::ceil(h / s); };
  double h = down(side, 2);
  conv(std::max(1, channels), r.stem, 7, h);
  h = down(h, 2);  // the stem's max pool
  c.feature_elems += static_cast<double>(r.stem) * h * h;
  std::int64_t cin = r.stem;
  const std::size_t stages = std::min(r.depths.size(), r.widths.size());
  for (std::size_t i = 0; i < stages; ++i) {
    const std::int64_t cout = r.widths[i];
    const int stride = i > 0 || r.downsample_first_stage ? 2 : 1;
    for (int b = 0; b < r.depths[i]; ++b) {
      const int s = b == 0 ? stride : 1;
      const double h_out = down(h, s);
      if (r.bottleneck) {
        const std::int64_t w = cout / 4;
        // At the input's resolution, the 3x3 carrying the stride (v1.5), or already strided.
        conv(cin, w, 1, r.stride_in_first_1x1 ? h_out : h);
        conv(w, w, 3, h_out);
        conv(w, cout, 1, h_out);
      } else {
        conv(cin, cout, 3, h_out);
        conv(cout, cout, 3, h_out);
      }
      if (cin != cout || s != 1) conv(cin, cout, 1, h_out);  // projection shortcut
      cin = cout;
      h = h_out;
    }
  }
  if (r.classes > 0) {
    const std::int64_t head = cin * r.classes + r.classes;
    c.params += head;
    c.macs += static_cast<double>(cin) * r.classes;
    c.largest_layer = std::max(c.largest_layer, head);
  }
  return c;
}

namespace {

constexpr internal::EnumName<ModelArch> kModelArchNames[] = {
    {ModelArch::kDense, "dense", "decoder"},
    {ModelArch::kMoe, "moe"},
    {ModelArch::kMlaMoe, "mla-moe"},
    {ModelArch::kEncoder, "encoder"},
    {ModelArch::kEncoderDecoder, "encoder-decoder"},
    {ModelArch::kVit, "vit"},
    {ModelArch::kCnn, "cnn"},
    {ModelArch::kDiffusionUnet, "diffusion-unet", "unet diffusion"},
};

}  // namespace

const char* ModelArchName(ModelArch a) { return internal::NameIn(kModelArchNames, a); }

std::optional<ModelArch> ParseModelArch(std::string_view s) {
  return internal::ParseIn(kModelArchNames, s);
}

std::vector<std::string> ModelArchNames() { return internal::NamesIn(kModelArchNames); }

double QuantSpec::EffectiveBits() const {
  double b = bits;
  if (group_size > 0 && bits < 16) {
    // One scale per group (bitsandbytes double quant: 8-bit scales + a second-level fp32
    // scale per 256 groups, Dettmers et al. 2023: 0.127 bits/param for group 64).
    double per_group = double_quant ? 8.0 + 32.0 / 256.0 : scale_bits;
    b += per_group / group_size;
    if (zero_points) b += bits / group_size;  // packed zero point per group (AWQ, GPTQ)
  }
  return b;
}

namespace {

std::int64_t NormParams(const ModelSpec& m) {
  return m.norm == NormKind::kRmsNorm ? m.hidden : 2 * m.hidden;
}

struct AttnCount {
  std::int64_t linear = 0;  // weights of linear projections
  std::int64_t other = 0;   // biases, q/k norms, latent norms
};

AttnCount AttentionParams(const ModelSpec& m) {
  AttnCount c;
  const std::int64_t h = m.hidden;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const std::int64_t nh = m.heads;
    const std::int64_t qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
    if (a.q_lora_rank > 0) {
      c.linear += h * a.q_lora_rank + static_cast<std::int64_t>(a.q_lora_rank) * nh * qk_head;
      c.other += a.q_lora_rank;  // q_a_layernorm
    } else {
      c.linear += h * nh * qk_head;
    }
    c.linear += h * (a.kv_lora_rank + a.qk_rope_head_dim);  // kv_a_proj_with_mqa
    c.linear += static_cast<std::int64_t>(a.kv_lora_rank) * nh *
                (a.qk_nope_head_dim + a.v_head_dim);  // kv_b_proj
    c.other += a.kv_lora_rank;                        // kv_a_layernorm
    c.linear += nh * a.v_head_dim * h;                // o_proj
    return c;
  }
  const std::int64_t q = static_cast<std::int64_t>(m.heads) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(m.kv_heads) * m.head_dim;
  c.linear = h * q + 2 * h * kv + q * h;
  if (m.qkv_bias || m.linear_bias) c.other += q + 2 * kv;
  if (m.linear_bias || m.o_bias) c.other += h;  // output projection bias
  if (m.attention_sinks) c.other += m.heads;
  if (m.qk_norm) c.other += 2 * m.head_dim;
  return c;
}

std::int64_t DenseMlpLinear(const ModelSpec& m, std::int64_t ffn) {
  return (m.gated_mlp ? 3 : 2) * m.hidden * ffn;
}

std::int64_t DenseMlpBias(const ModelSpec& m, std::int64_t ffn) {
  if (!m.linear_bias) return 0;
  return (m.gated_mlp ? 2 * ffn : ffn) + m.hidden;
}

ParamCounts CountTransformer(const ModelSpec& m) {
  ParamCounts p;
  const std::int64_t h = m.hidden;
  p.embedding = m.vocab * h + static_cast<std::int64_t>(m.learned_positions) * h +
                static_cast<std::int64_t>(m.type_vocab) * h;
  if (m.arch == ModelArch::kEncoder) p.embedding += 2 * h;  // embedding LayerNorm
  p.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
  if (m.arch == ModelArch::kEncoder) p.lm_head = 0;  // encoders: no LM head in the count

  AttnCount attn = AttentionParams(m);
  const std::int64_t norms = m.norms_per_layer * NormParams(m);
  // Two kinds of block (dense MLP, MoE MLP): compute each once, then count the layers of each.
  const std::int64_t attn_block = attn.linear + attn.other + norms;
  const std::int64_t dense_mlp = DenseMlpLinear(m, m.ffn_hidden) + DenseMlpBias(m, m.ffn_hidden);
  std::int64_t moe_total = 0, moe_active = 0, moe_linear = 0;
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    // gpt-oss: gate/up bias (2 x ffn) and down bias (hidden) per expert.
    std::int64_t expert = 3 * h * e.expert_ffn + (e.expert_bias ? 2 * e.expert_ffn + h : 0);
    std::int64_t shared = static_cast<std::int64_t>(e.shared_experts) * 3 * h *
                          (e.shared_ffn > 0 ? e.shared_ffn : e.expert_ffn);
    std::int64_t router = h * e.experts + (e.router_bias ? e.experts : 0);
    moe_total = e.experts * expert + shared + router;
    moe_active = e.top_k * expert + shared + router;
    moe_linear = e.experts * 3 * h * e.expert_ffn + shared;
  }
  const std::int64_t n_moe = MoeLayerCount(m);
  const std::int64_t n_dense = m.layers - n_moe;
  const std::int64_t blocks_total = m.layers * attn_block + n_dense * dense_mlp + n_moe * moe_total;
  const std::int64_t blocks_active =
      m.layers * attn_block + n_dense * dense_mlp + n_moe * moe_active;
  const std::int64_t linear =
      m.layers * attn.linear + n_dense * DenseMlpLinear(m, m.ffn_hidden) + n_moe * moe_linear;
  const std::int64_t largest_block =
      std::max(n_dense > 0 ? attn_block + dense_mlp : 0, n_moe > 0 ? attn_block + moe_total : 0);
  std::int64_t final_norm = m.arch == ModelArch::kEncoder ? 0 : NormParams(m);
  std::int64_t pooler = m.pooler ? h * h + h : 0;
  p.total = p.embedding + blocks_total + final_norm + pooler + p.lm_head;
  p.active = p.embedding + blocks_active + final_norm + pooler + p.lm_head;
  p.per_layer = m.layers > 0 ? blocks_total / m.layers : 0;
  p.linear = linear;
  p.largest_layer = std::max({largest_block, p.embedding, p.lm_head});
  return p;
}

ParamCounts CountVit(const ModelSpec& m) {
  // torchvision VisionTransformer: conv patch embedding, class token, learned positions,
  // pre-LN blocks with biases, final LayerNorm, linear classifier.
  ParamCounts p;
  const std::int64_t h = m.hidden;
  const std::int64_t patches =
      m.patch_size > 0 ? (m.image_size / m.patch_size) * (m.image_size / m.patch_size) : 0;
  p.embedding = static_cast<std::int64_t>(m.channels) * m.patch_size * m.patch_size * h + h + h +
                (patches + 1) * h;
  AttnCount attn = AttentionParams(m);
  std::int64_t block = attn.linear + attn.other + 2 * 2 * h + DenseMlpLinear(m, m.ffn_hidden) +
                       DenseMlpBias(m, m.ffn_hidden);
  int classes = m.num_classes > 0 ? m.num_classes : 1000;
  p.lm_head = h * classes + classes;
  p.total = p.embedding + m.layers * block + 2 * h + p.lm_head;
  p.active = p.total;
  p.per_layer = block;
  p.linear = m.layers * (attn.linear + DenseMlpLinear(m, m.ffn_hidden));
  p.largest_layer = std::max(block, p.embedding);
  return p;
}

// The two stacks of an encoder-decoder model as models of their own (docs/model.md 10.7).
ModelSpec EncoderStack(const ModelSpec& m) {
  ModelSpec enc = m;
  enc.name = m.name + " encoder";
  enc.arch = ModelArch::kEncoder;
  enc.layers = m.encoder_layers > 0 ? m.encoder_layers : m.layers;
  enc.encoder_layers = 0;
  enc.vocab = 0;  // the token embedding is the decoder's (tied to its output projection)
  enc.tied_embeddings = false;
  enc.type_vocab = 0;
  enc.pooler = false;
  enc.learned_positions = m.encoder_positions;  // Whisper's stored position table; T5: none
  enc.max_positions = m.encoder_positions;
  enc.encoder_positions = 0;
  enc.mel_bins = 0;
  enc.params_override.reset();
  enc.active_params_override.reset();
  enc.official_params.reset();
  enc.checkpoint_bytes.reset();
  enc.quant.reset();
  return enc;
}

ModelSpec DecoderStack(const ModelSpec& m) {
  ModelSpec dec = m;
  dec.name = m.name + " decoder";
  dec.arch = ModelArch::kDense;
  dec.encoder_layers = 0;
  dec.encoder_positions = 0;
  dec.mel_bins = 0;
  // Whisper's decoder stores a learned position table of its context; T5's attention is relative.
  if (m.mel_bins > 0) dec.learned_positions = m.max_positions;
  dec.params_override.reset();
  dec.active_params_override.reset();
  dec.official_params.reset();
  dec.checkpoint_bytes.reset();
  return dec;
}

// Whisper's front end: conv1d(mel -> d, k3) and conv1d(d -> d, k3, stride 2), with biases.
std::int64_t FrontendParams(const ModelSpec& m) {
  if (m.mel_bins <= 0) return 0;
  const std::int64_t h = m.hidden;
  return 3 * m.mel_bins * h + h + 3 * h * h + h;
}

// Derived from the shape: both stacks, the decoder layers' cross-attention (its projections
// and norm) and the front end. Whisper-large-v3: 1,543,613,440 against 1,543,490,560 (the
// formula gives every projection a bias; Whisper's k projections have none).
ParamCounts CountEncoderDecoder(const ModelSpec& m, const ModelSpec& enc, const ModelSpec& dec) {
  const ParamCounts e = CountTransformer(enc);
  const ParamCounts d = CountTransformer(dec);
  const AttnCount cross = AttentionParams(dec);
  const std::int64_t cross_layer = cross.linear + cross.other + NormParams(m);
  ParamCounts p;
  p.total = e.total + FrontendParams(m) + d.total + m.layers * cross_layer;
  p.active = p.total;
  p.embedding = d.embedding + e.embedding;
  p.lm_head = d.lm_head;
  p.linear = e.linear + d.linear + m.layers * cross.linear;
  p.per_layer = d.per_layer + cross_layer;
  p.largest_layer = std::max({d.largest_layer, e.largest_layer, p.per_layer});
  return p;
}

}  // namespace

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts p;
  const bool resnet = m.arch == ModelArch::kCnn && m.resnet && !m.resnet->depths.empty();
  const bool encdec = m.arch == ModelArch::kEncoderDecoder && m.encoder_layers > 0 && m.heads > 0;
  bool derivable = resnet || (m.hidden > 0 && m.layers > 0 &&
                              (m.arch == ModelArch::kDense || m.arch == ModelArch::kMoe ||
                               m.arch == ModelArch::kMlaMoe || m.arch == ModelArch::kEncoder ||
                               m.arch == ModelArch::kVit || encdec));
  if (encdec && derivable) {
    p = SplitEncoderDecoder(m)->derived;
  } else if (resnet) {
    // Every weight is a convolution's or the head's: all of them count as matrix weights.
    const ResNetCounts c = CountResNet(*m.resnet, m.channels, kResNetImageSide);
    p.total = p.active = p.linear = c.params;
    p.largest_layer = c.largest_layer;
  } else if (derivable) {
    p = m.arch == ModelArch::kVit ? CountVit(m) : CountTransformer(m);
  }
  if (m.params_override) {
    // Given counts win: keep the derived breakdown proportions when there is one.
    std::int64_t derived_total = p.total;
    p.total = *m.params_override;
    p.exact = derivable && derived_total == p.total;
    if (!derivable || derived_total <= 0) {
      p.active = m.active_params_override.value_or(p.total);
      p.linear = p.total;   // no breakdown: treat every weight as a matrix weight
      p.largest_layer = 0;  // unknown without the layer structure
    } else if (m.active_params_override) {
      p.active = *m.active_params_override;
    } else if (derived_total != p.total) {
      p.active =
          static_cast<std::int64_t>(static_cast<double>(p.active) * static_cast<double>(p.total) /
                                    static_cast<double>(derived_total));
    }
  } else if (m.active_params_override && derivable) {
    p.active = *m.active_params_override;
  }
  return p;
}

namespace {

EncoderDecoderParts ComputeSplit(const ModelSpec& m) {
  EncoderDecoderParts parts;
  parts.encoder = EncoderStack(m);
  parts.decoder = DecoderStack(m);
  parts.frontend_params = FrontendParams(m);
  if (m.encoder_layers > 0 && m.heads > 0 && m.hidden > 0 && m.layers > 0) {
    parts.derived = CountEncoderDecoder(m, parts.encoder, parts.decoder);
  }
  if (m.mel_bins > 0) {
    // The front end's convolutions over the 3000 input frames and the 1500 positions.
    const double h = static_cast<double>(m.hidden);
    parts.frontend_flops_per_request = 2.0 * (2.0 * m.encoder_positions * 3.0 * m.mel_bins * h +
                                              m.encoder_positions * 3.0 * h * h);
  }
  const std::int64_t enc_params = CountParams(parts.encoder).total + parts.frontend_params;
  parts.encoder.params_override = enc_params;
  const std::int64_t total = m.params_override ? *m.params_override : parts.derived.total;
  parts.decoder.params_override = std::max<std::int64_t>(1, total - enc_params);
  if (m.checkpoint_bytes && total > 0) {  // split the stored bytes by the parameter shares
    parts.decoder.checkpoint_bytes = static_cast<std::int64_t>(
        static_cast<double>(*m.checkpoint_bytes) *
        static_cast<double>(*parts.decoder.params_override) / static_cast<double>(total));
    parts.encoder.checkpoint_bytes = *m.checkpoint_bytes - *parts.decoder.checkpoint_bytes;
  }
  return parts;
}

// Every field the split reads besides the name (the stacks' shapes and counts).
auto SplitKey(const ModelSpec& m) {
  return std::make_tuple(
      static_cast<int>(m.arch), m.hidden, m.layers, m.encoder_layers, m.heads, m.kv_heads,
      m.head_dim, m.ffn_hidden, m.gated_mlp, m.vocab, m.tied_embeddings, static_cast<int>(m.norm),
      m.norms_per_layer, m.qk_norm, m.qkv_bias, m.o_bias, m.attention_sinks, m.linear_bias,
      m.learned_positions, m.type_vocab, m.pooler, m.max_positions, m.encoder_positions, m.mel_bins,
      m.params_override, m.checkpoint_bytes, m.moe.has_value(), m.mla.has_value(),
      static_cast<int>(m.dtype), m.quant.has_value(), m.quant ? m.quant->method : std::string(),
      m.quant ? m.quant->bits : 0.0, m.quant ? m.quant->group_size : 0,
      m.quant && m.quant->zero_points, m.quant && m.quant->double_quant,
      m.quant ? m.quant->scale_bits : 0.0, m.quant && m.quant->experts_only,
      m.quant && m.quant->mlp_only, m.quant ? m.quant->dense_blocks : 0);
}

}  // namespace

std::shared_ptr<const EncoderDecoderParts> SplitEncoderDecoder(const ModelSpec& m) {
  // The planners ask for the same model's split once per candidate layout: keep the last one.
  thread_local std::optional<decltype(SplitKey(m))> last_key;
  thread_local std::string last_name;
  thread_local std::shared_ptr<const EncoderDecoderParts> last;
  auto key = SplitKey(m);
  if (last && last_key == key && last_name == m.name) return last;
  last = std::make_shared<const EncoderDecoderParts>(ComputeSplit(m));
  last_key = key;
  last_name = m.name;
  return last;
}

int EncoderInputTokens(const ModelSpec& m, int input_len) {
  if (m.is_audio_model() && m.encoder_positions > 0) return m.encoder_positions;
  return std::max(1, input_len);
}

std::string AudioWindowText(const ModelSpec& m) {
  return fmt::format("one {} s audio window ({} encoder positions)", m.encoder_positions / 50,
                     m.encoder_positions);
}

int DecoderPromptTokens(const ModelSpec& m) { return m.is_audio_model() ? 4 : 1; }

Bytes KvBytesPerToken(const ModelSpec& m, double bytes_per_element, int tp) {
  // Decoders and the decoder of encoder-decoder models (Whisper, T5: self-attention KV; the
  // cross-attention KV is per request, not per token) keep a KV cache.
  const bool has_kv = m.is_decoder_llm() || m.arch == ModelArch::kEncoderDecoder;
  if (!has_kv || m.layers <= 0 || m.heads <= 0) return Bytes(0);
  tp = std::max(1, tp);
  if (m.mla) {
    // The compressed latent and the decoupled RoPE key, identical on every TP rank.
    double per_layer = m.mla->kv_lora_rank + m.mla->qk_rope_head_dim;
    return Bytes(m.layers * per_layer * bytes_per_element);
  }
  int kv_per_rank = std::max(1, (m.kv_heads + tp - 1) / tp);
  return Bytes(2.0 * m.layers * kv_per_rank * m.head_dim * bytes_per_element);
}

namespace {
// Sliding-window layers that attend to less than the context (a window at or beyond the context
// changes nothing).
double SlidingLayersWithin(const ModelSpec& m, double context) {
  if (m.sliding_window <= 0 || m.sliding_layers <= 0 || m.layers <= 0) return 0;
  if (context <= m.sliding_window) return 0;
  return std::min(m.sliding_layers, m.layers);
}
}  // namespace

double SlidingKvShare(const ModelSpec& m, double context) {
  const double sl = SlidingLayersWithin(m, context);
  if (sl <= 0) return 1.0;
  const double full = m.layers - sl;
  return (full * context + sl * m.sliding_window) / (m.layers * context);
}

double SlidingAttentionShare(const ModelSpec& m, double tokens) {
  const double sl = SlidingLayersWithin(m, tokens);
  if (sl <= 0) return 1.0;
  const double w = m.sliding_window;
  const double kept = (tokens * w - 0.5 * w * w) / (0.5 * tokens * tokens);
  return ((m.layers - sl) + sl * kept) / m.layers;
}

Status ValidateModel(const ModelSpec& m, std::string_view field) {
  auto err = [&](std::string sub, std::string msg, std::string hint = {}) -> Status {
    if (hint.empty()) {
      hint = "set " + sub + " to the model's own value (its config.json in the model's repository)";
    }
    return MakeError(ErrorCode::kInvalidArgument, std::string(field) + "." + sub, std::move(msg),
                     std::move(hint));
  };
  // Upper bounds first (docs/reliability.md): every count below stays far inside int64 and
  // every dimension inside int, so no derived quantity can overflow.
  constexpr double kMaxParams = 1e15;  // 1,000 T parameters (largest public models: ~2 T)
  for (const auto& [name, v] : {std::pair<const char*, std::int64_t>{"hidden_size", m.hidden},
                                {"intermediate_size", m.ffn_hidden},
                                {"vocab_size", m.vocab}}) {
    if (v < 0 || v > (std::int64_t{1} << 24)) {
      return err(name, "must be in [0, 16777216], got " + std::to_string(v));
    }
  }
  for (const auto& [name, v] : {std::pair<const char*, int>{"num_hidden_layers", m.layers},
                                {"num_attention_heads", m.heads},
                                {"num_key_value_heads", m.kv_heads},
                                {"head_dim", m.head_dim},
                                {"max_position_embeddings", m.max_positions},
                                {"encoder_layers", m.encoder_layers},
                                {"max_source_positions", m.encoder_positions}}) {
    if (v < 0 || v > (1 << 24))
      return err(name, "must be in [0, 16777216], got " + std::to_string(v));
  }
  if (m.mel_bins < 0 || m.mel_bins > 4096) {
    return err("num_mel_bins", "must be in [0, 4096], got " + std::to_string(m.mel_bins));
  }
  if (m.mel_bins > 0 && m.encoder_positions <= 0) {
    return err("max_source_positions",
               "an audio encoder needs its window's positions (Whisper: 1500), got " +
                   std::to_string(m.encoder_positions));
  }
  if (m.moe && (m.moe->experts > 65536 || m.moe->expert_ffn > (std::int64_t{1} << 24) ||
                m.moe->shared_ffn > (std::int64_t{1} << 24) || m.moe->shared_experts > 65536 ||
                m.moe->shared_experts < 0 || m.moe->dense_layers < 0 || m.moe->moe_every < 1 ||
                m.moe->expert_ffn < 0 || m.moe->shared_ffn < 0)) {
    return err("num_experts", "MoE sizes out of range (experts <= 65536, expert FFN <= 16777216)");
  }
  if (m.mla &&
      (m.mla->kv_lora_rank > (1 << 20) || m.mla->q_lora_rank > (1 << 20) ||
       m.mla->qk_rope_head_dim > (1 << 20) || m.mla->qk_nope_head_dim > (1 << 20) ||
       m.mla->v_head_dim > (1 << 20) || m.mla->q_lora_rank < 0 || m.mla->qk_rope_head_dim < 0 ||
       m.mla->qk_nope_head_dim < 0 || m.mla->v_head_dim < 0)) {
    return err("kv_lora_rank", "MLA sizes out of range (each in [0, 1048576])");
  }
  {
    // Rough size in double (cannot overflow): attention, MLPs of every expert, embeddings.
    const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
    const double experts = m.moe ? std::max(1, m.moe->experts) + m.moe->shared_experts : 1;
    const double ef =
        m.moe ? std::max<double>(
                    f, static_cast<double>(std::max(m.moe->expert_ffn, m.moe->shared_ffn)))
              : f;
    const double hd = static_cast<double>(m.head_dim) * std::max(m.heads, 1);
    const double approx = (static_cast<double>(m.layers) + m.encoder_layers) *
                              (4.0 * h * std::max(h, hd) + 3.0 * h * ef * experts) +
                          2.0 * static_cast<double>(m.vocab) * h;
    if (approx > kMaxParams) {
      return err("hidden_size",
                 fmt::format("the model would have about {:.3g} parameters, more than "
                             "the limit of {:.0e}",
                             approx, kMaxParams),
                 "check the config's sizes");
    }
  }
  for (const auto& [name, v] :
       {std::pair<const char*, std::optional<std::int64_t>>{"params", m.params_override},
        {"active_params", m.active_params_override}}) {
    if (v && (*v < 0 || static_cast<double>(*v) > kMaxParams)) {
      return err(name, "must be in [0, 1e15], got " + std::to_string(*v));
    }
  }
  for (const auto& [name, v] :
       {std::pair<const char*, std::optional<double>>{"gflops_per_sample", m.gflops_per_sample},
        {"activation_melems_per_sample", m.activation_melems_per_sample},
        {"frozen_gflops_per_sample", m.frozen_gflops_per_sample},
        {"frozen_activation_melems_per_sample", m.frozen_activation_melems_per_sample}}) {
    if (v && !(*v >= 0 && *v <= 1e12)) return err(name, "must be in [0, 1e12]");
  }
  for (const auto& [name, part, whole] :
       {std::tuple<const char*, std::optional<double>, std::optional<double>>{
            "frozen_gflops_per_sample", m.frozen_gflops_per_sample, m.gflops_per_sample},
        {"frozen_activation_melems_per_sample", m.frozen_activation_melems_per_sample,
         m.activation_melems_per_sample}}) {
    if (part && (!whole || *part > *whole)) {
      return err(name,
                 fmt::format("the frozen layers' share ({:g}) must not exceed the whole "
                             "model's figure ({})",
                             *part, whole ? fmt::format("{:g}", *whole) : "not given"),
                 "give the frozen layers' figure at most the whole forward's");
    }
  }
  if (m.image_size < 0 || m.image_size > 65536 || m.patch_size < 0 || m.patch_size > 65536 ||
      m.channels < 0 || m.channels > 65536) {
    return err("image_size", "image_size, patch_size and num_channels must be in [0, 65536]");
  }
  if (!m.is_transformer() || (m.arch == ModelArch::kEncoderDecoder && m.encoder_layers <= 0)) {
    if (!m.params_override || *m.params_override <= 0) {
      return err(
          "params",
          std::string("a ") + ModelArchName(m.arch) + " model needs an exact parameter count",
          "give \"params\" (or load the .safetensors header)");
    }
    return {};
  }
  if (m.params_override && *m.params_override > 0 && m.layers <= 0) return {};
  if (m.layers <= 0)
    return err("num_hidden_layers", "must be > 0, got " + std::to_string(m.layers));
  if (m.hidden <= 0) return err("hidden_size", "must be > 0, got " + std::to_string(m.hidden));
  if (m.heads <= 0) {
    return err("num_attention_heads", "must be > 0, got " + std::to_string(m.heads));
  }
  if (!m.mla) {
    if (m.kv_heads <= 0 || m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
      return err("num_key_value_heads", "must divide num_attention_heads (" +
                                            std::to_string(m.heads) + "), got " +
                                            std::to_string(m.kv_heads));
    }
    if (m.head_dim <= 0) return err("head_dim", "must be > 0, got " + std::to_string(m.head_dim));
  }
  if (m.ffn_hidden <= 0 && !(m.moe && m.moe->dense_layers == 0 && m.moe->moe_every == 1)) {
    return err("intermediate_size", "must be > 0, got " + std::to_string(m.ffn_hidden));
  }
  if (m.is_decoder_llm() && m.vocab <= 0) {
    return err("vocab_size", "must be > 0, got " + std::to_string(m.vocab));
  }
  if (m.moe) {
    if (m.moe->experts <= 0) return err("num_experts", "must be > 0");
    if (m.moe->top_k <= 0 || m.moe->top_k > m.moe->experts) {
      return err("num_experts_per_tok",
                 "must be in 1..num_experts, got " + std::to_string(m.moe->top_k));
    }
    if (m.moe->expert_ffn <= 0) return err("moe_intermediate_size", "must be > 0");
  }
  if (m.arch == ModelArch::kVit && (m.patch_size <= 0 || m.image_size <= 0)) {
    return err("patch_size", "a ViT needs image_size and patch_size > 0");
  }
  return {};
}

}  // namespace gpuplan
