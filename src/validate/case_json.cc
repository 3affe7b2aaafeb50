// Reading a validation case: JSON accessors (null = absent), the case's model and hardware,
// the benchmark it ran, the tool's memory-reporting convention, and the schema checks.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/benchmark.h"
#include "gpuplan/estimate.h"
#include "gpuplan/job.h"
#include "gpuplan/model.h"
#include "gpuplan/plan.h"
#include "gpuplan/serve.h"
#include "io/csv.h"
#include "io/json_fields.h"
#include "validate/adapters.h"

namespace gpuplan::validation {

// The members the adapters read, by section, with their JSON type. CheckCase checks every one
// with the shared getters (io/json_fields.h), so the accessors below never meet a wrong type: a
// case with `"tp": "2"` is an error naming workload.train.tp, not a case without tp.
enum class CaseType { kNumber, kString, kFlag, kObject };
struct CaseField {
  const char* key;
  CaseType type;
};
constexpr CaseField kModelFields[] = {{"preset", CaseType::kString},
                                      {"arch", CaseType::kString},
                                      {"layers", CaseType::kNumber},
                                      {"hidden", CaseType::kNumber},
                                      {"heads", CaseType::kNumber},
                                      {"kv_heads", CaseType::kNumber},
                                      {"head_dim", CaseType::kNumber},
                                      {"ffn_hidden", CaseType::kNumber},
                                      {"vocab", CaseType::kNumber},
                                      {"params", CaseType::kNumber},
                                      {"active_params", CaseType::kNumber},
                                      {"gflops_per_sample", CaseType::kNumber},
                                      {"gated_mlp", CaseType::kFlag},
                                      {"tied_embeddings", CaseType::kFlag},
                                      {"moe", CaseType::kObject}};
constexpr CaseField kMoeFields[] = {{"experts", CaseType::kNumber},
                                    {"top_k", CaseType::kNumber},
                                    {"expert_ffn_hidden", CaseType::kNumber},
                                    {"shared_experts", CaseType::kNumber}};
constexpr CaseField kHardwareFields[] = {{"gpu", CaseType::kString},
                                         {"gpus", CaseType::kNumber},
                                         {"gpus_per_node", CaseType::kNumber},
                                         {"intra_node", CaseType::kString},
                                         {"inter_node", CaseType::kString}};
constexpr CaseField kWorkloadFields[] = {{"train", CaseType::kObject},
                                         {"infer", CaseType::kObject}};
// workload.train and workload.infer share one list (the adapters read both with it).
constexpr CaseField kJobFields[] = {{"method", CaseType::kString},
                                    {"precision", CaseType::kString},
                                    {"kv_precision", CaseType::kString},
                                    {"engine", CaseType::kString},
                                    {"version", CaseType::kString},
                                    {"scenario", CaseType::kString},
                                    {"framework", CaseType::kString},
                                    {"optimizer", CaseType::kString},
                                    {"benchmark", CaseType::kString},
                                    {"recompute", CaseType::kString},
                                    {"fsdp", CaseType::kString},
                                    {"offload_param", CaseType::kString},
                                    {"offload_optimizer", CaseType::kString},
                                    {"tp", CaseType::kNumber},
                                    {"pp", CaseType::kNumber},
                                    {"dp", CaseType::kNumber},
                                    {"cp", CaseType::kNumber},
                                    {"ep", CaseType::kNumber},
                                    {"vpp", CaseType::kNumber},
                                    {"zero", CaseType::kNumber},
                                    {"zero_init", CaseType::kNumber},
                                    {"micro_batch", CaseType::kNumber},
                                    {"global_batch", CaseType::kNumber},
                                    {"batch", CaseType::kNumber},
                                    {"concurrency", CaseType::kNumber},
                                    {"threads", CaseType::kNumber},
                                    {"seq_len", CaseType::kNumber},
                                    {"input_len", CaseType::kNumber},
                                    {"output_len", CaseType::kNumber},
                                    {"max_num_seqs", CaseType::kNumber},
                                    {"max_model_len", CaseType::kNumber},
                                    {"max_num_batched_tokens", CaseType::kNumber},
                                    {"max_batch_prefill_tokens", CaseType::kNumber},
                                    {"max_total_tokens", CaseType::kNumber},
                                    {"max_input_tokens", CaseType::kNumber},
                                    {"max_input_length", CaseType::kNumber},
                                    {"cuda_memory_fraction", CaseType::kNumber},
                                    {"block_size", CaseType::kNumber},
                                    {"lora_rank", CaseType::kNumber},
                                    {"tokens", CaseType::kNumber},
                                    {"peak_tflops", CaseType::kNumber},
                                    {"achieved_tflops_per_gpu", CaseType::kNumber},
                                    {"total_gpu_memory_gib", CaseType::kNumber},
                                    {"largest_layer_params", CaseType::kNumber},
                                    {"non_kv_gib", CaseType::kNumber},
                                    {"mem_fraction_static", CaseType::kNumber},
                                    {"gpu_memory_utilization", CaseType::kNumber},
                                    {"gpu_mem_gib", CaseType::kNumber},
                                    {"kv_per_token_bytes", CaseType::kNumber},
                                    {"kv_fraction", CaseType::kNumber},
                                    {"buffer_factor", CaseType::kNumber},
                                    {"link_latency_us", CaseType::kNumber},
                                    {"link_gbps", CaseType::kNumber},
                                    {"hbm_gbps", CaseType::kNumber},
                                    {"hbm_efficiency", CaseType::kNumber},
                                    {"flops_efficiency", CaseType::kNumber},
                                    {"sequence_parallel", CaseType::kFlag},
                                    {"optimizer_in_bwd", CaseType::kFlag},
                                    {"offload_gradients", CaseType::kFlag},
                                    {"flash_attention", CaseType::kFlag},
                                    {"compile", CaseType::kFlag},
                                    {"activation_offloading", CaseType::kFlag},
                                    {"enforce_eager", CaseType::kFlag}};
template <std::size_t N>
Status CheckFields(const Json& obj, const std::string& path, const CaseField (&fields)[N]) {
  for (const CaseField& f : fields) {
    Status st;
    switch (f.type) {
      case CaseType::kNumber:
        if (auto r = internal::GetNumber(obj, f.key, path); !r) st = r.error();
        break;
      case CaseType::kString:
        if (auto r = internal::GetString(obj, f.key, path); !r) st = r.error();
        break;
      case CaseType::kFlag:
        if (auto r = internal::GetFlag(obj, f.key, path); !r) st = r.error();
        break;
      case CaseType::kObject:
        if (auto r = internal::GetObject(obj, f.key, path); !r) st = r.error();
        break;
    }
    if (!st) return st;
  }
  return {};
}

// The accessors: absent (missing or null) -> empty. CheckCase has checked the type of every
// member they are asked for, so the getters' errors cannot occur here.
const Json* Child(const Json& j, const char* key) { return internal::FindMember(j, key); }
std::optional<double> Num(const Json& j, const char* key) {
  auto v = internal::GetNumber(j, key, "");
  return v ? *v : std::nullopt;
}
std::optional<int> Int(const Json& j, const char* key) {
  auto v = Num(j, key);
  if (!v) return std::nullopt;
  // CheckCase bounds every number; saturate anyway so no cast can overflow.
  return static_cast<int>(std::lround(std::clamp(*v, -1e9, 1e9)));
}
std::string Str(const Json& j, const char* key) {
  auto v = internal::GetString(j, key, "");
  return v ? v->value_or("") : std::string();
}
std::optional<bool> Bool(const Json& j, const char* key) {
  auto v = internal::GetFlag(j, key, "");
  return v ? *v : std::nullopt;
}
bool Contains(const std::string& hay, std::initializer_list<const char*> needles) {
  std::string h = internal::ToLower(hay);
  for (const char* n : needles) {
    if (h.find(n) != std::string::npos) return true;
  }
  return false;
}

std::optional<Precision> PrecisionInText(const std::string& text) {
  if (auto p = ParsePrecision(text)) return p;
  if (Contains(text, {"fp8", "e4m3", "e5m2", "float8"})) return Precision::kFp8;
  if (Contains(text, {"bf16", "bfloat16"})) return Precision::kBf16;
  if (Contains(text, {"fp16", "float16", "half"})) return Precision::kFp16;
  if (Contains(text, {"tf32"})) return Precision::kTf32;
  if (Contains(text, {"fp32", "float32"})) return Precision::kFp32;
  if (Contains(text, {"int8", "w8a8", "w8a16"})) return Precision::kInt8;
  if (Contains(text, {"int4", "w4a16", "4-bit", "4bit"})) return Precision::kInt4;
  return std::nullopt;
}

std::variant<ModelSpec, Unsupported> CaseModel(const Json& mj) {
  std::string preset = Str(mj, "preset");
  if (!preset.empty()) {
    if (const ModelSpec* p = FindPreset(preset)) return *p;
    // A model gpuplan has no preset for is read from the architecture the case gives with it.
    if (!Int(mj, "layers") && !Num(mj, "params"))
      return Unsupported{"unknown preset \"" + preset + "\""};
  }
  ModelSpec m;
  m.name = preset.empty() ? "inline model" : preset;
  std::string arch = Str(mj, "arch");
  if (!arch.empty()) {
    auto a = ParseModelArch(arch);
    if (!a) return Unsupported{"unknown arch \"" + arch + "\""};
    m.arch = *a;
  }
  m.layers = Int(mj, "layers").value_or(0);
  m.hidden = static_cast<std::int64_t>(Num(mj, "hidden").value_or(0));
  m.heads = Int(mj, "heads").value_or(0);
  if (m.heads <= 0 && m.hidden > 0) {
    // Unstated heads: head dimension 128 (GPT-3 13B and up, Llama, Mistral, Qwen), or the
    // stated head_dim.
    const int d = std::max(1, Int(mj, "head_dim").value_or(128));
    m.heads = static_cast<int>(std::max<std::int64_t>(1, m.hidden / d));
  }
  m.kv_heads = Int(mj, "kv_heads").value_or(m.heads);
  m.head_dim = Int(mj, "head_dim").value_or(m.heads > 0 ? static_cast<int>(m.hidden / m.heads) : 0);
  m.gated_mlp = Bool(mj, "gated_mlp").value_or(false);
  // Unstated MLP width: 4h (GPT), or for a gated MLP LLaMA's rule, 8h/3 rounded up to a multiple
  // of 256 (multiple_of=256: 11008 at h 4096).
  const double gated_ffn = 256.0 * std::ceil(8.0 * static_cast<double>(m.hidden) / 3.0 / 256.0);
  m.ffn_hidden = static_cast<std::int64_t>(
      Num(mj, "ffn_hidden")
          .value_or(m.gated_mlp ? gated_ffn : 4.0 * static_cast<double>(m.hidden)));
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
  // A stated parameter count decides what the shape leaves open: whether the MLP is gated
  // (SwiGLU's third matrix) and how many KV heads attention has (GQA), when the case does not
  // say and the default (ungated, one KV head per query head) misses the count by more than 3%
  // where another choice comes within 2%.
  if (m.params_override && m.layers > 0 && m.hidden > 0 && m.heads > 0 && !m.moe &&
      (!Bool(mj, "gated_mlp") || !Int(mj, "kv_heads"))) {
    const double want = static_cast<double>(*m.params_override);
    auto miss = [&](const ModelSpec& c) {
      ModelSpec t = c;
      t.params_override.reset();
      t.active_params_override.reset();
      return std::abs(static_cast<double>(CountParams(t).total) / want - 1.0);
    };
    ModelSpec best = m;
    double best_miss = miss(m);
    if (best_miss > 0.03) {
      const double default_miss = best_miss;
      for (bool g : {false, true}) {
        if (Bool(mj, "gated_mlp") && *Bool(mj, "gated_mlp") != g) continue;
        for (int kv = 1; kv <= m.heads; ++kv) {
          if (m.heads % kv != 0 || (Int(mj, "kv_heads") && *Int(mj, "kv_heads") != kv)) continue;
          ModelSpec c = m;
          c.gated_mlp = g;
          c.norm = g ? NormKind::kRmsNorm : NormKind::kLayerNorm;
          if (!Num(mj, "ffn_hidden"))
            c.ffn_hidden =
                static_cast<std::int64_t>(g ? gated_ffn : 4.0 * static_cast<double>(c.hidden));
          c.kv_heads = kv;
          const double e = miss(c);
          if (e < best_miss) {
            best = c;
            best_miss = e;
          }
        }
      }
      if (best_miss <= 0.02 && best_miss < default_miss) m = best;
    }
  }
  // An unstated gated-MLP width beside a stated parameter count: the width the count implies
  // (the count is linear in it), to a multiple of 256, when that lies between h and 8h. Gated
  // widths vary by family (8h/3 in Llama 1, ffn_dim_multiplier 1.3 in Llama 2/3 70B: 28672 where
  // the 8h/3 rule gives 22016; 3.5h in Mistral); ungated MLPs keep GPT's 4h, and a rounded
  // count ("1.7B") would move it for nothing.
  if (m.params_override && !Num(mj, "ffn_hidden") && m.gated_mlp && m.layers > 0 && m.hidden > 0 &&
      !m.moe) {
    auto count = [&](std::int64_t f) {
      ModelSpec t = m;
      t.params_override.reset();
      t.active_params_override.reset();
      t.ffn_hidden = f;
      return static_cast<double>(CountParams(t).total);
    };
    const double h = static_cast<double>(m.hidden);
    const double p0 = count(0), slope = (count(1024) - p0) / 1024.0;
    if (slope > 0) {
      const double f =
          256.0 * std::round((static_cast<double>(*m.params_override) - p0) / slope / 256.0);
      if (f >= h && f <= 8 * h) m.ffn_hidden = static_cast<std::int64_t>(f);
    }
  }
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

MemoryReport ReportOf(const std::string& framework, const std::string& source) {
  // torchao's optimizer benchmarks (benchmarks/benchmark_low_bit_adam.py, the README tables of
  // torchao/optim) print torch.cuda.max_memory_allocated(); a case whose framework is the
  // baseline it compares (plain PyTorch, DeepSpeed) names the script in its source.
  // torchtitan logs the caching allocator's peak reservation (train.py: "memory: {max_reserved_gib}
  // GiB", torchtitan/metrics.py reserved_bytes.all.peak).
  if (Contains(framework, {"torchtitan"})) return MemoryReport::kReserved;
  if (Contains(framework, {"torchtune", "pipeline", "generate", "megatron", "max_memory_allocated",
                           "torchao"}) ||
      Contains(source, {"max_memory_allocated", "benchmark_low_bit_adam"})) {
    return MemoryReport::kAllocated;
  }
  if (Contains(framework, {"unsloth", "reserved"})) return MemoryReport::kReserved;
  return MemoryReport::kDevice;  // HF Trainer's nvidia-smi helper, plain PyTorch scripts
}

Engine EngineOf(const std::string& e) {
  // An unstated engine is the serving planner's default (`plan infer --engine vllm`).
  if (internal::Trim(e).empty()) return Engine::kVllm;
  // Continuous-batching engines with a paged KV cache serve like vLLM (LMDeploy's TurboMind,
  // DeepSpeed-FastGen/MII, LightLLM, Aphrodite, a vLLM fork); NIM for LLMs runs TensorRT-LLM.
  if (Contains(e, {"vllm", "lmdeploy", "turbomind", "fastgen", "deepspeed-mii", "lightllm",
                   "aphrodite"}))
    return Engine::kVllm;
  if (Contains(e, {"nvidia nim", "nim-llm", "nim "}) ||
      internal::ToLower(internal::Trim(e)) == "nim")
    return Engine::kTrtLlm;
  if (Contains(e, {"sglang"})) return Engine::kSglang;
  if (Contains(e, {"tgi", "text-generation-inference"})) return Engine::kTgi;
  if (Contains(e, {"trt", "tensorrt"})) return Engine::kTrtLlm;
  return Engine::kTransformers;
}

double Unit(const std::string& metric) {
  // Metric names carry their unit as a token: memory_gib, activations_gib_per_gpu, kv_cache_gb.
  std::string m = metric + "_";
  if (m.find("_gib_") != std::string::npos) return kBytesPerGiB;
  if (m.find("_mib_") != std::string::npos) return kBytesPerMiB;
  if (m.find("_gb_") != std::string::npos) return kBytesPerGB;
  return 1.0;  // _bytes, _tokens
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
    // A TPU's chips talk over their inter-chip interconnect, not PCIe (gpus.csv intra_link).
    if (Contains(acc->intra_link, {"ici"})) v.intra = IntraNodeLink::kIci;
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
    // Unstated fabric: the reference cluster of the GPU's generation. A100-era and later are
    // rail-optimised, one NIC per GPU (200 Gb/s HDR; 400 Gb/s NDR for Hopper and later: DGX
    // A100 / H100 SuperPOD). Volta-era clusters carried one 100 Gb/s EDR NIC per two GPUs
    // (DGX-1: 4 for 8 V100s; DGX-2: 8 for 16).
    const bool fast = Contains(acc->arch, {"hopper", "blackwell", "cdna 3", "cdna 4"});
    const bool volta = Contains(internal::ToLower(acc->arch), {"volta"});
    gbps =
        volta ? 100.0 * std::max(1, v.gpus_per_node / 2) : (fast ? 400.0 : 200.0) * v.gpus_per_node;
  }
  shape.inter_node_bw = Gbps(gbps);
  shape.inter_node_fabric = Contains(inter, {"efa"})    ? InterNodeFabric::kEfa
                            : Contains(inter, {"roce"}) ? InterNodeFabric::kRoce
                                                        : InterNodeFabric::kInfiniband;
  HardwareView built = HardwareFromInstance(shape, *acc, v.nodes);
  // A TPU slice's ICI torus joins all of its chips, across hosts (Cloud TPU docs: a slice is
  // the chips connected by ICI; the data-centre network links slices only): the whole case is
  // one scale-up domain.
  if (built.intra == IntraNodeLink::kIci) built.scaleup_gpus = std::max(built.scaleup_gpus, gpus);
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

// The inference benchmark a serving case ran: `workload.infer.benchmark`, or the benchmark
// directory of an MLPerf Inference results path in `source`
// ("inference_results_v4.1 closed/<org>/results/<system>/<benchmark>/<Scenario>/..."), or an
// alias between dashes in an "mlperf..." case id ("mlperf-inf-v4.1-...-mixtral-8x7b-server").
const InferBenchmark* CaseInferBenchmark(const Json& c, const Json& w) {
  if (const auto* b = FindInferBenchmark(Str(w, "benchmark"))) return b;
  const std::string src = Str(c, "source");
  if (src.find("inference_results_v") != std::string::npos) {
    auto r = src.find("/results/");
    if (r != std::string::npos) {
      auto sys_end = src.find('/', r + 9);
      auto bench_end = sys_end == std::string::npos ? sys_end : src.find('/', sys_end + 1);
      if (bench_end != std::string::npos) {
        if (const auto* b = FindInferBenchmark(src.substr(sys_end + 1, bench_end - sys_end - 1)))
          return b;
      }
    }
  }
  const std::string id = "-" + internal::ToLower(Str(c, "id")) + "-";
  if (id.rfind("-mlperf", 0) != 0) return nullptr;
  // The longest alias named wins: "llama2-70b-interactive" over "llama2-70b".
  const InferBenchmark* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& b : InferBenchmarks()) {
    for (const auto& a : b.aliases) {
      if (a.size() > best_len && id.find("-" + a + "-") != std::string::npos) {
        best = &b;
        best_len = a.size();
      }
    }
  }
  return best;
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
  if (!c.contains("model") || !c["model"].is_object())
    return bad("model", "missing or not an object");
  if (!c.contains("workload") || !c["workload"].is_object()) {
    return bad("workload", "missing or not an object");
  }
  if (c.contains("hardware") && !c["hardware"].is_null() && !c["hardware"].is_object()) {
    return bad("hardware", "must be an object or null");
  }
  // Sizes the model arithmetic multiplies: bounded so no count can overflow.
  const Json& m = c["model"];
  auto bounded = [&](const Json& obj, const std::string& path, const char* key,
                     double hi) -> Status {
    const Json* x = Child(obj, key);
    if (!x) return {};
    if (!x->is_number())
      return bad(path + key, "must be a number, got " + internal::JsonTypeName(*x));
    const double d = x->get<double>();
    if (!(d >= 0 && d <= hi))
      return bad(path + key, fmt::format("must be in [0, {:g}], got {:g}", hi, d));
    return {};
  };
  for (const char* k :
       {"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab"}) {
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
  // Every member the adapters read has its type (the lists above).
  {
    const std::string at = where + ":";
    Status st;
    if (auto src = internal::GetString(c, "source", ""); !src) {
      st = bad("source", src.error().message);
    }
    if (st) st = CheckFields(m, at + "model", kModelFields);
    if (st) {
      if (const Json* moe = Child(m, "moe")) st = CheckFields(*moe, at + "model.moe", kMoeFields);
    }
    if (st) st = CheckFields(c["workload"], at + "workload", kWorkloadFields);
    for (const char* job : {"train", "infer"}) {
      if (!st) break;
      if (const Json* j = Child(c["workload"], job)) {
        st = CheckFields(*j, at + "workload." + job, kJobFields);
      }
    }
    if (st) {
      if (const Json* hw = Child(c, "hardware"))
        st = CheckFields(*hw, at + "hardware", kHardwareFields);
    }
    if (!st) {
      Error e = st.error();
      e.hint = "see ../shared/validation/SCHEMA.md";
      return e;
    }
  }
  // Engine settings: memory fractions in (0, 1]; token and sequence limits whole counts an int
  // holds.
  if (const Json* inf = Child(c["workload"], "infer")) {
    for (const char* k :
         {"gpu_memory_utilization", "mem_fraction_static", "cuda_memory_fraction"}) {
      const Json* x = Child(*inf, k);
      if (!x || !x->is_number()) continue;
      const double d = x->get<double>();
      if (!(d > 0 && d <= 1))
        return bad(std::string("workload.infer.") + k,
                   fmt::format("must be a fraction of GPU memory in (0, 1], got {:g}", d));
    }
    for (const char* k :
         {"max_num_batched_tokens", "max_batch_prefill_tokens", "max_total_tokens",
          "max_input_tokens", "max_input_length", "max_model_len", "max_num_seqs", "block_size"}) {
      const Json* x = Child(*inf, k);
      if (!x || !x->is_number()) continue;
      const double d = x->get<double>();
      if (!(d >= 1 && d <= 1e8))
        return bad(std::string("workload.infer.") + k,
                   fmt::format("must be a count in [1, 1e8], got {:g}", d));
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
            return bad(std::string(section) + "." + it.key() + "." + jt.key(),
                       "must be within +-1e15");
          }
        }
      }
    }
  }
  return {};
}

std::string SourceKey(const std::string& source) {
  std::string s = internal::ToLower(internal::Trim(source));
  for (const char* prefix : {"https://", "http://", "github.com/", "www."}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::string(prefix).size());
  }
  // First token: a repository path or an author's name.
  size_t end = s.find_first_of(" \t,;:(");
  std::string tok = s.substr(0, end);
  const size_t slash = tok.find('/');
  if (slash != std::string::npos) {
    const size_t second = tok.find('/', slash + 1);
    tok = tok.substr(0, second);  // owner/name
    // Benchmark rounds of one repository family are one source: training_results_v4.0.
    const size_t v = tok.rfind("_v");
    if (v != std::string::npos && v + 2 < tok.size() &&
        tok.find_first_not_of("0123456789.", v + 2) == std::string::npos) {
      tok = tok.substr(0, v);
    }
  }
  while (!tok.empty() && (tok.back() == '.' || tok.back() == '\'' || tok.back() == '"'))
    tok.pop_back();
  return tok.empty() ? std::string("(no source)") : tok;
}

}  // namespace gpuplan::validation
