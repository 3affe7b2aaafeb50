// Pure estimators: per-GPU memory for training and for serving. No I/O, no globals, no
// catalog lookups; validated structs in, a named breakdown out. Formulas and sources are
// documented beside each term in src/estimate/ and in docs/model.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/model.h"
#include "gpuplan/units.h"

namespace gpuplan {

enum class TrainMethod : std::uint8_t { kPretrain, kFull, kLora, kQlora };
enum class Optimizer : std::uint8_t {
  kAdamW,
  kAdam,
  kSgd,
  kLion,
  kAdamW8bit,
  kAdamW4bit,
  kAdafactor,
  kAdamMini,
  kMuon,
  kRmsprop,
  kAdagrad,
  kLion8bit,
  kAdemamix,
};
enum class Recompute : std::uint8_t { kNone, kSelective, kFull };
// Which weights LoRA adapts: q,v only (PEFT's default for Llama), all attention projections,
// or every linear layer of the blocks (QLoRA paper).
enum class LoraTargets : std::uint8_t { kQv, kAttention, kAllLinear };
// Serving engine memory semantics.
enum class Engine : std::uint8_t { kTransformers, kVllm, kTrtLlm, kSglang, kTgi };

const char* TrainMethodName(TrainMethod m);
const char* OptimizerName(Optimizer o);
const char* RecomputeName(Recompute r);
// "none", "selective", "full", or "full:12" for block recompute of 12 layers per stage.
std::string RecomputeLabel(Recompute r, int recompute_layers);
const char* EngineName(Engine e);
std::optional<TrainMethod> ParseTrainMethod(std::string_view s);
std::optional<Optimizer> ParseOptimizer(std::string_view s);
// Whether an optimizer's name (or a framework text naming it) is a paged variant
// ("PagedAdamW8bit", "paged_adamw_32bit"): TrainMemoryOptions::paged_optimizer.
bool PagedOptimizerName(std::string_view s);
std::optional<Recompute> ParseRecompute(std::string_view s);
// The canonical names of each enum, in enum order: the did-you-mean candidates. Names, parsers
// and these lists come from one table per enum (src/estimate/memory.cc).
std::vector<std::string> TrainMethodNames();
std::vector<std::string> OptimizerNames();
std::vector<std::string> RecomputeNames();
std::vector<std::string> EngineNames();

// Training frameworks differ in what they can overlap and shard; the planner and `validate`
// apply the same capabilities (docs/model.md section 7.3).
enum class TrainFramework : std::uint8_t {
  kGeneric,         // PyTorch DDP/FSDP-style defaults: nothing beyond the calibration table
  kMegatronLegacy,  // Megatron-LM before Megatron-Core: ZeRO <= 1, gradient all-reduce after
                    // backward
  kMegatronCore,    // Megatron-Core / NeMo with Transformer Engine: TP and parameter-gather overlap
  kDeepSpeed,       // DeepSpeed: pipeline parallelism only with ZeRO 0-1
  kFsdp,            // PyTorch FSDP (the HF Trainer's): ZeRO-2/3-style sharding, no pipeline
  kDdp,             // PyTorch DDP: replicated data parallelism only
  kTorchtune,       // torchtune recipes: one GPU or FSDP2 full shard, pure bf16 (no fp32 master,
                    // bf16 AdamW states and LoRA adapters), chunked cross-entropy
  kTorchtitan,      // torchtitan: FSDP2 (fp32 sharded parameters, bf16 compute) with TP, PP and
                    // CP; op-level selective checkpointing; an eager fp32 cross-entropy
};
const char* TrainFrameworkName(TrainFramework f);
// A training precision as jobs, the CLI and cases name it: bf16, fp16, fp8, fp32, or fp4
// (NVFP4 GEMMs: kFp8 with TrainMemoryOptions::fp4_gemms). Mixed-precision spellings
// ("bf16-mixed", "amp_bf16") are the 16-bit ones; int8/int4/tf32 are not training precisions.
struct TrainPrecision {
  Precision precision = Precision::kBf16;
  bool fp4_gemms = false;
};
std::optional<TrainPrecision> ParseTrainPrecision(std::string_view s);
// "bf16", "fp16", "fp8", "fp4", "fp32": the choices the parsers list.
std::vector<std::string> TrainPrecisionNames();
// The name a plan reports: "fp4" for NVFP4 training, else PrecisionName.
const char* TrainPrecisionName(Precision p, bool fp4_gemms);
// "generic", "megatron", "megatron-core" (also "mcore", "nemo"), "deepspeed", "fsdp"
// (also "fsdp2"), "ddp", "torchtune", "torchtitan".
std::optional<TrainFramework> ParseTrainFramework(std::string_view s);
// From a free-text description ("NVIDIA NeMo Framework Release 24.04", "Megatron-LM (2021)",
// "DeepSpeed ZeRO-100B"); kGeneric when none is named.
TrainFramework TrainFrameworkFromText(std::string_view text);
// The framework a run-to-target benchmark's reference implementation trains `m` with, where a
// job or case names none: MLPerf Training's LLM benchmarks (gpt3, llama2_70b_lora, llama31_8b,
// llama31_405b) run NVIDIA's NeMo on Megatron-Core, whose implementations directories in
// mlcommons/training_results_v4.0+ every closed-division submitter on NVIDIA GPUs re-runs; the
// others (ResNet, BERT, RetinaNet, Stable Diffusion) their own PyTorch code (kGeneric).
TrainFramework BenchmarkReferenceFramework(const ModelSpec& m);
// Whether framework `f` runs fused (FlashAttention-style) attention on `acc`: the flash-attn
// kernels Megatron(-Core)/NeMo and DeepSpeed call need Ampere or newer (FlashAttention-2; the
// first version also Turing), so on Volta they materialise the scores; PyTorch's SDPA (plain
// PyTorch, FSDP, torchtune, HF) keeps a memory-efficient kernel there.
bool FusedAttentionOn(const Accelerator& acc, TrainFramework f);
std::vector<std::string> TrainFrameworkNames();

std::optional<LoraTargets> ParseLoraTargets(std::string_view s);
std::optional<Engine> ParseEngine(std::string_view s);

// How a training job is split over GPUs. dp is the data-parallel size; the GPU count is
// tp * pp * cp * dp (experts are split over ep ranks drawn from dp).
struct Parallelism {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;   // context parallel: splits the sequence
  int ep = 1;   // expert parallel: splits the routed experts
  int vpp = 1;  // interleaved virtual stages per pipeline rank
  bool sequence_parallel = false;
  // ZeRO stage 0-3 (FSDP full shard = 3, grad-op = 2) over the sharding group.
  int zero_stage = 0;
  // Sharding group size; 0 = the whole data-parallel group (FSDP hybrid: GPUs per node).
  int shard_group = 0;
  int gpus() const { return tp * pp * cp * dp; }
};

// Memory that is not tensors of the model: each term is a named, documented input.
struct RuntimeReserve {
  // CUDA context + cuBLAS/cuDNN workspaces per process. Measured ~0.5-1 GiB on A100/H100 with
  // PyTorch 2.x (nvidia-smi minus torch reserved).
  Bytes cuda_context = GiB(0.75);
  // NCCL communicator buffers, only when the GPU communicates (NCCL_BUFFSIZE 4 MiB x channels
  // x peers; ~0.5 GiB for an 8-GPU ring on NVLink).
  Bytes nccl_buffers = GiB(0.5);
  // Non-torch memory a serving engine's profiling run adds after its start-up snapshot (cuBLAS
  // and cuBLASLt workspaces, attention-backend buffers): what vLLM prints as non_torch_memory
  // and counts against gpu_memory_utilization. The CUDA context and NCCL communicators exist
  // before the snapshot and sit outside the fraction. vLLM's own logs: 0.16 GiB (PR #12126,
  // H100, 2025-01), 0.10 (issue #12330, A100-40GB), 0.20 (PR #14447, 24-GiB GPUs, TP > 1),
  // 0.25 (0.19.0, H100). docs/model.md 4.3.
  Bytes profiled_non_torch = GiB(0.2);
  // The same increase on a pipeline stage that runs no LM head and no sampler (vLLM's first
  // stage at PP > 1): 0.07 GiB at PP 2 and 4 against 0.24-0.27 at PP 1 (vLLM 0.19.0 on H100,
  // llm-d-planner's accuracy report, Llama-3.1-8B): the sampler's and LM head's kernels and
  // workspaces are what the last stage adds.
  Bytes profiled_non_torch_no_sampler = GiB(0.07);
  // NCCL's NVLink SHARP (NVLS) all-reduce on an NVSwitch node of Hopper or newer GPUs: NCCL
  // (>= 2.17) turns it on by default there and its multicast buffers take ~1.85 GiB per GPU
  // once a tensor-parallel group communicates (vLLM 0.19 on H100: non-torch memory 2.06-2.17
  // GiB at TP 2-4 against 0.24-0.27 at TP 1, llm-d-planner's accuracy report; vLLM PR #10511:
  // 3.58 GiB at TP 2 against 1.79 at TP 1). NeMo's launcher and SGLang turn NVLS off to save
  // that memory (NCCL_NVLS_ENABLE=0). docs/model.md 4.3.
  Bytes nvls_buffers = GiB(1.85);
  // vLLM (from 0.21, by default) takes an estimate of its CUDA graphs' memory off the KV budget:
  // it captures the largest graph of each mode and one more, and charges the first capture plus
  // (graphs - 1) x the second (profile_cudagraph_memory). A graph replays every layer's kernels,
  // so the charge grows with the layers times the graphs: 0.17 MiB per layer per graph, from
  // Qwen3-8B's 0.52 GiB for 51 piecewise + 35 full graphs of 36 layers (vLLM 0.21.0, LMCache
  // issue 3430); Gemma-3-4B's captured graphs took 0.65 GiB (vLLM PR 21489: 67 piecewise
  // graphs of 34 layers, 0.29 MiB, the pool itself). docs/model.md 4.3.
  Bytes cuda_graph_per_layer = MiB(0.17);
  // PyTorch caching-allocator slack as a fraction of tensor memory (fragmentation: reserved
  // minus allocated at peak; typically 5-10%).
  double allocator_slack = 0.05;
};

struct TrainMemoryOptions {
  TrainMethod method = TrainMethod::kFull;
  // Math/storage precision of weights and activations (bf16, fp16, fp8, fp32).
  Precision precision = Precision::kBf16;
  // Standard mixed precision keeps an fp32 master copy of the weights (4 B/param). "Pure bf16"
  // training (and the guides' B4 arithmetic) has none.
  bool master_weights = true;
  Optimizer optimizer = Optimizer::kAdamW;
  // Optimizer state dtype (Adam m and v): fp32 in mixed precision; bf16 in some pure-bf16
  // recipes (torchtune).
  Precision optimizer_state_dtype = Precision::kFp32;
  // Gradient dtype held for the optimizer: the weight dtype by default; fp32 for Megatron's
  // main_grad accumulation.
  std::optional<Precision> grad_dtype;
  int micro_batch = 1;
  int seq_len = 2048;
  // Micro-batches per step per pipeline (gradient accumulation); bounds the in-flight count.
  int num_microbatches = 1;
  Recompute recompute = Recompute::kNone;
  // NVFP4 training (Transformer Engine's NVFP4BlockScaling recipe; Megatron-Core
  // `--fp4-format e2m1 --fp4-recipe nvfp4`): the linear layers' GEMMs run on the FP4 tensor
  // cores; the rest is FP8 training (precision kFp8: bf16 weights, gradients, activations and
  // attention). Set by the training precision "fp4" (ParseTrainPrecision).
  bool fp4_gemms = false;
  // Selective recompute as an operator policy instead of Megatron's attention-core recompute
  // (torchtitan's "op" SAC, parallelize_llama.py `_save_list`: each block keeps its input, the
  // attention kernel's output and every other matmul's output, and recomputes the rest).
  bool op_level_sac = false;
  // FSDP2 under torch.distributed.pipelining: the stage's parameters stay unsharded for the
  // whole step (torchtitan: reshard_after_forward=False with PP, "to avoid per-microbatch
  // all-gathers") and gradients accumulate unsharded in the fp32 reduce dtype until the last
  // micro-batch's backward reduce-scatters them (PipelineStage: set_requires_gradient_sync
  // (False) before it; FSDPParam.to_accumulated_grad_if_needed upcasts).
  bool fsdp_unsharded_step = false;
  // With full recompute: how many of the most loaded stage's layers are recomputed (Megatron's
  // recompute_method=block, recompute_num_layers); the rest keep all their activations.
  // 0 = every layer.
  int recompute_layers = 0;
  bool flash_attention = true;
  // Dropout masks are stored when the model trains with dropout (BERT/GPT-2 era); modern LLMs
  // train without.
  bool dropout = false;
  // Fused kernels (Transformer Engine, Megatron, Unsloth, torch.compile). Eager PyTorch
  // (HF Trainer, torchtune) also keeps RMSNorm's fp32 upcast (4sbh per norm) and the rotary
  // embedding's rotated q and k (2sb(q+kv)) for backward, and a gated MLP's SiLU output and
  // product (a fused SwiGLU recomputes them from the gate and up outputs).
  bool fused_kernels = false;
  // torch.compile's training graphs (AOTAutograd's min-cut rematerialization partitioner, the
  // Inductor default) recompute fusible pointwise ops in the backward instead of saving their
  // outputs: the norms' outputs and the MLP activation (GELU output; SwiGLU's activation and
  // product) are rebuilt from what the GEMMs saved anyway.
  bool compiled = false;
  // MoE dispatcher that sends a token once per remote node and fans it out over NVLink there
  // (DeepEP, HybridEP: Megatron-Core's flex dispatcher); false = one copy per routed expert
  // (NCCL all-to-all dispatcher).
  bool ep_node_dedup = false;
  // Logits buffer: bf16 logits + fp32 upcast for the loss, per token, over the vocabulary.
  bool logits_buffer = true;
  double logits_bytes_per_element = 6.0;
  // LoRA / QLoRA.
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::kAllLinear;
  double base_bits = 16;     // frozen base: 16, 8 or 4 (QLoRA NF4)
  bool adapter_fp32 = true;  // PEFT keeps adapter weights in fp32
  // torchtune's optimizer_in_bwd: each gradient is applied and freed during backward, so only
  // one parameter's gradient is alive at a time.
  bool optimizer_in_backward = false;
  // Activation checkpoints kept in host RAM (torchtune activation offloading, Unsloth's
  // gradient checkpointing): only the layer being computed holds activations on the GPU.
  bool activation_offload = false;
  // Optimizer offload (ZeRO-Offload, Megatron-Core optimizer_cpu_offload, FSDP CPUOffload):
  // the fp32 master copy and the optimizer states (of this GPU's shard) live in host RAM and
  // the optimizer step runs on the CPU; gradients go down and updated weights come back over
  // the host link each step.
  bool optimizer_offload = false;
  // A paged optimizer (bitsandbytes PagedAdamW / PagedAdamW8bit / paged Lion): its states live
  // in CUDA managed memory, allocated outside PyTorch's caching allocator, and the driver pages
  // them to host RAM when the GPU runs short, so they neither count toward the allocator's peak
  // nor cause an out-of-memory error (bitsandbytes docs, "Paged optimizers"; torchtune's
  // memory tutorial: "higher memory savings from bnb's PagedAdamW8bit"). They need host RAM.
  bool paged_optimizer = false;
  // The paged states that do not fit beside the allocator's peak on the GPU (bytes; set by
  // EvaluateTraining from the memory estimate). Every optimizer step touches every state, so
  // the driver migrates these in from host RAM and evicts as many back, each step, over the
  // host link (cudaMemPrefetchAsync, which bitsandbytes issues before each paged update, moves
  // pages at the link's rate; the update waits for them).
  double paged_spill_bytes = 0;
  // The offloaded step runs beside the GPU's backward pass instead of after it (torchao's
  // CPUOffloadOptimizer: a post-accumulate-grad hook copies each gradient to host RAM on a side
  // stream, and step() updates each parameter on the CPU as soon as its copy lands, while the
  // GPU still runs the backward of the earlier layers; the updated weights go back on that
  // stream once the backward's copies are done). DeepSpeed's ZeRO-Offload steps after the
  // backward.
  bool offload_step_overlaps_backward = false;
  // Parameter offload (ZeRO-Infinity offload_param; ZeRO-3 only): the 16-bit weight shard
  // lives in host RAM too and is read over the host link for every forward and backward.
  bool param_offload = false;
  // Gradient offload: gradients move to host RAM as the backward pass produces them, so about
  // one layer's worth is alive on the GPU (torchao CPUOffloadOptimizer offload_gradients=True;
  // DeepSpeed ZeRO-Offload streams reduced gradient partitions to the CPU).
  bool gradient_offload = false;
  // ZeRO-3 gathers one layer at a time; override the derived largest layer (parameters).
  std::optional<double> largest_layer_params;
  // Flat gradient buckets a framework keeps on the GPU beside the gradients, in elements of the
  // training dtype (DeepSpeed ZeRO-2: ApplyFrameworkMemory).
  double grad_bucket_elements = 0;
  // Gradients are tensors of their own, freed after every optimizer step
  // (optimizer.zero_grad(set_to_none=True), PyTorch's default since 2.0) rather than persistent
  // buffers (Megatron's main_grad, DeepSpeed's partitions, DDP's buckets): the backward pass
  // allocates each layer's gradients as it frees that layer's saved activations, so the
  // allocated peak holds max(activations + logits, gradients + one layer's working set), not
  // their sum (MemoryBreakdown::backward_overlap). ApplyFrameworkMemory sets it.
  bool grads_freed_each_step = false;
  // Mixed precision as autocast over fp32 parameters (plain PyTorch): fp32 gradients.
  // ApplyFrameworkMemory sets it.
  bool autocast_fp32_grads = false;
  RuntimeReserve reserve;
  bool include_runtime = true;  // false = model tensors only (formula comparisons)
  bool notes = true;            // false in search loops: no strings, no allocation
};

// DeepSpeed's reduce_bucket_size default (elements; runtime/zero/config.py).
inline constexpr double kDeepSpeedReduceBucketElements = 5e8;
// What a framework does to a layout's training memory. torchtune's recipes train in pure bf16
// (the model, its LoRA adapters and torch.optim's AdamW states in bf16, no fp32 master copy:
// recipes set_default_dtype(bf16)) with CEWithChunkedOutputLoss (bf16 logits, one fp32 chunk of
// 8; compiled: fused, no fp32 chunk). DeepSpeed ZeRO-2 (stage_1_and_2.py,
// contiguous_gradients) reduces gradients through flat buckets of reduce_bucket_size elements at
// the model's dtype, two when overlap_comm is on (gpuplan's emitted DeepSpeed config sets it;
// so do the HF and DeepSpeed example ZeRO-2 configs), allocated at the first backward and held
// for the run: 2 x 5e8 x 2 B = 1.86 GiB in bf16. docs/model.md 3.2.
void ApplyFrameworkMemory(TrainFramework f, const Parallelism& p, TrainMemoryOptions& o);

// Per-GPU memory, term by term. Every term is bytes on the most loaded GPU.
struct MemoryBreakdown {
  Bytes weights;         // model weights held for compute (sharded by TP/PP/ZeRO-3)
  Bytes master_weights;  // fp32 master copy (mixed precision)
  Bytes gradients;
  Bytes optimizer;    // optimizer states (Adam m, v; Lion m; SGD momentum)
  Bytes adapter;      // LoRA adapter weights + their grads + optimizer states
  Bytes activations;  // stored for backward (training) or the forward workspace (serving)
  Bytes logits;       // logits/loss buffer
  Bytes kv_cache;     // serving only
  Bytes cuda_context;
  Bytes nccl_buffers;
  Bytes allocator_slack;
  // Held in host RAM by this GPU's process (optimizer / parameter offload); not in Total().
  Bytes host_offload;
  // Bytes of gradients and of saved activations + logits that are never allocated at the same
  // time (TrainMemoryOptions::grads_freed_each_step). Total() keeps the sum: the caching
  // allocator's reserved memory (what nvidia-smi shows and what runs out) does not return freed
  // activation blocks in time to be reused for every gradient; PeakAllocated() subtracts it.
  Bytes backward_overlap;
  std::vector<std::string> notes;  // assumptions and what a setting leaves out

  Bytes ModelStates() const { return weights + master_weights + gradients + optimizer + adapter; }
  Bytes Total() const {
    return ModelStates() + activations + logits + kv_cache + cuda_context + nccl_buffers +
           allocator_slack;
  }
  // Peak of the tensors PyTorch's allocator holds (torch.cuda.max_memory_allocated).
  Bytes PeakAllocated() const {
    return ModelStates() + activations + logits + kv_cache - backward_overlap;
  }
};

// Bytes of optimizer state per trained parameter (excluding any master copy).
double OptimizerStateBytes(Optimizer o, Precision state_dtype);

// Activation bytes stored by one transformer layer for one micro-batch on one GPU, following
// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
// eqs. 1-5), generalised to GQA and gated MLPs. `seq` is the sequence length on this GPU.
// `fp8_gemm_inputs`: FP8 training (Transformer Engine) saves the inputs of the four linear
// layers for the weight gradient in FP8, one byte each. `compiled`: torch.compile's min-cut
// partitioner (TrainMemoryOptions::compiled) keeps neither the norms' outputs nor the MLP
// activation's outputs.
Bytes ActivationBytesPerLayer(const ModelSpec& m, int micro_batch, int seq, int tp,
                              bool sequence_parallel, Recompute recompute, bool flash_attention,
                              bool dropout, double bytes_per_element, bool fused_kernels = false,
                              bool fp8_gemm_inputs = false, bool compiled = false);
// The same under operator-level selective checkpointing (TrainMemoryOptions::op_level_sac):
// the block's input, the attention output and half of the matmul outputs.
Bytes OpSacBytesPerLayer(const ModelSpec& m, int micro_batch, int seq, int tp,
                         bool sequence_parallel, double bytes_per_element);

// LoRA adapter parameters for rank r over the chosen target modules (all layers).
std::int64_t LoraParams(const ModelSpec& m, int rank, LoraTargets targets);

// Per-GPU training memory. Preconditions: the model validates, sizes >= 1.
MemoryBreakdown EstimateTrainingMemory(const ModelSpec& m, const Parallelism& par,
                                       const TrainMemoryOptions& opt);

// How TGI sizes its KV cache after its warm-up (server/.../flash_causal_lm.py `warmup`). The
// router's warm-up batch fills --max-batch-prefill-tokens with requests of --max-input-tokens
// that ask for prefill logprobs (backends/client warmup: `prefill_logprobs: true`), so the
// reserved peak holds the prefill's full logits. Then, with that memory still reserved:
// releases before 1.4.1 take all the free memory; 1.4.1-2.4 keep `wiggle` of it (0.95; 0.90 in
// the 2.4 series, TGI_WIGGLE_ROOM); 3.0 and later take the free memory down to
// (1 - wiggle x cuda_memory_fraction) of the total (`of_total`). The warm-up batch's own blocks
// are added back. docs/model.md 4.3.
struct TgiStartupRule {
  double wiggle = 0.90;
  bool of_total = true;
  int max_input_tokens = 0;  // the warm-up requests' prompt (0 = context - 1)
  // Full-vocabulary logit tensors per warm-up prefill token at the warm-up's peak (beside the
  // local shard a TP rank gathers them from): 2 before 2.4 (the LM head's output and a separate
  // log_softmax for the prefill logprobs the warm-up asks for); in 2.4 the log_softmax runs in
  // place, 1, except that a TP rank's gathered logits are a transposed view
  // (TensorParallelHead), which the in-place op writes through a contiguous temporary, 2; 0
  // from 3.0, which drops prefill logprobs unless REQUEST_LOGPROBS is set (globals.py, default
  // "0"; flash_causal_lm.py: "This consumes so much memory on long requests"), so the LM head
  // runs on each request's last token only. -1: 2.4's rule (1, 2 at TP > 1).
  int prefill_logit_copies = 0;
};

struct InferMemoryOptions {
  Precision weight_precision = Precision::kBf16;
  std::optional<QuantSpec> quant;  // overrides weight_precision for the linear layers
  Precision kv_precision = Precision::kBf16;
  int tp = 1;
  int pp = 1;
  int concurrency = 1;  // sequences resident at once
  int context = 4096;   // tokens per sequence (prompt + output)
  Engine engine = Engine::kTransformers;
  // vLLM: fraction of TOTAL GPU memory the engine may use. TRT-LLM: fraction of FREE memory
  // after weights (kv_cache_free_gpu_mem_fraction). SGLang: mem_fraction_static of total.
  std::optional<double> memory_fraction;
  int max_num_batched_tokens = 8192;  // engine's profiling forward (vLLM V1 default)
  int max_num_seqs = 256;
  int block_size = 16;  // KV-cache block (vLLM pages); capacity is whole blocks
  // vLLM's V0 engine (< 0.8) profiles its sampler with top-k and top-p on (dummy sampling
  // params top_k = vocab - 1, top_p = 0.99): a sort of every sequence's fp32 logits, after the
  // forward's tensors are freed. Its peak then replaces the forward's (docs/model.md 4).
  bool sort_sampler_profile = false;
  // vLLM's V1 engine before 0.18 profiles the same sampler on PyTorch's native top-k/top-p path
  // (a full sort of every sequence's fp32 logits); later releases run Triton top-k/top-p
  // kernels or FlashInfer's sampler, which sort nothing (VllmSchedulerDefaults::v1_sort_sampler).
  bool v1_sort_sampler = false;
  // The GPUs sit on an NVSwitch with NVLink SHARP (NvlsAllReduce): tensor-parallel groups pay
  // RuntimeReserve::nvls_buffers (vLLM, where its profiling measures them; SGLang turns NVLS
  // off, and the other engines keep the generic nccl_buffers reserve).
  bool nvls = false;
  // CUDA graphs whose memory vLLM's start-up profiling estimates and takes off the KV budget
  // (VllmSchedulerDefaults::cuda_graph_captures; 0: a release before 0.21, --enforce-eager, or
  // another engine). RuntimeReserve::cuda_graph_per_layer per layer of the stage.
  int cuda_graph_captures = 0;
  // SGLang sizes its default mem_fraction_static from the GPU's memory (from 0.5.3,
  // SglangDefaultMemFractionForGpu); false: the earlier rule by world size.
  bool sglang_gpu_memory_rule = true;
  TgiStartupRule tgi;  // Engine::kTgi: the release's KV rule (TgiDefaults in serve.h)
  // The engine release keeps only the window of a model's sliding-window layers when they are
  // interleaved with global ones (vLLM from 0.10: KeepsInterleavedWindowKv in serve.h). How each
  // engine holds sliding-window KV: SlidingKvEngineShare. docs/model.md 4.3.
  bool window_interleaved_kv = true;
  // The engine counts its KV pool in tokens of the whole context on every layer, whatever it
  // later frees: vLLM V0 sizes and logs "# GPU blocks" from the bytes of a block across all
  // layers (its block manager recycles an all-sliding model's blocks beyond the window, which
  // the logged count does not show). False: SlidingKvEngineShare is 1.
  bool sliding_kv = true;
  RuntimeReserve reserve;
};

// The share of the global-attention KV (KvBytesPerToken) a token of a `opt.context`-token
// sequence costs on `opt.engine` for a model with sliding-window layers (docs/model.md 4.3):
// the window only (SlidingKvShare) on vLLM (interleaved models from 0.10), transformers
// (HybridCache) and llama.cpp (SWA cache), and on TensorRT-LLM for a model whose every layer
// slides (its cyclic KV cache); SGLang's fixed hybrid SWA pool (swa_full_tokens_ratio 0.8)
// for interleaved models; the whole context on TGI, and wherever else the engine's handling is
// not established. 1 for a model without sliding-window layers.
double SlidingKvEngineShare(const ModelSpec& m, const InferMemoryOptions& opt);

struct InferMemory {
  MemoryBreakdown breakdown;  // kv_cache = what `concurrency x context` needs
  Bytes non_kv;               // weights + workspace + runtime
  // What the engine's KV rule subtracts besides the KV cache: non_kv, except for vLLM, which
  // counts weights, its profiled activation peak and the profiled non-torch increase only.
  Bytes engine_non_kv;
  Bytes engine_non_torch;  // the non-torch part of engine_non_kv
  // The profiling peak the engine's log reports: its first worker's (rank 0). Under pipeline
  // parallelism that is the first stage, which neither computes logits nor samples: its
  // forward workspace plus the hidden states and residual it sends on. The KV pool follows the
  // most loaded stage (the last: logits and sampler), which `breakdown` describes.
  Bytes reported_activation_peak;
  // The non-torch memory that profile reports (vLLM's rank 0: a first stage without sampler at
  // PP > 1).
  Bytes reported_non_torch;
  // vLLM's CUDA-graph memory estimate (InferMemoryOptions::cuda_graph_captures), part of
  // engine_non_kv.
  Bytes cuda_graph_estimate;
  // Engine semantics: KV cache the engine allocates on this GPU (pre-allocating engines), or
  // the memory left for KV under the device's memory limit (transformers).
  Bytes kv_budget;
  std::int64_t kv_tokens = 0;        // tokens of KV cache that fit in kv_budget
  std::int64_t max_concurrency = 0;  // sequences of `context` tokens that fit
  std::int64_t max_context = 0;      // context per sequence at `concurrency`
  bool fits = false;
};

// Memory a process sees on a GPU: the driver keeps ~1% of the board's memory (ECC, firmware):
// an "80 GB" H100 shows 79.2 GiB, an A100 40GB 39.5 GiB, an RTX 3090 23.6 GiB (vLLM's
// total_gpu_memory in its logs, nvidia-smi). The serving estimators, the validator and the
// vLLM emitter size engines against this.
// NVLink SHARP (NVLS, in-switch all-reduce) exists on third-generation NVSwitch nodes: NVIDIA
// Hopper and newer SXM boards and superchips (HGX/DGX H100, H200, H20, H800, B200, GB200).
bool NvlsAllReduce(const Accelerator& acc);

inline constexpr double kVisibleMemoryFraction = 0.99;
inline Bytes VisibleMemory(Bytes nominal) { return nominal * kVisibleMemoryFraction; }

// SGLang's default mem_fraction_static by world size (tp x pp; server_args.py: 0.88 on one GPU,
// 0.87 at 2, 0.85 at 4, 0.81 at 8, 0.79 at 16 or more): the bigger the group, the more the
// communication buffers and CUDA graphs outside the static pool need.
double SglangDefaultMemFraction(int world_size);

// SGLang's default mem_fraction_static from 0.5.3 (PRs 10975 and 11076, September 2025;
// server_args.py _handle_gpu_memory_settings): `(gpu_mem - reserved) / gpu_mem` (MiB, to three
// decimals), reserved = 512 + 1.5 x chunked_prefill_size + 2 x cuda_graph_max_bs + tp x pp /
// 8 x 1024 + 8 per piecewise CUDA-graph size, at least 10 GiB above 60 GiB. The prefill chunk and
// the graph batch follow the memory: 2048 / 8 below 20 GiB, 2048 / 24 (80 at TP >= 4) below 35,
// 4096 / 32 (160) below 60, 8192 / 256 (512) below 160, 16384 / 512 above. An H100 holding
// Qwen3-32B gets 0.828 (SGLang issue 29092); 0.88 before. docs/model.md 4.3.
double SglangDefaultMemFractionForGpu(Bytes gpu_memory, int tp, int pp, bool mla);

// The engine's rule for the KV-cache budget on one GPU, given the device's total memory, the
// memory that is not KV cache (weights + workspace + runtime) and the weights alone.
// `fraction` empty = the engine's default (vLLM 0.9 of total; TRT-LLM 0.9 of free; SGLang
// 0.88 of total for weights + KV here, while EstimateInferenceMemory applies its release's rule,
// SglangDefaultMemFractionForGpu or SglangDefaultMemFraction; TGI: TgiStartupRule's, with the
// current release's margin; transformers: all that is left).
Bytes KvBudget(Engine engine, Bytes total, Bytes non_kv, Bytes weights,
               std::optional<double> fraction);

// Per-GPU serving memory. `device_memory` is the usable memory of one GPU (after any
// headroom the caller applies for transformers-style engines).
InferMemory EstimateInferenceMemory(const ModelSpec& m, const InferMemoryOptions& opt,
                                    Bytes device_memory);

// DeepSpeed's own model-state estimator (deepspeed.runtime.zero.stage_1_and_2 /
// stage3 estimate_zero{2,3}_model_states_mem_needs): GPU bytes per GPU and host RAM bytes per
// node for ZeRO-2/3 with optional CPU offload. Used for host sizing and to compare with
// DeepSpeed's printout.
struct ZeroOffloadEstimate {
  Bytes gpu_per_gpu;
  Bytes cpu_per_node;
};
ZeroOffloadEstimate DeepSpeedZeroEstimate(double params, double largest_layer_params,
                                          int gpus_per_node, int nodes, int zero_stage,
                                          bool offload_params, bool offload_optimizer,
                                          bool zero_init, double buffer_factor);

// Whether a model family trains with dropout by default: GPT-2/GPT-3-era models (LayerNorm,
// plain GELU MLP) do; Llama-era models (gated MLP) do not.
bool DefaultDropout(const ModelSpec& m);

// Weight bytes on one GPU for serving (quantized linear layers, 16-bit embeddings/norms/head).
Bytes InferenceWeightBytes(const ModelSpec& m, Precision p, const std::optional<QuantSpec>& q,
                           int tp, int pp);

}  // namespace gpuplan
