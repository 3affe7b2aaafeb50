// Hugging Face config.json -> ModelSpec. Field names follow transformers' configuration classes;
// the family defaults (tied embeddings, gated MLP, norms, biases) follow their modeling code.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <string>

#include "gpuplan/model.h"
#include "io/csv.h"
#include "gpuplan/quant_preset.h"
#include "io/json_fields.h"
#include "io/json_util.h"

namespace gpuplan {

using internal::GetBool;
namespace {
// Every integer of a config.json fits an int (model dimensions); larger values are rejected
// here so that no narrowing cast below can wrap.
Result<std::optional<std::int64_t>> GetInt(const internal::Json& j, std::string_view key,
                                           std::string_view path) {
  auto v = internal::GetInt(j, key, path);
  if (!v) return v.error();
  if (*v && (**v > 2147483647LL || **v < -2147483647LL)) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(path) + "." + std::string(key),
                     "must be at most 2147483647 in magnitude, got " + std::to_string(**v));
  }
  return v;
}
}  // namespace
using internal::GetNumber;
using internal::GetString;
using internal::Json;

namespace {

// A Hugging Face ResNet config's network (ResNetConfig: embedding_size, hidden_sizes, depths,
// layer_type, downsample_in_first_stage, downsample_in_bottleneck; the head from num_labels or
// id2label, else transformers' default of 2 labels).
Result<std::optional<ResNetSpec>> ParseResNet(const Json& c, const std::string& path) {
  // Without its stage lists the config describes no network (a preset's gpuplan block then
  // gives the counts itself).
  if (internal::FindMember(c, "depths") == nullptr &&
      internal::FindMember(c, "hidden_sizes") == nullptr) {
    return std::optional<ResNetSpec>();
  }
  ResNetSpec r;
  std::optional<int> n;
  GPUPLAN_ASSIGN_OR_RETURN(n, internal::GetIntIn(c, "embedding_size", path, 1, 65536));
  r.stem = n.value_or(64);
  auto ints = [&](const char* key, int lo, int hi, std::vector<int>& out) -> Status {
    const Json* a = nullptr;
    GPUPLAN_ASSIGN_OR_RETURN(a, internal::GetArray(c, key, path));
    if (a == nullptr) {
      return MakeError(ErrorCode::kParse, internal::JsonFieldPath(path, key),
                       "missing field: a ResNet config lists both its stages' depths and widths",
                       "give one entry per stage, as transformers' ResNetConfig writes it");
    }
    if (a->empty() || a->size() > 16) {
      return MakeError(ErrorCode::kParse, internal::JsonFieldPath(path, key),
                       fmt::format("must list 1 to 16 stages, got {}", a->size()));
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      const Json& x = (*a)[i];
      const std::string where = internal::JsonFieldPath(path, key) + "[" + std::to_string(i) + "]";
      if (!x.is_number_integer() || x.get<std::int64_t>() < lo || x.get<std::int64_t>() > hi) {
        return MakeError(
            ErrorCode::kParse, where,
            fmt::format("must be a whole number in [{}, {}], got {}", lo, hi, x.dump()));
      }
      out.push_back(x.get<int>());
    }
    return {};
  };
  if (auto st = ints("depths", 1, 1024, r.depths); !st) return st.error();
  if (auto st = ints("hidden_sizes", 1, 65536, r.widths); !st) return st.error();
  if (r.depths.size() != r.widths.size()) {
    return MakeError(
        ErrorCode::kParse, internal::JsonFieldPath(path, "hidden_sizes"),
        fmt::format("lists {} stages but depths lists {}", r.widths.size(), r.depths.size()),
        "give one width per stage");
  }
  std::optional<std::string> type;
  GPUPLAN_ASSIGN_OR_RETURN(type, GetString(c, "layer_type", path));
  const std::string t = type.value_or("bottleneck");
  if (t != "bottleneck" && t != "basic") {
    return MakeError(ErrorCode::kParse, internal::JsonFieldPath(path, "layer_type"),
                     "unknown ResNet block \"" + t + "\"", "use \"bottleneck\" or \"basic\"");
  }
  r.bottleneck = t == "bottleneck";
  if (r.bottleneck) {
    for (std::size_t i = 0; i < r.widths.size(); ++i) {
      if (r.widths[i] < 4) {
        return MakeError(
            ErrorCode::kParse,
            internal::JsonFieldPath(path, "hidden_sizes") + "[" + std::to_string(i) + "]",
            fmt::format("a bottleneck stage needs at least 4 channels (its 3x3 "
                        "convolution runs at a quarter of them), got {}",
                        r.widths[i]));
      }
    }
  }
  std::optional<bool> first;
  GPUPLAN_ASSIGN_OR_RETURN(first, GetBool(c, "downsample_in_first_stage", path));
  r.downsample_first_stage = first.value_or(false);
  GPUPLAN_ASSIGN_OR_RETURN(first, GetBool(c, "downsample_in_bottleneck", path));
  r.stride_in_first_1x1 = first.value_or(false);
  GPUPLAN_ASSIGN_OR_RETURN(n, internal::GetIntIn(c, "num_labels", path, 0, 1000000));
  if (!n) {
    const Json* labels = nullptr;
    GPUPLAN_ASSIGN_OR_RETURN(labels, internal::GetObject(c, "id2label", path));
    if (labels != nullptr) n = static_cast<int>(std::min<std::size_t>(labels->size(), 1000000));
  }
  r.classes = n.value_or(2);
  return std::optional<ResNetSpec>(r);
}

bool In(const std::string& t, std::initializer_list<const char*> set) {
  for (const char* s : set) {
    if (t == s) return true;
  }
  return false;
}

// The context a serving engine derives from config.json (vLLM's _get_and_verify_max_len; TGI
// and SGLang follow it): RoPE scaling of a type other than "llama3", "longrope"/"su" (whose
// max_position_embeddings is already the scaled length) multiplies it by `factor`, from
// `original_max_position_embeddings` for YaRN; Gemma 3's 128K is already scaled. Reads
// `rope_scaling`, or Transformers v5's `rope_parameters`.
Result<int> RopeScaledContext(const Json& c, const std::string& model_type, int max_positions,
                              const std::string& path) {
  const Json* rope = internal::FindMember(c, "rope_scaling");
  std::string key = "rope_scaling";
  if (rope == nullptr) {
    rope = internal::FindMember(c, "rope_parameters");
    key = "rope_parameters";
  }
  if (rope == nullptr || !rope->is_object() || max_positions <= 0 ||
      model_type.find("gemma3") != std::string::npos) {
    return max_positions;
  }
  const std::string rp = internal::JsonFieldPath(path, key);
  std::optional<std::string> type;
  GPUPLAN_ASSIGN_OR_RETURN(type, GetString(*rope, "rope_type", rp));
  if (!type) GPUPLAN_ASSIGN_OR_RETURN(type, GetString(*rope, "type", rp));
  const std::string t = internal::ToLower(type.value_or("default"));
  if (t == "llama3" || t == "longrope" || t == "su") return max_positions;
  std::optional<double> factor;
  GPUPLAN_ASSIGN_OR_RETURN(factor, internal::GetNumberIn(*rope, "factor", rp, 1e-3, 1e3));
  double base = max_positions;
  if (t == "yarn") {
    std::optional<std::int64_t> orig;
    GPUPLAN_ASSIGN_OR_RETURN(orig, GetInt(*rope, "original_max_position_embeddings", rp));
    if (orig && *orig > 0) base = static_cast<double>(*orig);
  }
  const double scaled = std::floor(base * factor.value_or(1.0));
  if (!(scaled >= 1 && scaled <= 2147483647.0)) {
    return MakeError(ErrorCode::kInvalidArgument, rp + ".factor",
                     fmt::format("gives a context of {:.0f} tokens, out of range", scaled),
                     "check rope_scaling.factor and original_max_position_embeddings");
  }
  return static_cast<int>(scaled);
}

// First present integer among `keys`.
Result<std::optional<std::int64_t>> FirstInt(const Json& j, std::initializer_list<const char*> keys,
                                             std::string_view path) {
  for (const char* k : keys) {
    auto v = GetInt(j, k, path);
    if (!v) return v.error();
    if (*v) return *v;
    (void)k;
  }
  return std::optional<std::int64_t>();
}

Result<std::optional<QuantSpec>> ParseQuant(const Json& root, std::string_view label) {
  auto it = root.find("quantization_config");
  if (it == root.end() || it->is_null()) return std::optional<QuantSpec>();
  const Json& q = *it;
  std::string path = std::string(label) + ".quantization_config";
  if (!q.is_object()) {
    return MakeError(ErrorCode::kParse, path,
                     "expected an object, got " + internal::JsonTypeName(q));
  }
  std::optional<std::string> method;
  GPUPLAN_ASSIGN_OR_RETURN(method, GetString(q, "quant_method", path));
  QuantSpec s;
  s.method = internal::ToLower(method.value_or(""));
  std::optional<std::int64_t> bits, group;
  // Fields the config leaves out take the preset's values (gpuplan/quant_preset.h).
  if (s.method == "awq") {
    const QuantPreset& d = GetQuantPreset(QuantPresetId::kAwq);
    s = d.Spec();
    GPUPLAN_ASSIGN_OR_RETURN(bits, FirstInt(q, {"bits", "w_bit"}, path));
    GPUPLAN_ASSIGN_OR_RETURN(group, FirstInt(q, {"group_size", "q_group_size"}, path));
    std::optional<bool> zp;
    GPUPLAN_ASSIGN_OR_RETURN(zp, GetBool(q, "zero_point", path));
    if (bits) s.bits = static_cast<double>(*bits);
    if (group) s.group_size = static_cast<int>(*group);
    s.zero_points = zp.value_or(d.zero_points);
  } else if (s.method == "gptq") {
    s = GetQuantPreset(QuantPresetId::kGptq).Spec();  // packed qzeros even when sym
    GPUPLAN_ASSIGN_OR_RETURN(bits, GetInt(q, "bits", path));
    GPUPLAN_ASSIGN_OR_RETURN(group, GetInt(q, "group_size", path));
    std::optional<bool> sym;
    GPUPLAN_ASSIGN_OR_RETURN(sym, GetBool(q, "sym", path));
    if (bits) s.bits = static_cast<double>(*bits);
    if (group) s.group_size = static_cast<int>(*group > 0 ? *group : 0);  // -1: per channel
    (void)sym;
  } else if (s.method == "bitsandbytes") {
    std::optional<bool> in4, in8, dq;
    GPUPLAN_ASSIGN_OR_RETURN(in4, GetBool(q, "load_in_4bit", path));
    GPUPLAN_ASSIGN_OR_RETURN(in8, GetBool(q, "load_in_8bit", path));
    GPUPLAN_ASSIGN_OR_RETURN(dq, GetBool(q, "bnb_4bit_use_double_quant", path));
    if (in4.value_or(false)) {
      s = GetQuantPreset(QuantPresetId::kBnbNf4).Spec();
      s.double_quant = dq.value_or(false);
    } else if (in8.value_or(false)) {
      s = GetQuantPreset(QuantPresetId::kBnbInt8).Spec();
    } else {
      return MakeError(ErrorCode::kUnsupported, path,
                       "bitsandbytes config without load_in_4bit or load_in_8bit");
    }
  } else if (s.method == "fp8") {
    s = GetQuantPreset(QuantPresetId::kFp8).Spec();
  } else if (s.method == "fbgemm_fp8") {
    // Row-wise FP8 linear layers except modules_to_not_convert. Meta's Llama 3.1 FP8 lists every
    // attention projection, the first and last blocks' MLPs and the head (Llama 3 paper 6.2).
    s = GetQuantPreset(QuantPresetId::kFp8).Spec();
    s.method = "fbgemm_fp8";
    auto skip = q.find("modules_to_not_convert");
    if (skip != q.end() && !skip->is_null()) {
      if (!skip->is_array()) {
        return MakeError(ErrorCode::kParse, path + ".modules_to_not_convert",
                         "expected a list of module names, got " + internal::JsonTypeName(*skip));
      }
      std::set<std::string> dense_mlp_blocks;
      for (const Json& name : *skip) {
        if (!name.is_string()) continue;
        const std::string n = name.get<std::string>();
        if (n.find("self_attn") != std::string::npos) s.mlp_only = true;
        // "model.layers.<i>.mlp.<proj>": block i keeps its feed-forward layers 16-bit.
        const auto at = n.find("layers.");
        const auto mlp = n.find(".mlp");
        if (at != std::string::npos && mlp != std::string::npos && mlp > at + 7) {
          dense_mlp_blocks.insert(n.substr(at + 7, mlp - at - 7));
        }
      }
      if (s.mlp_only) s.dense_blocks = static_cast<int>(dense_mlp_blocks.size());
    }
  } else if (s.method == "mxfp4") {
    // gpt-oss: the MoE experts in MXFP4, what modules_to_not_convert lists (attention, router,
    // embeddings, LM head) in bf16.
    s = GetQuantPreset(QuantPresetId::kMxfp4).Spec();
  } else if (s.method == "compressed-tensors") {
    // config_groups.<g>.weights.num_bits / group_size
    s.bits = 8;
    const Json* g = nullptr;
    GPUPLAN_ASSIGN_OR_RETURN(g, internal::GetObject(q, "config_groups", path));
    if (g != nullptr && !g->empty()) {
      const Json* w = nullptr;
      GPUPLAN_ASSIGN_OR_RETURN(w, internal::GetObject(g->begin().value(), "weights",
                                                      path + ".config_groups." + g->begin().key()));
      if (w != nullptr) {
        GPUPLAN_ASSIGN_OR_RETURN(bits, GetInt(*w, "num_bits", path + ".config_groups.weights"));
        GPUPLAN_ASSIGN_OR_RETURN(group, GetInt(*w, "group_size", path + ".config_groups.weights"));
        s.bits = static_cast<double>(bits.value_or(8));
        s.group_size = static_cast<int>(group.value_or(0));
      }
    }
  } else {
    return MakeError(ErrorCode::kUnsupported, path + ".quant_method",
                     "unknown quantization method \"" + s.method + "\"",
                     "supported: awq, gptq, bitsandbytes, fp8, mxfp4, compressed-tensors");
  }
  if (s.bits <= 0 || s.bits > 16) {
    return MakeError(ErrorCode::kParse, path + ".bits",
                     "must be in 1..16, got " + std::to_string(s.bits));
  }
  return std::optional<QuantSpec>(s);
}

// Sliding-window attention (docs/model.md 4.3): the window and how many decoder layers use it.
// `layer_types` (transformers >= 4.53: gpt-oss, newer Gemma configs) lists each layer's kind;
// without it the family's fixed pattern applies: Gemma-2 alternates (even layers slide),
// Gemma-3 keeps one global layer in `sliding_window_pattern` (6), Mistral-7B-v0.1-style configs
// slide on every layer. Qwen2's `use_sliding_window: false` and other families' unused
// `sliding_window` keys (Phi-3 declares 2047 for a 4K context) leave every layer global.
Result<ModelSpec> ReadSlidingWindow(const Json& c, const std::string& model_type,
                                    const std::string& path, ModelSpec m) {
  std::optional<int> w;
  GPUPLAN_ASSIGN_OR_RETURN(w, internal::GetIntIn(c, "sliding_window", path, 0, 1 << 24));
  std::optional<bool> use;
  GPUPLAN_ASSIGN_OR_RETURN(use, GetBool(c, "use_sliding_window", path));
  if (!w || *w <= 0 || !use.value_or(true) || m.layers <= 0) return m;
  const Json* types = nullptr;
  GPUPLAN_ASSIGN_OR_RETURN(types, internal::GetArray(c, "layer_types", path));
  int sliding = 0;
  if (types != nullptr) {
    for (const Json& t : *types) {
      if (t.is_string() && t.get<std::string>() == "sliding_attention") ++sliding;
    }
  } else if (model_type == "gemma2") {
    sliding = (m.layers + 1) / 2;
  } else if (model_type == "gemma3" || model_type == "gemma3_text") {
    std::optional<int> pattern;
    GPUPLAN_ASSIGN_OR_RETURN(pattern,
                             internal::GetIntIn(c, "sliding_window_pattern", path, 1, 1 << 16));
    sliding = m.layers - m.layers / pattern.value_or(6);
  } else if (model_type == "mistral" || model_type == "mixtral") {
    sliding = m.layers;
  }
  m.sliding_window = *w;
  m.sliding_layers = std::clamp(sliding, 0, m.layers);
  if (m.sliding_layers == 0) m.sliding_window = 0;
  return m;
}

}  // namespace

Result<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view label) {
  auto parsed = internal::ParseJson(json_text, label);
  if (!parsed) return parsed.error();
  const Json& root = *parsed;
  if (!root.is_object()) {
    return MakeError(ErrorCode::kParse, std::string(label), "expected a JSON object");
  }
  const std::string L(label);
  ModelSpec m;

  // gpuplan's own annotations (presets).
  const Json* gp = nullptr;
  GPUPLAN_ASSIGN_OR_RETURN(gp, internal::GetObject(root, "gpuplan", L));
  std::optional<std::string> s;
  std::optional<std::int64_t> n;
  if (gp) {
    std::string gpath = L + ".gpuplan";
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "name", gpath));
    m.name = s.value_or("");
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "hf_id", gpath));
    m.hf_id = s.value_or("");
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "family", gpath));
    m.family = s.value_or("");
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "architecture_released", gpath));
    m.architecture_released = s.value_or("");
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "source", gpath));
    m.source = s.value_or("");
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "sample", gpath));
    m.sample = s.value_or("");
    const Json* aliases = nullptr;
    GPUPLAN_ASSIGN_OR_RETURN(aliases, internal::GetArray(*gp, "aliases", gpath));
    if (aliases != nullptr) {
      for (std::size_t i = 0; i < aliases->size(); ++i) {
        const Json& x = (*aliases)[i];
        if (!x.is_string()) {
          return MakeError(ErrorCode::kParse, gpath + ".aliases[" + std::to_string(i) + "]",
                           "expected a string, got " + internal::JsonTypeName(x));
        }
        m.aliases.push_back(x.get<std::string>());
      }
    }
    GPUPLAN_ASSIGN_OR_RETURN(n, internal::GetInt(*gp, "params", gpath));
    if (n) m.params_override = *n;
    GPUPLAN_ASSIGN_OR_RETURN(n, internal::GetInt(*gp, "active_params", gpath));
    if (n) m.active_params_override = *n;
    GPUPLAN_ASSIGN_OR_RETURN(n, internal::GetInt(*gp, "official_params", gpath));
    m.official_params = n;
    GPUPLAN_ASSIGN_OR_RETURN(n, internal::GetInt(*gp, "official_active_params", gpath));
    m.official_active_params = n;
    std::optional<double> g;
    GPUPLAN_ASSIGN_OR_RETURN(g, GetNumber(*gp, "gflops_per_sample", gpath));
    m.gflops_per_sample = g;
    GPUPLAN_ASSIGN_OR_RETURN(g, GetNumber(*gp, "activation_melems_per_sample", gpath));
    m.activation_melems_per_sample = g;
    GPUPLAN_ASSIGN_OR_RETURN(g, GetNumber(*gp, "frozen_gflops_per_sample", gpath));
    m.frozen_gflops_per_sample = g;
    GPUPLAN_ASSIGN_OR_RETURN(g, GetNumber(*gp, "frozen_activation_melems_per_sample", gpath));
    m.frozen_activation_melems_per_sample = g;
    std::optional<bool> fb;
    GPUPLAN_ASSIGN_OR_RETURN(fb, GetBool(*gp, "frozen_norm", gpath));
    m.frozen_norm = fb.value_or(false);
  }

  std::string model_type;
  GPUPLAN_ASSIGN_OR_RETURN(s, GetString(root, "model_type", L));
  model_type = internal::ToLower(s.value_or(""));
  m.model_type = model_type;

  // Multimodal wrappers keep the language model under text_config.
  const Json* cfg = &root;
  std::string path = L;
  const Json* text_config = nullptr;
  GPUPLAN_ASSIGN_OR_RETURN(text_config, internal::GetObject(root, "text_config", L));
  if (const Json* it = text_config) {
    bool top_has_llm = root.contains("num_hidden_layers") && root.contains("hidden_size");
    if (!top_has_llm || it->contains("num_hidden_layers")) {
      cfg = &*it;
      path = L + ".text_config";
      GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*cfg, "model_type", path));
      if (s) model_type = internal::ToLower(*s);
    }
  }
  const Json& c = *cfg;

  if (m.name.empty()) {
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(root, "_name_or_path", L));
    m.name = s.value_or(model_type.empty() ? std::string("custom model") : model_type);
  }
  if (m.family.empty()) m.family = model_type;

  // Dtype: transformers writes torch_dtype (older) or dtype (newer).
  GPUPLAN_ASSIGN_OR_RETURN(s, GetString(root, "torch_dtype", L));
  if (!s) GPUPLAN_ASSIGN_OR_RETURN(s, GetString(root, "dtype", L));
  if (!s) GPUPLAN_ASSIGN_OR_RETURN(s, GetString(c, "torch_dtype", path));
  if (s) {
    auto p = ParsePrecision(*s);
    if (p) m.dtype = *p;
  }

  std::int64_t v = 0;
  std::optional<std::int64_t> o;
  GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c, {"hidden_size", "n_embd", "d_model", "dim"}, path));
  m.hidden = o.value_or(0);
  GPUPLAN_ASSIGN_OR_RETURN(
      o, FirstInt(c, {"num_hidden_layers", "n_layer", "num_layers", "decoder_layers", "n_layers"},
                  path));
  m.layers = static_cast<int>(o.value_or(0));
  GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c, {"encoder_layers", "num_encoder_layers"}, path));
  m.encoder_layers = static_cast<int>(o.value_or(0));
  GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c,
                                       {"num_attention_heads", "n_head", "num_heads",
                                        "encoder_attention_heads", "n_heads"},
                                       path));
  m.heads = static_cast<int>(o.value_or(0));
  GPUPLAN_ASSIGN_OR_RETURN(
      o, FirstInt(c, {"num_key_value_heads", "num_kv_heads", "n_kv_heads"}, path));
  std::optional<bool> mq;
  GPUPLAN_ASSIGN_OR_RETURN(mq, GetBool(c, "multi_query", path));
  m.kv_heads = static_cast<int>(o.value_or(mq.value_or(false) ? 1 : m.heads));
  GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "head_dim", path));
  m.head_dim = static_cast<int>(o.value_or(m.heads > 0 ? m.hidden / m.heads : 0));
  GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c,
                                       {"intermediate_size", "n_inner", "ffn_dim", "d_ff",
                                        "encoder_ffn_dim", "ffn_hidden_size"},
                                       path));
  m.ffn_hidden = o.value_or(m.hidden * 4);
  GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c, {"vocab_size", "padded_vocab_size"}, path));
  m.vocab = o.value_or(0);
  GPUPLAN_ASSIGN_OR_RETURN(
      o,
      FirstInt(c, {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"}, path));
  m.max_positions = static_cast<int>(o.value_or(0));
  GPUPLAN_ASSIGN_OR_RETURN(m.max_positions,
                           RopeScaledContext(c, model_type, m.max_positions, path));

  // Family conventions.
  const bool layer_norm_family =
      In(model_type, {"gpt2", "gpt_neox", "bert", "roberta", "vit", "gpt_bigcode", "opt", "whisper",
                      "t5", "falcon", "phi", "gptj", "distilbert", "deberta-v2"});
  m.norm = layer_norm_family ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  m.linear_bias = In(model_type, {"gpt2", "gpt_neox", "bert", "roberta", "vit", "gpt_bigcode",
                                  "opt", "phi", "distilbert", "whisper"});
  m.gated_mlp = !layer_norm_family;
  if (In(model_type, {"qwen2", "qwen2_moe", "qwen2_vl"})) m.qkv_bias = true;
  std::optional<bool> b;
  GPUPLAN_ASSIGN_OR_RETURN(b, GetBool(c, "attention_bias", path));
  // attention_bias: Transformers' q, k, v and o projections all take it (LlamaAttention,
  // GptOssAttention).
  if (b.value_or(false)) m.qkv_bias = m.o_bias = true;
  // gpt-oss: a learned sink logit per head in every layer (GptOssAttention.sinks).
  if (model_type == "gpt_oss") m.attention_sinks = true;
  if (In(model_type, {"qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2"})) m.qk_norm = true;
  if (In(model_type, {"gemma2", "gemma3", "gemma3_text"})) m.norms_per_layer = 4;
  if (model_type == "gpt2" || model_type == "gpt_bigcode") {
    m.learned_positions = m.max_positions;
  }
  GPUPLAN_ASSIGN_OR_RETURN(m, ReadSlidingWindow(c, model_type, path, std::move(m)));
  if (In(model_type, {"bert", "roberta", "distilbert"})) {
    m.learned_positions = m.max_positions;
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "type_vocab_size", path));
    m.type_vocab = static_cast<int>(o.value_or(model_type == "distilbert" ? 0 : 2));
    m.pooler = model_type != "distilbert";
    m.arch = ModelArch::kEncoder;
  }
  if (model_type == "vit") {
    m.arch = ModelArch::kVit;
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "image_size", path));
    m.image_size = static_cast<int>(o.value_or(224));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "patch_size", path));
    m.patch_size = static_cast<int>(o.value_or(16));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "num_channels", path));
    m.channels = static_cast<int>(o.value_or(3));
  }
  if (In(model_type, {"t5", "whisper", "bart", "mt5", "mbart", "marian", "pegasus"})) {
    // Two stacks: `layers` is the decoder's (it generates), `encoder_layers` the encoder's. T5
    // names its encoder depth num_layers and the decoder's num_decoder_layers (defaulting to
    // it); BART and Whisper say encoder_layers / decoder_layers (their num_hidden_layers is
    // the encoder's).
    m.arch = ModelArch::kEncoderDecoder;
    GPUPLAN_ASSIGN_OR_RETURN(
        o, FirstInt(c, {"encoder_layers", "num_encoder_layers", "num_layers"}, path));
    if (o) m.encoder_layers = static_cast<int>(*o);
    GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c, {"decoder_layers", "num_decoder_layers"}, path));
    m.layers = static_cast<int>(o.value_or(m.encoder_layers > 0 ? m.encoder_layers : m.layers));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "d_kv", path));  // T5's per-head width
    if (o && *o > 0) m.head_dim = static_cast<int>(*o);
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "decoder_ffn_dim", path));
    if (o && *o > 0) m.ffn_hidden = *o;
    // T5 v1.1 / Flan-T5: "gated-gelu" feed-forward (three projections).
    std::optional<std::string> ffp;
    GPUPLAN_ASSIGN_OR_RETURN(ffp, GetString(c, "feed_forward_proj", path));
    if (ffp && ffp->rfind("gated", 0) == 0) m.gated_mlp = true;
    // Whisper: a fixed 30 s window of log-mel frames (max_source_positions after the stride-2
    // convolution); its decoder's context is max_target_positions.
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "max_source_positions", path));
    m.encoder_positions = static_cast<int>(o.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "num_mel_bins", path));
    m.mel_bins = static_cast<int>(o.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "max_target_positions", path));
    if (o && *o > 0) m.max_positions = static_cast<int>(*o);
  }
  if (model_type == "resnet") {
    auto r = ParseResNet(c, path);
    if (!r) return r.error();
    m.resnet = *r;
    m.arch = ModelArch::kCnn;
    std::optional<int> ch;
    GPUPLAN_ASSIGN_OR_RETURN(ch, internal::GetIntIn(c, "num_channels", path, 1, 65536));
    m.channels = ch.value_or(3);
  }

  // Tied embeddings: the key wins; otherwise the family's default.
  GPUPLAN_ASSIGN_OR_RETURN(b, GetBool(root, "tie_word_embeddings", L));
  if (!b && cfg != &root) GPUPLAN_ASSIGN_OR_RETURN(b, GetBool(c, "tie_word_embeddings", path));
  const bool tied_default = In(model_type, {"gpt2", "gemma", "gemma2", "gemma3", "gemma3_text",
                                            "bert", "t5", "whisper", "gpt_bigcode", "opt"});
  m.tied_embeddings = b.value_or(tied_default);

  // MoE.
  std::optional<std::int64_t> experts;
  GPUPLAN_ASSIGN_OR_RETURN(
      experts,
      FirstInt(c, {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"},
               path));
  if (experts && *experts > 1) {
    MoeSpec e;
    e.experts = static_cast<int>(*experts);
    GPUPLAN_ASSIGN_OR_RETURN(o, FirstInt(c, {"num_experts_per_tok", "moe_top_k", "top_k"}, path));
    e.top_k = static_cast<int>(o.value_or(2));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "moe_intermediate_size", path));
    e.expert_ffn = o.value_or(m.ffn_hidden);
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "n_shared_experts", path));
    e.shared_experts = static_cast<int>(o.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "shared_expert_intermediate_size", path));
    if (o && *o > 0) {
      e.shared_experts = std::max(e.shared_experts, 1);
      e.shared_ffn = *o;
    }
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "first_k_dense_replace", path));
    e.dense_layers = static_cast<int>(o.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(
        o,
        FirstInt(c, {"moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step"}, path));
    e.moe_every = static_cast<int>(std::max<std::int64_t>(1, o.value_or(1)));
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(c, "topk_method", path));
    e.router_bias = s.value_or("") == "noaux_tc";
    if (model_type == "gpt_oss") {
      // GptOssTopKRouter: a linear layer with bias; GptOssExperts: gate_up_proj_bias and
      // down_proj_bias per expert.
      e.router_bias = true;
      e.expert_bias = true;
    }
    if (model_type == "llama4_text" || model_type == "llama4") {
      // Llama 4: routed experts and one shared expert of intermediate_size; dense layers use
      // intermediate_size_mlp.
      e.shared_experts = 1;
      e.shared_ffn = m.ffn_hidden;
      e.expert_ffn = m.ffn_hidden;
      GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "intermediate_size_mlp", path));
      if (o) m.ffn_hidden = *o;
    }
    // Qwen2/3-MoE list layers that keep a dense MLP.
    const Json* mlp_only = nullptr;
    GPUPLAN_ASSIGN_OR_RETURN(mlp_only, internal::GetArray(c, "mlp_only_layers", path));
    if (mlp_only != nullptr && !mlp_only->empty()) {
      return MakeError(ErrorCode::kUnsupported, path + ".mlp_only_layers",
                       "MoE models with an irregular list of dense layers are not supported yet",
                       "give the exact count with a .safetensors header");
    }
    m.moe = e;
    if (m.arch == ModelArch::kDense) m.arch = ModelArch::kMoe;
  }
  // MLA.
  GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "kv_lora_rank", path));
  if (o && *o > 0) {
    MlaSpec a;
    a.kv_lora_rank = static_cast<int>(*o);
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "q_lora_rank", path));
    a.q_lora_rank = static_cast<int>(o.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "qk_rope_head_dim", path));
    a.qk_rope_head_dim = static_cast<int>(o.value_or(64));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "qk_nope_head_dim", path));
    a.qk_nope_head_dim = static_cast<int>(o.value_or(128));
    GPUPLAN_ASSIGN_OR_RETURN(o, GetInt(c, "v_head_dim", path));
    a.v_head_dim = static_cast<int>(o.value_or(128));
    m.mla = a;
    m.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
    if (m.arch == ModelArch::kDense || m.arch == ModelArch::kMoe) m.arch = ModelArch::kMlaMoe;
  }

  auto q = ParseQuant(root, L);
  if (!q) return q.error();
  m.quant = *q;

  // Explicit architecture from the gpuplan block wins (CNNs, UNets have no HF fields).
  if (gp) {
    GPUPLAN_ASSIGN_OR_RETURN(s, GetString(*gp, "arch", L + ".gpuplan"));
    if (s) {
      auto a = ParseModelArch(*s);
      if (!a) {
        return MakeError(ErrorCode::kParse, L + ".gpuplan.arch", "unknown arch \"" + *s + "\"",
                         ChoiceHint(*s, ModelArchNames()));
      }
      m.arch = *a;
    }
  }
  (void)v;
  // A ResNet config gives the whole network: what a preset's gpuplan block does not state is
  // counted from it, at the 224 x 224 input its ImageNet checkpoints take.
  if (m.arch == ModelArch::kCnn && m.resnet) {
    const ResNetCounts rc = CountResNet(*m.resnet, m.channels, kResNetImageSide);
    if (!m.params_override) m.params_override = rc.params;
    if (!m.gflops_per_sample) m.gflops_per_sample = 2.0 * rc.macs / 1e9;
    if (!m.activation_melems_per_sample) m.activation_melems_per_sample = rc.feature_elems / 1e6;
    if (m.sample.empty()) {
      m.sample = fmt::format("{}x{} image", kResNetImageSide, kResNetImageSide);
    }
  }
  if (auto st = ValidateModel(m, L); !st) return st.error();
  return m;
}

}  // namespace gpuplan
