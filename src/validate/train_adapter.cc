// Training cases: the case's fields mapped onto the planner's TrainMemoryOptions,
// Parallelism and LayoutConstraints, then EstimateTrainingMemory / BestTrainLayout /
// EvaluateTraining, the same functions `plan train` calls. Framework names select the
// framework's documented semantics (what it keeps in memory, what it can overlap), never an
// answer.
#include <algorithm>
#include <cmath>
#include <cctype>
#include <fmt/format.h>

#include "gpuplan/benchmark.h"
#include "gpuplan/estimate.h"
#include "gpuplan/job.h"
#include "gpuplan/model.h"
#include "gpuplan/plan.h"
#include "gpuplan/serve.h"
#include "io/csv.h"
#include "validate/adapters.h"

namespace gpuplan::validation {

namespace {

struct TrainSetup {
  Parallelism par;
  TrainMemoryOptions opt;
  MemoryReport report = MemoryReport::kDevice;
};

// Gradient checkpointing where a case is silent about recompute. QLoRA: PEFT's
// prepare_model_for_kbit_training (what QLoRA scripts, TRL and axolotl call on a 4-bit model)
// turns it on by default (use_gradient_checkpointing=True), as does the QLoRA reference script
// (artidoro/qlora: gradient_checkpointing=True) and torchtune's QLoRA configs. Fine-tuning tools
// that turn it on for every method: Unsloth (get_peft_model use_gradient_checkpointing=True),
// LLaMA-Factory and AutoTrain (disable_gradient_checkpointing=False).
bool CheckpointsByDefault(TrainMethod method, const std::string& framework) {
  return method == TrainMethod::kQlora ||
         Contains(framework,
                  {"unsloth", "llama-factory", "llamafactory", "llama factory", "autotrain"});
}

std::variant<TrainSetup, Unsupported> BuildTrain(const ModelSpec& m, const Json& w, const Json& hw,
                                                 bool formula, const Catalog& cat) {
  TrainSetup s;
  std::string framework = Str(w, "framework");
  // An unstated method is the planner's default (full fine-tuning), or LoRA where the case gives
  // an adapter rank (QLoRA on a 4-bit base).
  std::string method_s = Str(w, "method");
  if (method_s.empty()) {
    const std::string p = internal::ToLower(Str(w, "precision"));
    method_s = !Int(w, "lora_rank")                                            ? "full"
               : (p == "int4" || p == "nf4" || Contains(framework, {"qlora"})) ? "qlora"
                                                                               : "lora";
  }
  auto method = ParseTrainMethod(method_s);
  if (!method) return Unsupported{"unknown method \"" + Str(w, "method") + "\""};
  s.opt.method = *method;
  std::string prec = Str(w, "precision");
  if (auto fp4 = ParseTrainPrecision(prec); fp4 && fp4->fp4_gemms) {
    s.opt.precision = fp4->precision;  // NVFP4 training: "fp4", "nvfp4"
    s.opt.fp4_gemms = true;
  } else if (!prec.empty()) {
    auto p = PrecisionInText(prec);  // "bf16", or a longer text naming it ("BF16 AMP")
    if (!p) return Unsupported{"unknown precision \"" + prec + "\""};
    s.opt.precision = *p;
  }
  std::string optim = Str(w, "optimizer");
  if (!optim.empty()) {
    auto o = ParseOptimizer(optim);
    if (!o) return Unsupported{"unknown optimizer \"" + optim + "\""};
    s.opt.optimizer = *o;
  }
  s.par.tp = Int(w, "tp").value_or(1);
  s.par.pp = Int(w, "pp").value_or(1);
  s.par.cp = Int(w, "cp").value_or(1);
  s.par.ep = Int(w, "ep").value_or(1);
  s.par.vpp = Int(w, "vpp").value_or(1);
  int gpus = Int(hw, "gpus").value_or(0);
  int mp = s.par.tp * s.par.pp * s.par.cp;
  s.par.dp = Int(w, "dp").value_or(gpus > 0 && mp > 0 ? std::max(1, gpus / mp) : 1);
  if (s.par.tp < 1 || s.par.pp < 1 || s.par.dp < 1 || s.par.cp < 1) {
    return Unsupported{"parallel sizes must be >= 1"};
  }
  s.par.sequence_parallel = Bool(w, "sequence_parallel").value_or(false);
  s.par.zero_stage = Int(w, "zero").value_or(0);
  std::string fsdp = Str(w, "fsdp");
  if (fsdp == "full" || fsdp == "hybrid") s.par.zero_stage = 3;
  if (fsdp == "grad-op") s.par.zero_stage = 2;
  if (fsdp == "hybrid") s.par.shard_group = Int(hw, "gpus_per_node").value_or(8);
  std::string rc = Str(w, "recompute");
  if (!rc.empty()) {
    auto r = ParseRecompute(rc);
    if (!r) return Unsupported{"unknown recompute \"" + rc + "\""};
    s.opt.recompute = *r;
  }
  if (rc.empty() && CheckpointsByDefault(s.opt.method, framework)) {
    s.opt.recompute = Recompute::kFull;
  }
  s.opt.micro_batch = Int(w, "micro_batch").value_or(1);
  // An unstated sequence length is the planner's (EffectiveSeqLen: 4096 capped by the model's
  // context, a ViT's patches + 1). Before December 2026 the adapter assumed 2048 for decoders.
  {
    TrainJobSpec spec;
    spec.model = m;
    spec.seq_len = Int(w, "seq_len").value_or(0);
    // An inline encoder states no context: BERT's 512.
    if (spec.seq_len == 0 && m.arch == ModelArch::kEncoder && m.max_positions <= 0)
      spec.seq_len = 512;
    s.opt.seq_len = EffectiveSeqLen(spec);
  }
  int global = Int(w, "global_batch").value_or(s.opt.micro_batch * s.par.dp);
  s.opt.num_microbatches = std::max(1, global / std::max(1, s.opt.micro_batch * s.par.dp));
  s.opt.dropout = DefaultDropout(m);
  if (auto r = Int(w, "lora_rank")) s.opt.lora_rank = *r;
  if (Contains(framework, {"gate", "mlp", "all-linear", "all linear"})) {
    s.opt.lora_targets = LoraTargets::kAllLinear;
  } else if (Contains(framework, {"q,v", "q_proj,v_proj"})) {
    s.opt.lora_targets = LoraTargets::kQv;
  }
  if (s.opt.method == TrainMethod::kQlora) s.opt.base_bits = 4;
  if (auto l = Num(w, "largest_layer_params")) s.opt.largest_layer_params = *l;

  // Framework semantics.
  // Pure bf16: torchtune's recipes, and plain PyTorch or torchao optimizers on a bf16 model
  // without autocast: parameters, grads and AdamW states in bf16 (torch.optim creates its
  // state tensors like the parameter), no fp32 master copy. AMP (autocast) keeps fp32 weights.
  // LoRA adapters too: torchtune instantiates the whole model, adapters included, under the
  // training dtype (lora_finetune_single_device.py: `set_default_dtype(self._dtype)`), unlike
  // PEFT, which keeps adapter weights in fp32.
  // (torchtune's own recipes: ApplyFrameworkMemory, the planner's rule, below.)
  // PEFT's method-comparison benchmark (method_comparison/*/default_training_params.json:
  // "dtype": "bfloat16", "use_amp": false) is such a loop, with its adapters kept in fp32
  // ("autocast_adapter_dtype": true).
  const bool peft_bench = Contains(framework, {"method_comparison", "method comparison"});
  const bool plain_torch =
      (peft_bench || Contains(framework, {"pytorch eager", "torchao", "plain pytorch"})) &&
      !Contains(framework, {"amp", "autocast", "mixed", "torchtune"});
  if (plain_torch && s.opt.precision == Precision::kBf16) {
    s.opt.master_weights = false;
    s.opt.optimizer_state_dtype = Precision::kBf16;
    s.opt.adapter_fp32 = peft_bench;
  }
  if (Contains(framework, {"torchtitan"})) {
    // torchtitan's model configs train with selective (operator-policy) checkpointing
    // (train_configs/llama3_*.toml: mode = 'selective', selective_ac_option = 'op'), and its
    // pipeline schedules split the local batch into `pipeline_parallel_microbatches`, by
    // default the pipeline degree (config_manager.py; pipelining_utils.py).
    if (Str(w, "recompute").empty()) s.opt.recompute = Recompute::kSelective;
    if (s.par.pp > 1 && s.opt.num_microbatches == 1 && s.opt.micro_batch % s.par.pp == 0) {
      s.opt.micro_batch /= s.par.pp;
      s.opt.num_microbatches = s.par.pp;
    }
  }
  if (Contains(framework, {"torchtune"})) {
    // What a torchtune recipe config leaves on when the case is silent: its single-device and
    // distributed full / LoRA configs set `enable_activation_checkpointing: True` and
    // `batch_size: 2` (recipes/configs/llama2/7B_full_low_memory.yaml, 7B_full.yaml,
    // 7B_lora_single_device.yaml).
    if (Str(w, "recompute").empty()) s.opt.recompute = Recompute::kFull;
    if (!Int(w, "micro_batch")) s.opt.micro_batch = 2;
    // Its single-device full fine-tuning configs train with bitsandbytes' PagedAdamW8bit and
    // the optimizer step fused into the backward pass (llama3_1/8B_full_single_device.yaml,
    // llama3_2/3B_full_single_device.yaml: `optimizer_in_bwd: True`, "True saves memory").
    // A case that names its optimizer ran its own optimizer setup: neither applies.
    const bool low_memory = Contains(framework, {"low_memory", "low-memory", "low memory"});
    if (s.opt.method == TrainMethod::kFull &&
        (low_memory || Contains(framework, {"single_device", "single device", "single-device"}))) {
      if (Str(w, "optimizer").empty()) {
        s.opt.optimizer = Optimizer::kAdamW8bit;
        s.opt.paged_optimizer = true;  // `_component_: bitsandbytes.optim.PagedAdamW8bit`
        if (!Bool(w, "optimizer_in_bwd")) s.opt.optimizer_in_backward = true;
      }
      // A case that names an 8-bit AdamW ran its own optimizer setup (torchao's and torchtune's
      // own memory tables swap in non-paged 8-bit optimizers): not paged.
      // Its `*_full_low_memory` configs (llama2/7B, mistral/7B, phi3/mini, phi4/14B) run
      // `bitsandbytes.optim.PagedAdamW`.
      if (low_memory && s.opt.optimizer == Optimizer::kAdamW) s.opt.paged_optimizer = true;
    }
    // Pure bf16 and the chunked loss (compiled with `compile=True`, training.compile_loss):
    // ApplyFrameworkMemory at the end of BuildTrain.
  }
  // Flash attention: the case's flag; otherwise the planner's default, on (SDPA/flash kernels
  // are every modern framework's default), and off for bare activation-formula cases, which
  // follow Korthikanti et al. (Megatron without flash attention, scores stored). Before
  // December 2026 a measured case naming no framework was predicted without it.
  // Encoders ran HF's eager attention (BERT got SDPA only in transformers 4.38).
  // Legacy Megatron-LM (before Megatron-Core) runs its fused-softmax attention unless launched
  // with --use-flash-attn (arguments.py: default False; the 2021 code predates FlashAttention).
  // Vision transformers (no vocabulary) run F.scaled_dot_product_attention in PyTorch 2 code
  // whatever the library: timm (timm.layers.use_fused_attn(), on by default), torchvision
  // (nn.MultiheadAttention with need_weights=False calls it), HF ViT (attn_implementation
  // "sdpa" by default); so they keep no score matrix either (the planner's default).
  const bool legacy_megatron = TrainFrameworkFromText(framework) == TrainFramework::kMegatronLegacy;
  const bool vision = m.arch == ModelArch::kVit || (m.arch == ModelArch::kEncoder && m.vocab == 0);
  const Accelerator* case_acc = cat.FindAccelerator(Str(hw, "gpu"));
  const bool pre_flash_gpu =
      case_acc && !FusedAttentionOn(*case_acc, TrainFrameworkFromText(framework));
  s.opt.flash_attention = Bool(w, "flash_attention")
                              .value_or((!formula && (m.is_decoder_llm() || vision) &&
                                         !legacy_megatron && !pre_flash_gpu) ||
                                        Contains(framework, {"timm"}));
  s.opt.compiled = Bool(w, "compile").value_or(Contains(framework, {"torch.compile"}));
  s.opt.fused_kernels =
      Contains(framework, {"megatron", "nemo", "transformer engine", "unsloth"}) || s.opt.compiled;
  if (Contains(framework, {"unsloth"})) {
    // Unsloth's fused cross-entropy keeps bf16 logits and their gradient, no fp32 copy.
    s.opt.logits_bytes_per_element = 4.0;
  }
  if (Contains(framework, {"nemo"})) {
    // NeMo / Megatron-Bridge performance recipes reduce gradients in bf16
    // (grad_reduce_in_fp32=False, "the benchmark-mode default": Megatron-Bridge
    // recipes/_common.py `_perf_precision`): the gradient buffer holds 2 B per parameter, as the
    // planner assumes for Megatron-Core plans.
  } else if (Contains(framework, {"megatron"}) || s.par.tp > 1 || s.par.pp > 1) {
    // Megatron-LM's own training scripts (and Megatron-style TP/PP code) accumulate and
    // all-reduce gradients in fp32 main_grad buffers with bf16 (arguments.py sets
    // accumulate_allreduce_grads_in_fp32 under --bf16): 18 B/param with Adam.
    s.opt.grad_dtype = Precision::kFp32;
  }
  if (Bool(w, "optimizer_in_bwd").value_or(false)) s.opt.optimizer_in_backward = true;
  // A paged optimizer named in the optimizer or the framework ("bitsandbytes PagedAdamW").
  s.opt.paged_optimizer = s.opt.paged_optimizer || PagedOptimizerName(Str(w, "optimizer")) ||
                          PagedOptimizerName(framework);
  s.opt.ep_node_dedup = Contains(framework, {"deepep", "hybridep"});
  // Offload the case states (DeepSpeed offload_optimizer / offload_param, torchao
  // CPUOffloadOptimizer): master copy and optimizer states in host RAM. DeepSpeed's
  // ZeRO-Offload (stage >= 2) also streams the reduced gradient partitions to the CPU; torchao
  // does so with offload_gradients=True.
  s.opt.optimizer_offload = Str(w, "offload_optimizer") == "cpu";
  s.opt.offload_step_overlaps_backward =
      s.opt.optimizer_offload && Contains(framework, {"torchao", "cpuoffloadoptimizer"});
  s.opt.param_offload = Str(w, "offload_param") == "cpu" && s.par.zero_stage >= 3;
  s.opt.gradient_offload =
      s.opt.optimizer_offload && (Bool(w, "offload_gradients").value_or(false) ||
                                  (Contains(framework, {"deepspeed"}) && s.par.zero_stage >= 2));
  if (Bool(w, "activation_offloading").value_or(false) ||
      (Contains(framework, {"unsloth"}) && s.opt.recompute == Recompute::kFull)) {
    // Unsloth's gradient checkpointing offloads the checkpoints to CPU RAM.
    s.opt.activation_offload = true;
  }
  // What the framework adds to the layout's memory (the planner applies the same per layout).
  ApplyFrameworkMemory(TrainFrameworkFromText(framework), s.par, s.opt);
  s.report = ReportOf(framework);
  return s;
}

double ReportedTrainingPeak(const MemoryBreakdown& b, MemoryReport report) {
  double tensors = (b.ModelStates() + b.activations + b.logits).value();
  switch (report) {
    case MemoryReport::kAllocated:
      return b.PeakAllocated().value();
    case MemoryReport::kReserved:
      return tensors + b.allocator_slack.value();
    case MemoryReport::kDevice:
      return b.Total().value();
  }
  return b.Total().value();
}

}  // namespace

Predicted PredictTrainingMemory(const ModelSpec& m, const Json& w, const Json& hw,
                                const std::string& metric, const Catalog& cat,
                                const std::string& source) {
  // DeepSpeed's own estimator (the offload/zero_init fields only it takes).
  bool ds = Child(w, "offload_param") || Child(w, "offload_optimizer") || Child(w, "zero_init") ||
            Child(w, "buffer_factor");
  if (ds && (metric == "model_states_gib_per_gpu" || metric == "model_states_gib_per_node_cpu")) {
    ParamCounts pc = CountParams(m);
    int gpn = Int(hw, "gpus_per_node").value_or(Int(hw, "gpus").value_or(1));
    int gpus = Int(hw, "gpus").value_or(gpn);
    int nodes = std::max(1, gpus / std::max(1, gpn));
    double largest = Num(w, "largest_layer_params").value_or(static_cast<double>(pc.largest_layer));
    ZeroOffloadEstimate e = DeepSpeedZeroEstimate(
        static_cast<double>(pc.total), largest, gpn, nodes, Int(w, "zero").value_or(3),
        Str(w, "offload_param") == "cpu", Str(w, "offload_optimizer") == "cpu",
        Int(w, "zero_init").value_or(1) != 0, Num(w, "buffer_factor").value_or(1.5));
    return (metric == "model_states_gib_per_gpu" ? e.gpu_per_gpu : e.cpu_per_node).value();
  }
  // Korthikanti et al.'s activation formula keeps the attention scores unless a framework
  // says otherwise; measured runs are on the planner's default, fused attention.
  auto setup =
      BuildTrain(m, w, hw, metric == "activations_gib_per_gpu" && Str(w, "framework").empty(), cat);
  if (auto* u = std::get_if<Unsupported>(&setup)) return *u;
  TrainSetup& s = std::get<TrainSetup>(setup);
  s.report = ReportOf(Str(w, "framework"), source);
  if (metric == "train_adam_gib" || metric == "train_adam_mib" ||
      metric == "model_states_gib_per_gpu") {
    s.opt.include_runtime = false;
    if (metric != "model_states_gib_per_gpu") s.par = Parallelism{};
    MemoryBreakdown b = EstimateTrainingMemory(m, s.par, s.opt);
    return b.ModelStates().value();
  }
  if (metric == "activations_gib_per_gpu") {
    if (!m.is_transformer() || m.layers == 0) {
      return Unsupported{"activations need the transformer architecture"};
    }
    s.opt.include_runtime = false;
    s.opt.logits_buffer = false;
    return EstimateTrainingMemory(m, s.par, s.opt).activations.value();
  }
  if (metric == "steady_allocated_gib") {
    s.opt.include_runtime = false;
    return EstimateTrainingMemory(m, s.par, s.opt).ModelStates().value();
  }
  if (metric == "memory_gib") {
    if (!m.is_transformer() || m.layers == 0) {
      return Unsupported{"activation memory of non-transformer models is not modelled yet"};
    }
    std::string gpu = Str(hw, "gpu");
    if (!gpu.empty() && !cat.FindAccelerator(gpu)) {
      return Unsupported{"unknown accelerator \"" + gpu + "\""};
    }
    // An unstated micro-batch beside a stated global batch: no gradient accumulation, the
    // default of HF Trainer (gradient_accumulation_steps=1), Lightning
    // (accumulate_grad_batches=1) and DeepSpeed (train_micro_batch_size_per_gpu =
    // train_batch_size / dp). Megatron-LM and NeMo recipes run micro-batch 1 and accumulate;
    // torchtune recipes set batch_size 2 (BuildTrain).
    const TrainFramework fk = TrainFrameworkFromText(Str(w, "framework"));
    const bool micro_defaulted =
        !Int(w, "micro_batch") && Int(w, "global_batch") && fk != TrainFramework::kTorchtune &&
        fk != TrainFramework::kMegatronLegacy && fk != TrainFramework::kMegatronCore;
    if (micro_defaulted) {
      s.opt.micro_batch = std::max(1, *Int(w, "global_batch") / std::max(1, s.par.dp));
      s.opt.num_microbatches = 1;
    }
    MemoryBreakdown b = EstimateTrainingMemory(m, s.par, s.opt);
    // An unstated recompute where the run could not have held its activations without it: the
    // least recompute that fits the GPU, as the planner chooses (the run happened); then, for a
    // defaulted micro-batch, accumulation (halving the micro-batch) until it fits.
    const Accelerator* acc = gpu.empty() ? nullptr : cat.FindAccelerator(gpu);
    auto over = [&] { return acc && b.Total().value() > acc->Usable().value(); };
    if (Str(w, "recompute").empty() && s.opt.recompute == Recompute::kNone) {
      for (Recompute rc : {Recompute::kSelective, Recompute::kFull}) {
        if (!over()) break;
        if (!FrameworkRecomputes(fk, rc, 0)) continue;  // HF/DeepSpeed/torchtune: every layer
        s.opt.recompute = rc;
        b = EstimateTrainingMemory(m, s.par, s.opt);
      }
    }
    while (micro_defaulted && over() && s.opt.micro_batch > 1) {
      s.opt.micro_batch = (s.opt.micro_batch + 1) / 2;
      s.opt.num_microbatches =
          std::max(1, *Int(w, "global_batch") / std::max(1, s.opt.micro_batch * s.par.dp));
      b = EstimateTrainingMemory(m, s.par, s.opt);
    }
    if (g_trace) {
      // The breakdown term by term (GiB per GPU), as `gpuplan memory` prints it.
      const std::pair<const char*, Bytes> terms[] = {
          {"weights", b.weights},           {"fp32 master weights", b.master_weights},
          {"gradients", b.gradients},       {"optimizer states", b.optimizer},
          {"LoRA adapter", b.adapter},      {"activations", b.activations},
          {"logits / loss", b.logits},      {"CUDA context", b.cuda_context},
          {"NCCL buffers", b.nccl_buffers}, {"allocator slack", b.allocator_slack}};
      for (const auto& [name, v] : terms)
        g_trace->Add(name, "memory term", v.value() / GiB(1).value(), "GiB");
      if (s.report == MemoryReport::kAllocated && b.backward_overlap.value() > 0) {
        g_trace->Add("gradients allocated as activations are freed",
                     "allocated peak only: minus min(gradients, activations + logits - one layer)",
                     -b.backward_overlap.value() / GiB(1).value(), "GiB");
      }
    }
    return ReportedTrainingPeak(b, s.report);
  }
  return Unsupported{"metric \"" + metric + "\" is not predicted for training workloads yet"};
}

namespace {

// Peer tools' training-time arithmetic (Narayanan et al. 2021 eq. 4, "Transformer Math 101",
// llm-analysis): training FLOPs / (GPUs x an achieved TFLOP/s per GPU the user states). The
// FLOPs are gpuplan's own count (TrainingFlopsPerToken, docs/model.md 6): model FLOPs, plus the
// recomputed forward when the case states recompute (Megatron's 8TP/(nX) with full recompute).
Predicted TimeAtAchievedRate(const ModelSpec& m, const TrainSetup& s, const Json& w,
                             const Json& hwj, const TrainJob& job, const std::string& metric) {
  // The rate as stated, or as llm-analysis-style tools state it: a peak times an efficiency.
  std::optional<double> rate = Num(w, "achieved_tflops_per_gpu");
  if (!rate && Num(w, "peak_tflops")) {
    rate = *Num(w, "peak_tflops") * Num(w, "flops_efficiency").value_or(1.0);
  }
  if (!rate || *rate <= 0) {
    return Unsupported{metric + " needs achieved_tflops_per_gpu > 0 (or peak_tflops and " +
                       "flops_efficiency)"};
  }
  if (!m.is_transformer() || m.layers == 0) {
    return Unsupported{metric + " needs the transformer architecture"};
  }
  const double gpus = Int(hwj, "gpus").value_or(0);
  if (gpus <= 0) return Unsupported{metric + " needs hardware.gpus"};
  const bool recompute = !Str(w, "recompute").empty() && s.opt.recompute != Recompute::kNone;
  const double per_token =
      TrainingFlopsPerToken(m, s.opt.seq_len, s.opt.method, s.opt.recompute, recompute).value();
  const double seconds_per_token = per_token / (gpus * *rate * 1e12);
  if (g_trace) {
    g_trace->Add("training FLOPs per token", recompute ? "model + recomputed forward" : "model",
                 per_token, "FLOP");
  }
  if (metric == "train_days_at_tflops") {
    if (job.tokens <= 0) return Unsupported{"train_days_at_tflops needs tokens"};
    return job.tokens * seconds_per_token / 86400.0;
  }
  if (job.global_batch <= 0) return Unsupported{"iteration_s_at_tflops needs global_batch"};
  return static_cast<double>(job.global_batch) * s.opt.seq_len * seconds_per_token;
}

// The MLPerf Training round a case's results come from ("training_results_v4.1" in its source:
// 4.1), whose rules fix the reference convergence points; 0 when the source names none (the
// latest rules apply).
double MlperfTrainingRound(const std::string& source) {
  static const std::string kTag = "training_results_v";
  const auto at = source.find(kTag);
  if (at == std::string::npos) return 0;
  std::size_t end = at + kTag.size();
  while (end < source.size() &&
         (std::isdigit(static_cast<unsigned char>(source[end])) || source[end] == '.')) {
    ++end;
  }
  return internal::ParseDouble(source.substr(at + kTag.size(), end - at - kTag.size())).value_or(0);
}

}  // namespace

Predicted PredictTrainingPerf(ModelSpec m, const Json& case_w, const Json& hwj,
                              const std::string& metric, const Catalog& cat,
                              const Calibration& base_cal, const TrainBenchmark* bench,
                              const std::string& source) {
  // A benchmark run on NVIDIA GPUs whose framework text names only a container ("PyTorch NVIDIA
  // Release 25.09", "NGC Pytorch 24.04") ran the benchmark's reference implementation
  // (BenchmarkReferenceFramework, the planner's rule for a job naming a benchmark: NeMo for the
  // LLM benchmarks), and reads as that framework everywhere below. Other vendors' submissions
  // run their own stacks.
  Json ref_w;
  const Accelerator* case_gpu = cat.FindAccelerator(Str(hwj, "gpu"));
  const bool benchmark_on_nvidia = bench && case_gpu && case_gpu->vendor == "NVIDIA";
  if (benchmark_on_nvidia &&
      TrainFrameworkFromText(Str(case_w, "framework")) == TrainFramework::kGeneric &&
      BenchmarkReferenceFramework(m) == TrainFramework::kMegatronCore) {
    ref_w = case_w;
    ref_w["framework"] =
        Str(case_w, "framework") + " (NeMo: the benchmark's reference implementation)";
  }
  const Json& w = ref_w.is_null() ? case_w : ref_w;
  auto setup = BuildTrain(m, w, hwj, /*formula=*/false, cat);
  if (auto* u = std::get_if<Unsupported>(&setup)) return *u;
  TrainSetup& s = std::get<TrainSetup>(setup);
  TrainJob job;
  job.tokens = Num(w, "tokens").value_or(0);
  job.global_batch = Int(w, "global_batch").value_or(0);
  if (metric == "train_days_at_tflops" || metric == "iteration_s_at_tflops") {
    return TimeAtAchievedRate(m, s, w, hwj, job, metric);  // no accelerator needed
  }
  auto hwv = CaseHardware(hwj, cat);
  if (auto* u = std::get_if<Unsupported>(&hwv)) return *u;
  HardwareView hw = std::get<HardwareView>(hwv);
  if (!m.is_transformer() && !m.gflops_per_sample && bench) {
    // The benchmark's network at its resolution: its preset (with the layers it trains
    // frozen), else the table's figures.
    if (const ModelSpec* net = bench->model.empty() ? nullptr : FindPreset(bench->model)) {
      m.gflops_per_sample = net->gflops_per_sample;
      m.activation_melems_per_sample = net->activation_melems_per_sample;
      m.frozen_gflops_per_sample = net->frozen_gflops_per_sample;
      m.frozen_activation_melems_per_sample = net->frozen_activation_melems_per_sample;
      m.frozen_norm = net->frozen_norm;
    } else if (bench->gflops_per_sample) {
      m.gflops_per_sample = bench->gflops_per_sample;
      m.activation_melems_per_sample = bench->activation_melems_per_sample;
    }
  }
  if (!m.is_transformer() && !m.gflops_per_sample) {
    return Unsupported{"non-transformer model without gflops_per_sample"};
  }
  // Run-to-target benchmark submissions are vendors' tuned implementations and run fused
  // attention whatever the framework name says (NVIDIA's BERT FMHA, flash attention in NeMo and
  // in AMD's PyTorch LoRA): no score matrix is kept.
  if (bench && !Bool(w, "flash_attention")) s.opt.flash_attention = true;
  // NVIDIA's MLPerf Training implementations (training_results_vX.Y/NVIDIA/benchmarks/*) fuse
  // their element-wise work whatever the framework: apex's fused bias-GeLU, dropout-add-LayerNorm
  // and LAMB in BERT, Transformer Engine in NeMo, DALI and fused BN-ReLU in MXNet ResNet. Every
  // closed-division submitter on NVIDIA GPUs re-runs them (its implementations directory is a
  // copy, with its own system configs), so their results run fused too.
  const bool reference_implementation =
      benchmark_on_nvidia || (bench && Contains(source, {"nvidia/results", "nvidia/benchmarks"}));
  if (reference_implementation) s.opt.fused_kernels = true;
  // Layout: what the case fixes is kept; the rest is chosen as the planner would (fastest
  // layout that fits memory on these GPUs).
  LayoutConstraints fixed;
  if (auto v = Int(w, "tp")) fixed.tp = *v;
  if (auto v = Int(w, "pp")) fixed.pp = *v;
  if (auto v = Int(w, "dp")) fixed.dp = *v;
  if (auto v = Int(w, "cp")) fixed.cp = *v;
  if (auto v = Int(w, "ep")) fixed.ep = *v;
  if (auto v = Int(w, "vpp")) fixed.vpp = *v;
  if (auto v = Int(w, "micro_batch")) fixed.micro_batch = *v;
  // A local batch a pipeline schedule splits (BuildTrain's torchtitan rule): its micro-batch.
  if (s.par.pp > 1 && TrainFrameworkFromText(Str(w, "framework")) == TrainFramework::kTorchtitan) {
    if (fixed.micro_batch && s.opt.num_microbatches > 1) fixed.micro_batch = s.opt.micro_batch;
    // Its default schedule is 1F1B, one stage per rank (config_manager.py); the looped ones
    // (Interleaved1F1B, LoopedBFS, the zero-bubble schedules) put two stages on each rank
    // (pipelining_utils.py generate_split_points).
    if (!fixed.vpp)
      fixed.vpp = Contains(Str(w, "framework"),
                           {"interleaved", "looped", "zero bubble", "zero-bubble", "zbv"})
                      ? 2
                      : 1;
  }
  if (Child(w, "zero") || !Str(w, "fsdp").empty()) fixed.zero_stage = s.par.zero_stage;
  const std::string fw = Str(w, "framework");
  Calibration cal = base_cal;
  // Framework capabilities (the planner applies the same: ApplyFramework). Legacy Megatron-LM
  // (before Megatron-Core, 2023) shards at most the optimizer and all-reduces gradients after
  // the backward pass; Megatron-Core/NeMo overlap TP collectives with their GEMMs and the
  // distributed optimizer's parameter all-gather with the next forward; DeepSpeed pipelines
  // only with ZeRO 0-1.
  const TrainFramework tfw = TrainFrameworkFromText(fw);
  ApplyFramework(tfw, cal, fixed);
  // The benchmark's reference implementation, which NVIDIA-GPU submissions run (the fused-kernel
  // rule above): what it overlaps (ApplyBenchmarkImplementation).
  if (bench && reference_implementation) ApplyBenchmarkImplementation(*bench, cal, fixed);
  const bool mcore = tfw == TrainFramework::kMegatronCore;
  // An unstated precision is chosen like the other open fields when the framework or the
  // benchmark run makes FP8 the fast path: Transformer Engine recipes, and transformer
  // submissions to a run-to-target benchmark where the GPU has FP8: every MLPerf LLM submission
  // since v4.0, and BERT, whose NVIDIA implementation (reused by most submitters) passes
  // --use_transformer_engine2 ("Enable FP8 layers") in every H100/H200/B200 config.
  // Otherwise the generic default, bf16.
  if (Str(w, "precision").empty() && hw.acc->fp8 &&
      ((m.is_decoder_llm() && mcore) || (bench && m.is_transformer()))) {
    s.opt.precision = Precision::kFp8;
  }
  // A stated recompute, or the framework's default checkpointing (CheckpointsByDefault), is kept.
  if (!Str(w, "recompute").empty() || CheckpointsByDefault(s.opt.method, fw))
    fixed.recompute = s.opt.recompute;
  if (auto v = Bool(w, "sequence_parallel")) fixed.sequence_parallel = *v;
  // Offload is something a published run states (DeepSpeed's offload_optimizer /
  // offload_param "cpu"): a case that does not ran without it.
  fixed.optimizer_offload = Str(w, "offload_optimizer") == "cpu";
  fixed.param_offload = Str(w, "offload_param") == "cpu";
  // The layout search sets offload per candidate from `fixed` (with the ZeRO stage it needs).
  s.opt.optimizer_offload = false;
  s.opt.param_offload = false;
  int gpus_case = Int(hwj, "gpus").value_or(0);
  // Context parallelism left unstated beside a stated tp x pp x dp that leaves GPUs over: the
  // rest of the GPUs split the sequence (Megatron's world = tp x pp x cp x dp).
  if (fixed.tp && fixed.pp && fixed.dp && !fixed.cp && gpus_case > 0) {
    const long long tpd = static_cast<long long>(*fixed.tp) * *fixed.pp * *fixed.dp;
    if (tpd > 0 && gpus_case > tpd && gpus_case % tpd == 0)
      fixed.cp = static_cast<int>(gpus_case / tpd);
  }
  if (fixed.tp && fixed.pp && fixed.dp) {
    int n = *fixed.tp * *fixed.pp * *fixed.dp * fixed.cp.value_or(1);
    if (gpus_case > 0 && n != gpus_case) {
      return Unsupported{
          fmt::format("tp x pp x dp x cp = {} but the case has {} GPUs", n, gpus_case)};
    }
    hw.nodes = std::max(1, n / hw.gpus_per_node);
    if (n < hw.gpus_per_node) hw.gpus_per_node = n;
  }
  if (job.global_batch <= 0) {
    // Unstated batch: the planner's own default for the method on this cluster
    // (DefaultGlobalBatch: pretraining 16K tokens per GPU within 1M-16M tokens per step,
    // fine-tuning 128 sequences, LoRA 16).
    TrainJobSpec spec;
    spec.model = m;
    spec.method = s.opt.method;
    spec.seq_len = s.opt.seq_len;
    spec.tokens = job.tokens;
    // A run-to-target benchmark's is its reference batch (the planner's rule, job_yaml.cc).
    job.global_batch = bench && bench->ref_global_batch > 0 ? bench->ref_global_batch
                                                            : DefaultGlobalBatch(spec, hw.gpus());
    fixed.round_global_batch = true;
  }
  // Run to a quality target: the benchmark's samples to the target at this batch, plus its
  // evaluation passes (forward only: a third of a training step's work, half for LoRA).
  double eval_overhead = 0;
  const double round = MlperfTrainingRound(source);  // the rules the case's results ran under
  if (bench && metric == "time_to_train_min") {
    if (job.tokens <= 0) {
      const double samples = bench->SamplesToTarget(job.global_batch, round);
      job.tokens = samples * (m.is_transformer() ? bench->TokensPerSample(s.opt.seq_len) : 1);
    }
    // The run's time counts its evaluations, whether the case states what it trained on (the
    // tokens of its log) or the benchmark's reference points give it.
    const bool peft = s.opt.method == TrainMethod::kLora || s.opt.method == TrainMethod::kQlora;
    eval_overhead = bench->EvalOverhead(peft ? 0.5 : 1.0 / 3.0);
  }
  if (!m.is_transformer() && job.tokens <= 0 && metric == "time_to_train_min") {
    return Unsupported{"time to train needs the number of samples or epochs to the target"};
  }
  // The benchmark's global batch counts samples; packed samples share sequences, so a step runs
  // fewer sequences of seq_len than it has samples (SequencesPerStep, the planner's rule).
  const int sample_batch = job.global_batch;
  if (bench && m.is_transformer()) {
    job.global_batch = bench->SequencesPerStep(job.global_batch, s.opt.seq_len);
  }
  // The case's fixed fields are honoured; what it leaves open (recompute, ZeRO stage,
  // micro-batch, interleaving) is chosen as the planner would: the fastest layout that fits.
  TrainEval ev;
  auto best = BestTrainLayout(m, s.opt, job, hw, cal, 0.95, fixed);
  // Unstated cluster size: the 64-GPU slice, or the smallest doubling of it that holds the
  // model (a 405B model needs more than 64 80-GB GPUs).
  while (!best && gpus_case <= 0 && !(fixed.tp && fixed.pp && fixed.dp) && hw.gpus() < 16384) {
    hw.nodes *= 2;
    best = BestTrainLayout(m, s.opt, job, hw, cal, 0.95, fixed);
  }
  // The run happened: when nothing fits the memory model's 95% of the GPU, the layout the
  // search picks within the whole GPU, then within the memory model's own error (its p90 on
  // the public measured-memory cases is ~15-20%).
  for (double headroom : {1.0, 1.15}) {
    if (!best) best = BestTrainLayout(m, s.opt, job, hw, cal, headroom, fixed);
  }
  // Still nothing, with part of the layout open: the fastest layout under full recompute (the
  // memory-saving setting a run that does not fit otherwise uses), memory aside.
  if (!best && !(fixed.tp && fixed.pp && fixed.dp)) {
    LayoutConstraints saving = fixed;
    if (!saving.recompute) saving.recompute = Recompute::kFull;
    best = BestTrainLayout(m, s.opt, job, hw, cal, 1e6, saving);
  }
  if (best) {
    s.par = best->par;
    s.opt = best->opt;
    job.global_batch = best->global_batch;
  } else if (fixed.tp && fixed.pp && fixed.dp) {
    // Nothing fits our memory model; the run happened, so predict its speed anyway.
    s.par.tp = *fixed.tp;
    s.par.pp = *fixed.pp;
    s.par.dp = *fixed.dp;
    s.par.cp = fixed.cp.value_or(s.par.cp);
    s.opt.micro_batch = fixed.micro_batch.value_or(1);
  } else {
    return Unsupported{"no layout fits memory on these GPUs"};
  }
  ev = EvaluateTraining(m, s.par, s.opt, job, hw, cal, 1.0, g_trace);
  if (!ev.step.valid) return Unsupported{ev.step.reason};
  if (g_trace) {
    g_trace->Add("layout",
                 fmt::format("tp{} pp{} dp{} cp{} zero{} mb{} recompute {} nodes {} x {}", s.par.tp,
                             s.par.pp, s.par.dp, s.par.cp, s.par.zero_stage, s.opt.micro_batch,
                             RecomputeLabel(s.opt.recompute, s.opt.recompute_layers), hw.nodes,
                             hw.gpus_per_node),
                 0, "");
    g_trace->Add("memory per GPU", "GiB", ToGiB(ev.memory.Total()), "GiB");
    g_trace->Add("intra bw per GPU", "GB/s per direction", hw.intra_bw.value() / 1e9, "GB/s");
    g_trace->Add("inter bw per GPU", "GB/s per direction", hw.inter_bw.value() / 1e9, "GB/s");
  }
  const double gpus = s.par.gpus();
  const double t = ev.step.total.value();
  if (metric == "tflops_per_gpu") {
    // What "TFLOP/s per GPU" counts is the framework's definition. Megatron-Core's
    // num_floating_point_operations (megatron/training/training.py) counts model FLOPs with
    // the causal half of the attention square and no recompute; Megatron-LM's 2021 paper
    // (Narayanan et al., eq. 3) and DeepSpeed's profiler count the executed FLOPs, recompute
    // included, with the full square.
    if (Contains(fw, {"megatron-core", "mcore"})) {
      const double model_flops =
          ev.step.model_flops.value() - 0.5 * ev.step.attention_flops.value();
      return model_flops / t / gpus / 1e12;
    }
    return ev.step.hardware_flops.value() / t / gpus / 1e12;
  }
  if (metric == "mfu") return ev.step.mfu;
  if (metric == "tokens_per_s_per_gpu") return ev.step.tokens_per_s_per_gpu;
  if (metric == "samples_per_s") {
    // A benchmark whose samples run packed counts its samples, not the packed sequences.
    if (bench && m.is_transformer()) {
      return ev.step.tokens_per_s_per_gpu * gpus / bench->TokensPerSample(s.opt.seq_len);
    }
    return ev.step.samples_per_s;
  }
  if (metric == "iteration_s") return t;
  if (metric == "gpu_hours") {
    if (job.tokens <= 0) return Unsupported{"gpu_hours needs tokens"};
    // A whole run's GPU-hours count the time lost to failures, restarts and checkpoint
    // stalls: the effective-training-time ratio of large pretraining runs.
    const double goodput = cal.Get("production_goodput", 1.0);
    if (g_trace)
      g_trace->Add("production goodput", "effective training time / allocated time", goodput, "");
    return job.tokens / ev.step.tokens_per_s_per_gpu / 3600.0 / goodput;
  }
  if (metric == "time_to_train_min") {
    if (job.tokens <= 0)
      return Unsupported{"time to train needs tokens (or samples) to the target"};
    if (g_trace && bench) {
      g_trace->Add("benchmark " + bench->id, "samples to target at this batch",
                   bench->SamplesToTarget(sample_batch, round), "samples");
      g_trace->Add("evaluation overhead", "eval samples / eval interval x forward share",
                   eval_overhead, "");
    }
    const double per_sample_tokens = m.is_transformer() ? s.opt.seq_len : 1;
    const double rate = m.is_transformer() ? ev.step.tokens_per_s_per_gpu * gpus
                                           : ev.step.samples_per_s * per_sample_tokens;
    return job.tokens / rate * (1 + eval_overhead) / 60.0;
  }
  return Unsupported{"metric \"" + metric + "\" is not predicted for training yet"};
}

}  // namespace gpuplan::validation
