// Serving performance model. LLM prefill is compute-bound (2 x active params x tokens + the
// causal attention term, GEMM efficiency by size); a decode step reads the weights and the KV
// cache (memory-bound at small batch) or runs its FLOPs (compute-bound at large batch); tensor
// parallelism adds two all-reduces per layer per step; continuous batching runs as many
// sequences as the KV capacity and the engine allow. Encoders/ViTs/CNNs: one forward pass per
// batch on the same roofline. CPUs: cores x clock x FLOP/cycle (AVX-512/AMX) and DDR bandwidth.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <optional>
#include <string>

#include "base/strings.h"
#include "estimate/calibration_lookup.h"
#include "estimate/roofline.h"
#include "gpuplan/serve.h"

namespace gpuplan {

using internal::AllReduceSeconds;
using internal::GemmSeconds;

double ComputeDevice::Peak(Precision p) const {
  switch (p) {
    case Precision::kInt4:
    case Precision::kInt8:
      if (peak_int8 > 0) return peak_int8;
      [[fallthrough]];
    case Precision::kFp8:
      if (peak_fp8 > 0) return peak_fp8;
      [[fallthrough]];
    case Precision::kBf16:
      if (peak_bf16 > 0) return peak_bf16;
      [[fallthrough]];
    case Precision::kFp16:
      if (peak_fp16 > 0) return peak_fp16;
      if (peak_bf16 > 0) return peak_bf16;
      [[fallthrough]];
    case Precision::kTf32:
    case Precision::kFp32:
      return peak_fp32;
  }
  return peak_fp32;
}

namespace {
// Math on a CPU's matrix unit (AMX tiles): the 16- and 8-bit formats; fp32/tf32 run on the
// AVX-512 vector units.
bool OnMatrixUnit(const ComputeDevice& d, Precision p) {
  return d.cpu && d.matrix_unit && p != Precision::kFp32 && p != Precision::kTf32;
}
}  // namespace

double ComputeDevice::GemmEff(Precision p) const {
  if (!cpu) return p == Precision::kFp8 && peak_fp8 > 0 ? gemm_eff * fp8_factor : gemm_eff;
  return OnMatrixUnit(*this, p) ? gemm_eff : vector_eff;
}

double ComputeDevice::GemmKnee(Precision p) const {
  return !cpu || OnMatrixUnit(*this, p) ? gemm_knee : vector_knee;
}

ComputeDevice DeviceFromAccelerator(const Accelerator& acc, const Calibration& cal,
                                    IntraNodeLink link) {
  ComputeDevice d;
  d.id = acc.id;
  auto v = [](const std::optional<FlopPerSec>& f) { return f ? f->value() : 0.0; };
  d.peak_fp32 = v(acc.tf32 ? acc.tf32 : acc.fp32);
  d.peak_bf16 = v(acc.bf16);
  d.peak_fp16 = v(acc.fp16);
  d.peak_fp8 = v(acc.fp8);
  d.peak_int8 = v(acc.int8);
  d.peak_fp4 = v(acc.fp4);
  d.mem_bw = acc.memory_bw.value();
  d.memory = acc.Usable();  // what the driver exposes (GDDR ECC carve-out: gpus.csv)
  const ArchEfficiency ae = cal.ForAccelerator(acc);
  d.gemm_eff = ae.gemm_eff;
  d.power_cap = ae.power_cap;
  const internal::CalKey keys[] = {
      {"hbm_efficiency", 0.8},
      {"kernel_overhead_us", 4},
      {"gemm_knee_flops_per_byte", 160},
      {"decode_unoverlapped_weight_share", 0.86},
      {"cnn_efficiency_factor", 0.6},
      {"fp8_gemm_efficiency_factor", 0.7},
      {link == IntraNodeLink::kPcie || link == IntraNodeLink::kNone ? "link_efficiency.pcie"
                                                                    : "link_efficiency.nvlink",
       0.7},
  };
  double c[std::size(keys)];
  internal::GetAll(cal, keys, c);  // one pass over the calibration table
  d.mem_eff = c[0];
  d.kernel_s = c[1] * 1e-6;
  d.gemm_knee = c[2];
  d.decode_weight_share = c[3];
  d.conv_factor = c[4];
  d.fp8_factor = c[5];
  InstanceType shape;
  shape.accelerator_count = 8;
  shape.intra_node_link = link;
  d.link_bw = HardwareFromInstance(shape, acc, 1).intra_bw * c[6];
  d.nvls = NvlsAllReduce(acc) && link != IntraNodeLink::kPcie && link != IntraNodeLink::kNone;
  return d;
}

ComputeDevice DeviceFromCpu(const Cpu& cpu, int sockets, int threads, const Calibration& cal) {
  ComputeDevice d;
  d.id = cpu.id;
  d.cpu = true;
  sockets = std::max(1, sockets);
  double cores = static_cast<double>(cpu.cores) * sockets;
  if (threads > 0) cores = std::min(cores, static_cast<double>(threads));
  d.cores = cores;
  d.cores_per_socket = std::max(1, cpu.cores);
  // Sustained vector/matrix work runs near the all-core turbo clock (AVX-512 licence limits
  // it below single-core turbo).
  const double ghz = cpu.all_core_turbo_ghz.value_or(cpu.base_ghz);
  const double hz = ghz * 1e9;
  d.peak_fp32 = cores * hz * cpu.fp32_flop_per_cycle;
  d.peak_bf16 = cpu.bf16_flop_per_cycle ? cores * hz * *cpu.bf16_flop_per_cycle : 0;
  d.peak_int8 = cpu.int8_op_per_cycle ? cores * hz * *cpu.int8_op_per_cycle : 0;
  const internal::CalKey keys[] = {
      {"cpu_matrix_efficiency", 0.25},
      {"cpu_vector_efficiency", 0.55},
      {"cpu_memory_efficiency", 0.65},
      {"cpu_op_overhead_us", 20},
      {"cpu_gemm_knee_flops_per_byte", 16},
      {"cpu_matrix_gemm_knee_flops_per_byte", 64},
      {"cpu_decode_batch_knee", 4},
      {"cpu_cnn_efficiency_factor", 1.0},
      {"cpu_stream_serial_fraction", 0.03},
      {"cpu_core_memory_gbps", 25},
      {"cpu_core_llc_gbps", 50},
      {"cpu_llc_weight_share", 0.5},
  };
  double c[std::size(keys)];
  internal::GetAll(cal, keys, c);
  // Memory bandwidth scales with the sockets in use; a few cores cannot saturate it: each core
  // streams at most cpu_core_memory_gbps (its outstanding cache-line misses over the DRAM
  // latency), so `cores` threads reach min(the sockets' sustained bandwidth, cores x that).
  // mem_bw is the peak the sustained fraction (mem_eff) applies to.
  const double socket_bw = cpu.memory_bw.value() * sockets;
  d.mem_bw = c[2] > 0 ? std::min(socket_bw, cores * c[9] * 1e9 / c[2]) : socket_bw;
  // Two paths (Intel AMX: bf16/int8 GEMMs on tiles; fp32 and everything else on AVX-512):
  // gemm_eff/gemm_knee are the matrix path's on AMX CPUs, the vector path's elsewhere.
  d.matrix_unit = cpu.matrix_ext == "amx";
  d.vector_eff = c[1];
  d.vector_knee = c[4];
  d.gemm_eff = d.matrix_unit ? c[0] : c[1];
  // Cache-blocked CPU GEMMs stay efficient at low arithmetic intensity and small M; AMX tiles
  // consume 16-32x the operands per cycle of the vector units, so small-M GEMMs starve them.
  d.gemm_knee = d.matrix_unit ? c[5] : c[4];
  d.mem_eff = c[2];
  d.kernel_s = c[3] * 1e-6;
  d.decode_knee = c[6];
  d.conv_factor = c[7];
  d.serial_fraction = std::clamp(c[8], 0.0, 1.0);
  d.link_bw = BytesPerSec(0);
  d.llc_bytes = cpu.l3_mib.value_or(0) * 1024.0 * 1024.0;
  d.core_llc_bw = c[10] * 1e9;
  d.llc_weight_share = std::clamp(c[11], 0.0, 1.0);
  return d;
}

void UseGgmlVectorKernels(ComputeDevice& d) {
  if (!d.cpu || !d.matrix_unit) return;  // vector-only CPUs keep their catalog rates
  d.matrix_unit = false;
  d.attention_on_matrix = false;
  d.gemm_eff = d.vector_eff;
  d.gemm_knee = d.vector_knee;
  d.peak_bf16 = d.peak_fp16 = d.peak_int8 = 2.0 * d.peak_fp32;
}

namespace {

struct Shape {
  double h, q, kv, f, up;  // hidden, q dim, kv dim, ffn (MoE: active experts' ffn), up factor
};

Shape ShapeOf(const ModelSpec& m) {
  Shape s;
  s.h = static_cast<double>(m.hidden);
  s.q = m.mla ? static_cast<double>(m.heads) * (m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim)
              : static_cast<double>(m.heads) * m.head_dim;
  s.kv = m.mla ? static_cast<double>(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim)
               : static_cast<double>(m.kv_heads) * m.head_dim;
  s.f = static_cast<double>(m.ffn_hidden);
  if (m.moe) s.f = static_cast<double>(m.moe->expert_ffn) * (m.moe->top_k + m.moe->shared_experts);
  s.up = m.gated_mlp || m.moe ? 2.0 : 1.0;
  return s;
}

// Math precision of a weight format: fp8 and int8 weights run W8A8 GEMMs where the device
// has them; 4-bit weight-only formats dequantise to 16-bit GEMMs (W4A16).
Precision MathPrecision(Precision weights, const std::optional<QuantSpec>& q, bool cpu) {
  if (q && q->bits < 8) return cpu ? Precision::kInt8 : Precision::kFp16;
  if (weights == Precision::kInt4) return cpu ? Precision::kInt8 : Precision::kFp16;
  return weights;
}

// NVFP4 checkpoints (TensorRT Model Optimizer, vLLM/TensorRT-LLM modelopt_fp4) quantise the
// GEMM inputs to NVFP4 too: W4A4 GEMMs on the FP4 tensor cores where the device has them
// (Blackwell), at FP8's achievable fraction. Elsewhere they dequantise like other 4-bit formats.
bool Fp4TensorMath(const std::optional<QuantSpec>& q, const ComputeDevice& dev) {
  return q && q->method == "nvfp4" && !dev.cpu && dev.peak_fp4 > 0;
}

// Forward time of one transformer layer's linear layers for M tokens, sharded over tp.
double LayerGemms(const Shape& s, double M, int tp, double wbytes, double peak, double eff,
                  double knee, double bw, double ks, double cap) {
  return GemmSeconds(M, (s.q + 2 * s.kv) / tp, s.h, wbytes, peak, eff, knee, bw, ks, cap) +
         GemmSeconds(M, s.h, s.q / tp, wbytes, peak, eff, knee, bw, ks, cap) +
         GemmSeconds(M, s.up * s.f / tp, s.h, wbytes, peak, eff, knee, bw, ks, cap) +
         GemmSeconds(M, s.h, s.f / tp, wbytes, peak, eff, knee, bw, ks, cap);
}

}  // namespace

ServePerf EstimateLlmServing(const ModelSpec& model, const ServeSetup& setup,
                             const ComputeDevice& dev, int input_len, int output_len, int batch,
                             const Calibration& cal, Trace* trace) {
  ServePerf r;
  const int tp = std::max(1, setup.tp);
  // An encoder-decoder model (docs/model.md 10.7) decodes with its decoder stack; each request
  // first runs the encoder over its input (Whisper: the fixed 1500 frames) and keeps the
  // encoder output's cross-attention K/V beside its own KV cache until it finishes. The
  // decoder's prompt is its start tokens.
  const bool encdec = model.arch == ModelArch::kEncoderDecoder;
  std::shared_ptr<const EncoderDecoderParts> parts;
  if (encdec) parts = SplitEncoderDecoder(model);
  const ModelSpec& m = encdec ? parts->decoder : model;
  const double cross = encdec ? EncoderInputTokens(model, input_len) : 0;  // per request
  if (encdec) input_len = DecoderPromptTokens(model);
  const Shape s = ShapeOf(m);
  const double L = m.layers;
  const bool fp4 = Fp4TensorMath(setup.quant, dev);
  const Precision math =
      fp4 ? Precision::kFp8 : MathPrecision(setup.weight_precision, setup.quant, dev.cpu);
  const double peak = fp4 ? dev.peak_fp4 : dev.Peak(math);
  const double bf16 = dev.Peak(Precision::kBf16);
  const double bw = dev.mem_bw * dev.mem_eff;
  const double knee = dev.GemmKnee(math);
  // NVFP4 GEMMs keep FP8's quantisation casts around a GEMM at the FP4 rate (Fp4GemmFactor).
  const double geff =
      fp4 ? dev.gemm_eff * internal::Fp4GemmFactor(dev.fp8_factor, dev.peak_fp4, dev.peak_fp8)
          : dev.GemmEff(math);
  const double ks = dev.kernel_s;
  // Weight bytes per device, as stored (quantized linear layers read at their own width).
  const Bytes wbytes_dev = InferenceWeightBytes(m, setup.weight_precision, setup.quant, tp, 1);
  const ParamCounts pc = CountParams(m);
  const double kv_elem = BytesPerElement(setup.kv_precision);
  const double kv_tok = KvBytesPerToken(m, kv_elem, tp).value();  // per device
  const double lat = cal.Get("link_latency_us.intra", 5) * 1e-6;
  const double link = dev.link_bw.value() > 0 ? dev.link_bw.value() : 1e9;
  const double per_layer_overhead = cal.Get("decode_overhead_us_per_layer", 20) * 1e-6;
  // Eager PyTorch generation (Hugging Face generate, no torch.compile or CUDA graphs): the host
  // dispatches every op of every layer in Python, and the GPU, running behind it
  // asynchronously, waits for the launches whenever they take longer than its work. A pass
  // takes at least layers x `eager_dispatch_us_per_layer` (docs/model.md 10.8).
  const double eager_layer =
      !dev.cpu && setup.eager ? cal.Get("eager_dispatch_us_per_layer", 1200) * 1e-6 : 0.0;

  // KV capacity under the engine's memory rule.
  InferMemoryOptions mo;
  mo.weight_precision = setup.weight_precision;
  mo.quant = setup.quant;
  mo.kv_precision = setup.kv_precision;
  mo.tp = tp;
  mo.engine = setup.engine;
  mo.memory_fraction = setup.memory_fraction;
  if (!mo.memory_fraction && setup.engine == Engine::kVllm && !setup.engine_version.empty())
    mo.memory_fraction = VllmDefaultGpuMemoryUtilization(setup.engine_version);
  // The CUDA graphs vLLM charges to its start-up budget at the replica's sequence limit.
  if (setup.engine == Engine::kVllm && !dev.cpu && VllmEstimatesCudaGraphs(setup.engine_version))
    mo.cuda_graph_captures = VllmCudaGraphCaptures(setup.max_batch, mo.max_num_batched_tokens);
  mo.context = std::max(1, input_len + output_len + static_cast<int>(cross));
  mo.concurrency = 1;
  mo.nvls = dev.nvls;
  // (Read only for sliding-window models: the version text is parsed once per such call.)
  mo.window_interleaved_kv =
      m.sliding_layers <= 0 || KeepsInterleavedWindowKv(setup.engine, setup.engine_version);
  if (setup.engine == Engine::kTgi) {
    // Launched with --max-input-tokens and --max-total-tokens for these requests (the emitted
    // command); the warm-up and KV rule of its release.
    TgiDefaults(setup.engine_version, m.max_positions, mo.context, std::max(1, input_len))
        .ApplyTo(mo);
  }
  // Beam search: every beam decodes as a sequence. Paged engines keep the prompt's KV blocks once
  // per request, shared by its beams (TensorRT-LLM's KV cache manager, vLLM's copy-on-write
  // blocks); each beam holds its own generated tokens. Transformers tiles the prompt's cache.
  const double nb = std::max(1, setup.beams);
  const double prompt_copies = setup.engine == Engine::kTransformers ? nb : 1.0;
  // KV tokens one request holds with `in` prompt and `gen` generated tokens per beam.
  // An encoder-decoder request also holds its encoder output's cross-attention K/V (the same
  // bytes per position as a token of self-attention KV).
  auto request_kv = [&](double in_tok, double gen) {
    return (in_tok + cross) * prompt_copies + gen * nb;
  };
  if (!dev.cpu) {
    InferMemory im = EstimateInferenceMemory(model, mo, VisibleMemory(dev.memory));
    r.kv_tokens = im.kv_tokens;
    if (im.kv_budget.value() <= 0 ||
        static_cast<double>(im.kv_tokens) < request_kv(input_len, output_len)) {
      r.fits = false;
      r.why = "weights leave no room for one request's KV cache";
    }
  } else {
    r.kv_tokens = 1 << 24;  // host RAM: not the constraint here
  }

  // Prefill of one request (compute-bound for long prompts).
  auto prefill = [&](double tokens, double seqs) {
    double t = L * LayerGemms(s, tokens, tp, 2.0, peak, geff, knee, 1e30, ks, dev.power_cap);
    // Weights must be read at least once: the memory side of the roofline.
    t = std::max(t, wbytes_dev.value() / bw);
    const double ctx = tokens / std::max(1.0, seqs);
    // Sliding-window layers compute only their window's score blocks (docs/model.md 4.3).
    t += L * 4.0 * tokens * ctx * 0.5 * SlidingAttentionShare(m, ctx) * s.q / tp /
         (bf16 * cal.Get("attention_efficiency", 0.45));
    if (m.vocab > 0) {
      t += GemmSeconds(seqs, static_cast<double>(m.vocab) / tp, s.h, 2.0, peak, geff, knee, bw, ks,
                       dev.power_cap);
    }
    // Two all-reduces per layer (after attention and after the MLP), each with its latency.
    t += 2 * L * AllReduceSeconds(tokens * s.h * 2.0, tp, link, lat) + L * per_layer_overhead;
    if (encdec) {
      // The encoder's forward over each request's input (its own GEMMs, bidirectional attention
      // and element-wise work: EstimateForward, split over tp), Whisper's convolutional front
      // end, the decoder layers' cross-attention K/V projections of the encoder output, and
      // the prompt's cross-attention (its q and output projections, and attention over the
      // encoder positions).
      const double enc_tokens = cross * seqs;
      t += EstimateForward(parts->encoder, math, dev, static_cast<int>(seqs),
                           static_cast<int>(cross), cal, true)
               .e2e.value() /
           tp;
      t += parts->frontend_flops_per_request * seqs / (peak * std::min(geff, dev.power_cap));
      t += L * (GemmSeconds(enc_tokens, 2 * s.kv / tp, s.h, 2.0, peak, geff, knee, bw, ks,
                            dev.power_cap) +
                GemmSeconds(tokens, s.q / tp, s.h, 2.0, peak, geff, knee, bw, ks, dev.power_cap) +
                GemmSeconds(tokens, s.h, s.q / tp, 2.0, peak, geff, knee, bw, ks, dev.power_cap));
      t += L * 4.0 * tokens * cross * s.q / tp / (bf16 * cal.Get("attention_efficiency", 0.45));
    }
    const double enc_layers = encdec ? parts->encoder.layers : 0;
    return std::max(t, (L + enc_layers) * eager_layer);
  };
  // MoE: the routed experts' share of the active weights and of all weights. With balanced
  // routing each expert's GEMM sees B x top_k / experts rows (the training step's rule), and a
  // step reads only the experts its tokens chose: a given expert is missed by all B tokens with
  // probability (1 - top_k / experts)^B. docs/model.md 10.2.
  double routed_active = 0, routed_share = 0, k_over_e = 0;
  if (m.moe && m.moe->experts > 0 && m.moe->top_k > 0 && pc.total > 0) {
    const int moe_layers = MoeLayerCount(m);
    // Up, gate and down projections: every expert is gated, as in ShapeOf.
    const double expert = 3.0 * s.h * static_cast<double>(m.moe->expert_ffn);
    routed_active = moe_layers * m.moe->top_k * expert;
    routed_share =
        std::min(1.0, moe_layers * m.moe->experts * expert / static_cast<double>(pc.total));
    k_over_e = std::min(1.0, static_cast<double>(m.moe->top_k) / m.moe->experts);
  }
  // One decode step of B sequences at average context c, by part.
  struct DecodeParts {
    double weights = 0, gemm = 0, attention = 0, per_seq = 0, tp_comm = 0, per_layer = 0;
    double dispatch = 0;      // eager launches of the step's ops (the GPU waits for them)
    bool overlapped = false;  // the host work runs during the GPU's step (EngineOverlapsHostWork)
    double Gpu() const { return std::max(weights, gemm) + attention + tp_comm + per_layer; }
    double Total() const {
      const double step = std::max(Gpu(), dispatch);
      return overlapped ? std::max(step, per_seq) : step + per_seq;
    }
  };
  auto decode_parts = [&](double B, double c) {
    DecodeParts d;
    // Linear layers: read the weights once per step, or run the batch's FLOPs.
    const double dense_flops =
        B * 2.0 * (static_cast<double>(pc.active - pc.embedding) - routed_active) / tp;
    const double routed_flops = B * 2.0 * routed_active / tp;
    const double rows = std::max(1.0, B * k_over_e);  // per routed expert
    const double hit = routed_share > 0 ? 1.0 - std::pow(1.0 - k_over_e, B) : 1.0;
    d.weights = wbytes_dev.value() * (1.0 - routed_share + routed_share * hit) / bw;
    if (dev.cpu) {
      d.gemm =
          dense_flops / (peak * std::min(geff * B / (B + dev.decode_knee), dev.power_cap)) +
          routed_flops / (peak * std::min(geff * rows / (rows + dev.decode_knee), dev.power_cap));
    } else {
      d.gemm = (dense_flops + routed_flops) / (peak * std::min(geff, dev.power_cap)) +
               dev.decode_weight_share * d.weights;
    }
    // Attention runs as its own kernels after the projections: it reads every sequence's KV,
    // of which sliding-window layers touch only their window whatever the engine allocates
    // (docs/model.md 4.3).
    const double cw = c * SlidingKvShare(m, c);
    d.attention =
        std::max(B * cw * kv_tok / bw,
                 B * 4.0 * L * cw * s.q / tp / (bf16 * cal.Get("attention_efficiency", 0.45)));
    // Per-request host work outside the layers (scheduling, sampling set-up, bookkeeping): a
    // request's beams are sampled together by one GPU kernel, so it counts requests, not beams.
    d.per_seq = B / nb * cal.Get("decode_overhead_us_per_seq", 8) * 1e-6;
    d.overlapped = setup.host_overlap;
    d.tp_comm = 2 * L * AllReduceSeconds(B * s.h * 2.0, tp, link, lat);
    d.per_layer = L * per_layer_overhead;
    d.dispatch = L * eager_layer;
    return d;
  };
  auto decode = [&](double B, double c) { return decode_parts(B, c).Total(); };
  const double in = std::max(0, input_len), out = std::max(0, output_len);
  const double pf_one = in > 0 ? prefill(in, 1) : 0;
  r.prefill = Seconds(pf_one);
  int B = batch;
  if (B <= 0) {
    // Continuous batching: as many sequences as fit. TensorRT-LLM's default scheduler
    // (GUARANTEED_NO_EVICT) admits a request only when its prompt + generation limit fits; vLLM
    // and SGLang admit on the current (average) context and preempt when the cache fills.
    // B counts requests; with beams each takes `nb` sequences of max_batch and request_kv of KV.
    const double reserved_out =
        std::max(out, static_cast<double>(setup.max_new_tokens.value_or(0)));
    const double avg_ctx = setup.engine == Engine::kTrtLlm && !setup.admit_on_current_kv
                               ? request_kv(in, reserved_out)
                               : request_kv(in, out / 2);
    double by_kv = avg_ctx > 0 ? static_cast<double>(r.kv_tokens) / avg_ctx : setup.max_batch;
    B = static_cast<int>(
        std::max(1.0, std::min<double>(std::floor(setup.max_batch / nb), std::floor(by_kv))));
  }
  r.batch = B;
  if (batch > 0 && !dev.cpu &&
      static_cast<double>(batch) * request_kv(in, out) > static_cast<double>(r.kv_tokens)) {
    r.fits = false;
    r.why = "the static batch's KV cache exceeds the capacity";
  }
  const double c_avg = in + out / 2 + cross;  // attention reads the cross K/V too
  const double t_dec = out > 0 ? decode(B * nb, c_avg) : 0;
  r.decode_step = Seconds(t_dec);
  r.tpot = Seconds(t_dec);
  // Prefill of a whole batch's prompts, amortised per request (chunked prefill batches them).
  const double pf_batch = in > 0 ? prefill(in * B, B) : 0;
  r.ttft = Seconds(batch > 0 ? pf_batch : pf_one);
  const double cycle = pf_batch + out * t_dec;  // B requests from prompt to last token
  if (batch <= 0 && out > 0) {
    // The saturated continuous-batching point (in-flight batching at the capacity): every step
    // decodes the batch and prefills the prompts of the requests that replace the finished ones,
    // B / out per step on average, so a sequence's tokens are one mean step apart: cycle / out,
    // not the pure decode step. A new request waits for the step in progress (half a step on
    // average) and gets its first token at the end of the step that carries its prompt.
    // docs/model.md 10.3.
    const double step = InFlightTpot(Seconds(pf_batch), Seconds(t_dec), output_len).value();
    r.tpot = Seconds(step);
    r.ttft = FirstTokenLatency(Seconds(pf_one), Seconds(step), 0.5);
  }
  r.e2e = Seconds(r.ttft.value() + std::max(0.0, out - 1) * r.tpot.value());
  if (cycle > 0) {
    r.output_tokens_per_s = B * out / cycle;
    r.samples_per_s = B / cycle;
  }
  if (trace) {
    trace->Add("sequences in flight",
               batch > 0 ? "the static batch"
                         : "min(max_batch, KV tokens / (prompt + generation reserve))",
               B, "");
    trace->Add("KV capacity", "engine's KV budget / KV bytes per token",
               static_cast<double>(r.kv_tokens), "tokens");
    trace->Add("prefill of one prompt", "layers x GEMMs + attention + LM head + all-reduces",
               pf_one * 1e3, "ms");
    trace->Add("prefill of the batch's prompts", "the same for B prompts", pf_batch * 1e3, "ms");
    if (out > 0) {
      const DecodeParts d = decode_parts(B * nb, c_avg);
      trace->Add("decode: weights read", "weight bytes per device / (HBM x efficiency)",
                 d.weights * 1e3, "ms");
      trace->Add("decode: GEMM compute", "2 x active params x B / tp / (peak x eff(B))",
                 d.gemm * 1e3, "ms");
      trace->Add("decode: attention", "max(KV bytes read, attention FLOPs) at mean context",
                 d.attention * 1e3, "ms");
      trace->Add("decode: host work",
                 setup.host_overlap
                     ? "requests x decode_overhead_us_per_seq, overlapped (EngineOverlapsHostWork)"
                     : "requests x decode_overhead_us_per_seq",
                 d.per_seq * 1e3, "ms");
      trace->Add("decode: TP all-reduces", "2 per layer, ring over tp", d.tp_comm * 1e3, "ms");
      trace->Add("decode: per-layer overhead", "layers x decode_overhead_us_per_layer",
                 d.per_layer * 1e3, "ms");
      if (d.dispatch > 0) {
        trace->Add("decode: eager dispatch", "layers x eager_dispatch_us_per_layer (the GPU waits)",
                   d.dispatch * 1e3, "ms");
      }
      trace->Add("decode step",
                 setup.host_overlap ? "max(max(weights, GEMM) + the rest but host work, host work)"
                 : eager_layer > 0
                     ? "max(max(weights, GEMM) + the rest, eager dispatch) + host work"
                     : "max(weights, GEMM) + the rest",
                 t_dec * 1e3, "ms");
    }
    trace->Add("TPOT",
               batch > 0 ? "decode step" : "InFlightTpot: (batch prefill + out x step) / out",
               r.tpot.value() * 1e3, "ms");
    trace->Add("TTFT", batch > 0 ? "batch prefill" : "FirstTokenLatency(prefill, TPOT, 0.5)",
               r.ttft.value() * 1e3, "ms");
    trace->Add("output tokens/s per replica", "B x out / (batch prefill + out x step)",
               r.output_tokens_per_s, "tokens/s");
  }
  return r;
}

ServePerf EstimateLlmServingPipelined(const ModelSpec& m, const ServeSetup& setup,
                                      const ComputeDevice& dev, int pp, BytesPerSec stage_link,
                                      Seconds stage_latency, int input_len, int output_len,
                                      int batch, const Calibration& cal) {
  // Encoder-decoder models (Whisper, T5) fit one GPU; their stages are not modelled, so a
  // stated pipeline runs as one replica of the whole model.
  if (pp <= 1 || m.layers < pp || m.arch == ModelArch::kEncoderDecoder) {
    return EstimateLlmServing(m, setup, dev, input_len, output_len, batch, cal);
  }
  // The heaviest stage: ceil(L / pp) layers, with the embeddings and the LM head, and as few of
  // the leading dense-MLP layers (DeepSeek first_k_dense) as any stage of that size holds.
  ModelSpec stage = m;
  stage.layers = (m.layers + pp - 1) / pp;
  if (stage.moe)
    stage.moe->dense_layers = std::max(0, m.moe->dense_layers - (m.layers - stage.layers));
  const double in = std::max(0, input_len), out = std::max(0, output_len);
  // KV capacity: every stage holds all sequences' KV for its own layers.
  ServePerf cap = EstimateLlmServing(stage, setup, dev, input_len, output_len, 0, cal);
  if (!cap.fits) return cap;
  const int B = batch > 0 ? batch : cap.batch;
  const int micro = std::max(1, (B + pp - 1) / pp);  // sequences per virtual engine
  ServePerf st = EstimateLlmServing(stage, setup, dev, input_len, output_len, micro, cal);
  const double link = stage_link.value() > 0 ? stage_link.value() : 1e9;
  auto send = [&](double tokens) {  // activations of `tokens` tokens to the next stage, bf16
    return stage_latency.value() + tokens * static_cast<double>(m.hidden) * 2.0 / link;
  };
  const double hops = pp - 1;
  ServePerf r = st;
  r.batch = B;
  r.kv_tokens = cap.kv_tokens;
  // A stated batch must hold every sequence's whole KV; the saturated batch (0) is the one the
  // capacity estimate admitted by its own rule (KV tokens per prompt + generation reserve).
  r.fits =
      st.fits && (batch <= 0 || static_cast<double>(B) * (in + out) * std::max(1, setup.beams) <=
                                    static_cast<double>(cap.kv_tokens));
  if (!r.fits && r.why.empty()) r.why = "the pipeline's KV cache cannot hold the batch";
  r.prefill = Seconds(pp * st.prefill.value() + hops * send(in));
  r.decode_step = Seconds(out > 0 ? pp * st.decode_step.value() + hops * send(micro) : 0);
  r.tpot = r.decode_step;
  // Prompts of all B sequences: pp micro-batches of `micro` prompts through pp stages.
  const double pf_micro = in > 0 ? st.ttft.value() : 0;  // `micro` prompts on one stage
  const double pf_all = in > 0 ? pp * pf_micro + hops * send(in * micro) : 0;
  r.ttft = Seconds(batch > 0 ? pf_all : r.prefill.value());
  const double cycle = pf_all + out * r.decode_step.value();
  r.e2e = Seconds(r.ttft.value() + std::max(0.0, out - 1) * r.decode_step.value());
  r.output_tokens_per_s = cycle > 0 ? B * out / cycle : 0;
  r.samples_per_s = cycle > 0 ? B / cycle : 0;
  return r;
}

namespace {

// Element-wise work of a forward pass (norms, softmax, GELU) at memory bandwidth, plus the
// per-layer kernel launches.
double ElementwiseSeconds(const Shape& s, double T, double L, bool fused, double bw,
                          double kernel_s, const Calibration& cal) {
  const double passes = fused ? cal.Get("inference_elementwise_passes_fused", 4)
                              : cal.Get("inference_elementwise_passes_eager", 12);
  return L * (passes * T * s.h + (fused ? 1.0 : 3.0) * T * s.f) * 2.0 / bw +
         L * (fused ? 6 : 14) * kernel_s;
}

// A forward-only pass of `r.batch` samples in `t` seconds.
ServePerf FinishForward(ServePerf r, double t) {
  r.prefill = Seconds(t);
  r.e2e = Seconds(t);
  r.ttft = Seconds(t);
  r.samples_per_s = r.batch / t;
  return r;
}

// The normalisation passes of a convolutional forward that no inference engine folds away.
// Batch norm folds into the preceding convolution's weights and its ReLU into the epilogue, so
// a ResNet's feature maps cost nothing beyond the convolutions; group norm (diffusion UNets) and
// layer norm (their transformer blocks) take per-sample statistics, so each map is read and its
// normalised, activated copy written: `unet_serving_norm_passes` (2) passes over the forward's
// feature-map elements (`activation_melems_per_sample`), at memory bandwidth. docs/model.md 10.4.
double NormPassSeconds(const ModelSpec& m, double images, double elem_bytes, double bw,
                       const Calibration& cal) {
  if (m.arch != ModelArch::kDiffusionUnet || !m.activation_melems_per_sample || bw <= 0) return 0;
  return cal.Get("unet_serving_norm_passes", 2) * *m.activation_melems_per_sample * 1e6 * images *
         elem_bytes / bw;
}

// One forward of `batch` requests on CPU sockets. CPU inference runtimes run concurrent
// requests as streams (OpenVINO THROUGHPUT hint, IPEX/MLPerf instances), each on its own group
// of cores; a single request (OpenVINO LATENCY hint) runs one stream on one socket's cores.
// Each stream works on its own request (batch 1 per stream until every core has a stream), so
// its GEMMs have M = seq_len, it reads the weights itself, and it gets its share of the
// socket's bandwidth. Splitting one inference over c cores loses to fork/join barriers, load
// imbalance and per-core tiles too small to fill the units: Amdahl's law with serial fraction
// `serial_fraction`, efficiency 1 / (c * s + 1 - s). Attention (QK^T, softmax, AV) and the
// element-wise ops run on the vector units in fp32 even when the projections use AMX.
ServePerf ForwardOnCpu(const ModelSpec& m, Precision p, const ComputeDevice& dev, int batch,
                       int seq_len, const Calibration& cal, bool fused) {
  ServePerf r;
  r.batch = std::max(1, batch);
  const double b = r.batch;
  const double cores = std::max(1.0, dev.cores);
  const double streams = std::min(b, cores);
  const double cps = std::min(std::max(1.0, dev.cores_per_socket), cores / streams);
  const double per_stream = b / streams;  // requests each stream runs as one batch
  const double share = cps / cores;       // a stream's share of the device
  const double s_frac = dev.serial_fraction;
  const double amdahl = 1.0 / (cps * s_frac + 1.0 - s_frac);
  const double peak = dev.Peak(p) * share;
  const double eff = dev.GemmEff(p) * amdahl;
  const double e = std::max(1.0, BytesPerElement(p));
  // The weights a pass reads (not the embedding tables, which it gathers a few rows of). Every
  // stream on a socket reads the same weights in the same order; when they fit in the share of
  // the socket's last-level cache left beside the streams' activations, they stay there between
  // passes and each stream reads them at its cores' cache rate instead of its share of DRAM.
  const ParamCounts pc = CountParams(m);
  const double weights_read = static_cast<double>(pc.total - pc.embedding) * e;
  const bool cached = dev.core_llc_bw > 0 && weights_read <= dev.llc_weight_share * dev.llc_bytes;
  const double bw = cached ? cps * dev.core_llc_bw : dev.mem_bw * dev.mem_eff * share;
  double t = 0;
  if (!m.is_transformer() || m.layers == 0 || m.hidden == 0) {
    // Convolutions: a stream's cores are filled by one image's layers (no batch knee).
    const double flops = (m.gflops_per_sample ? *m.gflops_per_sample : 0) * 1e9 * per_stream;
    t = std::max(flops / (peak * eff * dev.conv_factor), weights_read / bw);
    t += cal.Get("cnn_layers_overhead", 50) * dev.kernel_s +
         NormPassSeconds(m, per_stream, e, dev.mem_bw * dev.mem_eff * share, cal);
  } else {
    const Shape s = ShapeOf(m);
    const double seq = std::max(1, seq_len);
    const double T = per_stream * seq;
    const double L = m.layers;
    t = L * LayerGemms(s, T, 1, e, peak, eff, dev.GemmKnee(p), bw, dev.kernel_s, dev.power_cap);
    const double attn_rate = dev.attention_on_matrix && OnMatrixUnit(dev, p)
                                 ? dev.Peak(p) * share * dev.GemmEff(p) * amdahl
                                 : dev.peak_fp32 * share * dev.vector_eff * amdahl;
    t += L * 4.0 * per_stream * seq * seq * s.q /
         (attn_rate * cal.Get("attention_efficiency", 0.45));
    t += ElementwiseSeconds(s, T, L, fused, bw, dev.kernel_s, cal);
  }
  return FinishForward(r, t);
}

}  // namespace

ServePerf EstimateForward(const ModelSpec& m, Precision p, const ComputeDevice& dev, int batch,
                          int seq_len, const Calibration& cal, bool fused) {
  if (dev.cpu && dev.cores > 0) return ForwardOnCpu(m, p, dev, batch, seq_len, cal, fused);
  ServePerf r;
  r.batch = std::max(1, batch);
  const double b = r.batch;
  const double peak = dev.Peak(p);
  const double bw = dev.mem_bw * dev.mem_eff;
  const double knee = dev.gemm_knee;
  const double e = std::max(1.0, BytesPerElement(p));
  double t = 0;
  if (!m.is_transformer() || m.layers == 0 || m.hidden == 0) {
    double flops = (m.gflops_per_sample ? *m.gflops_per_sample : 0) * 1e9 * b;
    const double ParamsB = static_cast<double>(CountParams(m).total) * e;
    // ResNet-50 itself keeps b / (b + cnn_serving_batch_knee); a UNet fills the GPU at batch 1.
    // Serving engines (TensorRT, OpenVINO, ...) build their kernels for the batch they serve,
    // so a forward fills the GPU at a smaller batch than a training step does (cnn_batch_knee).
    const double fill =
        internal::ConvFill(flops, cal.Get("cnn_serving_batch_knee", 4) *
                                      cal.Get("cnn_knee_reference_gflops", 8.18) * 1e9);
    t = std::max(flops / (peak * std::min(dev.GemmEff(p) * dev.conv_factor * fill, dev.power_cap)),
                 ParamsB / bw);
    t += cal.Get("cnn_layers_overhead", 50) * dev.kernel_s + NormPassSeconds(m, b, e, bw, cal);
  } else {
    const Shape s = ShapeOf(m);
    const double T = b * std::max(1, seq_len);
    const double L = m.layers;
    t = L * LayerGemms(s, T, 1, e, peak, dev.GemmEff(p), knee, bw, dev.kernel_s, dev.power_cap);
    t += L * 4.0 * b * seq_len * static_cast<double>(seq_len) * s.q /
         (dev.Peak(p == Precision::kInt8 ? Precision::kFp16 : p) *
          cal.Get("attention_efficiency", 0.45));
    t += ElementwiseSeconds(s, T, L, fused, bw, dev.kernel_s, cal);
  }
  return FinishForward(r, t);
}

DiffusionSampling SamplingOf(const ServingShape& shape) {
  DiffusionSampling s;
  if (shape.denoise_steps) s.steps = *shape.denoise_steps;
  if (shape.guidance_scale) s.guidance = *shape.guidance_scale > 1;
  return s;
}

Seconds InFlightTpot(Seconds batch_prefill, Seconds decode_step, int output_len) {
  if (output_len <= 0) return decode_step;
  return Seconds((batch_prefill.value() + output_len * decode_step.value()) / output_len);
}

Seconds TpotP99(Seconds in_flight_tpot, const Calibration& cal) {
  return Seconds(in_flight_tpot.value() * cal.Get("tpot_p99_over_mean", 1.18));
}

Seconds FirstTokenLatency(Seconds prefill_one, Seconds in_flight_step, double wait_share) {
  const double step = std::max(0.0, in_flight_step.value());
  // The step that carries the new prompt carries, besides it, the prompts an average step
  // carries (arrivals are Poisson: the step a tagged arrival lands in holds one more than the
  // mean), so it lasts a mean step plus this prompt's prefill.
  return Seconds(wait_share * step + step + std::max(0.0, prefill_one.value()));
}

ServePerf EstimateRequest(const ModelSpec& m, Precision p, const ComputeDevice& dev, int batch,
                          int seq_len, const Calibration& cal, bool fused,
                          const DiffusionSampling& s) {
  if (m.arch != ModelArch::kDiffusionUnet) {
    return EstimateForward(m, p, dev, batch, seq_len, cal, fused);
  }
  const int images = std::max(1, batch);
  const int guided = s.guidance ? 2 : 1;
  ServePerf r = EstimateForward(m, p, dev, images * guided, seq_len, cal, fused);
  // The text encoders and the VAE decode run once per image, small next to tens of guided UNet
  // forwards, and are not added (a few percent at 20 steps: an underestimate of that size).
  const double t = std::max(1, s.steps) * r.e2e.value();
  r.batch = images;
  r.prefill = r.ttft = r.e2e = Seconds(t);
  r.samples_per_s = t > 0 ? images / t : 0;
  return r;
}

ServePerf EstimateForwardThroughput(const ModelSpec& m, Precision p, const ComputeDevice& dev,
                                    int seq_len, int max_batch, const Calibration& cal, bool fused,
                                    const DiffusionSampling& s) {
  ServePerf best;
  for (int b = 1; b <= std::max(1, max_batch); b *= 2) {
    ServePerf r = EstimateRequest(m, p, dev, b, seq_len, cal, fused, s);
    if (r.samples_per_s > best.samples_per_s) best = r;
  }
  return best;
}

namespace {

// The release "<major>.<minor>" in an engine version text ("~0.6.6 (V0)", "v0.10.1", "main
// 2024-12 (~0.6.5)", "0.x"): the first run of digits followed by a dot (and, when
// `minor_required`, more digits; a date's "2024-12" is skipped). minor is -1 when absent.
struct Release {
  int major = 0, minor = -1, patch = -1;
};
std::optional<Release> ReleaseNumber(std::string_view v, bool minor_required) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!digit(v[i]) || (i > 0 && digit(v[i - 1]))) continue;
    std::size_t j = i;
    Release r;
    while (j < v.size() && digit(v[j])) r.major = r.major * 10 + (v[j++] - '0');
    if (j >= v.size() || v[j] != '.') continue;
    if (j + 1 < v.size() && digit(v[j + 1])) {
      r.minor = 0;
      for (++j; j < v.size() && digit(v[j]); ++j) r.minor = r.minor * 10 + (v[j] - '0');
      if (j + 1 < v.size() && v[j] == '.' && digit(v[j + 1])) {
        r.patch = 0;
        for (++j; j < v.size() && digit(v[j]); ++j) r.patch = r.patch * 10 + (v[j] - '0');
      }
    } else if (minor_required) {
      continue;
    }
    return r;
  }
  return std::nullopt;
}

}  // namespace

namespace {
// A vLLM version text naming the V0 engine ("~0.6.6 (V0)", "V0 engine") or a release before 0.8.
bool VllmV0(const std::string& lower_version) {
  const std::string& v = lower_version;
  if (v.find("(v0") != std::string::npos || v.find("v0)") != std::string::npos ||
      v.find("v0 engine") != std::string::npos)
    return true;
  const auto r = ReleaseNumber(v, /*minor_required=*/true);
  return r && r->major == 0 && r->minor < 8;
}
}  // namespace

namespace {
// The default utilisation of a release already read (`v0`: the V0 engine; `r`: its number).
double UtilizationOf(bool v0, const std::optional<Release>& r) {
  return v0 || (r && r->major == 0 && r->minor < 20) ? 0.9 : 0.92;
}
}  // namespace

double VllmDefaultGpuMemoryUtilization(std::string_view version) {
  if (version.empty()) return UtilizationOf(false, std::nullopt);
  const std::string v = internal::ToLower(version);
  return UtilizationOf(VllmV0(v), ReleaseNumber(v, /*minor_required=*/true));
}

namespace {
bool EstimatesCudaGraphsOf(bool v0, const std::optional<Release>& r) {
  return !v0 && (!r || r->major > 0 || r->minor >= 21);
}
// The sizes of vLLM's default capture list up to `limit`: [1, 2, 4], 8..248 step 8, 256.. step 16.
int CaptureSizesUpTo(int limit) {
  int n = 0;
  for (int s : {1, 2, 4}) n += s <= limit ? 1 : 0;
  if (limit >= 8) n += (std::min(limit, 255) - 8) / 8 + 1;
  if (limit >= 256) n += (limit - 256) / 16 + 1;
  return n;
}
}  // namespace

bool SglangSizesFractionByGpu(std::string_view version) {
  if (version.empty()) return true;  // the current release
  const auto r = ReleaseNumber(internal::ToLower(version), /*minor_required=*/true);
  if (!r || r->major > 0) return true;
  return r->minor > 5 || (r->minor == 5 && r->patch >= 3);
}

bool VllmEstimatesCudaGraphs(std::string_view version) {
  if (version.empty()) return true;  // the current release
  const std::string v = internal::ToLower(version);
  return EstimatesCudaGraphsOf(VllmV0(v), ReleaseNumber(v, /*minor_required=*/true));
}

int VllmCudaGraphCaptures(int max_num_seqs, int max_num_batched_tokens) {
  const int largest =
      std::min({2 * std::max(1, max_num_seqs), 512, std::max(1, max_num_batched_tokens)});
  return CaptureSizesUpTo(largest) + CaptureSizesUpTo(std::min(max_num_seqs, largest));
}

VllmSchedulerDefaults VllmDefaults(const Accelerator& acc, std::string_view version,
                                   int max_model_len, bool chunked_prefill_ok) {
  const std::string v = internal::ToLower(version);
  const bool v0 = VllmV0(v);
  VllmSchedulerDefaults d;
  d.v0 = v0;
  const auto r = ReleaseNumber(v, /*minor_required=*/true);
  d.gpu_memory_utilization = UtilizationOf(v0, r);
  d.estimates_cuda_graphs = EstimatesCudaGraphsOf(v0, r);
  if (v0) {
    d.max_num_seqs = 256;
    // V0 turns chunked prefill on by default above a 32K context ("Chunked prefill is enabled by
    // default for models with max_model_len > 32K", engine/arg_utils.py; not for MLA models),
    // and then schedules (and profiles) 2048 tokens per step (config.py
    // _DEFAULT_MAX_NUM_BATCHED_TOKENS); otherwise one whole max_model_len prompt. That default
    // came with PR 6666 (merged 2024-07-23, first in 0.5.4): an older release profiles the
    // whole context whatever its length. A release not named is taken to have it.
    const bool auto_chunked =
        !r || r->major > 0 || r->minor > 5 || (r->minor == 5 && r->patch >= 4);
    d.max_num_batched_tokens = max_model_len > 32768 && chunked_prefill_ok && auto_chunked
                                   ? 2048
                                   : std::max(max_model_len, 2048);
    return d;
  }
  if (r && r->major == 0 && r->minor < 18) d.v1_sort_sampler = true;
  const bool a100 = internal::ToLower(acc.id).find("a100") != std::string::npos;
  const bool big = acc.Usable().value() >= 70.0 * kBytesPerGiB && !a100;
  d.max_num_seqs = big ? 1024 : 256;
  d.max_num_batched_tokens = big ? 8192 : 2048;
  if (d.estimates_cuda_graphs)
    d.cuda_graph_captures = VllmCudaGraphCaptures(d.max_num_seqs, d.max_num_batched_tokens);
  return d;
}

namespace {

// The weight formats vLLM's platforms list separately.
enum class WeightFormat { kNone, kAwq, kGptq, kBnb, kGguf, kInt4, kInt8, kFp8, kNvfp4, kMxfp4 };

WeightFormat FormatOf(Precision weights, const std::optional<QuantSpec>& quant) {
  if (quant) {
    const std::string& m = quant->method;
    if (m == "awq") return WeightFormat::kAwq;
    if (m == "gptq") return WeightFormat::kGptq;
    if (m.rfind("bnb", 0) == 0) return WeightFormat::kBnb;
    if (m.rfind("gguf", 0) == 0) return WeightFormat::kGguf;
    if (m == "nvfp4") return WeightFormat::kNvfp4;
    if (m == "mxfp4") return WeightFormat::kMxfp4;
    if (m.find("fp8") != std::string::npos) return WeightFormat::kFp8;
    if (m == "int8") return WeightFormat::kInt8;
    return quant->bits < 8 ? WeightFormat::kInt4 : WeightFormat::kNone;
  }
  switch (weights) {
    case Precision::kInt4:
      return WeightFormat::kInt4;
    case Precision::kInt8:
      return WeightFormat::kInt8;
    case Precision::kFp8:
      return WeightFormat::kFp8;
    default:
      return WeightFormat::kNone;
  }
}

const char* FormatName(WeightFormat f) {
  switch (f) {
    case WeightFormat::kAwq:
      return "AWQ";
    case WeightFormat::kGptq:
      return "GPTQ";
    case WeightFormat::kBnb:
      return "bitsandbytes";
    case WeightFormat::kGguf:
      return "GGUF";
    case WeightFormat::kInt4:
      return "4-bit";
    case WeightFormat::kInt8:
      return "INT8";
    case WeightFormat::kFp8:
      return "FP8";
    case WeightFormat::kNvfp4:
      return "NVFP4";
    case WeightFormat::kMxfp4:
      return "MXFP4";
    case WeightFormat::kNone:
      break;
  }
  return "16-bit";
}

// An NVIDIA GPU's compute capability (x 10) from its architecture; 0 when not NVIDIA or unknown.
int NvidiaCapability(const Accelerator& acc) {
  if (internal::ToLower(acc.vendor) != "nvidia") return 0;
  const std::string a = internal::ToLower(acc.arch);
  static const std::pair<const char*, int> kArch[] = {
      {"pascal", 60}, {"volta", 70},  {"turing", 75},     {"ampere", 80},
      {"ada", 89},    {"hopper", 90}, {"blackwell", 100},
  };
  for (const auto& [name, cc] : kArch) {
    if (a.rfind(name, 0) == 0) return cc;
  }
  return 0;
}

}  // namespace

std::string VllmWeightFormatUnsupported(const Accelerator& acc, Precision weights,
                                        const std::optional<QuantSpec>& quant) {
  const WeightFormat f = FormatOf(weights, quant);
  if (f == WeightFormat::kNone) return "";
  const std::string name = FormatName(f);
  const std::string vendor = internal::ToLower(acc.vendor);
  const std::string arch = internal::ToLower(acc.arch);
  if (const int cc = NvidiaCapability(acc); cc > 0) {
    const int need =
        f == WeightFormat::kGptq || f == WeightFormat::kGguf || f == WeightFormat::kInt4 ? 60
        : f == WeightFormat::kBnb                                                        ? 70
                                                                                         : 75;
    if (cc >= need) return "";
    return fmt::format("vLLM's {} kernels need compute capability {}.{} or newer; {} is {}.{}",
                       name, need / 10, need % 10, acc.arch.substr(0, acc.arch.find(' ')), cc / 10,
                       cc % 10);
  }
  if (vendor == "amd") {
    if (f == WeightFormat::kBnb)
      return "vLLM on ROCm has no bitsandbytes on Instinct GPUs (gfx9: 64-wide wavefronts)";
    const bool fp8_hw =
        arch.find("cdna 3") != std::string::npos || arch.find("cdna 4") != std::string::npos;
    if (f == WeightFormat::kFp8 && !fp8_hw)
      return fmt::format("vLLM on ROCm runs FP8 from MI300 (gfx94x) on; {} has no FP8", acc.arch);
    return "";
  }
  if (arch.rfind("gaudi", 0) == 0) {
    if (f == WeightFormat::kBnb || f == WeightFormat::kGguf || f == WeightFormat::kNvfp4 ||
        f == WeightFormat::kMxfp4)
      return fmt::format(
          "vLLM on Gaudi (vllm-gaudi) runs FP8, INT8 (compressed-tensors), AWQ and GPTQ "
          "weights, not {}",
          name);
    return "";
  }
  if (acc.AwsNeuron()) {
    if (f == WeightFormat::kInt8 || f == WeightFormat::kFp8) return "";
    return fmt::format("vLLM on AWS Neuron runs int8 and FP8 weights only, not {}", name);
  }
  if (arch.rfind("tpu", 0) == 0) {
    if (f == WeightFormat::kInt8 || f == WeightFormat::kFp8 || f == WeightFormat::kAwq ||
        f == WeightFormat::kMxfp4)
      return "";
    return fmt::format("vLLM on TPU (tpu-inference) runs int8, FP8, AWQ and MXFP4 weights, not {}",
                       name);
  }
  return "";
}

std::string EngineCannotServe(Engine engine, const Accelerator& acc, Precision weights,
                              const std::optional<QuantSpec>& quant) {
  const int cc = NvidiaCapability(acc);
  const WeightFormat f = FormatOf(weights, quant);
  switch (engine) {
    case Engine::kVllm:
      return VllmWeightFormatUnsupported(acc, weights, quant);
    case Engine::kSglang:
      if (acc.AwsNeuron()) return "SGLang has no AWS Neuron backend";
      return cc > 0 ? VllmWeightFormatUnsupported(acc, weights, quant) : "";
    case Engine::kTrtLlm:
      if (cc < 80)
        return fmt::format(
            "TensorRT-LLM runs on NVIDIA Ampere or newer (compute capability 8.0+){}",
            cc > 0 ? fmt::format("; {} is {}.{}", acc.arch.substr(0, acc.arch.find(' ')), cc / 10,
                                 cc % 10)
                   : fmt::format("; {} is not an NVIDIA GPU", acc.id));
      if (f == WeightFormat::kFp8 && cc < 89)
        return fmt::format(
            "TensorRT-LLM's FP8 needs compute capability 8.9 (Ada, Hopper); {} is "
            "{}.{}",
            acc.arch.substr(0, acc.arch.find(' ')), cc / 10, cc % 10);
      if (f == WeightFormat::kBnb || f == WeightFormat::kGguf)
        return fmt::format("TensorRT-LLM does not load {} checkpoints", FormatName(f));
      return "";
    case Engine::kTgi:
    case Engine::kTransformers:
      break;
  }
  return "";
}

bool KeepsInterleavedWindowKv(Engine engine, std::string_view version) {
  if (engine == Engine::kTgi || engine == Engine::kTrtLlm || engine == Engine::kSglang)
    return false;
  if (engine != Engine::kVllm) return true;
  const std::string v = internal::ToLower(version);
  if (VllmV0(v)) return false;
  const auto r = ReleaseNumber(v, /*minor_required=*/true);
  return !r || r->major > 0 || r->minor >= 10;
}

TgiLaunchDefaults TgiDefaults(std::string_view version, int max_position_embeddings,
                              int max_total_tokens, int max_input_tokens) {
  const auto r = ReleaseNumber(internal::ToLower(version), /*minor_required=*/true);
  TgiLaunchDefaults d;
  const int pos = max_position_embeddings > 0 ? max_position_embeddings : 4096;
  if (r && r->major < 2) {
    d.max_total_tokens = 2048;
    d.max_input_tokens = 1024;
    d.max_batch_prefill_tokens = 4096;
  } else {
    d.max_total_tokens = std::min(pos, 4096);
    d.max_input_tokens = d.max_total_tokens - 1;
  }
  if (max_total_tokens > 0) {
    d.max_total_tokens = max_total_tokens;
    if (max_input_tokens <= 0) d.max_input_tokens = std::max(1, max_total_tokens - 1);
  }
  if (max_input_tokens > 0) d.max_input_tokens = max_input_tokens;
  // 2.0 and later default the prefill budget to max_input_tokens + 50. From 3.0 the launcher
  // first tries a compute-optimal size from its own table of card FLOP/s, not modelled here:
  // its fallback (4096) stands for it.
  if (!r || r->major >= 3)
    d.max_batch_prefill_tokens = std::min(4096, pos);
  else if (r->major == 2)
    d.max_batch_prefill_tokens = d.max_input_tokens + 50;
  // Before 3.0 the router refuses a prefill budget below max_input_tokens; from 3.0 it chunks
  // longer prompts (backends/v3/src/main.rs: the check applies only `!support_chunking`).
  if (r && r->major < 3)
    d.max_batch_prefill_tokens = std::max(d.max_batch_prefill_tokens, d.max_input_tokens);
  // The KV rule by release (globals.py TGI_WIGGLE_ROOM; flash_causal_lm.py warmup).
  const auto at_least = [&](int major, int minor, int patch) {
    if (!r) return true;  // "" = current
    if (r->major != major) return r->major > major;
    if (r->minor != minor) return r->minor > minor;
    return std::max(0, r->patch) >= patch;
  };
  if (at_least(3, 3, 0)) {
    d.rule = {0.90, true};
  } else if (at_least(3, 1, 0)) {
    d.rule = {0.93, true};
  } else if (at_least(3, 0, 0)) {
    d.rule = {0.95, true};
  } else if (at_least(2, 4, 0)) {
    d.rule = {0.90, false};
  } else if (at_least(1, 4, 1)) {
    d.rule = {0.95, false};
  } else {
    d.rule = {1.0, false};
  }
  // The warm-up's prefill logits by release (TgiStartupRule::prefill_logit_copies).
  d.rule.prefill_logit_copies = at_least(3, 0, 0) ? 0 : at_least(2, 4, 0) ? -1 : 2;
  return d;
}

bool BatchesContinuously(Engine engine) { return engine != Engine::kTransformers; }

Seconds StaticBatchSeconds(const ServePerf& r, int output_len, int longest) {
  if (r.samples_per_s <= 0) return Seconds(0);
  return Seconds(r.batch / r.samples_per_s +
                 std::max(0, longest - output_len) * r.decode_step.value());
}

bool EngineOverlapsHostWork(Engine engine, std::string_view version) {
  const auto r = ReleaseNumber(internal::ToLower(version), /*minor_required=*/false);
  if (engine == Engine::kTrtLlm) return !r || r->major >= 1;
  // SGLang's overlap scheduler is on by default from 0.4 (December 2024).
  if (engine == Engine::kSglang) return !r || r->major >= 1 || r->minor >= 4;
  return false;
}

int EngineDefaultMaxSeqs(Engine engine, const Accelerator& acc, std::string_view version) {
  if (engine == Engine::kTrtLlm) return 2048;
  // TGI's router admits at most --max-concurrent-requests (default 128) and refuses the rest.
  if (engine == Engine::kTgi) return 128;
  // SGLang's request pool: at least 2048 requests (the KV pool usually binds first).
  if (engine == Engine::kSglang) return 2048;
  if (engine != Engine::kVllm) return 256;
  return VllmDefaults(acc, version, 0).max_num_seqs;
}

TrtllmBenchLimits TrtllmBenchSettings(const ModelSpec& m, Precision weights, bool nvfp4,
                                      Precision kv, int tp, int pp, int input_len, int output_len,
                                      double device_gib) {
  TrtllmBenchLimits r;
  tp = std::max(1, tp);
  pp = std::max(1, pp);
  // BYTES_PER_ELEM: FP8 1, NVFP4 0.5, else 2; the KV cache 1 byte in FP8, else 2.
  const double wb = nvfp4 ? 0.5 : weights == Precision::kFp8 ? 1.0 : 2.0;
  const double kvb = kv == Precision::kFp8 ? 1.0 : 2.0;
  const double params_g = static_cast<double>(CountParams(m).total) / 1e9;
  const double kv_heads = std::max(tp, m.kv_heads > 0 ? m.kv_heads : m.heads);
  const double head = m.head_dim > 0 ? static_cast<double>(m.head_dim)
                      : m.heads > 0  ? static_cast<double>(m.hidden) / m.heads
                                     : 0.0;
  const double per_token_gib = 2.0 * m.layers * kv_heads * head * kvb / (1024.0 * 1024 * 1024);
  const double avail = device_gib * tp * pp - params_g * wb;
  const double seq = std::max(1, input_len + std::max(1, output_len));
  const double requests = per_token_gib > 0 ? avail * 0.95 / per_token_gib / seq : 0;
  const double raw_bs = std::min(std::max(requests, 0.0), 4096.0) / pp;
  const double raw_tokens =
      std::min(raw_bs * (1.0 + static_cast<double>(input_len) / std::max(1, output_len)), 32768.0);
  auto up = [](double v, double step) { return step * std::ceil(v / step); };
  r.max_batch_size = static_cast<int>(raw_bs < 256    ? std::max(64.0, up(raw_bs, 32))
                                      : raw_bs < 1024 ? up(raw_bs, 128)
                                                      : up(raw_bs, 256));
  r.max_num_tokens = static_cast<int>(raw_tokens < 4096   ? std::max(2048.0, up(raw_tokens, 256))
                                      : raw_tokens < 8192 ? up(raw_tokens, 512)
                                                          : up(raw_tokens, 1024));
  return r;
}

}  // namespace gpuplan
