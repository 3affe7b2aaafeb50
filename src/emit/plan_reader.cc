// Reading the plan document (include/gpuplan/plan_document.h) into the fields the emitters use.
// Every missing or mistyped field is an Error naming its JSON path (shared getters,
// io/json_fields.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"
#include "io/json_fields.h"
#include "io/json_util.h"

namespace gpuplan::emit {

namespace {

using internal::GetInt;
using internal::GetNumber;
using internal::GetObject;
using internal::GetString;
using internal::Require;
using nlohmann::json;

// Upper bounds of plan figures (far beyond any real plan; they keep integer casts defined): a
// petabyte of host memory or disk, a million requests/s, ten thousand years.
constexpr double kMaxBytes = 1e15;
constexpr double kMaxRate = 1e6;
constexpr double kMaxHours = 1e8;
constexpr double kMaxSeconds = kMaxHours * 3600;

// Reads plan fields through the shared getters (io/json_fields.h) and keeps the first error, so
// ReadPlan reads top to bottom and returns that error at the end; a field read after an error
// gets a neutral value that is never used.
class Fields {
 public:
  const json& At(const json& j, std::string_view key, std::string_view path) {
    static const json kEmpty = json::object();
    const json* v =
        Keep(Require(GetObject(j, key, path), key, path), static_cast<const json*>(nullptr));
    return v != nullptr ? *v : kEmpty;
  }
  double Num(const json& j, std::string_view key, std::string_view path) {
    return Keep(Require(GetNumber(j, key, path), key, path), 0.0);
  }
  // A whole number in [0, 1e9].
  int Int(const json& j, std::string_view key, std::string_view path) {
    return Keep(Require(internal::GetIntIn(j, key, path, 0, 1000000000), key, path), 0);
  }
  // A whole number in [1, 1e9]: a count the plan cannot have zero of.
  int Count(const json& j, std::string_view key, std::string_view path) {
    return Keep(Require(internal::GetIntIn(j, key, path, 1, 1000000000), key, path), 1);
  }
  std::string Str(const json& j, std::string_view key, std::string_view path) {
    return Keep(Require(GetString(j, key, path), key, path), std::string());
  }
  std::optional<double> OptNum(const json& j, std::string_view key, std::string_view path) {
    return Keep(GetNumber(j, key, path), std::optional<double>());
  }
  // A number in [lo, hi]: every plan figure that becomes a count, a size or a time in an
  // emitted file is bounded here, so no cast to an integer can overflow.
  double NumIn(const json& j, std::string_view key, std::string_view path, double lo, double hi) {
    return Keep(Require(internal::GetNumberIn(j, key, path, lo, hi), key, path), lo);
  }
  std::optional<double> OptNumIn(const json& j, std::string_view key, std::string_view path,
                                 double lo, double hi) {
    return Keep(internal::GetNumberIn(j, key, path, lo, hi), std::optional<double>());
  }
  std::optional<int> OptInt(const json& j, std::string_view key, std::string_view path) {
    return Keep(internal::GetIntIn(j, key, path, 0, 1000000000), std::optional<int>());
  }
  // "" when absent.
  std::string OptStr(const json& j, std::string_view key, std::string_view path) {
    return Keep(GetString(j, key, path), std::optional<std::string>()).value_or("");
  }
  bool OptBool(const json& j, std::string_view key, std::string_view path) {
    return Keep(internal::GetBool(j, key, path), std::optional<bool>()).value_or(false);
  }
  // Records `e` unless an earlier error was recorded.
  void Fail(ErrorCode code, std::string field, std::string message, std::string hint = {}) {
    if (!error_) error_ = MakeError(code, std::move(field), std::move(message), std::move(hint));
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  template <class T>
  T Keep(Result<T> r, T neutral) {
    if (r) return std::move(*r);
    if (!error_) error_ = r.error();
    return neutral;
  }
  std::optional<Error> error_;
};

}  // namespace

Result<Plan> ReadPlan(const json& doc, int rank) {
  Fields f;
  if (!doc.is_object()) {
    return MakeError(ErrorCode::kParse, "$", "expected a JSON object (gpuplan --json plan ...)");
  }
  const json& job = f.At(doc, "job", "$");
  if (f.error()) return *f.error();
  const json* plans_p = nullptr;
  GPUPLAN_ASSIGN_OR_RETURN(plans_p, Require(internal::GetArray(doc, "plans", "$"), "plans", "$"));
  const json& plans = *plans_p;
  if (plans.empty()) {
    return MakeError(ErrorCode::kParse, "plans",
                     "the plan has no feasible deployment (planner exit 1): nothing to emit");
  }
  if (rank < 1 || static_cast<std::size_t>(rank) > plans.size()) {
    return MakeError(ErrorCode::kInvalidArgument, "--rank",
                     fmt::format("must be in [1, {}], got {}", plans.size(), rank),
                     "1 is the top plan");
  }
  Plan p;
  p.path = fmt::format("plans[{}]", rank - 1);
  const json& j = plans.at(static_cast<std::size_t>(rank - 1));
  p.model = f.Str(job, "model", "job");
  p.model_ref = f.OptStr(job, "model_ref", "job");
  if (p.model_ref.empty()) p.model_ref = p.model;
  p.arch = f.OptStr(job, "arch", "job");
  p.cloud = f.Str(j, "cloud", p.path);
  p.region = f.OptStr(j, "region", p.path);
  p.instance_type = f.Str(j, "instance_type", p.path);
  p.currency = f.OptStr(j, "currency", p.path);
  if (p.currency.empty()) p.currency = "USD";
  if (job.contains("qps")) {
    p.kind = Kind::kServe;
    p.qps = f.NumIn(job, "qps", "job", 0, kMaxRate);
    p.input_len = f.Int(job, "input_len", "job");
    p.output_len = f.Int(job, "output_len", "job");
    p.engine = f.Str(job, "engine", "job");
    p.target_utilization = f.OptNumIn(job, "target_utilization", "job", 0, 1).value_or(0.6);
    p.serve_precision = f.OptStr(job, "precision", "job");
    p.serve_quant = f.OptStr(job, "quant", "job");
    p.accelerator = f.OptStr(j, "accelerator", p.path);
    p.gpus_per_replica = f.Int(j, "gpus_per_replica", p.path);
    if (j.contains("nodes_per_replica") && f.Int(j, "nodes_per_replica", p.path) > 1) {
      f.Fail(ErrorCode::kUnsupported, p.path + ".nodes_per_replica",
             fmt::format("not yet: this serving plan spans {} nodes per replica (pipeline "
                         "parallel across nodes) and gpuplan emit writes single-node "
                         "replicas only; deploy it by hand (vLLM multi-node on Ray) or "
                         "emit a plan of --rank whose nodes_per_replica is 1",
                         f.Int(j, "nodes_per_replica", p.path)),
             "multi-node serving emit is not implemented yet (issue 12)");
    }
    p.replicas = f.Count(j, "replicas", p.path);
    p.batch = f.Count(j, "batch", p.path);
    p.kv_tokens = static_cast<std::int64_t>(f.NumIn(j, "kv_tokens_per_replica", p.path, 0, 1e12));
    p.capacity_qps = f.NumIn(j, "capacity_qps_per_replica", p.path, 0, kMaxRate);
    // Plans written before planned_utilization existed are planned at the job's target.
    if (auto u = f.OptNumIn(j, "planned_utilization", p.path, 0, 1); u && *u > 0) {
      p.target_utilization = *u;
    }
    if (!(p.capacity_qps > 0)) {
      f.Fail(ErrorCode::kParse, p.path + ".capacity_qps_per_replica",
             fmt::format("must be > 0, got {}", p.capacity_qps));
    }
    p.e2e_p99_ms = f.NumIn(j, "e2e_p99_ms", p.path, 0, kMaxSeconds * 1e3);
    p.price_per_hour = f.OptNum(j, "cost_per_hour", p.path);
    p.cost_per_1k = f.OptNum(j, "cost_per_1k_requests", p.path).value_or(0);
  } else if (job.contains("tokens") || job.contains("method")) {
    p.kind = Kind::kTrain;
    p.precision = f.Str(job, "precision", "job");
    p.method = f.Str(job, "method", "job");
    if (const std::string o = f.OptStr(job, "optimizer", "job"); !o.empty()) p.optimizer = o;
    p.paged_optimizer = f.OptBool(job, "paged_optimizer", "job");
    p.seq_len = f.Int(job, "seq_len", "job");
    p.global_batch = f.Int(job, "global_batch", "job");
    p.tokens = f.OptNumIn(job, "tokens", "job", 0, 1e18).value_or(0);
    const std::string fw = f.OptStr(job, "framework", "job");
    if (!fw.empty()) p.framework = fw;
    p.spot = f.OptBool(job, "spot_allowed", "job") && f.OptNum(j, "cost_spot", p.path).has_value();
    if (auto h = f.OptNumIn(job, "checkpoint_interval_hours", "job", -kMaxHours, kMaxHours)) {
      if (*h < 0)
        f.Fail(ErrorCode::kParse, "job.checkpoint_interval_hours",
               fmt::format("must be >= 0, got {}", *h));
      p.checkpoint_interval_h = *h;
      p.checkpoint_interval_known = true;
    }
    p.accelerator = f.Str(j, "accelerator", p.path);
    p.gpus_per_node = f.Int(j, "gpus_per_node", p.path);
    p.nodes = f.Count(j, "nodes", p.path);
    const json& l = f.At(j, "layout", p.path);
    const std::string lp = p.path + ".layout";
    p.tp = f.Count(l, "tp", lp);
    p.pp = f.Count(l, "pp", lp);
    p.dp = f.Count(l, "dp", lp);
    p.zero_stage = f.Int(l, "zero_stage", lp);
    p.micro_batch = f.Count(l, "micro_batch", lp);
    p.grad_accum = std::max(1, f.Int(l, "num_microbatches", lp));
    p.recompute = f.Str(l, "recompute", lp);
    p.recompute_layers = f.OptInt(l, "recompute_layers", lp).value_or(0);
    p.vpp = std::max(1, f.OptInt(l, "vpp", lp).value_or(1));
    // Context and expert parallelism (absent in plans from before they were planned: 1).
    if (l.contains("cp")) p.cp = std::max(1, f.Int(l, "cp", lp));
    if (l.contains("ep")) p.ep = std::max(1, f.Int(l, "ep", lp));
    p.sequence_parallel = f.OptBool(l, "sequence_parallel", lp);
    p.optimizer_offload = f.OptBool(l, "optimizer_offload", lp);
    p.param_offload = f.OptBool(l, "param_offload", lp);
    // The framework the planner chose to run this layout wins over the job's request.
    if (const std::string chosen = f.OptStr(l, "framework", lp); !chosen.empty())
      p.framework = chosen;
    p.step_time_s = f.NumIn(j, "step_time_s", p.path, 0, kMaxSeconds);
    p.job_hours = f.NumIn(j, "job_hours", p.path, 0, kMaxHours);
    p.price_per_hour = f.OptNum(j, "price_per_hour", p.path);
    const json& h = f.At(j, "host", p.path);
    p.cpu_cores = f.Int(h, "cpu_cores", p.path + ".host");
    p.ram_bytes = f.NumIn(h, "ram_bytes", p.path + ".host", 0, kMaxBytes);
    p.disk_bytes = f.OptNumIn(h, "system_disk_bytes", p.path + ".host", 0, kMaxBytes).value_or(0) +
                   f.OptNumIn(h, "data_disk_bytes", p.path + ".host", 0, kMaxBytes).value_or(0);
    if (p.zero_stage > 3)
      f.Fail(ErrorCode::kParse, lp + ".zero_stage",
             fmt::format("must be 0-3, got {}", p.zero_stage));
    if (p.tp < 1 || p.pp < 1 || p.dp < 1)
      f.Fail(ErrorCode::kParse, lp, "tp, pp and dp must be >= 1");
  } else {
    f.Fail(ErrorCode::kParse, "job",
           "neither a training plan (job.tokens) nor a serving plan (job.qps)");
  }
  if (f.error()) return *f.error();
  return p;
}

}  // namespace gpuplan::emit
