// Serving memory per GPU: weights (quantized linear layers, 16-bit embeddings/norms/head), KV
// cache (GQA/MQA with at least one KV head per TP rank; MLA latent), the engine's profiling
// workspace, runtime memory, and each engine's rule for how much memory becomes KV cache
// (../shared/reference/formats.md section 6.2 for vLLM).
#include <algorithm>
#include <cmath>

#include "gpuplan/quant_preset.h"
#include "gpuplan/estimate.h"
#include "gpuplan/serve.h"

namespace gpuplan {

namespace {

std::optional<QuantSpec> DefaultQuant(Precision p) {
  switch (p) {
    case Precision::kInt8:
      return GetQuantPreset(QuantPresetId::kInt8).Spec();
    case Precision::kFp8:
      return GetQuantPreset(QuantPresetId::kFp8).Spec();
    case Precision::kInt4:
      return GetQuantPreset(QuantPresetId::kInt4G128).Spec();
    default:
      return std::nullopt;
  }
}

}  // namespace

Bytes InferenceWeightBytes(const ModelSpec& m, Precision p, const std::optional<QuantSpec>& q,
                           int tp, int pp) {
  const ParamCounts pc = CountParams(m);
  tp = std::max(1, tp);
  pp = std::max(1, pp);
  std::optional<QuantSpec> quant = q ? q : DefaultQuant(p);
  const double dense_bytes = quant ? 2.0 : BytesPerElement(p);
  const double linear_bytes = quant ? quant->EffectiveBits() / 8.0 : dense_bytes;
  const double total = static_cast<double>(pc.total);
  const double linear = static_cast<double>(pc.linear);
  // A format for the routed experts only (gpt-oss MXFP4): the other linear layers stay 16-bit.
  double quantized = quant && quant->experts_only && m.moe && pc.per_layer > 0
                         ? std::min(linear, RoutedExpertParams(m))
                         : linear;
  // A format for the feed-forward layers of the inner blocks only (Meta's FP8): attention and
  // the edge blocks stay 16-bit.
  const bool mlp_only = quant && quant->mlp_only && !m.moe && pc.per_layer > 0 && m.hidden > 0;
  if (mlp_only) {
    const double mlp_per_layer = (m.gated_mlp ? 3.0 : 2.0) * static_cast<double>(m.hidden) *
                                 static_cast<double>(m.ffn_hidden);
    quantized = std::min(linear, mlp_per_layer * std::max(0, m.layers - quant->dense_blocks));
  }
  if (pc.per_layer == 0) {
    // No breakdown (params only): everything counts as quantizable matrices.
    return Bytes(total * linear_bytes / (tp * pp));
  }
  const double edge_all = static_cast<double>(pc.embedding + pc.lm_head);
  const double edge_max = static_cast<double>(std::max(pc.embedding, pc.lm_head));
  const double other_blocks = std::max(0.0, total - edge_all - linear);  // norms, biases
  const double edge = pp == 1 ? edge_all : edge_max;
  double kv_replication = 0;
  if (!m.mla && m.kv_heads > 0 && m.kv_heads < tp) {
    // Each rank holds at least one whole KV head: K and V projections are replicated
    // (formats.md 6.2), instead of the 1/tp share counted above.
    const double h = static_cast<double>(m.hidden), hd = m.head_dim;
    const double per_layer = 2.0 * h * hd * (1.0 - static_cast<double>(m.kv_heads) / tp);
    kv_replication = per_layer * m.layers / pp *
                     (quant && (quant->experts_only || mlp_only) ? dense_bytes : linear_bytes);
  }
  return Bytes((quantized * linear_bytes + (linear - quantized) * dense_bytes) / (tp * pp) +
               other_blocks * dense_bytes / pp + edge * dense_bytes / tp + kv_replication);
}

double SglangDefaultMemFraction(int world_size) {
  if (world_size >= 16) return 0.79;
  if (world_size >= 8) return 0.81;
  if (world_size >= 4) return 0.85;
  if (world_size >= 2) return 0.87;
  return 0.88;
}

double SglangDefaultMemFractionForGpu(Bytes gpu_memory, int tp, int pp, bool mla) {
  const double mem = gpu_memory.value() / kBytesPerMiB;  // server_args.py works in MiB
  tp = std::max(1, tp);
  pp = std::max(1, pp);
  // chunked_prefill_size and cuda_graph_max_bs by memory bucket.
  double chunk = 8192, graph_bs = tp < 4 ? 256 : 512;
  if (mem < 20 * 1024) {
    chunk = 2048, graph_bs = 8;
  } else if (mem < 35 * 1024) {
    chunk = 2048, graph_bs = tp < 4 ? 24 : 80;
  } else if (mem < 60 * 1024) {
    chunk = 4096, graph_bs = tp < 4 ? 32 : 160;
  } else if (mem >= 160 * 1024) {
    chunk = 16384, graph_bs = 512;
  }
  double reserved = 512 + std::max(chunk, 2048.0) * 1.5 + graph_bs * 2 + tp * pp / 8.0 * 1024;
  // Piecewise CUDA graphs for prefill up to the chunk (2048 tokens with an MLA backend): 8 MiB
  // of non-torch memory per captured size.
  const double piece_max = mla ? 2048 : chunk;
  int pieces = 0;
  const auto count = [&](double from, double to, double step) {
    for (double t = from; t <= std::min(to, piece_max); t += step) ++pieces;
  };
  count(4, 32, 4);
  count(48, 256, 16);
  count(288, 512, 32);
  count(576, 1024, 64);
  count(1280, 4096, 256);
  count(4608, piece_max, 512);
  reserved += pieces * 8.0;
  if (mem > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  return std::round((mem - reserved) / mem * 1000) / 1000;
}

namespace {

// TGI's warm-up rule (TgiStartupRule): `used` is what the warm-up leaves reserved besides the
// warm-up batch's own KV blocks (`warm`), which are counted back in.
Bytes TgiKvBudget(Bytes total, Bytes used, Bytes warm, std::optional<double> fraction,
                  const TgiStartupRule& rule) {
  const double f = fraction.value_or(1.0);
  const double budget =
      rule.of_total ? rule.wiggle * f * total.value() - used.value()
                    : rule.wiggle * std::max(0.0, f * total.value() - used.value() - warm.value()) +
                          warm.value();
  return Bytes(std::max(0.0, budget));
}

}  // namespace

Bytes KvBudget(Engine engine, Bytes total, Bytes non_kv, Bytes weights,
               std::optional<double> fraction) {
  double budget = 0;
  switch (engine) {
    case Engine::kVllm:
      // gpu_memory_utilization is a fraction of TOTAL memory; KV gets what the rest leaves.
      budget =
          total.value() * fraction.value_or(VllmDefaultGpuMemoryUtilization("")) - non_kv.value();
      break;
    case Engine::kSglang:
      // mem_fraction_static of total holds weights + the KV pool.
      budget = total.value() * fraction.value_or(0.88) - weights.value();
      break;
    case Engine::kTrtLlm:
      // kv_cache_free_gpu_mem_fraction of the memory FREE after weights and runtime.
      budget = (total.value() - non_kv.value()) * fraction.value_or(0.9);
      break;
    case Engine::kTgi:
      return TgiKvBudget(total, non_kv, Bytes(0), fraction, TgiStartupRule{});
    case Engine::kTransformers:
      budget = (total.value() - non_kv.value()) * fraction.value_or(1.0);
      break;
  }
  return Bytes(std::max(0.0, budget));
}

InferMemory EstimateInferenceMemory(const ModelSpec& m, const InferMemoryOptions& opt,
                                    Bytes device_memory) {
  InferMemory r;
  MemoryBreakdown& b = r.breakdown;
  const int tp = std::max(1, opt.tp), pp = std::max(1, opt.pp);
  b.weights = InferenceWeightBytes(m, opt.weight_precision, opt.quant, tp, pp);

  // Forward workspace: the engine's profiling run (vLLM: max_num_batched_tokens tokens) or one
  // prefill of the whole batch (transformers). Per token on one rank, at 16 bits, what is live
  // at the larger of the layer's two peaks: the residual and the norm output (2h, replicated
  // over TP) plus either the attention's Q/K/V and output (2q + 2kv) or the MLP's fused
  // gate/up output and its activation (3f; 2f ungated), sharded over TP. The attention
  // tensors are freed before the MLP runs. vLLM's and SGLang's layers keep the fused gate/up
  // output and the activation referenced (module locals) while the down or output projection
  // writes its h-wide result, so one more h is live at their peak; transformers' MLP frees its
  // temporaries before down_proj. Plus fp32 logits and probabilities for the sampled
  // sequences.
  const double e = 2.0;
  double tokens = opt.engine == Engine::kTransformers
                      ? static_cast<double>(opt.concurrency) * opt.context
                      : static_cast<double>(opt.max_num_batched_tokens);
  if (m.is_transformer() && m.hidden > 0) {
    const double h = static_cast<double>(m.hidden);
    const double q = m.mla ? h : static_cast<double>(m.heads) * m.head_dim;
    const double kv = m.mla ? h : static_cast<double>(m.kv_heads) * m.head_dim;
    double f = static_cast<double>(m.ffn_hidden);
    if (m.moe) f = static_cast<double>(m.moe->expert_ffn) * (m.moe->top_k + m.moe->shared_experts);
    const bool merged_locals = opt.engine == Engine::kVllm || opt.engine == Engine::kSglang;
    double per_token = (merged_locals ? 3 : 2) * h +
                       std::max((2 * q + 2 * kv) / tp, (m.gated_mlp ? 3.0 : 2.0) * f / tp);
    // vLLM V1's fused-MoE kernels take their buffers from the worker's persistent
    // WorkspaceManager (v1/worker/workspace.py; modular_kernel.py _allocate_buffers): per token
    // and routed expert, workspace13 = max(gate/up output 2 f_e / tp, expert output h) and
    // workspace2 = the activation f_e / tp, kept allocated from the first MoE layer on. So the
    // attention of later layers, and the sampler after the forward, run on top of it.
    double moe_workspace = 0;
    if (m.moe && opt.engine == Engine::kVllm && !opt.sort_sampler_profile) {
      const double ef = static_cast<double>(m.moe->expert_ffn) / tp;
      moe_workspace = tokens * m.moe->top_k * (std::max(2 * ef, h) + ef) * e;
      double shared = 0;
      if (m.moe->shared_experts > 0) {
        const double sf =
            static_cast<double>(m.moe->shared_ffn > 0 ? m.moe->shared_ffn : m.moe->expert_ffn);
        shared = 3.0 * sf * m.moe->shared_experts / tp;
      }
      per_token = 3 * h + std::max((2 * q + 2 * kv) / tp, shared);
    }
    b.activations = Bytes(tokens * per_token * e + moe_workspace);
    if (m.is_decoder_llm() && m.vocab > 0) {
      double seqs = opt.engine == Engine::kTransformers
                        ? static_cast<double>(opt.concurrency)
                        : static_cast<double>(
                              std::min<std::int64_t>(opt.max_num_seqs, opt.max_num_batched_tokens));
      const double entries = seqs * static_cast<double>(m.vocab);
      if (opt.engine == Engine::kVllm && !opt.sort_sampler_profile) {
        // vLLM V1 (>= 0.8) profiles its sampler after the forward with dummy top-k/top-p
        // parameters: per vocabulary entry per sequence the fp32 logits (4) and their sort's
        // values (4) and int64 indices (8), 16 B. The forward's tensors are freed by then, so
        // the larger peak counts (vLLM 0.19 on H100 reports 0.75-3.99 GiB over vocabularies of
        // 49K-262K at 1024 sequences: 14.8-16.2 B per entry; docs/model.md 4.3).
        // Before 0.18 the native path sorted them: logs from 0.10.2 to January 2026 builds show
        // 38.4-39.6 B per entry (Qwen3-0.6B/8B/32B, Llama-3.1-8B, gpt-oss-20b at 256-1024
        // sequences, independent of TP), the sort's values, indices and scratch, the softmax,
        // its cumulative sum, the masks and the re-scattered logits (docs/model.md 4.3).
        const double per_entry = opt.v1_sort_sampler ? 39.0 : 16.0;
        b.logits =
            Bytes(std::max(0.0, entries * per_entry + moe_workspace - b.activations.value()));
      } else if (opt.sort_sampler_profile) {
        // vLLM V0 Sampler._apply_top_k_top_p, per vocabulary entry per sequence: bf16 logits
        // (2) and their fp32 copy (4), sorted values (4) and int64 indices (8), the sort's
        // scratch of the same size (12), softmax (4), cumsum (4), two bool masks (2) and the
        // re-scattered logits (4): ~44 B. It runs after the forward, so the larger one counts;
        // `logits` holds what the sampler adds above the forward's peak.
        b.logits = Bytes(std::max(0.0, entries * 44.0 - b.activations.value()));
      } else if (opt.engine == Engine::kTgi) {
        // TGI's warm-up prefill: the LM head's output in the model's dtype, gathered over TP
        // (the local shard, 1/tp, is live while it gathers), for every prefill token while the
        // release asks for prefill logprobs (with a separate log_softmax before 2.4), else for
        // each warm-up request's last token (TgiStartupRule::prefill_logit_copies).
        const double shard = tp > 1 ? 1.0 / tp : 0.0;
        const double vocab = static_cast<double>(m.vocab) * e;
        const int copies =
            opt.tgi.prefill_logit_copies >= 0 ? opt.tgi.prefill_logit_copies : (tp > 1 ? 2 : 1);
        if (copies > 0) {
          b.logits = Bytes(tokens * vocab * (copies + shard));
        } else {
          const double max_input = opt.tgi.max_input_tokens > 0 ? opt.tgi.max_input_tokens
                                                                : std::max(1, opt.context - 1);
          b.logits = Bytes(std::ceil(tokens / max_input) * vocab * (1.0 + shard));
        }
      } else {
        b.logits = Bytes(entries * 4.0 * 2.0);
      }
    }
  }
  b.cuda_context = opt.reserve.cuda_context;
  if (tp * pp > 1) b.nccl_buffers = opt.reserve.nccl_buffers;
  // NVLS multicast buffers of a tensor-parallel group's all-reduce, measured in vLLM's profiling
  // run (SGLang disables NVLS; the other engines keep the generic NCCL reserve above).
  const Bytes nvls =
      tp > 1 && opt.nvls && opt.engine == Engine::kVllm ? opt.reserve.nvls_buffers : Bytes(0);
  b.nccl_buffers = b.nccl_buffers + nvls;

  const double kv_elem = BytesPerElement(opt.kv_precision);
  const int layers_here = (m.layers + pp - 1) / pp;
  Bytes per_token =
      m.layers > 0 ? KvBytesPerToken(m, kv_elem, tp) * (static_cast<double>(layers_here) / m.layers)
                   : Bytes(0);
  per_token = per_token * SlidingKvEngineShare(m, opt);
  b.kv_cache = per_token * (static_cast<double>(opt.concurrency) * opt.context);
  r.non_kv = b.weights + b.activations + b.logits + b.cuda_context + b.nccl_buffers;
  r.engine_non_torch = b.cuda_context + b.nccl_buffers;
  if (opt.engine == Engine::kVllm) {
    // vLLM snapshots memory after creating the CUDA context and the NCCL communicators and
    // sizes the KV cache as gpu_memory_utilization x total - (weights + profiled activation
    // peak + the non-torch increase of its profiling run): the context and communicators are
    // outside the fraction. docs/model.md 4.3.
    // NCCL allocates the NVLS buffers at the first all-reduce, inside the profiling run.
    r.engine_non_torch = opt.reserve.profiled_non_torch + nvls;
    // From 0.21 it also charges its estimate of the CUDA graphs it captures after sizing the
    // pool (docs/model.md 4.3).
    r.cuda_graph_estimate =
        opt.reserve.cuda_graph_per_layer *
        (static_cast<double>(std::max(0, opt.cuda_graph_captures)) * layers_here);
  }
  r.engine_non_kv =
      b.weights + b.activations + b.logits + r.engine_non_torch + r.cuda_graph_estimate;
  r.reported_activation_peak = b.activations + b.logits;
  r.reported_non_torch = r.engine_non_torch;
  if (pp > 1 && opt.engine == Engine::kVllm) {
    r.reported_non_torch = opt.reserve.profiled_non_torch_no_sampler + nvls;
  }
  if (pp > 1 && m.is_transformer() && m.hidden > 0 && opt.engine != Engine::kTransformers) {
    // First stage: no LM head, no sampler; it hands the batch's hidden states and residual to
    // the next stage (vLLM's IntermediateTensors: 2 x tokens x h at 16 bits).
    r.reported_activation_peak =
        b.activations + Bytes(2.0 * static_cast<double>(opt.max_num_batched_tokens) *
                              static_cast<double>(m.hidden) * e);
  }
  // SGLang takes its fraction of the memory available when it starts (total_gpu_memory in
  // model_runner.py is get_available_gpu_memory() after the CUDA context and the distributed
  // init), so the context and NCCL buffers come off before the fraction. docs/model.md 4.3.
  const Bytes engine_total =
      opt.engine == Engine::kSglang
          ? Bytes(std::max(0.0, (device_memory - b.cuda_context - b.nccl_buffers).value()))
          : device_memory;

  std::optional<double> fraction = opt.memory_fraction;
  if (!fraction && opt.engine == Engine::kSglang) {
    fraction = opt.sglang_gpu_memory_rule
                   ? SglangDefaultMemFractionForGpu(device_memory, tp, pp, m.mla.has_value())
                   : SglangDefaultMemFraction(tp * pp);
  }
  if (opt.engine == Engine::kTgi) {
    // The warm-up batch: requests of max_input_tokens filling the prefill budget, each holding
    // blocks for the whole context (prompt + max_new_tokens).
    const double max_input =
        opt.tgi.max_input_tokens > 0 ? opt.tgi.max_input_tokens : std::max(1, opt.context - 1);
    const double requests = std::ceil(std::max(1, opt.max_num_batched_tokens) / max_input);
    const Bytes warm = per_token * (requests * opt.context);
    r.kv_budget = TgiKvBudget(engine_total, r.engine_non_kv, warm, fraction, opt.tgi);
  } else {
    r.kv_budget = KvBudget(opt.engine, engine_total, r.engine_non_kv, b.weights, fraction);
  }
  const double budget = r.kv_budget.value();

  if (per_token.value() > 0) {
    r.kv_tokens = static_cast<std::int64_t>(std::floor(r.kv_budget.value() / per_token.value()));
    if (opt.engine == Engine::kVllm && opt.block_size > 1) {
      r.kv_tokens -= r.kv_tokens % opt.block_size;  // whole blocks
    }
    r.max_concurrency = opt.context > 0 ? r.kv_tokens / opt.context : 0;
    r.max_context = opt.concurrency > 0 ? r.kv_tokens / opt.concurrency : 0;
    r.fits = budget > 0 && r.kv_tokens >= static_cast<std::int64_t>(opt.concurrency) * opt.context;
  } else {
    r.fits = budget >= 0;
  }
  b.allocator_slack = Bytes(0);
  return r;
}

double SlidingKvEngineShare(const ModelSpec& m, const InferMemoryOptions& opt) {
  if (m.sliding_layers <= 0 || m.layers <= 0 || opt.engine == Engine::kTgi || !opt.sliding_kv)
    return 1.0;
  const bool interleaved = m.sliding_layers < m.layers;
  const double ctx = std::max(1, opt.context);
  if (opt.engine == Engine::kSglang) {
    if (!interleaved) return 1.0;
    // SGLang's hybrid SWA pool: the sliding layers get swa_full_tokens_ratio (0.8) of the full
    // pool's tokens, fixed at start-up; a request needs min(context, window) of them.
    constexpr double kSwaFullTokensRatio = 0.8;
    const double sl = m.sliding_layers, layers = m.layers;
    const double pool = (layers - sl + kSwaFullTokensRatio * sl) / layers;
    const double window = std::min<double>(ctx, m.sliding_window);
    return pool * std::max(1.0, window / (kSwaFullTokensRatio * ctx));
  }
  if (interleaved && (!opt.window_interleaved_kv || opt.engine == Engine::kTrtLlm)) return 1.0;
  return SlidingKvShare(m, ctx);
}

bool NvlsAllReduce(const Accelerator& acc) {
  const bool nvswitch_gen3 = acc.intra_link == "nvlink4" || acc.intra_link == "nvlink5";
  const bool switched = acc.form_factor == "sxm" || acc.form_factor == "superchip";
  return acc.vendor == "NVIDIA" && nvswitch_gen3 && switched;
}

}  // namespace gpuplan
