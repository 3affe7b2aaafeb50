// Serving performance: prefill and decode for LLMs (roofline per step, tensor-parallel
// communication, continuous batching bounded by KV capacity), forward latency/throughput for
// encoders, ViTs and CNNs, on GPUs and on server CPUs. Pure functions; docs/model.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/benchmark.h"
#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"

namespace gpuplan {

// A compute device as the serving model sees it: one GPU, or `sockets` CPU sockets.
struct ComputeDevice {
  std::string id;
  bool cpu = false;
  double peak_fp32 = 0, peak_bf16 = 0, peak_fp16 = 0, peak_fp8 = 0, peak_int8 = 0;  // FLOP/s
  double peak_fp4 = 0;  // FP4 tensor rate (Blackwell); 0 = none
  double mem_bw = 0;    // bytes/s
  Bytes memory;         // device memory (CPU: 0 = not a constraint)
  double gemm_eff = 0.8;
  double power_cap = 1.0;   // sustained fraction of peak under the board's power limit (1 = none)
  double fp8_factor = 1.0;  // fp8 GEMMs: x gemm_eff (scaling casts; the training step's factor)
  double mem_eff = 0.8;
  double kernel_s = 4e-6;
  double gemm_knee = 160;    // FLOP/byte where a GEMM reaches half its asymptotic efficiency
  double decode_knee = 128;  // CPU: sequences where a decode GEMM reaches half its efficiency
  // GPU decode GEMMs: the share of the weight stream that the math does not overlap (docs/model.md
  // 10.1); 0 = a pure roofline
  double decode_weight_share = 0.86;
  double conv_factor = 0.6;  // convolution efficiency relative to GEMM efficiency
  BytesPerSec link_bw;       // per-direction bandwidth to TP peers
  bool nvls = false;         // TP peers on an NVSwitch with NVLink SHARP (NvlsAllReduce)
  // CPUs only (docs/model.md 10.4): cores in use and per socket; the vector (AVX-512/AVX2/
  // NEON/SVE) path's efficiency and knee beside the matrix (AMX) path's `gemm_eff`/`gemm_knee`;
  // the serial fraction of one inference spread over a stream's cores (Amdahl).
  double cores = 0, cores_per_socket = 0;
  bool matrix_unit = false;  // AMX: bf16/int8 GEMMs run on tiles, fp32 and the rest on vectors
  // The runtime runs attention's two matmuls on the matrix unit at the weights' precision
  // (Intel Extension for PyTorch's fused multi-head attention); otherwise attention runs on the
  // vector units in fp32 (oneDNN/OpenVINO graphs, llama.cpp). docs/model.md 10.4.
  bool attention_on_matrix = false;
  double vector_eff = 0.55;
  double vector_knee = 16;
  double serial_fraction = 0;
  // CPUs: the last-level cache of one socket (bytes; 0 = unknown) and how much of it holds a
  // model's weights between passes (`llc_weight_share`); a stream whose weights stay there reads
  // them at its cores' cache rate (`core_llc_bw` bytes/s per core), not from DRAM.
  double llc_bytes = 0;
  double llc_weight_share = 0.5;
  double core_llc_bw = 0;
  // Dense peak for math at `p`, falling back to the next wider path the device has.
  double Peak(Precision p) const;
  // GEMM efficiency and knee of the path math at `p` runs on (CPU: AMX or vector units).
  double GemmEff(Precision p) const;
  double GemmKnee(Precision p) const;
};

ComputeDevice DeviceFromAccelerator(const Accelerator& acc, const Calibration& cal,
                                    IntraNodeLink link);
// `threads` = 0 uses every core; otherwise min(threads, cores) cores do the work.
ComputeDevice DeviceFromCpu(const Cpu& cpu, int sockets, int threads, const Calibration& cal);

// ggml's CPU backend (llama.cpp, llamafile, ollama) on a CPU with a matrix unit: its matmuls
// run on the vector units. ggml's AMX kernels (ggml-cpu/amx, extra_buffer_type::supports_op)
// take only plain 2-D GGML_OP_MUL_MAT of Q4_0/Q4_1/Q8_0/Q4_K/Q5_K/Q6_K/IQ4_XS (or F16) weights
// in a build compiled for AMX: no bf16 weights, no MoE experts (GGML_OP_MUL_MAT_ID). Its x86
// dot products run 16-bit pairs on AVX512-BF16 (vdpbf16ps) and quantized blocks as 256-bit
// int8 dot products, each twice the fp32 FMA rate, at the vector path's efficiency and knee.
// docs/model.md 10.4.
void UseGgmlVectorKernels(ComputeDevice& d);

struct ServeSetup {
  Precision weight_precision = Precision::kBf16;
  std::optional<QuantSpec> quant;
  Precision kv_precision = Precision::kBf16;
  int tp = 1;
  Engine engine = Engine::kVllm;
  std::optional<double> memory_fraction;
  int max_batch = 256;  // engine's max concurrent sequences
  // Beam width: each request decodes `beams` sequences (its KV cache and its share of the decode
  // batch x beams) after one prefill of its prompt; 1 = greedy / sampling. docs/model.md 10.3.
  int beams = 1;
  // Each request's generation limit (max_tokens), when it exceeds the mean output: TensorRT-LLM's
  // default scheduler (GUARANTEED_NO_EVICT) admits a request only when the KV of its prompt plus
  // this many tokens is free. Unset: the requests' output length. docs/model.md 10.3.
  std::optional<int> max_new_tokens;
  // TensorRT-LLM's MAX_UTILIZATION capacity scheduler (NVIDIA's MLPerf harness default): admits
  // on the KV the running requests hold now, as vLLM and SGLang do, instead of reserving each
  // request's prompt plus generation limit. docs/model.md 10.3.
  bool admit_on_current_kv = false;
  // The engine's host work per step (scheduling, sampling set-up, request bookkeeping) runs
  // while the GPU executes the previous step, so it adds no time per sequence
  // (EngineOverlapsHostWork).
  bool host_overlap = false;
  // Eager PyTorch generation (Hugging Face transformers' generate without torch.compile): the
  // host's op launches bound each pass (eager_dispatch_us_per_layer). The planner's
  // `--engine transformers`; a case that names Hugging Face transformers.
  bool eager = false;
  // The engine release as a case or user states it ("" = the current one): TGI's launch defaults
  // and start-up KV rule follow it (TgiDefaults).
  std::string engine_version;
};

struct ServePerf {
  Seconds prefill;      // one request's prompt (LLM) or one batch's forward (encoders, CNNs)
  Seconds decode_step;  // one decode step at `batch` sequences (LLM)
  Seconds ttft;         // time to first token of one request at this batch
  Seconds tpot;         // time per output token
  Seconds e2e;          // one request end to end (LLM) / one batch (others)
  int batch = 1;        // sequences decoded together (or forward batch)
  double output_tokens_per_s = 0;  // whole replica
  double samples_per_s = 0;        // requests (or samples) per second per replica
  std::int64_t kv_tokens = 0;      // KV capacity of the replica (LLM)
  bool fits = true;
  std::string why;
};

// vLLM's scheduler defaults where the user sets none (`version` as stated, "" = current).
// V1 engine (0.8 and later; EngineArgs.get_batch_defaults, API server): 1024 sequences and 8192
// batched tokens on devices with >= 70 GiB that are not A100s, else 256 and 2048. V0 (a version
// before 0.8 or naming V0): 256 sequences and one prefill of max(max_model_len, 2048) tokens
// (chunked prefill off), with the sorting sampler in its profiling run; above a 32K context V0
// turns chunked prefill on and schedules 2048 tokens per step, except for MLA models
// (`chunked_prefill_ok` false). docs/model.md 4.3, 12.6.
struct VllmSchedulerDefaults {
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;
  bool v0 = false;
  // A V1 release before 0.18: its start-up profile samples on PyTorch's native top-k/top-p path,
  // which sorts the logits (InferMemoryOptions::v1_sort_sampler). From 0.18 the native path runs
  // Triton top-k/top-p kernels (vLLM PR 33538; absent from 0.15's API docs, present in 0.18's)
  // and FlashInfer's sampler is on by default (PR 40376). docs/model.md 4.3.
  bool v1_sort_sampler = false;
  // --gpu-memory-utilization where the user sets none (VllmDefaultGpuMemoryUtilization).
  double gpu_memory_utilization = 0.92;
  // From 0.21 the start-up profile estimates the memory of the CUDA graphs it will capture and
  // takes it off the KV budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, "default since
  // v0.21.0"); the graphs of these defaults (VllmCudaGraphCaptures), 0 before.
  bool estimates_cuda_graphs = true;
  int cuda_graph_captures = 0;
};
VllmSchedulerDefaults VllmDefaults(const Accelerator& acc, std::string_view version,
                                   int max_model_len, bool chunked_prefill_ok = true);

// Whether SGLang at `version` ("" = current) derives its default mem_fraction_static from the
// GPU's memory (SglangDefaultMemFractionForGpu): from 0.5.3 (PRs 10975 and 11076 of September
// 2025); before, 0.88 and less for larger groups (SglangDefaultMemFraction). docs/model.md 4.3.
bool SglangSizesFractionByGpu(std::string_view version);

// Whether vLLM at `version` ("" = current) takes its CUDA-graph memory estimate off the KV
// budget: from 0.21 (PR 30515 added the estimate off by default; its start-up log reads
// "CUDA graph memory profiling is enabled (default since v0.21.0)"). docs/model.md 4.3.
bool VllmEstimatesCudaGraphs(std::string_view version);

// The CUDA graphs a V1 engine captures with the default capture list and mode
// (FULL_AND_PIECEWISE): piecewise graphs for every size of [1, 2, 4] + 8..248 step 8 +
// 256..512 step 16 up to min(2 x max_num_seqs, 512, max_num_batched_tokens), and full
// decode graphs for the sizes up to max_num_seqs (vllm/config/vllm.py; logged as
// "PIECEWISE=51 (largest=512), FULL=35 (largest=256)" at 256 sequences). docs/model.md 4.3.
int VllmCudaGraphCaptures(int max_num_seqs, int max_num_batched_tokens);

// Why vLLM cannot serve weights of this format (`weights`, `quant`: a 4-bit method, int8, fp8)
// on `acc`, or "" when it can (16-bit weights always can). Each platform's
// `supported_quantization` list and, on NVIDIA GPUs, each method's minimum compute capability
// (`get_min_capability`): AWQ, FP8, INT8 W8A8 and the FP4 formats need 7.5 (Turing),
// bitsandbytes 7.0, GPTQ and GGUF 6.0; ROCm has no bitsandbytes on Instinct GPUs (gfx9) and FP8
// from MI300 (gfx94x); vllm-gaudi runs compressed-tensors, FP8, AWQ and GPTQ; AWS Neuron int8
// and FP8 weights; TPU (tpu-inference) int8, FP8, AWQ and MXFP4 (docs.vllm.ai "Quantization:
// Supported Hardware"; vllm/platforms). The planner places no vLLM replica where this is not
// empty. docs/model.md 4.3.
std::string VllmWeightFormatUnsupported(const Accelerator& acc, Precision weights,
                                        const std::optional<QuantSpec>& quant);
// Why `engine` cannot serve these weights on `acc`, or "" when it can: vLLM as above; SGLang
// the same NVIDIA kernel minimums (its AWQ, FP8 and Marlin kernels come from the same code) and
// no AWS Neuron backend; TensorRT-LLM NVIDIA Ampere or newer only (its support matrix: SM 8.0,
// 8.6, 8.9, 9.0 and Blackwell), FP8 from Ada (8.9), no bitsandbytes or GGUF checkpoints. TGI and
// transformers are not filtered. docs/model.md 11.
std::string EngineCannotServe(Engine engine, const Accelerator& acc, Precision weights,
                              const std::optional<QuantSpec>& quant);

// vLLM's default --gpu-memory-utilization at `version` ("" = current): 0.92 from 0.20 (vLLM PR
// 38284 raised CacheConfig.gpu_memory_utilization from 0.9; on main by April 2026, after 0.19.0
// of 2026-04-03; the current CacheConfig and `vllm serve` docs read 0.92), 0.9 before (V0 and V1
// through 0.19; v0.16.0's CacheConfig). docs/model.md 4.3.
double VllmDefaultGpuMemoryUtilization(std::string_view version);

// Whether `engine` at `version` ("" = current) keeps only the window of sliding-window layers
// interleaved with global ones (InferMemoryOptions::window_interleaved_kv): vLLM from 0.10 (its
// hybrid KV cache manager; before, the scheduler treated such models as global-only, PR 10584);
// false for TGI, TensorRT-LLM and SGLang (its own SWA pool; SlidingKvEngineShare has each engine's
// rule). docs/model.md 4.3.
bool KeepsInterleavedWindowKv(Engine engine, std::string_view version);

// TGI's launcher defaults where the user sets none (`version` as stated, "" = current;
// launcher/src/main.rs and docs/source/reference/launcher.md of each release):
// before 2.0, --max-input-length 1024, --max-total-tokens 2048 and --max-batch-prefill-tokens
// 4096; from 2.0, max_total_tokens = min(max_position_embeddings, 4096), max_input_tokens one
// less and the prefill budget max_input_tokens + 50 (never below max_input_tokens before 3.0,
// which chunks longer prompts). With its start-up KV rule
// (TgiStartupRule). docs/model.md 4.3.
struct TgiLaunchDefaults {
  int max_total_tokens = 4096;
  int max_input_tokens = 4095;
  int max_batch_prefill_tokens = 4145;
  TgiStartupRule rule;
  // Sets the warm-up these limits imply on `o` (prefill budget, KV rule, warm-up prompts).
  void ApplyTo(InferMemoryOptions& o) const {
    o.max_num_batched_tokens = max_batch_prefill_tokens;
    o.tgi = rule;
    o.tgi.max_input_tokens = max_input_tokens;
  }
};
// `max_total_tokens` / `max_input_tokens` > 0: the user's (the prefill default follows them).
TgiLaunchDefaults TgiDefaults(std::string_view version, int max_position_embeddings,
                              int max_total_tokens = 0, int max_input_tokens = 0);

// The engine's own limit on concurrent sequences when the user sets none (`version`: the engine
// release as a case or user states it, "" = current). TensorRT-LLM's benchmark engines
// (trtllm-bench, trtllm-build) 2048. vLLM's V1 engine (0.8 and later;
// EngineArgs.get_batch_defaults): 1024 on devices with >= 70 GiB that are not A100s, else 256;
// the V0 engine (before 0.8, or a version naming V0) 256. TGI's router 128
// (--max-concurrent-requests). SGLang 2048: without --max-running-requests its scheduler admits
// up to its request pool, min(max(KV tokens / context x 512, 2048), 4096) requests, and at most
// half the KV tokens (model_runner.py, scheduler.py), so 2048 unless the KV pool binds first.
// Others 256. docs/model.md 12.6.
int EngineDefaultMaxSeqs(Engine engine, const Accelerator& acc, std::string_view version);

// The engine limits `trtllm-bench` builds for a model, mapping and dataset (TensorRT-LLM
// tensorrt_llm/bench/build/tuning.py, calc_engine_setting and finetune_setting, 0.12-1.x):
// requests the KV cache holds at 0.95 of (tp x pp x device GiB - the weights' GiB), with one KV
// head per TP rank at least, capped at 4096 and divided over pp, rounded up (to 32 from a floor
// of 64, to 128 from 256, to 256 from 1024); tokens per step that batch x (1 + ISL/OSL), capped
// at 32768 and rounded up (floor 2048). NVIDIA's performance tables (perf-overview.md) are
// measured with it.
struct TrtllmBenchLimits {
  int max_batch_size = 0;
  int max_num_tokens = 0;
};
TrtllmBenchLimits TrtllmBenchSettings(const ModelSpec& m, Precision weights, bool nvfp4,
                                      Precision kv, int tp, int pp, int input_len, int output_len,
                                      double device_gib);

// Whether the engine batches continuously: a request joins the running batch at the next decode
// step (vLLM, TensorRT-LLM, SGLang, TGI). Static-batch runtimes (Hugging Face generate and the
// PyTorch/IPEX harnesses built on it, such as Intel's MLPerf GPT-J SUT with its per-worker
// BATCH_SIZE) run a batch from its prompts to its longest answer; a request that arrives
// meanwhile waits for that batch to finish before its own starts. docs/model.md 12.6.
bool BatchesContinuously(Engine engine);

// How long a static batch at the saturated point `r` runs, from its prompts to the `longest`
// answer's last token (`output_len` is the mean answer `r` was estimated for). A request's p99
// on such an engine is this batch after the one in progress (BatchedServeP99). docs/model.md
// 12.6.
Seconds StaticBatchSeconds(const ServePerf& r, int output_len, int longest);

// Whether the engine overlaps its per-step host work with the GPU's step (`version` as above).
// TensorRT-LLM's PyTorch backend, the default since 1.0, does (its overlap scheduler:
// `disable_overlap_scheduler` defaults to False), as does SGLang from 0.4 (its overlap
// scheduler, on by default; `--disable-overlap-schedule`); the TensorRT-engine runtime of the
// 0.x releases schedules between steps, as vLLM does by default (`--async-scheduling` is
// opt-in).
// docs/model.md 10.2.
bool EngineOverlapsHostWork(Engine engine, std::string_view version);

// LLM serving on one replica of `tp` devices. `batch` > 0 = a static batch of that many
// sequences; 0 = continuous batching up to the KV capacity and setup.max_batch, the saturated
// operating point: TPOT is the mean step (decode plus the interleaved prompts) and TTFT
// FirstTokenLatency at the mean (docs/model.md 10.3). `trace`, when given, receives the terms
// (batch, KV capacity, prefill, the decode step's parts, TPOT, TTFT) with their formulas.
ServePerf EstimateLlmServing(const ModelSpec& m, const ServeSetup& setup, const ComputeDevice& dev,
                             int input_len, int output_len, int batch, const Calibration& cal,
                             Trace* trace = nullptr);

// LLM serving on one replica of `pp` nodes of `setup.tp` devices: tensor parallel within a node,
// pipeline parallel across nodes (vLLM --pipeline-parallel-size). Each stage holds ceil(L/pp)
// layers and is costed with the embeddings and the LM head (the heaviest stage). vLLM keeps pp
// micro-batches in flight (one per virtual engine), so all stages stay busy: the replica's B
// sequences advance one token per cycle of pp stage steps at B/pp sequences, plus (pp - 1)
// activation sends of (tokens x hidden x 2 bytes) over the node fabric, each `stage_latency`
// + bytes / `stage_link`. `pp` = 1 is EstimateLlmServing. docs/model.md section 10.5.
ServePerf EstimateLlmServingPipelined(const ModelSpec& m, const ServeSetup& setup,
                                      const ComputeDevice& dev, int pp, BytesPerSec stage_link,
                                      Seconds stage_latency, int input_len, int output_len,
                                      int batch, const Calibration& cal);
// The mean time between a sequence's tokens in a continuous-batching replica that holds a batch
// in flight: every step decodes the batch and prefills the prompts of the requests that replace
// the finished ones (batch / output_len per step on average), so a request's tokens are
// (prefill of the batch's prompts + output_len x decode step) / output_len apart, not the bare
// decode step. `batch_prefill`: the prefill of the whole batch's prompts (ServePerf::ttft of a
// static-batch estimate). docs/model.md 10.3.
Seconds InFlightTpot(Seconds batch_prefill, Seconds decode_step, int output_len);

// The 99th percentile over requests of their TPOT, from the in-flight mean: under arrivals at a
// rate a request's steps carry more or fewer prompts than the mean, so its TPOT spreads around
// it; `tpot_p99_over_mean` (calibration: MLPerf Server logs' p99/mean). docs/model.md 10.3.
Seconds TpotP99(Seconds in_flight_tpot, const Calibration& cal);

// Time to the first token of a request that joins a continuous-batching replica with other
// requests in flight: it waits for the step in progress (`wait_share` of one in-flight step:
// 0.5 on average, 1 at the 99th percentile of the uniform residual), and its prompt is prefilled
// in the next step, which carries the mean step's work plus this prompt (a tagged Poisson arrival
// lands in a step with one more prompt than the mean): wait_share x step + step + prefill_one.
// `in_flight_step` is InFlightTpot's. A request alone on the replica takes prefill_one.
// docs/model.md 10.3.
Seconds FirstTokenLatency(Seconds prefill_one, Seconds in_flight_step, double wait_share);

// One forward pass of an encoder / ViT / CNN at `batch` samples (seq_len for encoders).
// `fused`: an inference engine that fuses element-wise work into GEMM epilogues (TensorRT,
// OpenVINO, ONNX Runtime); false for eager PyTorch.
ServePerf EstimateForward(const ModelSpec& m, Precision p, const ComputeDevice& dev, int batch,
                          int seq_len, const Calibration& cal, bool fused = true);

// Text-to-image sampling of a diffusion UNet (a preset whose sample is one denoising step): an
// image takes `steps` UNet forwards, each over twice the batch under classifier-free guidance
// (the conditional and unconditional halves run as one batch). The defaults are diffusers'
// StableDiffusionPipeline and StableDiffusionXLPipeline (num_inference_steps 50; guidance_scale
// 7.5 / 5.0, above 1, so guidance on); a named benchmark states its own (MLPerf SDXL: 20 steps,
// guidance 8). docs/model.md 10.4.
struct DiffusionSampling {
  int steps = 50;
  bool guidance = true;
};
// The sampling a request shape states (a benchmark's or the job's steps; guidance when the scale
// is above 1), diffusers' defaults for what it leaves unset. The planner's and the validation
// adapter's one rule.
DiffusionSampling SamplingOf(const ServingShape& shape);

// One request batch of a non-LLM: `batch` samples through one forward, or for a diffusion UNet
// `batch` images through the sampling loop `s` (e2e = steps x the forward of the guided batch).
ServePerf EstimateRequest(const ModelSpec& m, Precision p, const ComputeDevice& dev, int batch,
                          int seq_len, const Calibration& cal, bool fused = true,
                          const DiffusionSampling& s = {});

// Best throughput over batch sizes up to `max_batch` (offline scenario), for non-LLMs: requests
// as EstimateRequest.
ServePerf EstimateForwardThroughput(const ModelSpec& m, Precision p, const ComputeDevice& dev,
                                    int seq_len, int max_batch, const Calibration& cal,
                                    bool fused = true, const DiffusionSampling& s = {});

}  // namespace gpuplan
