// Validation harness. Each case line is mapped onto the planner's own types (ModelSpec,
// Parallelism, TrainMemoryOptions, InferMemoryOptions) and evaluated by the same estimator
// functions every command uses. Framework and engine names select the tool's documented
// semantics (what a framework keeps in memory, how a tool reports memory), never an answer.
#include "gpuplan/validate.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/benchmark.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/job.h"
#include "gpuplan/plan.h"
#include "gpuplan/serve.h"
#include "io/csv.h"
#include "io/json_util.h"

namespace gpuplan {

using internal::Json;

namespace {

// Explanation sink for the one case asked to explain (set by RunValidation).
thread_local Trace* g_trace = nullptr;
thread_local Trace trace_buf;

// ---- small JSON accessors (null = absent) ---------------------------------------------------

const Json* Child(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}
std::optional<double> Num(const Json& j, const char* key) {
  const Json* c = Child(j, key);
  if (!c || !c->is_number()) return std::nullopt;
  return c->get<double>();
}
std::optional<int> Int(const Json& j, const char* key) {
  auto v = Num(j, key);
  if (!v) return std::nullopt;
  // CheckCase bounds every number; saturate anyway so no cast can overflow.
  return static_cast<int>(std::lround(std::clamp(*v, -1e9, 1e9)));
}
std::string Str(const Json& j, const char* key) {
  const Json* c = Child(j, key);
  return c && c->is_string() ? c->get<std::string>() : std::string();
}
std::optional<bool> Bool(const Json& j, const char* key) {
  const Json* c = Child(j, key);
  if (!c) return std::nullopt;
  if (c->is_boolean()) return c->get<bool>();
  if (c->is_number()) return c->get<double>() != 0;
  return std::nullopt;
}
bool Contains(const std::string& hay, std::initializer_list<const char*> needles) {
  std::string h = internal::ToLower(hay);
  for (const char* n : needles) {
    if (h.find(n) != std::string::npos) return true;
  }
  return false;
}

// ---- the case's model ------------------------------------------------------------------------

struct Unsupported {
  std::string reason;
};

std::variant<ModelSpec, Unsupported> CaseModel(const Json& mj) {
  std::string preset = Str(mj, "preset");
  if (!preset.empty()) {
    if (const ModelSpec* p = FindPreset(preset)) return *p;
    return Unsupported{"unknown preset \"" + preset + "\""};
  }
  ModelSpec m;
  m.name = "inline model";
  std::string arch = Str(mj, "arch");
  if (!arch.empty()) {
    auto a = ParseModelArch(arch);
    if (!a) return Unsupported{"unknown arch \"" + arch + "\""};
    m.arch = *a;
  }
  m.layers = Int(mj, "layers").value_or(0);
  m.hidden = static_cast<std::int64_t>(Num(mj, "hidden").value_or(0));
  m.heads = Int(mj, "heads").value_or(0);
  m.kv_heads = Int(mj, "kv_heads").value_or(m.heads);
  m.head_dim = Int(mj, "head_dim").value_or(m.heads > 0 ? static_cast<int>(m.hidden / m.heads) : 0);
  m.gated_mlp = Bool(mj, "gated_mlp").value_or(false);
  m.ffn_hidden = static_cast<std::int64_t>(
      Num(mj, "ffn_hidden").value_or(m.gated_mlp ? 0.0 : 4.0 * static_cast<double>(m.hidden)));
  m.vocab = static_cast<std::int64_t>(Num(mj, "vocab").value_or(0));
  m.tied_embeddings = Bool(mj, "tied_embeddings").value_or(false);
  m.norm = m.gated_mlp ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  if (auto p = Num(mj, "params")) m.params_override = static_cast<std::int64_t>(*p);
  if (auto p = Num(mj, "active_params")) m.active_params_override = static_cast<std::int64_t>(*p);
  if (const Json* moe = Child(mj, "moe")) {
    MoeSpec e;
    e.experts = Int(*moe, "experts").value_or(0);
    e.top_k = Int(*moe, "top_k").value_or(0);
    e.expert_ffn = static_cast<std::int64_t>(Num(*moe, "expert_ffn_hidden").value_or(0));
    e.shared_experts = Int(*moe, "shared_experts").value_or(0);
    if (e.experts > 0) m.moe = e;
  }
  m.gflops_per_sample = Num(mj, "gflops_per_sample");
  if (m.layers > 0 && (m.hidden <= 0 || m.heads <= 0)) {
    // Enough for KV-cache arithmetic (layers, kv_heads, head_dim), not for a parameter count.
    if (m.heads <= 0) m.heads = m.kv_heads;
  }
  if (m.layers == 0 && !m.params_override) {
    return Unsupported{"the case gives neither an architecture nor a parameter count"};
  }
  if (m.layers == 0 && m.hidden <= 0 && (m.arch == ModelArch::kDense || arch.empty()) &&
      !m.gflops_per_sample && !m.moe) {
    // Only a parameter count: the GPT-3 family's shape (Brown et al. 2020, Table 2.1: hidden /
    // layers = 128, head dim 128, 4h GELU MLP, GPT-2 vocabulary), P = 12 L h^2 = 12 h^3 / 128.
    const double p = static_cast<double>(*m.params_override);
    const double h = std::max(1.0, std::round(std::cbrt(p * 128.0 / 12.0) / 128.0)) * 128.0;
    m.hidden = static_cast<std::int64_t>(h);
    m.layers = std::max(1, static_cast<int>(std::lround(h / 128.0)));
    m.heads = m.kv_heads = m.layers;
    m.head_dim = 128;
    m.ffn_hidden = 4 * m.hidden;
    m.vocab = m.vocab > 0 ? m.vocab : 50257;
    m.arch = ModelArch::kDense;
    m.norm = NormKind::kLayerNorm;
  }
  return m;
}

// ---- framework semantics ---------------------------------------------------------------------

// How a tool reports peak memory: what torch's allocator has handed out (allocated), what it
// holds from the driver (reserved), or everything nvidia-smi sees (device).
enum class MemoryReport { kAllocated, kReserved, kDevice };

MemoryReport ReportOf(const std::string& framework) {
  if (Contains(framework, {"torchtune", "pipeline", "generate", "megatron", "max_memory_allocated"})) {
    return MemoryReport::kAllocated;
  }
  if (Contains(framework, {"unsloth", "reserved"})) return MemoryReport::kReserved;
  return MemoryReport::kDevice;  // HF Trainer's nvidia-smi helper, plain PyTorch scripts
}

Engine EngineOf(const std::string& e) {
  if (Contains(e, {"vllm"})) return Engine::kVllm;
  if (Contains(e, {"sglang"})) return Engine::kSglang;
  if (Contains(e, {"tgi", "text-generation-inference"})) return Engine::kTgi;
  if (Contains(e, {"trt", "tensorrt"})) return Engine::kTrtLlm;
  return Engine::kTransformers;
}

Bytes VisibleMemory(const Accelerator& a) {
  // The driver reserves ~1% of HBM (ECC, firmware): an "80 GB" H100 shows 79.2 GiB, an A100
  // 40GB 39.5 GiB, an RTX 3090 23.6 GiB (vLLM logs, nvidia-smi).
  return a.memory * 0.99;
}

struct TrainSetup {
  Parallelism par;
  TrainMemoryOptions opt;
  MemoryReport report = MemoryReport::kDevice;
};

std::variant<TrainSetup, Unsupported> BuildTrain(const ModelSpec& m, const Json& w,
                                                 const Json& hw) {
  TrainSetup s;
  std::string framework = Str(w, "framework");
  auto method = ParseTrainMethod(Str(w, "method").empty() ? "full" : Str(w, "method"));
  if (!method) return Unsupported{"unknown method \"" + Str(w, "method") + "\""};
  s.opt.method = *method;
  std::string prec = Str(w, "precision");
  if (!prec.empty()) {
    auto p = ParsePrecision(prec);
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
  s.opt.micro_batch = Int(w, "micro_batch").value_or(1);
  s.opt.seq_len = Int(w, "seq_len").value_or(m.arch == ModelArch::kEncoder ? 512 : 2048);
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
  if (Contains(framework, {"torchtune"})) {
    // torchtune trains in pure bf16: parameters, grads and AdamW states in bf16, no master.
    if (s.opt.precision == Precision::kBf16) {
      s.opt.master_weights = false;
      s.opt.optimizer_state_dtype = Precision::kBf16;
    }
  }
  // Flash attention: the case's flag; otherwise on for any named modern framework (SDPA/flash
  // kernels are their default) and off for bare formula cases, which follow Korthikanti et al.
  // (Megatron without flash attention, scores stored).
  // Encoders ran HF's eager attention (BERT got SDPA only in transformers 4.38).
  s.opt.flash_attention =
      Bool(w, "flash_attention").value_or(!framework.empty() && m.is_decoder_llm());
  s.opt.fused_kernels = Contains(framework, {"megatron", "nemo", "transformer engine", "unsloth"}) ||
                        Bool(w, "compile").value_or(false);
  if (Contains(framework, {"unsloth"})) {
    // Unsloth's fused cross-entropy keeps bf16 logits and their gradient, no fp32 copy.
    s.opt.logits_bytes_per_element = 4.0;
  }
  if (Contains(framework, {"megatron", "nemo"}) || s.par.tp > 1 || s.par.pp > 1) {
    // Tensor/pipeline parallelism means Megatron-style training, which accumulates gradients
    // in fp32 main_grad buffers (18 B/param with Adam).
    s.opt.grad_dtype = Precision::kFp32;
  }
  if (Bool(w, "optimizer_in_bwd").value_or(false)) s.opt.optimizer_in_backward = true;
  if (Bool(w, "activation_offloading").value_or(false) ||
      (Contains(framework, {"unsloth"}) && s.opt.recompute == Recompute::kFull)) {
    // Unsloth's gradient checkpointing offloads the checkpoints to CPU RAM.
    s.opt.activation_offload = true;
  }
  s.report = ReportOf(framework);
  return s;
}

double Unit(const std::string& metric) {
  // Metric names carry their unit as a token: memory_gib, activations_gib_per_gpu, kv_cache_gb.
  std::string m = metric + "_";
  if (m.find("_gib_") != std::string::npos) return kBytesPerGiB;
  if (m.find("_mib_") != std::string::npos) return kBytesPerMiB;
  if (m.find("_gb_") != std::string::npos) return kBytesPerGB;
  return 1.0;  // _bytes, _tokens
}

// Applies a reporting convention to a training breakdown's total.
double ReportedTrainingPeak(const MemoryBreakdown& b, MemoryReport report) {
  double tensors = (b.ModelStates() + b.activations + b.logits).value();
  switch (report) {
    case MemoryReport::kAllocated: return tensors;
    case MemoryReport::kReserved: return tensors + b.allocator_slack.value();
    case MemoryReport::kDevice: return b.Total().value();
  }
  return b.Total().value();
}

std::variant<double, Unsupported> PredictTrainingMemory(const ModelSpec& m, const Json& w,
                                                        const Json& hw, const std::string& metric,
                                                        const Catalog& cat) {
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
  auto setup = BuildTrain(m, w, hw);
  if (auto* u = std::get_if<Unsupported>(&setup)) return *u;
  TrainSetup& s = std::get<TrainSetup>(setup);
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
    MemoryBreakdown b = EstimateTrainingMemory(m, s.par, s.opt);
    return ReportedTrainingPeak(b, s.report);
  }
  return Unsupported{"metric \"" + metric + "\" is not predicted for training workloads yet"};
}

std::variant<double, Unsupported> PredictInferenceMemory(const ModelSpec& m, const Json& w,
                                                         const Json& hw, const std::string& metric,
                                                         const Catalog& cat) {
  auto kv_prec = [&]() -> std::optional<Precision> {
    std::string k = Str(w, "kv_precision");
    if (k.empty()) k = Str(w, "precision");
    if (k.empty() || k == "int4") return Precision::kBf16;
    return ParsePrecision(k);
  };
  const int tp = Int(w, "tp").value_or(1);
  const int pp = Int(w, "pp").value_or(1);
  if (tp < 1 || pp < 1) return Unsupported{"tp and pp must be >= 1"};
  std::string prec_s = Str(w, "precision");
  Precision prec = m.dtype == Precision::kFp32 ? Precision::kBf16 : m.dtype;
  if (!prec_s.empty()) {
    auto p = ParsePrecision(prec_s);
    if (!p) return Unsupported{"unknown precision \"" + prec_s + "\""};
    prec = *p;
  }

  if (metric == "kv_per_token_bytes" || metric == "kv_cache_gb" || metric == "kv_cache_mib") {
    auto kp = kv_prec();
    if (!kp) return Unsupported{"unknown kv_precision"};
    if (!m.is_decoder_llm() || m.layers == 0) return Unsupported{"no KV cache for this model"};
    Bytes per = KvBytesPerToken(m, BytesPerElement(*kp), tp);
    if (metric == "kv_per_token_bytes") return per.value();
    double tokens = Num(w, "input_len").value_or(0) + Num(w, "output_len").value_or(0);
    double batch = Num(w, "batch").value_or(1);
    if (tokens <= 0) return Unsupported{"kv_cache needs input_len"};
    return per.value() * tokens * batch;
  }
  if (metric.rfind("weights_", 0) == 0 && metric != "weights_gib") {
    return InferenceWeightBytes(m, prec, m.quant, tp, pp).value();
  }
  if (metric == "largest_layer_bytes") {
    ParamCounts pc = CountParams(m);
    if (!pc.exact || pc.per_layer == 0) {
      return Unsupported{"largest layer needs the layer-by-layer architecture"};
    }
    return static_cast<double>(pc.largest_layer) * BytesPerElement(prec);
  }
  if (metric == "kv_budget_tokens" || metric == "kv_budget_bytes") {
    auto total = Num(w, "gpu_mem_gib");
    auto non_kv = Num(w, "non_kv_gib");
    auto per = Num(w, "kv_per_token_bytes");
    if (!total || !non_kv) return Unsupported{"kv_budget needs gpu_mem_gib and non_kv_gib"};
    Bytes budget = KvBudget(EngineOf(Str(w, "engine")), GiB(*total), GiB(*non_kv),
                            GiB(*non_kv), Num(w, "kv_fraction"));
    if (metric == "kv_budget_bytes") return budget.value();
    if (!per || *per <= 0) return Unsupported{"kv_budget_tokens needs kv_per_token_bytes"};
    return std::floor(budget.value() / *per);
  }

  // Whole-engine accounting on a real device.
  std::string gpu = Str(hw, "gpu");
  const Accelerator* acc = gpu.empty() ? nullptr : cat.FindAccelerator(gpu);
  if (!acc) return Unsupported{"needs a known accelerator, got \"" + gpu + "\""};
  InferMemoryOptions o;
  o.engine = EngineOf(Str(w, "engine"));
  o.weight_precision = prec;
  o.quant = m.quant;
  if (!o.quant && o.engine == Engine::kTransformers && prec == Precision::kInt4) {
    // transformers' load_in_4bit: bitsandbytes NF4, blocks of 64 with fp32 absmax.
    o.quant = QuantSpec{"bnb-nf4", 4, 64, false, false, 32};
  }
  auto kp = kv_prec();
  if (!kp) return Unsupported{"unknown kv_precision"};
  o.kv_precision = *kp;
  o.tp = tp;
  o.pp = pp;
  if (auto f = Num(w, "gpu_memory_utilization")) o.memory_fraction = *f;
  if (auto f = Num(w, "mem_fraction_static")) o.memory_fraction = *f;
  if (o.engine == Engine::kVllm) {
    // vLLM's scheduler defaults by engine generation: V0 (< 0.8, or "V0") profiles one prefill
    // of max(max_model_len, 2048) tokens with 256 sequences; V1 uses 8192 tokens and, on GPUs
    // with >= 70 GiB, 1024 sequences (2048 / 256 below that).
    std::string ver = internal::ToLower(Str(w, "version"));
    bool v0 = Contains(ver, {"v0", "0.4", "0.5", "0.6", "0.7"});
    int max_len = Int(w, "max_model_len").value_or(0);
    if (v0) {
      o.max_num_batched_tokens = std::max(max_len, 2048);
      o.max_num_seqs = 256;
    } else {
      bool big = acc->memory.value() >= 70.0 * kBytesPerGiB;
      o.max_num_batched_tokens = big ? 8192 : 2048;
      o.max_num_seqs = big ? 1024 : 256;
    }
  }
  if (auto v = Int(w, "max_num_batched_tokens")) o.max_num_batched_tokens = *v;
  if (auto v = Int(w, "max_num_seqs")) o.max_num_seqs = *v;
  if (auto v = Int(w, "block_size")) o.block_size = *v;
  int in = Int(w, "input_len").value_or(0), out = Int(w, "output_len").value_or(0);
  o.concurrency = Int(w, "batch").value_or(Int(w, "concurrency").value_or(1));
  o.context = std::max(1, in + out);
  if (o.engine != Engine::kTransformers) {
    o.context = Int(w, "max_model_len").value_or(o.context);
    o.concurrency = 1;
  }
  Bytes total = Num(w, "total_gpu_memory_gib") ? GiB(*Num(w, "total_gpu_memory_gib"))
                                               : VisibleMemory(*acc);
  InferMemory r = EstimateInferenceMemory(m, o, total);
  const MemoryBreakdown& b = r.breakdown;
  if (metric == "weights_gib") return b.weights.value();  // the engine's own load
  if (metric == "non_torch_gib") return (b.cuda_context + b.nccl_buffers).value();
  if (metric == "activation_peak_gib") return (b.activations + b.logits).value();
  if (metric == "kv_cache_gib") return r.kv_budget.value();
  if (metric == "kv_cache_tokens") return static_cast<double>(r.kv_tokens);
  if (metric == "memory_gib") {
    if (!m.is_transformer() || m.hidden == 0) {
      return Unsupported{"serving memory of non-transformer models is not modelled yet"};
    }
    MemoryReport rep = ReportOf(Str(w, "engine"));
    double tensors = (b.weights + b.kv_cache + b.activations + b.logits).value();
    if (Int(w, "batch").value_or(0) == 0 && in + out == 0) {
      tensors = b.weights.value();  // weights loaded, nothing run
    }
    return rep == MemoryReport::kDevice ? tensors + b.cuda_context.value() : tensors;
  }
  return Unsupported{"metric \"" + metric + "\" is not predicted for serving workloads yet"};
}

// ---- hardware of a case ----------------------------------------------------------------------

// Per-port line rates of the case schema's fabric ids, Gbit/s.
double FabricGbps(const std::string& id) {
  if (Contains(id, {"ib-xdr"})) return 800;
  if (Contains(id, {"ib-ndr"})) return 400;
  if (Contains(id, {"ib-hdr"})) return 200;
  if (Contains(id, {"ib-edr"})) return 100;
  if (Contains(id, {"efa"})) return 100;
  if (Contains(id, {"roce"})) return 200;
  return 0;
}

std::variant<HardwareView, Unsupported> CaseHardware(const Json& hw, const Catalog& cat) {
  std::string gpu = Str(hw, "gpu");
  const Accelerator* acc = gpu.empty() ? nullptr : cat.FindAccelerator(gpu);
  if (!acc) return Unsupported{"needs a known accelerator, got \"" + gpu + "\""};
  HardwareView v;
  v.acc = acc;
  int gpus = Int(hw, "gpus").value_or(0);
  v.gpus_per_node = Int(hw, "gpus_per_node").value_or(gpus > 0 ? std::min(8, gpus) : 8);
  if (gpus <= 0) gpus = 8 * v.gpus_per_node;  // unstated cluster size: a 64-GPU slice
  v.nodes = std::max(1, gpus / std::max(1, v.gpus_per_node));
  std::string intra = internal::ToLower(Str(hw, "intra_node"));
  bool sxm = Contains(acc->form_factor, {"sxm", "oam", "superchip"});
  if (intra.empty()) {
    v.intra = sxm ? IntraNodeLink::kNvswitch : IntraNodeLink::kPcie;
    if (Contains(acc->intra_link, {"infinity"})) v.intra = IntraNodeLink::kInfinityFabric;
  } else if (Contains(intra, {"nvlink", "nvswitch"})) {
    v.intra = IntraNodeLink::kNvswitch;
  } else if (Contains(intra, {"infinity", "xgmi"})) {
    v.intra = IntraNodeLink::kInfinityFabric;
  } else {
    v.intra = IntraNodeLink::kPcie;
  }
  InstanceType shape;
  shape.accelerator_count = v.gpus_per_node;
  shape.intra_node_link = v.intra;
  std::string inter = internal::ToLower(Str(hw, "inter_node"));
  // Training clusters are rail-optimised: a fabric named without a port count has one port
  // per GPU (DGX SuperPOD, MosaicML's RoCE clusters, EFA on p4d/p5).
  double count = v.gpus_per_node;
  if (auto x = inter.find('x'); x != std::string::npos && x > 0) {
    if (auto n = internal::ParseDouble(inter.substr(0, x))) count = *n;
  }
  double gbps = FabricGbps(inter) * count;
  if (gbps <= 0) {
    // Unstated fabric: a rail-optimised cluster, one NIC per GPU (200 Gb/s HDR for A100-era,
    // 400 Gb/s NDR for Hopper and later).
    bool fast = Contains(acc->arch, {"hopper", "blackwell", "cdna 3"});
    gbps = (fast ? 400.0 : 200.0) * v.gpus_per_node;
  }
  shape.inter_node_bw = Gbps(gbps);
  shape.inter_node_fabric = Contains(inter, {"efa"})    ? InterNodeFabric::kEfa
                            : Contains(inter, {"roce"}) ? InterNodeFabric::kRoce
                                                        : InterNodeFabric::kInfiniband;
  HardwareView built = HardwareFromInstance(shape, *acc, v.nodes);
  return built;
}

// The benchmark a run-to-target case ran: `workload.train.benchmark`, or the benchmark
// directory of an MLPerf Training results path in `source`
// ("training_results_v4.0 : NVIDIA/results/<system>/<benchmark>/result_*.txt").
const TrainBenchmark* CaseBenchmark(const Json& c, const Json& w) {
  if (const auto* b = FindTrainBenchmark(Str(w, "benchmark"))) return b;
  const std::string src = Str(c, "source");
  if (src.find("training_results_v") == std::string::npos) return nullptr;
  auto r = src.find("/results/");
  if (r == std::string::npos) return nullptr;
  auto sys_end = src.find('/', r + 9);
  if (sys_end == std::string::npos) return nullptr;
  auto bench_end = src.find('/', sys_end + 1);
  if (bench_end == std::string::npos) return nullptr;
  return FindTrainBenchmark(src.substr(sys_end + 1, bench_end - sys_end - 1));
}

std::variant<double, Unsupported> PredictTrainingPerf(ModelSpec m, const Json& w,
                                                      const Json& hwj, const std::string& metric,
                                                      const Catalog& cat,
                                                      const TrainBenchmark* bench) {
  auto hwv = CaseHardware(hwj, cat);
  if (auto* u = std::get_if<Unsupported>(&hwv)) return *u;
  HardwareView hw = std::get<HardwareView>(hwv);
  auto setup = BuildTrain(m, w, hwj);
  if (auto* u = std::get_if<Unsupported>(&setup)) return *u;
  TrainSetup& s = std::get<TrainSetup>(setup);
  if (!m.is_transformer() && !m.gflops_per_sample && bench && bench->gflops_per_sample) {
    m.gflops_per_sample = bench->gflops_per_sample;  // the benchmark's model at its resolution
  }
  if (!m.is_transformer() && !m.gflops_per_sample) {
    return Unsupported{"non-transformer model without gflops_per_sample"};
  }
  TrainJob job;
  job.tokens = Num(w, "tokens").value_or(0);
  job.global_batch = Int(w, "global_batch").value_or(0);
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
  if (Child(w, "zero") || !Str(w, "fsdp").empty()) fixed.zero_stage = s.par.zero_stage;
  const std::string fw = Str(w, "framework");
  Calibration cal = DefaultCalibration();
  // Framework capabilities (the planner applies the same: ApplyFramework). Legacy Megatron-LM
  // (before Megatron-Core, 2023) shards at most the optimizer and all-reduces gradients after
  // the backward pass; Megatron-Core/NeMo overlap TP collectives with their GEMMs and the
  // distributed optimizer's parameter all-gather with the next forward; DeepSpeed pipelines
  // only with ZeRO 0-1.
  const TrainFramework tfw = TrainFrameworkFromText(fw);
  ApplyFramework(tfw, cal, fixed);
  const bool mcore = tfw == TrainFramework::kMegatronCore;
  // An unstated precision is chosen like the other open fields when the framework or the
  // benchmark run makes FP8 the fast path: Transformer Engine recipes, and LLM submissions to
  // a run-to-target benchmark (every MLPerf LLM submission since v4.0 trains in FP8 where the
  // GPU has it). Otherwise the generic default, bf16.
  if (Str(w, "precision").empty() && hw.acc->fp8 && m.is_decoder_llm() && (mcore || bench)) {
    s.opt.precision = Precision::kFp8;
  }
  if (!Str(w, "recompute").empty()) fixed.recompute = s.opt.recompute;
  if (auto v = Bool(w, "sequence_parallel")) fixed.sequence_parallel = *v;
  // Offload is something a published run states (DeepSpeed's offload_optimizer /
  // offload_param "cpu"): a case that does not ran without it.
  fixed.optimizer_offload = Str(w, "offload_optimizer") == "cpu";
  fixed.param_offload = Str(w, "offload_param") == "cpu";
  int gpus_case = Int(hwj, "gpus").value_or(0);
  if (fixed.tp && fixed.pp && fixed.dp) {
    int n = *fixed.tp * *fixed.pp * *fixed.dp * fixed.cp.value_or(1);
    if (gpus_case > 0 && n != gpus_case) {
      return Unsupported{fmt::format("tp x pp x dp x cp = {} but the case has {} GPUs", n, gpus_case)};
    }
    hw.nodes = std::max(1, n / hw.gpus_per_node);
    if (n < hw.gpus_per_node) hw.gpus_per_node = n;
  }
  if (job.global_batch <= 0) {
    // Unstated batch: the planner's own default for the method (DefaultGlobalBatch: ~1M tokens
    // per step for pretraining, 128 sequences for fine-tuning, 16 for LoRA).
    TrainJobSpec spec;
    spec.model = m;
    spec.method = s.opt.method;
    spec.seq_len = s.opt.seq_len;
    job.global_batch = DefaultGlobalBatch(spec);
    fixed.round_global_batch = true;
  }
  // Run to a quality target: the benchmark's samples to the target at this batch, plus its
  // evaluation passes (forward only: a third of a training step's work, half for LoRA).
  double eval_overhead = 0;
  if (job.tokens <= 0 && bench && metric == "time_to_train_min") {
    const double samples = bench->SamplesToTarget(job.global_batch);
    job.tokens = samples * (m.is_transformer() ? s.opt.seq_len : 1);
    const bool peft = s.opt.method == TrainMethod::kLora || s.opt.method == TrainMethod::kQlora;
    eval_overhead = bench->EvalOverhead(peft ? 0.5 : 1.0 / 3.0);
  }
  if (!m.is_transformer() && job.tokens <= 0 && metric == "time_to_train_min") {
    return Unsupported{"time to train needs the number of samples or epochs to the target"};
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
  if (best) {
    s.par = best->par;
    s.opt = best->opt;
    job.global_batch = best->global_batch;
  } else if (fixed.tp && fixed.pp && fixed.dp) {
    // Nothing fits our memory model; the run happened, so predict its speed anyway.
    s.par.tp = *fixed.tp;
    s.par.pp = *fixed.pp;
    s.par.dp = *fixed.dp;
    s.opt.micro_batch = fixed.micro_batch.value_or(1);
  } else {
    return Unsupported{"no layout fits memory on these GPUs"};
  }
  ev = EvaluateTraining(m, s.par, s.opt, job, hw, cal, 1.0, g_trace);
  if (!ev.step.valid) return Unsupported{ev.step.reason};
  if (g_trace) {
    g_trace->Add("layout", fmt::format("tp{} pp{} dp{} cp{} zero{} mb{} recompute {} nodes {} x {}",
                                       s.par.tp, s.par.pp, s.par.dp, s.par.cp, s.par.zero_stage,
                                       s.opt.micro_batch, RecomputeLabel(s.opt.recompute, s.opt.recompute_layers), hw.nodes,
                                       hw.gpus_per_node), 0, "");
    g_trace->Add("memory per GPU", "GiB", ToGiB(ev.memory.Total()), "GiB");
    g_trace->Add("intra bw per GPU", "GB/s per direction", hw.intra_bw.value() / 1e9, "GB/s");
    g_trace->Add("inter bw per GPU", "GB/s per direction", hw.inter_bw.value() / 1e9, "GB/s");
  }
  const double gpus = s.par.gpus();
  const double t = ev.step.total.value();
  if (metric == "tflops_per_gpu") return ev.step.hardware_flops.value() / t / gpus / 1e12;
  if (metric == "mfu") return ev.step.mfu;
  if (metric == "tokens_per_s_per_gpu") return ev.step.tokens_per_s_per_gpu;
  if (metric == "samples_per_s") return ev.step.samples_per_s;
  if (metric == "iteration_s") return t;
  if (metric == "gpu_hours") {
    if (job.tokens <= 0) return Unsupported{"gpu_hours needs tokens"};
    // A whole run's GPU-hours count the time lost to failures, restarts and checkpoint
    // stalls: the effective-training-time ratio of large pretraining runs.
    const double goodput = cal.Get("production_goodput", 1.0);
    if (g_trace) g_trace->Add("production goodput", "effective training time / allocated time", goodput, "");
    return job.tokens / ev.step.tokens_per_s_per_gpu / 3600.0 / goodput;
  }
  if (metric == "time_to_train_min") {
    if (job.tokens <= 0) return Unsupported{"time to train needs tokens (or samples) to the target"};
    if (g_trace && bench) {
      g_trace->Add("benchmark " + bench->id, "samples to target at this batch",
                   bench->SamplesToTarget(job.global_batch), "samples");
      g_trace->Add("evaluation overhead", "eval samples / eval interval x forward share", eval_overhead, "");
    }
    const double per_sample_tokens = m.is_transformer() ? s.opt.seq_len : 1;
    const double rate = m.is_transformer() ? ev.step.tokens_per_s_per_gpu * gpus
                                           : ev.step.samples_per_s * per_sample_tokens;
    return job.tokens / rate * (1 + eval_overhead) / 60.0;
  }
  return Unsupported{"metric \"" + metric + "\" is not predicted for training yet"};
}

// ---- serving performance ---------------------------------------------------------------------

std::variant<double, Unsupported> PredictInferencePerf(const ModelSpec& m, const Json& w,
                                                       const Json& hw, const std::string& metric,
                                                       const Catalog& cat) {
  const Calibration& cal = DefaultCalibration();
  std::string gpu = Str(hw, "gpu");
  const int units = std::max(1, Int(hw, "gpus").value_or(1));
  ComputeDevice dev;
  if (gpu.rfind("cpu:", 0) == 0) {
    const Cpu* cpu = cat.FindCpu(gpu);
    if (!cpu) return Unsupported{"unknown CPU \"" + gpu + "\""};
    dev = DeviceFromCpu(*cpu, units, Int(w, "threads").value_or(0), cal);
  } else if (gpu.empty() && Num(w, "peak_tflops")) {
    dev.id = "case device";  // filled from the case's own figures below
  } else {
    const Accelerator* acc = gpu.empty() ? nullptr : cat.FindAccelerator(gpu);
    if (!acc) return Unsupported{"needs a known accelerator, got \"" + gpu + "\""};
    bool sxm = Contains(acc->form_factor, {"sxm", "oam", "superchip"});
    std::string intra = internal::ToLower(Str(hw, "intra_node"));
    IntraNodeLink link = intra.empty() ? (sxm ? IntraNodeLink::kNvswitch : IntraNodeLink::kPcie)
                         : Contains(intra, {"pcie"}) ? IntraNodeLink::kPcie
                                                     : IntraNodeLink::kNvswitch;
    dev = DeviceFromAccelerator(*acc, cal, link);
  }
  std::string prec_s = Str(w, "precision");
  Precision prec = m.dtype == Precision::kFp32 ? Precision::kFp16 : m.dtype;
  if (!prec_s.empty()) {
    auto p = ParsePrecision(prec_s);
    if (!p) return Unsupported{"unknown precision \"" + prec_s + "\""};
    prec = *p;
  }
  // Formula cases (llm-analysis, LLM-Viewer, GenZ) state the device figures and efficiencies
  // themselves: a pure roofline device with those numbers and no size-dependent losses.
  Calibration roof_cal;
  if (auto pk = Num(w, "peak_tflops")) {
    dev.peak_fp32 = dev.peak_bf16 = dev.peak_fp16 = dev.peak_fp8 = dev.peak_int8 = *pk * 1e12;
    if (auto bw = Num(w, "hbm_gbps")) dev.mem_bw = *bw * 1e9;
    dev.gemm_eff = Num(w, "flops_efficiency").value_or(1.0);
    dev.mem_eff = Num(w, "hbm_efficiency").value_or(1.0);
    dev.kernel_s = 0;
    dev.gemm_knee = 1e-12;
    dev.decode_knee = 0;
    if (auto l = Num(w, "link_gbps")) dev.link_bw = BytesPerSec(*l * 1e9);
    dev.memory = GiB(1e6);  // memory capacity is not part of these formulas
    roof_cal.entries = {{"attention_efficiency", dev.gemm_eff, "case"},
                        {"decode_overhead_us_per_layer", 0, "case"},
                        {"decode_overhead_us_per_seq", 0, "case"},
                        {"link_latency_us.intra", Num(w, "link_latency_us").value_or(0), "case"},
                        {"hbm_efficiency", dev.mem_eff, "case"}};
  }
  const Calibration& pcal = Num(w, "peak_tflops") ? roof_cal : cal;
  const std::string scenario = Str(w, "scenario");
  const std::string engine_s = Str(w, "engine");
  auto batch = Int(w, "batch");
  if (m.is_decoder_llm()) {
    int in = Int(w, "input_len").value_or(-1), out = Int(w, "output_len").value_or(-1);
    if (out < 0 && Num(w, "peak_tflops")) out = 0;  // roofline formula cases: prompt only
    if (in < 0 || out < 0) return Unsupported{"LLM serving needs input_len and output_len"};
    ServeSetup su;
    su.weight_precision = prec;
    su.quant = m.quant;
    if (dev.cpu && prec == Precision::kInt4) su.quant = QuantSpec{"gguf-q4_0", 4, 32, false, false, 16};
    std::string kv = Str(w, "kv_precision");
    su.kv_precision = kv.empty() ? (prec == Precision::kFp8 ? Precision::kFp8 : Precision::kBf16)
                                 : ParsePrecision(kv).value_or(Precision::kBf16);
    su.tp = Int(w, "tp").value_or(1);
    su.engine = EngineOf(engine_s);
    // Engines' default concurrency limits: TensorRT-LLM's benchmark engines 2048 sequences,
    // vLLM 256 (V0) / 1024 (V1 on >= 70 GiB GPUs), others 256.
    su.max_batch = su.engine == Engine::kTrtLlm ? 2048 : 256;
    if (auto mb = Int(w, "max_num_seqs")) su.max_batch = *mb;
    const int replicas = std::max(1, units / std::max(1, su.tp * Int(w, "pp").value_or(1)));
    int static_batch = batch.value_or(0);
    if (scenario == "single") static_batch = 1;
    if (metric == "prefill_ms" || metric == "decode_ms_per_token" || metric == "decode_total_s" ||
        metric == "generate_s") {
      // One request (or the stated static batch): prefill of the prompt, decode steps after it.
      const int b = std::max(1, batch.value_or(1));
      ServePerf pre = EstimateLlmServing(m, su, dev, in, 1, b, pcal);
      const double prefill = b > 1 ? pre.ttft.value() : pre.prefill.value();
      if (metric == "prefill_ms") return prefill * 1e3;
      // Decode at the prompt's context (one step), or summed over the output (mid context).
      ServePerf one = EstimateLlmServing(m, su, dev, in, 2, b, pcal);
      ServePerf mid = EstimateLlmServing(m, su, dev, in, std::max(2, out), b, pcal);
      if (metric == "decode_ms_per_token") return one.decode_step.value() * 1e3;
      const double dec_total = mid.decode_step.value() * std::max(0, out);
      if (metric == "decode_total_s") return dec_total;
      return prefill + dec_total;
    }
    ServePerf r = EstimateLlmServing(m, su, dev, in, out, static_batch, cal);
    if (metric == "output_tokens_per_s") return r.output_tokens_per_s * replicas;
    if (metric == "ttft_ms") return r.ttft.value() * 1e3;
    if (metric == "tpot_ms") return r.tpot.value() * 1e3;
    if (metric == "latency_ms") return r.e2e.value() * 1e3;
    if (metric == "samples_per_s") return r.samples_per_s * replicas;
    return Unsupported{"metric \"" + metric + "\" is not predicted for LLM serving yet"};
  }
  // Encoders, ViTs, CNNs: one forward per batch.
  const int seq = Int(w, "seq_len").value_or(m.arch == ModelArch::kEncoder ? 128 : 1);
  if (!m.is_transformer() && !m.gflops_per_sample) {
    return Unsupported{"non-transformer model without gflops_per_sample"};
  }
  // Inference runtimes (TensorRT, OpenVINO, ONNX Runtime, IPEX) fuse element-wise work;
  // plain PyTorch/transformers pipelines run eager.
  const bool fused = !Contains(engine_s, {"pytorch (", "transformers"}) || Contains(engine_s, {"ipex", "tensorrt", "openvino", "onnx", "infinity"});
  if (metric == "latency_ms") {
    ServePerf r = EstimateForward(m, prec, dev, batch.value_or(1), seq, cal, fused);
    return r.e2e.value() * 1e3;
  }
  if (metric == "samples_per_s") {
    double thr = 0;
    if (scenario == "single" || batch) {
      ServePerf r = EstimateForward(m, prec, dev, batch.value_or(1), seq, cal, fused);
      thr = r.samples_per_s;
    } else {
      thr = EstimateForwardThroughput(m, prec, dev, seq, 256, cal, fused).samples_per_s;
      if (scenario == "server") thr *= cal.Get("server_scenario_utilization", 0.85);
    }
    // CPU sockets are one device here; GPUs count each.
    return dev.cpu ? thr : thr * units;
  }
  return Unsupported{"metric \"" + metric + "\" is not predicted for this model yet"};
}

std::variant<double, Unsupported> Predict(const Json& c, const Catalog& cat) {
  const std::string kind = Str(c, "kind");
  const std::string metric = Str(c, "metric");
  if (kind != "memory") {
    if (kind == "train_throughput" || kind == "train_time") {
      const Json& hw0 = c.contains("hardware") && c["hardware"].is_object() ? c["hardware"] : Json();
      auto model0 = CaseModel(c["model"]);
      if (auto* u = std::get_if<Unsupported>(&model0)) return *u;
      const Json* t = Child(c["workload"], "train");
      if (!t) return Unsupported{"training kind without workload.train"};
      return PredictTrainingPerf(std::get<ModelSpec>(model0), *t, hw0, metric, cat,
                                 CaseBenchmark(c, *t));
    }
    if (kind == "infer_throughput" || kind == "infer_latency") {
      const Json& hw0 = c.contains("hardware") && c["hardware"].is_object() ? c["hardware"] : Json();
      auto model0 = CaseModel(c["model"]);
      if (auto* u = std::get_if<Unsupported>(&model0)) return *u;
      const Json* i = Child(c["workload"], "infer");
      if (!i) return Unsupported{"serving kind without workload.infer"};
      return PredictInferencePerf(std::get<ModelSpec>(model0), *i, hw0, metric, cat);
    }
    return Unsupported{"unknown kind \"" + kind + "\""};
  }
  const Json& hw = c.contains("hardware") && c["hardware"].is_object() ? c["hardware"] : Json();
  std::string gpu = Str(hw, "gpu");
  if (gpu.rfind("cpu:", 0) == 0) return Unsupported{"CPU memory is not predicted"};
  const Json& wl = c["workload"];
  if (metric == "kv_budget_tokens" || metric == "kv_budget_bytes") {
    // Engine rule with the memory figures given by the case; no model needed.
    if (const Json* i = Child(wl, "infer")) return PredictInferenceMemory(ModelSpec{}, *i, hw, metric, cat);
  }
  auto model = CaseModel(c["model"]);
  if (auto* u = std::get_if<Unsupported>(&model)) return *u;
  const ModelSpec& m = std::get<ModelSpec>(model);
  if (const Json* t = Child(wl, "train")) return PredictTrainingMemory(m, *t, hw, metric, cat);
  if (const Json* i = Child(wl, "infer")) return PredictInferenceMemory(m, *i, hw, metric, cat);
  return Unsupported{"workload has neither train nor infer"};
}

Status CheckCase(const Json& c, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& msg) -> Status {
    return MakeError(ErrorCode::kParse, where + ":" + field, msg,
                     "see ../shared/validation/SCHEMA.md");
  };
  if (!c.is_object()) return bad("", "a case must be a JSON object");
  for (const char* k : {"id", "kind", "metric"}) {
    if (!c.contains(k) || !c[k].is_string() || c[k].get<std::string>().empty()) {
      return bad(k, "missing or not a string");
    }
  }
  if (!c.contains("measured") || !c["measured"].is_number()) {
    return bad("measured", "missing or not a number");
  }
  double v = c["measured"].get<double>();
  if (!std::isfinite(v) || v <= 0) return bad("measured", fmt::format("must be > 0, got {}", v));
  if (!c.contains("model") || !c["model"].is_object()) return bad("model", "missing or not an object");
  if (!c.contains("workload") || !c["workload"].is_object()) {
    return bad("workload", "missing or not an object");
  }
  if (c.contains("hardware") && !c["hardware"].is_null() && !c["hardware"].is_object()) {
    return bad("hardware", "must be an object or null");
  }
  // Sizes the model arithmetic multiplies: bounded so no count can overflow.
  const Json& m = c["model"];
  auto bounded = [&](const Json& obj, const std::string& path, const char* key, double hi) -> Status {
    const Json* x = Child(obj, key);
    if (!x) return {};
    if (!x->is_number()) return bad(path + key, "must be a number, got " + internal::JsonTypeName(*x));
    const double d = x->get<double>();
    if (!(d >= 0 && d <= hi)) return bad(path + key, fmt::format("must be in [0, {:g}], got {:g}", hi, d));
    return {};
  };
  for (const char* k : {"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab"}) {
    if (auto st = bounded(m, "model.", k, 16777216); !st) return st;
  }
  for (const char* k : {"params", "active_params", "gflops_per_sample"}) {
    if (auto st = bounded(m, "model.", k, 1e15); !st) return st;
  }
  if (const Json* moe = Child(m, "moe")) {
    for (const char* k : {"experts", "top_k", "expert_ffn_hidden", "shared_experts"}) {
      if (auto st = bounded(*moe, "model.moe.", k, 16777216); !st) return st;
    }
  }
  // Every other number of the case: finite and within +-1e15 (counts, sizes, rates).
  for (const char* section : {"workload", "hardware", "model"}) {
    const Json* sec = Child(c, section);
    if (!sec || !sec->is_object()) continue;
    for (auto it = sec->begin(); it != sec->end(); ++it) {
      const Json& x = it.value();
      if (x.is_number() && !(std::fabs(x.get<double>()) <= 1e15)) {
        return bad(std::string(section) + "." + it.key(), "must be within +-1e15");
      }
      if (x.is_object()) {
        for (auto jt = x.begin(); jt != x.end(); ++jt) {
          if (jt.value().is_number() && !(std::fabs(jt.value().get<double>()) <= 1e15)) {
            return bad(std::string(section) + "." + it.key() + "." + jt.key(), "must be within +-1e15");
          }
        }
      }
    }
  }
  return {};
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  // Linear interpolation between closest ranks (numpy's default).
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(v.size() - 1, lo + 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

}  // namespace

KindSummary Summarize(const std::vector<const CaseResult*>& cases) {
  KindSummary s;
  std::vector<double> abs_err;
  double sum = 0;
  for (const CaseResult* c : cases) {
    ++s.cases;
    if (!c->ok || !c->error) continue;
    ++s.covered;
    abs_err.push_back(std::fabs(*c->error));
    sum += *c->error;
  }
  if (!abs_err.empty()) {
    s.median_abs_err = Quantile(abs_err, 0.5);
    s.p90_abs_err = Quantile(abs_err, 0.9);
    s.max_abs_err = *std::max_element(abs_err.begin(), abs_err.end());
    s.bias = sum / static_cast<double>(abs_err.size());
  }
  return s;
}

Result<ValidationReport> RunValidation(std::string_view text, std::string_view label,
                                       const Catalog& catalog, std::string_view kind_filter,
                                       std::string_view explain_id) {
  ValidationReport report;
  size_t pos = 0;
  int line = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line;
    std::string l = internal::Trim(raw);
    if (l.empty()) {
      if (eol >= text.size()) break;
      continue;
    }
    std::string where = std::string(label) + ":" + std::to_string(line);
    auto j = internal::ParseJson(l, where, kMaxJsonLineBytes);
    if (!j) return j.error();
    if (auto st = CheckCase(*j, where); !st) return st.error();
    const Json& c = *j;
    CaseResult r;
    r.id = c["id"].get<std::string>();
    r.kind = c["kind"].get<std::string>();
    r.metric = c["metric"].get<std::string>();
    r.measured = c["measured"].get<double>();
    if (!kind_filter.empty() && r.kind != kind_filter) continue;
    g_trace = explain_id == r.id ? &trace_buf : nullptr;
    trace_buf.terms.clear();
    auto p = Predict(c, catalog);
    for (const auto& t : trace_buf.terms) r.explain.emplace_back(t.name + " [" + t.formula + "]", t.value);
    g_trace = nullptr;
    if (auto* u = std::get_if<Unsupported>(&p)) {
      r.ok = false;
      r.reason = u->reason;
    } else {
      double v = std::get<double>(p) / Unit(r.metric);
      r.ok = std::isfinite(v);
      if (r.ok) {
        r.predicted = v;
        r.error = v / r.measured - 1.0;
      } else {
        r.reason = "prediction is not finite";
      }
    }
    report.cases.push_back(std::move(r));
    if (eol >= text.size()) break;
  }
  std::map<std::string, std::vector<const CaseResult*>> by_kind;
  std::vector<const CaseResult*> all;
  for (const auto& r : report.cases) {
    by_kind[r.kind].push_back(&r);
    all.push_back(&r);
  }
  for (const auto& [k, v] : by_kind) report.summary[k] = Summarize(v);
  report.summary["all"] = Summarize(all);
  return report;
}

}  // namespace gpuplan
