// Reading the plan document (include/gpuplan/plan_document.h) into the fields the emitters use.
// Every missing or mistyped field is a PlanError naming its JSON path.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"
#include "io/json_util.h"

namespace gpuplan::emit {

namespace {

using nlohmann::json;

const json& At(const json& j, const std::string& key, const std::string& path) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) {
    throw PlanError(path + "." + key, "missing field");
  }
  return j.at(key);
}
double Num(const json& j, const std::string& key, const std::string& path) {
  const json& v = At(j, key, path);
  if (!v.is_number())
    throw PlanError(path + "." + key, "expected a number, got " + internal::JsonTypeName(v));
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
  if (!v.is_string())
    throw PlanError(path + "." + key, "expected a string, got " + internal::JsonTypeName(v));
  return v.get<std::string>();
}
std::optional<double> OptNum(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nullopt;
  return j.at(key).get<double>();
}
std::string OptStr(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_string()) return "";
  return j.at(key).get<std::string>();
}

}  // namespace

Plan ReadPlan(const json& doc, int rank) {
  if (!doc.is_object()) throw PlanError("$", "expected a JSON object (gpuplan --json plan ...)");
  const json& job = At(doc, "job", "$");
  const json& plans = At(doc, "plans", "$");
  if (!plans.is_array()) throw PlanError("plans", "expected an array");
  if (plans.empty()) {
    throw PlanError("plans",
                    "the plan has no feasible deployment (planner exit 1): nothing to emit");
  }
  if (rank < 1 || static_cast<std::size_t>(rank) > plans.size()) {
    throw PlanError("--rank", fmt::format("must be in [1, {}], got {}", plans.size(), rank));
  }
  Plan p;
  p.path = fmt::format("plans[{}]", rank - 1);
  const json& j = plans.at(static_cast<std::size_t>(rank - 1));
  p.model = Str(job, "model", "job");
  p.model_ref = OptStr(job, "model_ref");
  if (p.model_ref.empty()) p.model_ref = p.model;
  p.arch = OptStr(job, "arch");
  p.cloud = Str(j, "cloud", p.path);
  p.region = OptStr(j, "region");
  p.instance_type = Str(j, "instance_type", p.path);
  p.currency = OptStr(j, "currency");
  if (p.currency.empty()) p.currency = "USD";
  if (job.contains("qps")) {
    p.kind = Kind::kServe;
    p.qps = Num(job, "qps", "job");
    p.input_len = Int(job, "input_len", "job");
    p.output_len = Int(job, "output_len", "job");
    p.engine = Str(job, "engine", "job");
    p.target_utilization = OptNum(job, "target_utilization").value_or(0.6);
    p.serve_precision = OptStr(job, "precision");
    p.serve_quant = OptStr(job, "quant");
    p.accelerator = OptStr(j, "accelerator");
    p.gpus_per_replica = Int(j, "gpus_per_replica", p.path);
    if (j.contains("nodes_per_replica") && Int(j, "nodes_per_replica", p.path) > 1) {
      throw PlanError(p.path + ".nodes_per_replica",
                      fmt::format("not yet: this serving plan spans {} nodes per replica (pipeline "
                                  "parallel across nodes) and gpuplan emit writes single-node "
                                  "replicas only; deploy it by hand (vLLM multi-node on Ray) or "
                                  "emit a plan of --rank whose nodes_per_replica is 1",
                                  Int(j, "nodes_per_replica", p.path)));
    }
    p.replicas = std::max(1, Int(j, "replicas", p.path));
    p.batch = std::max(1, Int(j, "batch", p.path));
    p.kv_tokens = static_cast<std::int64_t>(Num(j, "kv_tokens_per_replica", p.path));
    p.capacity_qps = Num(j, "capacity_qps_per_replica", p.path);
    if (!(p.capacity_qps > 0)) {
      throw PlanError(p.path + ".capacity_qps_per_replica",
                      fmt::format("must be > 0, got {}", p.capacity_qps));
    }
    p.e2e_p99_ms = Num(j, "e2e_p99_ms", p.path);
    p.price_per_hour = OptNum(j, "cost_per_hour");
    p.cost_per_1k = OptNum(j, "cost_per_1k_requests").value_or(0);
  } else if (job.contains("tokens") || job.contains("method")) {
    p.kind = Kind::kTrain;
    p.precision = Str(job, "precision", "job");
    p.method = Str(job, "method", "job");
    p.seq_len = Int(job, "seq_len", "job");
    p.global_batch = Int(job, "global_batch", "job");
    p.tokens = OptNum(job, "tokens").value_or(0);
    const std::string fw = OptStr(job, "framework");
    if (!fw.empty()) p.framework = fw;
    p.spot = job.contains("spot_allowed") && job["spot_allowed"].is_boolean() &&
             job["spot_allowed"].get<bool>() && OptNum(j, "cost_spot").has_value();
    if (auto h = OptNum(job, "checkpoint_interval_hours")) {
      if (*h < 0)
        throw PlanError("job.checkpoint_interval_hours", fmt::format("must be >= 0, got {}", *h));
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
    p.recompute_layers = static_cast<int>(OptNum(l, "recompute_layers").value_or(0));
    p.vpp = std::max(1, static_cast<int>(OptNum(l, "vpp").value_or(1)));
    p.sequence_parallel = l.contains("sequence_parallel") && l["sequence_parallel"].is_boolean() &&
                          l["sequence_parallel"].get<bool>();
    // The framework the planner chose to run this layout wins over the job's request.
    if (const std::string chosen = OptStr(l, "framework"); !chosen.empty()) p.framework = chosen;
    p.step_time_s = Num(j, "step_time_s", p.path);
    p.job_hours = Num(j, "job_hours", p.path);
    p.price_per_hour = OptNum(j, "price_per_hour");
    const json& h = At(j, "host", p.path);
    p.cpu_cores = Int(h, "cpu_cores", p.path + ".host");
    p.ram_bytes = Num(h, "ram_bytes", p.path + ".host");
    p.disk_bytes =
        OptNum(h, "system_disk_bytes").value_or(0) + OptNum(h, "data_disk_bytes").value_or(0);
    if (p.zero_stage > 3)
      throw PlanError(lp + ".zero_stage", fmt::format("must be 0-3, got {}", p.zero_stage));
    if (p.tp < 1 || p.pp < 1 || p.dp < 1) throw PlanError(lp, "tp, pp and dp must be >= 1");
  } else {
    throw PlanError("job", "neither a training plan (job.tokens) nor a serving plan (job.qps)");
  }
  return p;
}

}  // namespace gpuplan::emit
