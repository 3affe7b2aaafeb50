// Model descriptions: the architecture facts every estimator needs, from a built-in preset, a
// Hugging Face config.json, or a .safetensors header. Derived quantities (parameter counts, KV
// bytes per token) are functions of the spec, never stored copies.
#pragma once

#include <cstdint>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/precision.h"
#include "gpuplan/result.h"
#include "gpuplan/units.h"

namespace gpuplan {

enum class ModelArch : std::uint8_t {
  kDense,           // decoder-only transformer
  kMoe,             // decoder-only with routed experts
  kMlaMoe,          // DeepSeek-style multi-head latent attention + MoE
  kEncoder,         // BERT-style
  kEncoderDecoder,  // T5, Whisper
  kVit,             // vision transformer
  kCnn,             // ResNet and friends (FLOPs given per sample)
  kDiffusionUnet,   // Stable Diffusion UNet (FLOPs given per sample)
};
const char* ModelArchName(ModelArch a);
std::optional<ModelArch> ParseModelArch(std::string_view s);
// The canonical names, in enum order (did-you-mean candidates).
std::vector<std::string> ModelArchNames();

enum class NormKind : std::uint8_t { kRmsNorm, kLayerNorm };

struct MoeSpec {
  int experts = 0;              // routed experts per MoE layer
  int top_k = 0;                // routed experts per token
  std::int64_t expert_ffn = 0;  // intermediate size of one routed expert
  int shared_experts = 0;       // always-on experts (DeepSeek, Qwen2-MoE style)
  std::int64_t shared_ffn = 0;  // intermediate size of one shared expert
  int dense_layers = 0;         // leading layers with a dense MLP (DeepSeek first_k_dense)
  int moe_every = 1;            // every k-th layer is MoE (Qwen decoder_sparse_step)
  bool router_bias = false;     // per-expert score correction bias (DeepSeek-V3), router bias
  bool expert_bias = false;     // each routed expert's projections carry biases (gpt-oss)
};

// A residual convolutional network as a Hugging Face ResNet config describes it (model_type
// "resnet": torchvision's ResNet v1.5, the 3x3 convolution carrying a bottleneck block's stride):
// a stem (7x7 stride-2 convolution to `stem` channels, then a 3x3 stride-2 max pool), stages of
// `depths[i]` blocks ending in `widths[i]` channels (bottleneck: 1x1, 3x3, 1x1 at a quarter of
// the width; basic: two 3x3), a projection shortcut where a block changes width or resolution,
// batch norm after every convolution, global pooling and a `classes`-way linear head.
struct ResNetSpec {
  int stem = 64;
  std::vector<int> depths, widths;
  bool bottleneck = true;
  bool downsample_first_stage = false;  // the first stage also halves the resolution
  bool stride_in_first_1x1 = false;     // a bottleneck's stride on its first 1x1 (ResNet v1)
  int classes = 1000;                   // 0: no head
};

// What a forward of one image through a ResNet does, at `side` x `side` pixels: its parameters
// (convolution weights, batch-norm scales and shifts, the head), multiply-accumulates, the output
// elements of every convolution and of the stem's max pool (the feature maps training reads and
// writes), and the largest single weight tensor (a layer-by-layer loader's unit).
struct ResNetCounts {
  std::int64_t params = 0;
  double macs = 0;
  double feature_elems = 0;
  std::int64_t largest_layer = 0;
};
ResNetCounts CountResNet(const ResNetSpec& r, int channels, int side);
// The input side a ResNet config's counts are taken at: its ImageNet checkpoints' 224 x 224
// (parameters and the largest layer do not depend on it).
inline constexpr int kResNetImageSide = 224;

struct MlaSpec {
  int kv_lora_rank = 0;
  int q_lora_rank = 0;  // 0 = no query compression
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;
  int v_head_dim = 0;
};

// Weight quantization declared by the model (config.json quantization_config) or chosen by the
// user. Bits apply to the linear layers of the transformer blocks; embeddings, norms and the
// LM head stay at 16 bits (as AWQ, GPTQ and bitsandbytes do).
struct QuantSpec {
  std::string method;  // "awq", "gptq", "bnb-nf4", "bnb-int8", "fp8", "gguf-q4_0", ...
  double bits = 16;    // bits per quantized weight
  int group_size = 0;  // 0 = per-channel
  bool zero_points = false;
  bool double_quant = false;  // bitsandbytes nested quantization of the scales
  double scale_bits = 16;     // bits per group scale (bitsandbytes absmax: fp32)
  // Only a MoE model's routed experts are quantized; attention, router, shared experts,
  // embeddings and head stay 16-bit (gpt-oss's MXFP4 checkpoints).
  bool experts_only = false;
  // Only the MLP (feed-forward) weights are quantized, and not in the first and last
  // `dense_blocks` / 2 blocks: attention, those blocks, embeddings and head stay 16-bit (Meta's
  // Llama 3.1 FP8 checkpoints, Llama 3 paper section 6.2; their config's
  // modules_to_not_convert).
  bool mlp_only = false;
  int dense_blocks = 0;
  // Bits per weight including scales (16-bit per group) and zero points.
  double EffectiveBits() const;
};

struct ModelSpec {
  std::string name;   // display name
  std::string hf_id;  // Hugging Face id when known
  // When the model's architecture became public ("YYYY-MM-DD", preset block
  // `architecture_released`; empty = long established): an engine release older than this
  // cannot load it (emit refuses such a pairing).
  std::string architecture_released;
  std::string family;  // "llama", "qwen", ...
  // config.json's top-level `model_type` ("qwen3", "gemma3"; "" for a spec built by hand): what
  // an engine dispatches its model code on (emit checks it against the pinned TGI's list).
  std::string model_type;
  std::vector<std::string> aliases;  // preset aliases ("llama-2-7b", "llama-7b")
  ModelArch arch = ModelArch::kDense;

  // Transformer shape (0 when not a transformer).
  int layers = 0;          // decoder layers (encoder layers for encoders)
  int encoder_layers = 0;  // encoder-decoder only
  // Encoder-decoder: the encoder's fixed input length where the model has one (Whisper:
  // max_source_positions, 1500 frames = 30 s of audio after its stride-2 convolution), and the
  // log-mel bins of an audio encoder's input (Whisper: num_mel_bins; 0 = text input).
  int encoder_positions = 0;
  int mel_bins = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // hidden / heads unless the config says otherwise
  std::int64_t ffn_hidden = 0;
  bool gated_mlp = false;  // SwiGLU / GeGLU: three projections
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  NormKind norm = NormKind::kRmsNorm;
  int norms_per_layer = 2;  // Gemma-2/3 use 4
  bool qk_norm = false;     // per-head q/k norms (Qwen3, Gemma-3)
  bool qkv_bias = false;
  bool o_bias = false;           // the attention output projection has a bias (attention_bias)
  bool attention_sinks = false;  // one learned sink logit per head per layer (gpt-oss)
  bool linear_bias = false;      // every linear layer has a bias (GPT-2, BERT, NeoX)
  int learned_positions = 0;     // learned absolute position embeddings (GPT-2, BERT); 0 = rotary
  int type_vocab = 0;            // BERT token-type embeddings
  bool pooler = false;           // BERT pooler
  int max_positions = 0;         // max_position_embeddings (context length)
  // Sliding-window attention: `sliding_layers` of the decoder layers attend only to the last
  // `sliding_window` positions (Gemma-2: every other layer, 4096; Gemma-3: five of six, 1024;
  // gpt-oss: every other layer, 128; Mistral-7B-v0.1: all, 4096). 0 = every layer attends to
  // the whole context. docs/model.md 4.3.
  int sliding_window = 0;
  int sliding_layers = 0;
  // Vision transformer.
  int image_size = 0, patch_size = 0, channels = 3, num_classes = 0;

  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::optional<ResNetSpec> resnet;  // CNNs read from a ResNet config (CountResNet)
  std::optional<QuantSpec> quant;
  Precision dtype = Precision::kBf16;  // the checkpoint's dtype (torch_dtype)

  // Exact counts given by a preset (for architectures without a formula here), or read from a
  // safetensors header. Override the formula when set.
  std::optional<std::int64_t> params_override;
  std::optional<std::int64_t> active_params_override;
  // Published counts (model card), for reference and tests; never used in arithmetic.
  std::optional<std::int64_t> official_params;
  std::optional<std::int64_t> official_active_params;
  // Non-transformers: forward FLOPs per sample (FLOPs, not MACs), and what a sample is.
  std::optional<double> gflops_per_sample;
  // Non-transformers: forward feature-map elements per sample, millions (the outputs of every
  // convolution at the stated resolution). Training reads and writes them in its element-wise
  // passes (batch norm, ReLU, residual adds) at memory bandwidth.
  std::optional<double> activation_melems_per_sample;
  // Non-transformers trained from a pretrained backbone: the forward FLOPs and feature-map
  // elements per sample of the leading layers that stay frozen (they run forward only: no
  // gradients, nothing kept for a backward), and whether the normalisation layers are frozen
  // (fixed statistics folded into the convolution before them, as torchvision's detection
  // models do with FrozenBatchNorm2d), which leaves training no batch-statistics passes.
  std::optional<double> frozen_gflops_per_sample;
  std::optional<double> frozen_activation_melems_per_sample;
  bool frozen_norm = false;
  std::string sample;
  // Bytes per dtype from a safetensors header (exact on-disk weight bytes), when known.
  std::optional<std::int64_t> checkpoint_bytes;
  std::string source;

  // The frozen layers' forward FLOPs and feature-map elements per sample, at most the whole
  // forward's (0 when none are frozen).
  double FrozenGflops() const {
    return std::min(frozen_gflops_per_sample.value_or(0), gflops_per_sample.value_or(0));
  }
  double FrozenMelems() const {
    return std::min(frozen_activation_melems_per_sample.value_or(0),
                    activation_melems_per_sample.value_or(0));
  }
  bool is_transformer() const {
    return arch != ModelArch::kCnn && arch != ModelArch::kDiffusionUnet;
  }
  bool is_decoder_llm() const {
    return arch == ModelArch::kDense || arch == ModelArch::kMoe || arch == ModelArch::kMlaMoe;
  }
  // Generates tokens one by one after a prompt: decoder LLMs and encoder-decoder models
  // (Whisper, T5), whose decoder does so after one encoder forward per request.
  bool generates_tokens() const { return is_decoder_llm() || arch == ModelArch::kEncoderDecoder; }
  // An audio encoder-decoder (Whisper): a request is one fixed window of audio, not tokens.
  bool is_audio_model() const { return arch == ModelArch::kEncoderDecoder && mel_bins > 0; }
  // Trains on images (ViT, CNN, diffusion UNet): samples, not tokens, are the unit of work.
  bool is_image_model() const {
    return arch == ModelArch::kVit || arch == ModelArch::kCnn || arch == ModelArch::kDiffusionUnet;
  }
  // Tokens a ViT processes per image: (image / patch)^2 patches plus the class token (224/16:
  // 14 x 14 + 1 = 197); 0 for other models or a ViT without its sizes.
  int ImageTokens() const {
    if (arch != ModelArch::kVit || image_size <= 0 || patch_size <= 0) return 0;
    const int side = image_size / patch_size;
    return side * side + 1;
  }
};

// Parameter counts derived from the architecture.
struct ParamCounts {
  std::int64_t total = 0;          // every weight (MoE: all experts)
  std::int64_t active = 0;         // used per token (MoE: top-k + shared experts)
  std::int64_t embedding = 0;      // input embeddings (+ position/type embeddings)
  std::int64_t lm_head = 0;        // untied output projection (0 when tied)
  std::int64_t per_layer = 0;      // one transformer block (MoE: average over layers)
  std::int64_t linear = 0;         // weights of the linear layers in the blocks (quantizable)
  std::int64_t largest_layer = 0;  // the largest single module (embedding or block)
  bool exact = true;               // false when given, not derived
};

// Is layer i (0-based) a MoE layer: after the leading dense layers, every moe_every-th.
bool IsMoeLayer(const ModelSpec& m, int i);
// How many of its layers are MoE layers (IsMoeLayer over all layers, in closed form: a
// config may declare millions of layers).
int MoeLayerCount(const ModelSpec& m);

// Routed-expert parameters of the whole model (gate, up and down of every expert of every MoE
// layer); 0 for dense models.
double RoutedExpertParams(const ModelSpec& m);

// Counts parameters from the architecture (or returns the override). Published formulas: see
// docs/model.md ("Parameter count").
ParamCounts CountParams(const ModelSpec& m);

// An encoder-decoder model as its two stacks (docs/model.md 10.7): the encoder as an encoder
// model (its layers, the audio front end's convolutions and positions counted in its
// parameters) and the decoder as a decoder LLM whose layers carry the cross-attention
// projections (its parameters: the model's total minus the encoder's), plus the request's
// shape: the encoder's input positions for `input_len` (Whisper: its fixed 1500 frames) and
// the decoder's prompt (Whisper's 4 start tokens: start-of-transcript, language, task,
// no-timestamps; T5's one decoder start token).
struct EncoderDecoderParts {
  ModelSpec encoder, decoder;
  std::int64_t frontend_params = 0;  // the audio encoder's two convolutions
  double frontend_flops_per_request = 0;
  // The whole model's counts derived from its shape (CountParams' breakdown for it); zero
  // when the shape does not give them (no encoder depth).
  ParamCounts derived;
};
// Shared and cached (the last split per thread, keyed by every field it reads): the planners
// ask for the same model's split once per candidate layout.
std::shared_ptr<const EncoderDecoderParts> SplitEncoderDecoder(const ModelSpec& m);
int EncoderInputTokens(const ModelSpec& m, int input_len);
int DecoderPromptTokens(const ModelSpec& m);
// An audio model's request as text: "one 30 s audio window (1500 encoder positions)" (Whisper's
// positions are 20 ms of audio after its stride-2 convolution).
std::string AudioWindowText(const ModelSpec& m);

// KV-cache bytes for one token over all layers, at `bytes_per_element`, on one GPU of a
// tensor-parallel group of `tp` (each rank holds at least one KV head). MLA caches the
// compressed latent (kv_lora_rank + rope dim) per layer, replicated on every rank.
Bytes KvBytesPerToken(const ModelSpec& m, double bytes_per_element, int tp = 1);
// The share of KvBytesPerToken a sequence of `context` tokens holds per token when the engine
// keeps only the window of its sliding-window layers: (full layers x context + sliding layers x
// min(context, window)) / (layers x context). 1 for a model without sliding-window layers.
double SlidingKvShare(const ModelSpec& m, double context);
// The share of causal attention work (score blocks) a prompt of `tokens` keeps when its
// sliding-window layers attend only to their window: a sliding layer computes
// tokens x window - window^2 / 2 of the tokens^2 / 2 score blocks once the prompt exceeds it.
double SlidingAttentionShare(const ModelSpec& m, double tokens);

// Validates a spec (positive sizes, heads divide hidden, kv_heads divide heads, ...).
// `field` prefixes error fields (e.g. "config.json").
Status ValidateModel(const ModelSpec& m, std::string_view field);

// Parses a Hugging Face config.json (nested text_config, explicit head_dim, tied embeddings,
// GQA, MoE and MLA fields, quantization_config, torch_dtype/dtype). `label` names the file.
Result<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view label);

// Reads the JSON header of a .safetensors file (the first 8 bytes + header only; never the
// weights) and returns the exact parameter count and bytes per dtype.
struct SafetensorsSummary {
  std::int64_t params = 0;
  std::int64_t bytes = 0;
  std::vector<std::pair<std::string, std::int64_t>> params_by_dtype;  // sorted by dtype
  int tensors = 0;
};
Result<SafetensorsSummary> ParseSafetensorsHeader(std::string_view header_json,
                                                  std::string_view label);
// Reads a .safetensors file's header from disk, or a model.safetensors.index.json (whose
// total_size gives bytes; params are summed from the shards' headers when they sit beside it).
Result<SafetensorsSummary> ReadSafetensors(const std::string& path);

// The built-in preset library (data/models/*.json).
const std::vector<ModelSpec>& Presets();
// Finds a preset by name, Hugging Face id or alias, case-insensitively.
const ModelSpec* FindPreset(std::string_view name);

// Resolves what a user passed as --model: a preset name/alias/HF id, a path to config.json,
// a path to a .safetensors file or model.safetensors.index.json (a config.json beside it gives
// the architecture). Unknown names get a did-you-mean. `field` names the flag.
Result<ModelSpec> ResolveModel(std::string_view arg, std::string_view field);

}  // namespace gpuplan
