// Deployment artifacts from a plan's JSON (formats.md sections 3-9 and 12; guide rules A10,
// B12, B13 in ../shared/seeds/README.md). Every artifact is built as an ordered JSON tree and
// rendered as YAML or JSON, so each file is well-formed by construction.
#include "gpuplan/emit.h"

#include <filesystem>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "io/json_util.h"
#include "io/plan_input.h"

namespace gpuplan {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

// B12: the guides' HPA rule.
constexpr int kGpuUtilTargetPercent = 60;
constexpr int kRequestsPerSecondPerPod = 500;
constexpr int kScaleDownWindowS = 300;
constexpr int kScaleDownPercent = 20;
constexpr int kScaleDownPeriodS = 60;
constexpr int kScaleUpPercent = 100;
constexpr int kScaleUpPeriodS = 15;
constexpr int kMaxReplicasFactor = 3;  // max = 3 x the planned replicas (headroom for peaks)
// A10: checkpoint policy.
constexpr int kKeepCheckpoints = 3;
constexpr const char* kNvmeDir = "/nvme/ckpt";
// A4/A5 inference host defaults when a serving plan carries no host sizing: 6 cores per GPU
// and 1.5 x the GPU memory in RAM (upper ends of the guides' ranges).
constexpr int kServeCoresPerGpu = 6;
constexpr double kServeRamPerGpuMemory = 1.5;
// The planner's view of a GPU's visible memory (CUDA reserves ~1 %: 79.2 of 80 GiB).
constexpr double kVisibleMemoryFraction = 0.99;
constexpr double kVllmDefaultUtilization = 0.9;
// Alert when p99 latency exceeds the planner's prediction by this factor.
constexpr double kLatencyAlertFactor = 1.5;
constexpr const char* kPrometheus = "http://prometheus.monitoring:9090";

// A missing or mistyped plan field; converted to an Error in Emit().
struct PlanError : std::runtime_error {
  PlanError(std::string f, const std::string& m) : std::runtime_error(m), field(std::move(f)) {}
  std::string field;
};

const json& At(const json& j, const std::string& key, const std::string& path) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) {
    throw PlanError(path + "." + key, "missing field");
  }
  return j.at(key);
}
double Num(const json& j, const std::string& key, const std::string& path) {
  const json& v = At(j, key, path);
  if (!v.is_number()) throw PlanError(path + "." + key, "expected a number, got " + internal::JsonTypeName(v));
  return v.get<double>();
}
int Int(const json& j, const std::string& key, const std::string& path) {
  const double v = Num(j, key, path);
  if (v != std::floor(v) || v < 0 || v > 1e9) {
    throw PlanError(path + "." + key, fmt::format("expected a non-negative integer, got {}", v));
  }
  return static_cast<int>(v);
}
std::string Str(const json& j, const std::string& key, const std::string& path) {
  const json& v = At(j, key, path);
  if (!v.is_string()) throw PlanError(path + "." + key, "expected a string, got " + internal::JsonTypeName(v));
  return v.get<std::string>();
}
std::optional<double> OptNum(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
  return j.at(key).get<double>();
}

enum class Kind { kTrain, kServe };

// The plan fields the emitters use, read and checked once.
struct Plan {
  Kind kind = Kind::kServe;
  std::string path;  // "plans[0]"
  std::string model, cloud, region, instance_type, accelerator, currency;
  std::string model_ref;  // what resolves to the planned model: preset name or absolute path
  int gpus_per_node = 0, nodes = 1;  // training
  int gpus_per_replica = 0, replicas = 1, batch = 1, input_len = 0, output_len = 0;  // serving
  std::int64_t kv_tokens = 0;
  double qps = 0, capacity_qps = 0, e2e_p99_ms = 0, cost_per_1k = 0;
  std::string engine;
  std::optional<double> price_per_hour;
  // Training.
  std::string precision, method, recompute;
  int tp = 1, pp = 1, dp = 1, zero_stage = 0, micro_batch = 1, grad_accum = 1, seq_len = 0;
  int global_batch = 0, cpu_cores = 0;
  double step_time_s = 0, ram_bytes = 0, disk_bytes = 0, job_hours = 0;
  double checkpoint_interval_h = 1.0;
  bool spot = false;
  bool checkpoint_interval_known = false;
};

std::string Slug(std::string s) {
  for (char& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  }
  std::string out;
  for (char c : s) {
    if (c == '-' && (out.empty() || out.back() == '-')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 40) out.resize(40);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpuplan" : out;
}

Plan ReadPlan(const json& doc, int rank) {
  if (!doc.is_object()) throw PlanError("$", "expected a JSON object (gpuplan --json plan ...)");
  const json& job = At(doc, "job", "$");
  const json& plans = At(doc, "plans", "$");
  if (!plans.is_array()) throw PlanError("plans", "expected an array");
  if (plans.empty()) {
    throw PlanError("plans", "the plan has no feasible deployment (planner exit 1): nothing to emit");
  }
  if (rank < 1 || static_cast<std::size_t>(rank) > plans.size()) {
    throw PlanError("--rank", fmt::format("must be in [1, {}], got {}", plans.size(), rank));
  }
  Plan p;
  p.path = fmt::format("plans[{}]", rank - 1);
  const json& j = plans.at(static_cast<std::size_t>(rank - 1));
  p.model = Str(job, "model", "job");
  p.model_ref = job.contains("model_ref") && job["model_ref"].is_string() && !job["model_ref"].get<std::string>().empty()
                    ? job["model_ref"].get<std::string>()
                    : p.model;
  p.cloud = Str(j, "cloud", p.path);
  p.region = j.contains("region") && j["region"].is_string() ? j["region"].get<std::string>() : "";
  p.instance_type = Str(j, "instance_type", p.path);
  p.currency = j.contains("currency") && j["currency"].is_string() ? j["currency"].get<std::string>() : "USD";
  if (job.contains("qps")) {
    p.kind = Kind::kServe;
    p.qps = Num(job, "qps", "job");
    p.input_len = Int(job, "input_len", "job");
    p.output_len = Int(job, "output_len", "job");
    p.engine = Str(job, "engine", "job");
    p.accelerator = j.contains("accelerator") && j["accelerator"].is_string() ? j["accelerator"].get<std::string>() : "";
    p.gpus_per_replica = Int(j, "gpus_per_replica", p.path);
    p.replicas = std::max(1, Int(j, "replicas", p.path));
    p.batch = std::max(1, Int(j, "batch", p.path));
    p.kv_tokens = static_cast<std::int64_t>(Num(j, "kv_tokens_per_replica", p.path));
    p.capacity_qps = Num(j, "capacity_qps_per_replica", p.path);
    p.e2e_p99_ms = Num(j, "e2e_p99_ms", p.path);
    p.price_per_hour = OptNum(j, "cost_per_hour");
    p.cost_per_1k = OptNum(j, "cost_per_1k_requests").value_or(0);
  } else if (job.contains("tokens") || job.contains("method")) {
    p.kind = Kind::kTrain;
    p.precision = Str(job, "precision", "job");
    p.method = Str(job, "method", "job");
    p.seq_len = Int(job, "seq_len", "job");
    p.global_batch = Int(job, "global_batch", "job");
    p.spot = job.contains("spot_allowed") && job["spot_allowed"].is_boolean() &&
             job["spot_allowed"].get<bool>() && OptNum(j, "cost_spot").has_value();
    if (auto h = OptNum(job, "checkpoint_interval_hours")) {
      p.checkpoint_interval_h = *h;
      p.checkpoint_interval_known = true;
    }
    p.accelerator = Str(j, "accelerator", p.path);
    p.gpus_per_node = Int(j, "gpus_per_node", p.path);
    p.nodes = std::max(1, Int(j, "nodes", p.path));
    const json& l = At(j, "layout", p.path);
    const std::string lp = p.path + ".layout";
    p.tp = Int(l, "tp", lp);
    p.pp = Int(l, "pp", lp);
    p.dp = Int(l, "dp", lp);
    p.zero_stage = Int(l, "zero_stage", lp);
    p.micro_batch = Int(l, "micro_batch", lp);
    p.grad_accum = std::max(1, Int(l, "num_microbatches", lp));
    p.recompute = Str(l, "recompute", lp);
    p.step_time_s = Num(j, "step_time_s", p.path);
    p.job_hours = Num(j, "job_hours", p.path);
    p.price_per_hour = OptNum(j, "price_per_hour");
    const json& h = At(j, "host", p.path);
    p.cpu_cores = Int(h, "cpu_cores", p.path + ".host");
    p.ram_bytes = Num(h, "ram_bytes", p.path + ".host");
    p.disk_bytes = OptNum(h, "system_disk_bytes").value_or(0) + OptNum(h, "data_disk_bytes").value_or(0);
    if (p.zero_stage > 3) throw PlanError(lp + ".zero_stage", fmt::format("must be 0-3, got {}", p.zero_stage));
  } else {
    throw PlanError("job", "neither a training plan (job.tokens) nor a serving plan (job.qps)");
  }
  return p;
}

// ---- Rendering -------------------------------------------------------------------------------

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  static const char* kSpecial[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  std::string low;
  for (char c : s) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* k : kSpecial) {
    if (low == k) return true;
  }
  try {
    std::size_t used = 0;
    (void)std::stod(s, &used);
    if (used == s.size()) return true;
  } catch (...) {
  }
  return false;
}

void EmitYaml(YAML::Emitter& e, const ojson& j) {
  if (j.is_object()) {
    e << YAML::BeginMap;
    for (auto it = j.begin(); it != j.end(); ++it) {
      e << YAML::Key << it.key() << YAML::Value;
      EmitYaml(e, it.value());
    }
    e << YAML::EndMap;
  } else if (j.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& v : j) EmitYaml(e, v);
    e << YAML::EndSeq;
  } else if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s.find('\n') != std::string::npos) {
      e << YAML::Literal << s;
    } else if (NeedsQuotes(s)) {
      e << YAML::DoubleQuoted << s;
    } else {
      e << s;
    }
  } else if (j.is_boolean()) {
    e << j.get<bool>();
  } else if (j.is_number_integer()) {
    e << j.get<std::int64_t>();
  } else if (j.is_number()) {
    e << j.get<double>();
  } else {
    e << YAML::Null;
  }
}

std::string Yaml(const ojson& j) {
  YAML::Emitter e;
  EmitYaml(e, j);
  return std::string(e.c_str()) + "\n";
}

std::string Header(const Plan& p, const std::string& what) {
  return fmt::format(
      "# {} generated by `gpuplan emit` from {} of the plan for {}: {} {} {}{}.\n", what, p.path,
      p.model, p.cloud, p.instance_type, p.region.empty() ? "" : "in ", p.region);
}

std::string Gi(double bytes) { return fmt::format("{}Gi", static_cast<long long>(std::ceil(bytes / 1073741824.0))); }

// ---- vLLM ------------------------------------------------------------------------------------

struct VllmConfig {
  VllmFlags flags;
  std::int64_t planner_tokens = 0;
  std::int64_t flag_tokens = 0;
  bool ambiguous_awq_gptq = false;
};

void ApplyQuant(const VllmFlags& f, InferMemoryOptions& mo) {
  mo.weight_precision = Precision::kBf16;
  mo.quant.reset();
  if (f.quantization == "fp8") {
    mo.weight_precision = Precision::kFp8;
  } else if (f.quantization == "awq" || f.quantization == "gptq") {
    mo.quant = QuantSpec{f.quantization, 4, 128, true, false, 16};
  } else if (f.quantization == "bitsandbytes") {
    mo.quant = QuantSpec{"bnb-nf4", 4, 64, false, true, 32};
  }
  mo.kv_precision = f.kv_cache_dtype == "fp8" ? Precision::kFp8 : Precision::kBf16;
}

}  // namespace

namespace {

struct VllmMemory {
  InferMemory mem;
  Bytes visible;  // the GPU's memory as vLLM sees it
};

Result<VllmMemory> EstimateVllmMemory(const VllmFlags& f, const Catalog& catalog) {
  auto m = ResolveModel(f.model, "job.model");
  if (!m) return m.error();
  const Accelerator* acc = catalog.FindAccelerator(f.accelerator);
  if (!acc) {
    return MakeError(ErrorCode::kNotFound, "accelerator", "unknown accelerator \"" + f.accelerator + "\"",
                     "the plan and the catalog must come from the same gpuplan version");
  }
  if (f.quantization != "" && f.quantization != "fp8" && f.quantization != "awq" &&
      f.quantization != "gptq" && f.quantization != "bitsandbytes") {
    return MakeError(ErrorCode::kInvalidArgument, "--quantization", "unsupported \"" + f.quantization + "\"",
                     "use fp8, awq, gptq or bitsandbytes");
  }
  InferMemoryOptions mo;
  ApplyQuant(f, mo);
  mo.engine = Engine::kVllm;
  mo.tp = std::max(1, f.tensor_parallel_size);
  mo.pp = std::max(1, f.pipeline_parallel_size);
  mo.memory_fraction = f.gpu_memory_utilization;
  mo.context = std::max(1, f.max_model_len);
  mo.concurrency = 1;
  mo.max_num_seqs = f.max_num_seqs;
  mo.max_num_batched_tokens = f.max_num_batched_tokens;
  VllmMemory r;
  r.visible = acc->memory * kVisibleMemoryFraction;
  r.mem = EstimateInferenceMemory(*m, mo, r.visible);
  return r;
}

}  // namespace

Result<std::int64_t> VllmKvCapacityTokens(const VllmFlags& f, const Catalog& catalog) {
  auto r = EstimateVllmMemory(f, catalog);
  if (!r) return r.error();
  return r->mem.kv_tokens;
}

namespace {

// Finds the weight/KV precision the planner used (the plan JSON does not carry it) as the
// one whose KV capacity reproduces the plan's `kv_tokens_per_replica` under the planner's
// settings (vLLM defaults: utilisation 0.9, 256 sequences, 8192 batched tokens).
Result<VllmConfig> ResolveVllm(const Plan& p, const Catalog& catalog) {
  if (p.kind != Kind::kServe) {
    return MakeError(ErrorCode::kInvalidArgument, "target", "vllm needs a serving plan, got a training plan",
                     "run `gpuplan --json plan infer ...` and emit from its output");
  }
  if (p.engine != "vllm") {
    return MakeError(ErrorCode::kInvalidArgument, "job.engine",
                     "the plan was sized for engine \"" + p.engine + "\", not vllm",
                     "re-plan with --engine vllm");
  }
  if (p.accelerator.empty() || p.gpus_per_replica < 1) {
    return MakeError(ErrorCode::kInvalidArgument, p.path + ".accelerator",
                     "a CPU deployment has no vLLM GPU configuration", "pick a GPU plan with --rank");
  }
  VllmConfig c;
  c.planner_tokens = p.kv_tokens;
  VllmFlags f;
  f.model = p.model_ref;
  f.accelerator = p.accelerator;
  f.tensor_parallel_size = p.gpus_per_replica;
  f.gpu_memory_utilization = kVllmDefaultUtilization;
  f.max_model_len = p.input_len + p.output_len;
  const std::pair<const char*, const char*> kCandidates[] = {
      {"", "auto"}, {"fp8", "fp8"}, {"", "fp8"}, {"fp8", "auto"}, {"awq", "auto"}, {"bitsandbytes", "auto"},
      {"awq", "fp8"}};
  bool found = false;
  for (const auto& [q, kv] : kCandidates) {
    f.quantization = q;
    f.kv_cache_dtype = kv;
    auto t = VllmKvCapacityTokens(f, catalog);
    if (!t) return t.error();
    if (*t == p.kv_tokens) {
      found = true;
      break;
    }
  }
  if (!found) {
    return MakeError(ErrorCode::kUnsupported, p.path + ".kv_tokens_per_replica",
                     fmt::format("no vLLM precision setting reproduces the planner's {} KV tokens", p.kv_tokens),
                     "int8 weights or KV have no vLLM flag here; re-plan with bf16, fp8, awq, gptq or nf4");
  }
  c.ambiguous_awq_gptq = f.quantization == "awq";
  // Cap concurrency at the plan's batch (the largest that met the SLOs). vLLM's profiling
  // run then samples fewer sequences, which frees logits memory the planner (at vLLM's
  // default of 256 sequences) did not give to the KV cache; lower the utilisation by that
  // amount so the KV pool stays the one the plan was sized with.
  auto base = EstimateVllmMemory(f, catalog);
  if (!base) return base.error();
  f.max_num_seqs = p.batch;
  auto capped = EstimateVllmMemory(f, catalog);
  if (!capped) return capped.error();
  const double freed = base->mem.non_kv.value() - capped->mem.non_kv.value();
  if (freed > 0) {
    f.gpu_memory_utilization =
        std::round((kVllmDefaultUtilization - freed / base->visible.value()) * 1e4) / 1e4;
  }
  c.flags = f;
  auto t = VllmKvCapacityTokens(f, catalog);
  if (!t) return t.error();
  c.flag_tokens = *t;
  return c;
}

// What `vllm serve` / `from_pretrained` take: the preset's Hugging Face id, or the local model
// directory for a model planned from a config.json, a directory or a .safetensors file.
std::string HfModelId(const std::string& model) {
  auto m = ResolveModel(model, "job.model");
  if (m && !m->hf_id.empty()) return m->hf_id;
  std::error_code ec;
  const std::filesystem::path path(model);
  if (std::filesystem::is_regular_file(path, ec)) return path.parent_path().string();
  return model;
}

std::vector<std::string> VllmArgs(const VllmConfig& c) {
  const VllmFlags& f = c.flags;
  std::vector<std::string> a = {
      "--tensor-parallel-size", std::to_string(f.tensor_parallel_size),
      "--pipeline-parallel-size", std::to_string(f.pipeline_parallel_size),
      "--gpu-memory-utilization", fmt::format("{}", f.gpu_memory_utilization),
      "--max-model-len", std::to_string(f.max_model_len),
      "--max-num-seqs", std::to_string(f.max_num_seqs),
      "--max-num-batched-tokens", std::to_string(f.max_num_batched_tokens),
      "--kv-cache-dtype", f.kv_cache_dtype};
  if (!f.quantization.empty()) {
    a.push_back("--quantization");
    a.push_back(f.quantization);
  }
  a.push_back("--port");
  a.push_back("8000");
  return a;
}

std::string VllmCommand(const Plan& p, const VllmConfig& c, const std::string& sep) {
  std::string s = "vllm serve " + HfModelId(p.model_ref);
  auto a = VllmArgs(c);
  for (std::size_t i = 0; i + 1 < a.size(); i += 2) s += sep + a[i] + " " + a[i + 1];
  return s;
}

std::vector<EmittedFile> EmitVllm(const Plan& p, const VllmConfig& c) {
  const double diff = c.planner_tokens > 0
                          ? 100.0 * static_cast<double>(c.flag_tokens - c.planner_tokens) /
                                static_cast<double>(c.planner_tokens)
                          : 0.0;
  std::string s = "#!/bin/sh\n" + Header(p, "vLLM server command");
  s += fmt::format(
      "# KV cache per replica: {} tokens with these flags (planner: {} tokens, {:+.2f}%),\n"
      "# i.e. {:.1f} requests of --max-model-len tokens at once; the plan runs up to {} (most hold\n"
      "# fewer tokens than the maximum while they generate).\n"
      "# Visible GPU memory is taken as {:.0f}% of the nominal {} memory; vLLM logs the\n"
      "# measured value as \"GPU KV cache size: N tokens\" at startup.\n",
      c.flag_tokens, c.planner_tokens, diff,
      static_cast<double>(c.flag_tokens) / std::max(1, c.flags.max_model_len), p.batch,
      100 * kVisibleMemoryFraction, p.accelerator);
  if (c.ambiguous_awq_gptq) {
    s += "# 4-bit weights: awq and gptq checkpoints size alike; use the method your checkpoint has.\n";
  }
  s += fmt::format("# Planned: {} replica(s) of {} x {}, {:.1f} req/s each at the target utilisation.\n",
                   p.replicas, p.gpus_per_replica, p.accelerator, p.capacity_qps);
  s += "exec " + VllmCommand(p, c, " \\\n  ") + "\n";
  return {{"vllm-serve.sh", s}};
}

// ---- Kubernetes ------------------------------------------------------------------------------

bool HyperscalerCloud(const std::string& cloud) {
  return cloud == "aws" || cloud == "gcp" || cloud == "azure" || cloud == "oci";
}

ojson NodeSelector(const Plan& p) {
  if (HyperscalerCloud(p.cloud)) return {{"node.kubernetes.io/instance-type", p.instance_type}};
  if (!p.accelerator.empty()) return {{"nvidia.com/gpu.product", p.accelerator}};
  return ojson::object();
}

ojson GpuTolerations() {
  return ojson::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
}

std::vector<EmittedFile> EmitK8sServe(const Plan& p, const EmitOptions& opt, const Catalog& catalog) {
  const std::string name = Slug(p.model);
  const bool gpu = !p.accelerator.empty() && p.gpus_per_replica > 0;
  ojson container = {{"name", "server"},
                     {"image", opt.image.empty() ? "vllm/vllm-openai:latest" : opt.image},
                     {"ports", ojson::array({{{"name", "http"}, {"containerPort", 8000}}})}};
  std::string note;
  if (gpu && p.engine == "vllm") {
    auto c = ResolveVllm(p, catalog);
    if (c) {
      ojson args = ojson::array({HfModelId(p.model_ref)});
      for (const auto& a : VllmArgs(*c)) args.push_back(a);
      container["args"] = args;
    } else {
      note = "# vLLM flags omitted: " + c.error().message + "\n";
    }
  }
  const int gpus = gpu ? p.gpus_per_replica : 0;
  int cores = gpu ? kServeCoresPerGpu * gpus : 4;
  double ram = 16.0 * 1073741824.0;
  if (gpu) {
    if (const Accelerator* acc = catalog.FindAccelerator(p.accelerator)) {
      ram = kServeRamPerGpuMemory * acc->memory.value() * gpus;
    }
  }
  ojson res = {{"requests", {{"cpu", std::to_string(cores)}, {"memory", Gi(ram)}}}};
  if (gpu) res["limits"] = {{"nvidia.com/gpu", gpus}};
  container["resources"] = res;
  container["startupProbe"] = {{"httpGet", {{"path", "/health"}, {"port", 8000}}},
                               {"periodSeconds", 10}, {"failureThreshold", 90}};
  container["readinessProbe"] = {{"httpGet", {{"path", "/health"}, {"port", 8000}}}, {"periodSeconds", 10}};
  container["volumeMounts"] = ojson::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}});
  ojson pod = {{"containers", ojson::array({container})},
               {"volumes", ojson::array({{{"name", "dshm"},
                                          {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "16Gi"}}}}})}};
  ojson sel = NodeSelector(p);
  if (!sel.empty()) pod["nodeSelector"] = sel;
  if (gpu) pod["tolerations"] = GpuTolerations();
  ojson labels = {{"app", name}};
  ojson deploy = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
                  {"metadata", {{"name", name}, {"labels", labels}}},
                  {"spec", {{"replicas", p.replicas}, {"selector", {{"matchLabels", labels}}},
                            {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}};
  ojson svc = {{"apiVersion", "v1"}, {"kind", "Service"},
               {"metadata", {{"name", name}, {"labels", labels}}},
               {"spec", {{"selector", labels},
                         {"ports", ojson::array({{{"name", "http"}, {"port", 8000}, {"targetPort", 8000}}})}}}};
  const int min_r = p.replicas;
  const int max_r = kMaxReplicasFactor * p.replicas;
  ojson behavior = {
      {"scaleUp", {{"stabilizationWindowSeconds", 0},
                   {"policies", ojson::array({{{"type", "Percent"}, {"value", kScaleUpPercent}, {"periodSeconds", kScaleUpPeriodS}}})}}},
      {"scaleDown", {{"stabilizationWindowSeconds", kScaleDownWindowS},
                     {"policies", ojson::array({{{"type", "Percent"}, {"value", kScaleDownPercent}, {"periodSeconds", kScaleDownPeriodS}}})},
                     {"selectPolicy", "Min"}}}};
  ojson scaler;
  if (opt.autoscaler == "keda") {
    scaler = {{"apiVersion", "keda.sh/v1alpha1"}, {"kind", "ScaledObject"},
              {"metadata", {{"name", name}}},
              {"spec", {{"scaleTargetRef", {{"name", name}}},
                        {"minReplicaCount", min_r}, {"maxReplicaCount", max_r},
                        {"cooldownPeriod", kScaleDownWindowS},
                        {"advanced", {{"horizontalPodAutoscalerConfig", {{"behavior", behavior}}}}},
                        {"triggers", ojson::array({
                            {{"type", "prometheus"}, {"metricType", "AverageValue"},
                             {"metadata", {{"serverAddress", kPrometheus},
                                           {"query", fmt::format("avg(DCGM_FI_DEV_GPU_UTIL{{pod=~\"{}-.*\"}})", name)},
                                           {"threshold", std::to_string(kGpuUtilTargetPercent)}}}},
                            {{"type", "prometheus"}, {"metricType", "AverageValue"},
                             {"metadata", {{"serverAddress", kPrometheus},
                                           {"query", fmt::format("sum(rate(http_requests_total{{pod=~\"{}-.*\"}}[1m]))", name)},
                                           {"threshold", std::to_string(kRequestsPerSecondPerPod)}}}}})}}}};
  } else {
    scaler = {{"apiVersion", "autoscaling/v2"}, {"kind", "HorizontalPodAutoscaler"},
              {"metadata", {{"name", name}}},
              {"spec", {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", name}}},
                        {"minReplicas", min_r}, {"maxReplicas", max_r},
                        {"metrics", ojson::array({
                            {{"type", "Pods"}, {"pods", {{"metric", {{"name", "DCGM_FI_DEV_GPU_UTIL"}}},
                                                          {"target", {{"type", "AverageValue"}, {"averageValue", std::to_string(kGpuUtilTargetPercent)}}}}}},
                            {{"type", "Pods"}, {"pods", {{"metric", {{"name", "http_requests_per_second"}}},
                                                          {"target", {{"type", "AverageValue"}, {"averageValue", std::to_string(kRequestsPerSecondPerPod)}}}}}}})},
                        {"behavior", behavior}}}};
  }
  std::string s = Header(p, "Kubernetes Deployment + Service + autoscaler");
  s += fmt::format("# {} replica(s) x {} GPU(s); autoscaling {}..{} on GPU util {}% and {} req/s per pod (guide B12).\n",
                   p.replicas, gpus, min_r, max_r, kGpuUtilTargetPercent, kRequestsPerSecondPerPod);
  s += "# Pods metrics come from prometheus-adapter (DCGM exporter, vLLM /metrics).\n" + note;
  s += "---\n" + Yaml(deploy) + "---\n" + Yaml(svc) + "---\n" + Yaml(scaler);
  return {{"k8s.yaml", s}};
}

std::string TorchrunArgs(const Plan& p) {
  return fmt::format("--nnodes={} --nproc-per-node={}", p.nodes, p.gpus_per_node);
}

std::vector<EmittedFile> EmitK8sTrain(const Plan& p, const EmitOptions& opt) {
  const std::string name = Slug(p.model) + "-train";
  const std::string headless = name;
  std::string run = fmt::format(
      "torchrun {} --node-rank=\"$JOB_COMPLETION_INDEX\" \\\n"
      "  --master-addr={}-0.{} --master-port=29500 \\\n"
      "  train.py --output_dir {}/{}\n",
      TorchrunArgs(p), name, headless, kNvmeDir, name);
  ojson container = {{"name", "trainer"},
                     {"image", opt.image.empty() ? "pytorch/pytorch:latest" : opt.image},
                     {"command", ojson::array({"/bin/sh", "-c", run})},
                     {"resources", {{"requests", {{"cpu", std::to_string(p.cpu_cores)}, {"memory", Gi(p.ram_bytes)}}},
                                    {"limits", {{"nvidia.com/gpu", p.gpus_per_node}}}}},
                     {"volumeMounts", ojson::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}},
                                                    {{"name", "nvme"}, {"mountPath", kNvmeDir}}})}};
  ojson pod = {{"subdomain", headless}, {"restartPolicy", "Never"},
               {"containers", ojson::array({container})},
               {"volumes", ojson::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}},
                                         {{"name", "nvme"}, {"hostPath", {{"path", kNvmeDir}, {"type", "DirectoryOrCreate"}}}}})},
               {"tolerations", GpuTolerations()}};
  ojson sel = NodeSelector(p);
  if (!sel.empty()) pod["nodeSelector"] = sel;
  ojson labels = {{"app", name}};
  ojson job = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
               {"metadata", {{"name", name}, {"labels", labels}}},
               {"spec", {{"completionMode", "Indexed"}, {"completions", p.nodes}, {"parallelism", p.nodes},
                         {"backoffLimit", 0},
                         {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod}}}}}};
  ojson svc = {{"apiVersion", "v1"}, {"kind", "Service"},
               {"metadata", {{"name", headless}}},
               {"spec", {{"clusterIP", "None"}, {"selector", labels}}}};
  std::string s = Header(p, "Kubernetes indexed Job (one pod per node) + headless Service");
  s += fmt::format("# {} node(s) x {} GPU(s); layout tp {} pp {} dp {} ZeRO {}.\n", p.nodes, p.gpus_per_node,
                   p.tp, p.pp, p.dp, p.zero_stage);
  s += "---\n" + Yaml(job) + "---\n" + Yaml(svc);
  return {{"k8s.yaml", s}};
}

// ---- SkyPilot --------------------------------------------------------------------------------

std::string SkyAccelerator(const Plan& p, const Catalog& catalog) {
  // SkyPilot names GPUs by their short alias ("H100", "A100-80GB").
  if (const Accelerator* a = catalog.FindAccelerator(p.accelerator)) {
    for (const auto& al : a->aliases) {
      if (!al.empty()) return al;
    }
  }
  return p.accelerator;
}

std::vector<EmittedFile> EmitSkypilot(const Plan& p, const Catalog& catalog) {
  ojson res;
  res["infra"] = p.region.empty() ? p.cloud : p.cloud + "/" + p.region;
  res["instance_type"] = p.instance_type;
  ojson task;
  task["name"] = Slug(p.model) + (p.kind == Kind::kTrain ? "-train" : "-serve");
  if (p.kind == Kind::kTrain) {
    task["num_nodes"] = p.nodes;
    res["accelerators"] = fmt::format("{}:{}", SkyAccelerator(p, catalog), p.gpus_per_node);
    res["use_spot"] = p.spot;
    res["disk_size"] = std::max(256, static_cast<int>(std::ceil(p.disk_bytes / 1e9)));
    if (p.spot) res["job_recovery"] = {{"strategy", "FAILOVER"}, {"max_restarts_on_errors", 3}};
    task["resources"] = res;
    task["setup"] = "pip install torch transformers accelerate deepspeed\n";
    task["run"] = fmt::format(
        "HEAD=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\n"
        "torchrun --nnodes=\"$SKYPILOT_NUM_NODES\" --nproc-per-node=\"$SKYPILOT_NUM_GPUS_PER_NODE\" \\\n"
        "  --node-rank=\"$SKYPILOT_NODE_RANK\" --master-addr=\"$HEAD\" --master-port=29500 \\\n"
        "  train.py --output_dir {}/{}\n",
        kNvmeDir, Slug(p.model));
  } else {
    task["num_nodes"] = 1;
    if (!p.accelerator.empty()) {
      res["accelerators"] = fmt::format("{}:{}", SkyAccelerator(p, catalog), p.gpus_per_replica);
    }
    res["use_spot"] = false;
    res["disk_size"] = 256;
    res["ports"] = 8000;
    task["resources"] = res;
    auto c = ResolveVllm(p, catalog);
    if (c) {
      task["setup"] = "pip install vllm\n";
      task["run"] = VllmCommand(p, *c, " \\\n  ") + "\n";
    } else {
      // No vLLM configuration (CPU plan, another engine): say so instead of guessing a server.
      task["run"] = "echo 'gpuplan: no vLLM command for this plan: " + c.error().message +
                    "; start the " + p.engine + " server on port 8000 here' >&2\nexit 1\n";
    }
    task["service"] = {{"readiness_probe", "/health"},
                       {"replica_policy", {{"min_replicas", p.replicas},
                                           {"max_replicas", kMaxReplicasFactor * p.replicas},
                                           {"target_qps_per_replica", p.capacity_qps}}}};
  }
  return {{"sky.yaml", Header(p, "SkyPilot task") + Yaml(task)}};
}

// ---- Slurm, HF, DeepSpeed ----------------------------------------------------------------------

Status NeedTraining(const Plan& p, const std::string& target) {
  if (p.kind == Kind::kTrain) return {};
  return MakeError(ErrorCode::kInvalidArgument, "target",
                   target + " needs a training plan, got a serving plan",
                   "run `gpuplan --json plan train ...` and emit from its output");
}

std::string SlurmTime(double hours) {
  // Job time plus 10 % and one hour of slack, as D-HH:MM:SS.
  const long long total_min = static_cast<long long>(std::ceil((hours * 1.1 + 1.0) * 60));
  return fmt::format("{}-{:02d}:{:02d}:00", total_min / 1440, (total_min % 1440) / 60, total_min % 60);
}

std::vector<EmittedFile> EmitSlurm(const Plan& p) {
  std::string s = "#!/bin/bash\n" + Header(p, "Slurm batch script");
  s += fmt::format(
      "#SBATCH --job-name={}\n"
      "#SBATCH --nodes={}\n"
      "#SBATCH --ntasks-per-node=1\n"
      "#SBATCH --gpus-per-node={}\n"
      "#SBATCH --cpus-per-task={}\n"
      "#SBATCH --mem=0\n"
      "#SBATCH --exclusive\n"
      "#SBATCH --time={}\n"
      "#SBATCH --output=%x-%j.out\n"
      "#SBATCH --signal=USR1@300\n"
      "#SBATCH --requeue\n\n"
      "# Planned layout: tp {} x pp {} x dp {}, ZeRO {}, micro-batch {} x {} accumulation steps;\n"
      "# {:.2f} s per step, {:.1f} h for the job.\n"
      "HEAD=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
      "export NCCL_DEBUG=WARN\n"
      "srun torchrun \\\n"
      "  --nnodes=\"$SLURM_NNODES\" --nproc-per-node={} \\\n"
      "  --rdzv-id=\"$SLURM_JOB_ID\" --rdzv-backend=c10d --rdzv-endpoint=\"$HEAD:29500\" \\\n"
      "  train.py --output_dir {}/{}{}\n",
      Slug(p.model), p.nodes, p.gpus_per_node, p.cpu_cores, SlurmTime(p.job_hours), p.tp, p.pp, p.dp,
      p.zero_stage, p.micro_batch, p.grad_accum, p.step_time_s, p.job_hours, p.gpus_per_node, kNvmeDir,
      Slug(p.model), p.zero_stage > 0 ? " --deepspeed ds_config.json" : "");
  return {{"train.sbatch", s}};
}

ojson DeepSpeedConfig(const Plan& p) {
  ojson z = {{"stage", p.zero_stage}, {"overlap_comm", true}, {"contiguous_gradients", true}};
  if (p.zero_stage >= 1) z["offload_optimizer"] = {{"device", "none"}};
  if (p.zero_stage == 3) {
    z["offload_param"] = {{"device", "none"}};
    z["stage3_gather_16bit_weights_on_model_save"] = true;
  }
  ojson ds = {{"train_batch_size", p.micro_batch * p.grad_accum * p.dp},
              {"train_micro_batch_size_per_gpu", p.micro_batch},
              {"gradient_accumulation_steps", p.grad_accum},
              {"gradient_clipping", 1.0}};
  if (p.precision == "fp16") {
    ds["fp16"] = {{"enabled", true}, {"loss_scale", 0}};
  } else if (p.precision != "fp32") {
    ds["bf16"] = {{"enabled", true}};
  }
  ds["zero_optimization"] = z;
  ds["steps_per_print"] = 100;
  return ds;
}

int SaveSteps(const Plan& p) {
  if (!(p.step_time_s > 0)) return 1000;
  return std::max(1, static_cast<int>(std::lround(p.checkpoint_interval_h * 3600.0 / p.step_time_s)));
}

std::string PyValue(const ojson& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  return v.dump();
}

std::vector<EmittedFile> EmitHf(const Plan& p) {
  const int save_steps = SaveSteps(p);
  ojson a;
  a["output_dir"] = std::string(kNvmeDir) + "/" + Slug(p.model);
  a["per_device_train_batch_size"] = p.micro_batch;
  a["gradient_accumulation_steps"] = p.grad_accum;
  a["bf16"] = p.precision == "bf16" || p.precision == "fp8";
  a["fp16"] = p.precision == "fp16";
  a["gradient_checkpointing"] = p.recompute != "none";
  if (p.recompute != "none") a["gradient_checkpointing_kwargs"] = {{"use_reentrant", false}};
  a["save_strategy"] = "steps";
  a["save_steps"] = save_steps;
  a["save_total_limit"] = kKeepCheckpoints;
  a["save_safetensors"] = true;
  a["save_on_each_node"] = p.nodes > 1;
  a["logging_steps"] = 10;
  if (p.zero_stage > 0) a["deepspeed"] = "ds_config.json";
  std::string py = "# " + Header(p, "Hugging Face TrainingArguments").substr(2);
  py += fmt::format(
      "# Checkpoints (guide A10): every {} steps = the plan's {:g} h interval{} at {:.2f} s per step,\n"
      "# keep the last {}, safetensors, on local NVMe (sync to object storage separately).\n",
      save_steps, p.checkpoint_interval_h, p.checkpoint_interval_known ? "" : " (planner default)",
      p.step_time_s, kKeepCheckpoints);
  py += fmt::format("# Global batch {} = {} per device x {} accumulation x {} data-parallel ranks.\n",
                    p.micro_batch * p.grad_accum * p.dp, p.micro_batch, p.grad_accum, p.dp);
  if (p.tp > 1 || p.pp > 1) {
    py += fmt::format("# NOTE: the plan uses tensor parallel {} x pipeline parallel {}; the HF Trainer does\n"
                      "# not shard layers that way: use Megatron-LM/NeMo or accept a different layout.\n",
                      p.tp, p.pp);
  }
  if (p.method == "lora" || p.method == "qlora") {
    py += "# The plan is " + p.method + ": wrap the model with peft before building the Trainer.\n";
  }
  if (p.precision == "fp8") py += "# fp8 training needs Transformer Engine; bf16 is set for the rest.\n";
  py += "from transformers import TrainingArguments\n\nargs = TrainingArguments(\n";
  for (auto it = a.begin(); it != a.end(); ++it) {
    py += "    " + it.key() + "=" + PyValue(it.value()) + ",\n";
  }
  py += ")\n";
  std::vector<EmittedFile> out = {{"training_args.py", py}, {"training_args.json", a.dump(2) + "\n"}};
  if (p.zero_stage > 0) out.push_back({"ds_config.json", DeepSpeedConfig(p).dump(2) + "\n"});
  return out;
}

// ---- Monitoring (B13) --------------------------------------------------------------------------

ojson Panel(int id, const std::string& type, const std::string& title, int x, int y,
            const std::string& expr, const std::string& unit, const std::string& legend = "") {
  ojson target = {{"refId", "A"}, {"expr", expr}};
  if (!legend.empty()) target["legendFormat"] = legend;
  return {{"id", id}, {"type", type}, {"title", title},
          {"gridPos", {{"x", x}, {"y", y}, {"w", 12}, {"h", 8}}},
          {"datasource", {{"type", "prometheus"}, {"uid", "${DS_PROMETHEUS}"}}},
          {"targets", ojson::array({target})},
          {"fieldConfig", {{"defaults", {{"unit", unit}}}, {"overrides", ojson::array()}}}};
}

std::vector<EmittedFile> EmitMonitoring(const Plan& p) {
  const std::string name = Slug(p.model);
  const bool serve = p.kind == Kind::kServe;
  const double price = p.price_per_hour.value_or(0);
  const std::string pod = fmt::format("pod=~\"{}-.*\"", name);
  ojson rec = ojson::array();
  auto add = [&](const std::string& r, const std::string& e) { rec.push_back({{"record", r}, {"expr", e}}); };
  add("gpuplan:gpu_util:avg", fmt::format("avg(DCGM_FI_DEV_GPU_UTIL{{{}}})", pod));
  add("gpuplan:gpu_mem_used:ratio",
      fmt::format("sum(DCGM_FI_DEV_FB_USED{{{0}}}) / (sum(DCGM_FI_DEV_FB_USED{{{0}}}) + sum(DCGM_FI_DEV_FB_FREE{{{0}}}))", pod));
  add("gpuplan:cost_per_hour", fmt::format("vector({})", price));
  ojson alerts = ojson::array();
  alerts.push_back({{"alert", "GpuplanGpuMemoryHigh"}, {"expr", "gpuplan:gpu_mem_used:ratio > 0.95"},
                    {"for", "10m"}, {"labels", {{"severity", "warning"}}},
                    {"annotations", {{"summary", "GPU memory above 95% of capacity"}}}});
  if (serve) {
    add("gpuplan:requests_per_second", fmt::format("sum(rate(vllm:e2e_request_latency_seconds_count{{{}}}[5m]))", pod));
    add("gpuplan:latency_p99_seconds",
        fmt::format("histogram_quantile(0.99, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{{{}}}[5m])))", pod));
    add("gpuplan:error_ratio",
        fmt::format("sum(rate(http_requests_total{{{0},status=~\"5..\"}}[5m])) / sum(rate(http_requests_total{{{0}}}[5m]))", pod));
    add("gpuplan:output_tokens_per_second", fmt::format("sum(rate(vllm:generation_tokens_total{{{}}}[5m]))", pod));
    add("gpuplan:cost_per_request", "gpuplan:cost_per_hour / 3600 / gpuplan:requests_per_second");
    alerts.push_back({{"alert", "GpuplanLatencyP99High"},
                      {"expr", fmt::format("gpuplan:latency_p99_seconds > {:.3f}", kLatencyAlertFactor * p.e2e_p99_ms / 1000)},
                      {"for", "10m"}, {"labels", {{"severity", "warning"}}},
                      {"annotations", {{"summary", fmt::format("p99 latency above {:g} x the planned {:.0f} ms", kLatencyAlertFactor, p.e2e_p99_ms)}}}});
    alerts.push_back({{"alert", "GpuplanErrorRateHigh"}, {"expr", "gpuplan:error_ratio > 0.01"},
                      {"for", "5m"}, {"labels", {{"severity", "critical"}}},
                      {"annotations", {{"summary", "more than 1% of requests fail"}}}});
    alerts.push_back({{"alert", "GpuplanLoadAbovePlan"},
                      {"expr", fmt::format("gpuplan:requests_per_second > {:.3f}", p.qps)},
                      {"for", "15m"}, {"labels", {{"severity", "info"}}},
                      {"annotations", {{"summary", fmt::format("load above the planned {:g} req/s", p.qps)}}}});
  } else {
    alerts.push_back({{"alert", "GpuplanGpuUnderused"}, {"expr", "gpuplan:gpu_util:avg < 70"},
                      {"for", "30m"}, {"labels", {{"severity", "info"}}},
                      {"annotations", {{"summary", "GPU utilisation under 70%: check data loading (guide B17)"}}}});
    alerts.push_back({{"alert", "GpuplanXidError"}, {"expr", fmt::format("max(DCGM_FI_DEV_XID_ERRORS{{{}}}) > 0", pod)},
                      {"for", "1m"}, {"labels", {{"severity", "critical"}}},
                      {"annotations", {{"summary", "a GPU reported an XID error"}}}});
  }
  ojson rules = {{"groups", ojson::array({{{"name", "gpuplan-" + name + "-recording"}, {"rules", rec}},
                                          {{"name", "gpuplan-" + name + "-alerts"}, {"rules", alerts}}})}};
  ojson panels = ojson::array();
  int id = 1;
  auto place = [&](const std::string& type, const std::string& title, const std::string& expr,
                   const std::string& unit, const std::string& legend = "") {
    const int k = id - 1;
    panels.push_back(Panel(id++, type, title, (k % 2) * 12, (k / 2) * 8, expr, unit, legend));
  };
  if (serve) {
    place("timeseries", "p99 latency", "gpuplan:latency_p99_seconds", "s");
    place("timeseries", "Throughput (requests/s)", "gpuplan:requests_per_second", "reqps");
    place("timeseries", "Error rate", "gpuplan:error_ratio", "percentunit");
  }
  place("timeseries", "GPU utilisation", fmt::format("avg by (gpu, Hostname) (DCGM_FI_DEV_GPU_UTIL{{{}}})", pod),
        "percent", "{{Hostname}} gpu {{gpu}}");
  place("timeseries", "GPU memory used", fmt::format("DCGM_FI_DEV_FB_USED{{{}}}", pod), "mbytes", "{{Hostname}} gpu {{gpu}}");
  place("stat", "Cost per hour", "gpuplan:cost_per_hour", "currencyUSD");
  if (serve) place("stat", "Cost per request", "gpuplan:cost_per_request", "currencyUSD");
  if (!serve) place("timeseries", "Tensor pipe active", fmt::format("avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}})", pod), "percentunit");
  ojson dash = {{"__inputs", ojson::array({{{"name", "DS_PROMETHEUS"}, {"label", "Prometheus"}, {"type", "datasource"},
                                            {"pluginId", "prometheus"}, {"pluginName", "Prometheus"}}})},
                {"id", nullptr}, {"uid", Slug("gpuplan-" + name)}, {"title", "gpuplan: " + p.model},
                {"tags", ojson::array({"gpuplan", serve ? "serving" : "training"})},
                {"timezone", "utc"}, {"schemaVersion", 39}, {"version", 1}, {"refresh", "30s"},
                {"time", {{"from", "now-6h"}, {"to", "now"}}},
                {"templating", {{"list", ojson::array()}}}, {"annotations", {{"list", ojson::array()}}},
                {"panels", panels}};
  std::string hdr = Header(p, "Prometheus recording and alert rules");
  hdr += fmt::format("# Cost: {:g} {} per hour from the plan's price{}.\n", price, p.currency,
                     p.price_per_hour ? "" : " (the plan has no public price: 0)");
  return {{"prometheus-rules.yaml", hdr + Yaml(rules)}, {"grafana-dashboard.json", dash.dump(2) + "\n"}};
}

}  // namespace

const std::vector<std::string>& EmitTargets() {
  static const std::vector<std::string> kTargets = {"k8s", "skypilot", "slurm", "vllm", "hf", "deepspeed", "monitoring"};
  return kTargets;
}

Result<std::vector<EmittedFile>> Emit(std::string_view plan_json, std::string_view target,
                                      const EmitOptions& opt, const Catalog& catalog) {
  const auto& targets = EmitTargets();
  if (std::find(targets.begin(), targets.end(), target) == targets.end()) {
    return MakeError(ErrorCode::kNotFound, "target", "unknown target \"" + std::string(target) + "\"",
                     "use one of k8s, skypilot, slurm, vllm, hf, deepspeed, monitoring");
  }
  if (opt.autoscaler != "hpa" && opt.autoscaler != "keda") {
    return MakeError(ErrorCode::kInvalidArgument, "--autoscaler", "unknown autoscaler \"" + opt.autoscaler + "\"",
                     "use hpa or keda");
  }
  auto parsed = internal::ParseJson(plan_json, "--plan");  // size, depth, every exception
  if (!parsed) {
    return MakeError(parsed.error().code, "--plan", "not valid JSON: " + parsed.error().message,
                     "give the output of `gpuplan --json plan train|infer ...`");
  }
  json doc = std::move(*parsed);
  if (Status s = internal::CheckPlanDocument(doc); !s) return s.error();
  Plan p;
  try {
    p = ReadPlan(doc, opt.rank);
  } catch (const PlanError& e) {
    const ErrorCode code = e.field == "--rank" ? ErrorCode::kInvalidArgument : ErrorCode::kParse;
    return MakeError(code, e.field, e.what(),
                     e.field == "--rank" ? "1 is the top plan" : "give the output of `gpuplan --json plan train|infer ...`");
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kParse, "--plan", e.what());
  }
  const std::string t(target);
  if (t == "vllm") {
    auto c = ResolveVllm(p, catalog);
    if (!c) return c.error();
    return EmitVllm(p, *c);
  }
  if (t == "slurm" || t == "hf" || t == "deepspeed") {
    if (Status s = NeedTraining(p, t); !s) return s.error();
    if (t == "slurm") return EmitSlurm(p);
    if (t == "hf") return EmitHf(p);
    return std::vector<EmittedFile>{{"ds_config.json", DeepSpeedConfig(p).dump(2) + "\n"}};
  }
  if (t == "k8s") return p.kind == Kind::kServe ? EmitK8sServe(p, opt, catalog) : EmitK8sTrain(p, opt);
  if (t == "skypilot") return EmitSkypilot(p, catalog);
  return EmitMonitoring(p);
}

}  // namespace gpuplan
