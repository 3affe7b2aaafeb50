#include "io/plan_input.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "io/json_fields.h"

namespace gpuplan::internal {

bool IsSafeText(std::string_view s, std::size_t max_bytes) {
  if (s.empty() || s.size() > max_bytes || !IsValidUtf8(s)) return false;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F || c == '"' || c == '\'' || c == '\\' || c == '`' || c == '$') {
      return false;
    }
  }
  return true;
}

namespace {

// The member `key` as a non-empty string (nullopt when absent or empty); a wrong type is an
// error from the shared getter.
Result<std::optional<std::string>> NonEmpty(const Json& obj, const char* key,
                                            const std::string& path) {
  auto v = GetString(obj, key, path);
  if (!v) return v.error();
  if (*v && (*v)->empty()) return std::optional<std::string>();
  return v;
}

Status Ident(const Json& obj, const char* key, const std::string& path) {
  auto s = NonEmpty(obj, key, path);
  if (!s) return s.error();
  if (!*s) return {};
  return CheckIdentifier(**s, path + "." + key);
}

Status Name(const Json& obj, const char* key, const std::string& path) {
  auto s = NonEmpty(obj, key, path);
  if (!s) return s.error();
  if (!*s) return {};
  return CheckName(**s, path + "." + key);
}

Status Text(const Json& obj, const char* key, const std::string& path, std::size_t max) {
  auto s = NonEmpty(obj, key, path);
  if (!s) return s.error();
  if (!*s || IsSafeText(**s, max)) return {};
  return MakeError(ErrorCode::kInvalidArgument, path + "." + key,
                   fmt::format("must be 1-{} printable characters without quotes, backslashes, $ "
                               "or backticks, got {}",
                               max, Excerpt(**s)),
                   "give the output of `gpuplan --json plan train|infer ...` unchanged");
}

Status Count(const Json& obj, const char* key, const std::string& path, double hi) {
  auto v = GetNumber(obj, key, path);
  if (!v) return v.error();
  if (!*v || (**v >= 0 && **v <= hi)) return {};
  return MakeError(ErrorCode::kInvalidArgument, path + "." + key,
                   fmt::format("must be in [0, {:g}], got {:g}", hi, **v));
}

}  // namespace

Status CheckPlanDocument(const Json& doc) {
  if (!doc.is_object()) return {};
  auto job_p = GetObject(doc, "job", "");
  if (!job_p) return job_p.error();
  if (*job_p != nullptr) {
    const Json& job = **job_p;
    for (const char* k : {"engine", "precision", "method", "currency", "optimizer", "framework"}) {
      if (auto st = Ident(job, k, "job"); !st) return st;
    }
    if (auto st = Text(job, "model", "job", kMaxNameBytes); !st) return st;
    if (auto st = Text(job, "model_ref", "job", 4096); !st) return st;
    for (const auto& [k, hi] : {std::pair<const char*, double>{"seq_len", kMaxSeqLen},
                                {"global_batch", kMaxGlobalBatch},
                                {"input_len", kMaxSeqLen},
                                {"output_len", kMaxSeqLen},
                                {"qps", kMaxQps},
                                {"checkpoint_interval_hours", kMaxHours}}) {
      if (auto st = Count(job, k, "job", hi); !st) return st;
    }
  }
  auto plans_p = GetArray(doc, "plans", "");
  if (!plans_p) return plans_p.error();
  if (*plans_p == nullptr) return {};
  const Json* plans = *plans_p;
  if (plans->size() > 100000) {
    return MakeError(ErrorCode::kInvalidArgument, "plans", "more than 100000 plans");
  }
  for (std::size_t i = 0; i < plans->size(); ++i) {
    const Json& p = (*plans)[i];
    const std::string path = fmt::format("plans[{}]", i);
    for (const char* k : {"cloud", "currency"}) {
      if (auto st = Ident(p, k, path); !st) return st;
    }
    for (const char* k : {"region", "instance_type", "accelerator", "cpu"}) {
      if (auto st = Name(p, k, path); !st) return st;
    }
    for (const auto& [k, hi] : {std::pair<const char*, double>{"nodes", kMaxNodes},
                                {"gpus_per_node", 1024},
                                {"gpus_per_replica", 1024},
                                {"replicas", 1e6},
                                {"instances", 1e6},
                                {"batch", kMaxBatch},
                                {"kv_tokens_per_replica", 1e15}}) {
      if (auto st = Count(p, k, path, hi); !st) return st;
    }
    auto layout = GetObject(p, "layout", path);
    if (!layout) return layout.error();
    if (const Json* l = *layout) {
      if (auto st = Ident(*l, "recompute", path + ".layout"); !st) return st;
      for (const char* k : {"tp", "pp", "dp", "cp", "ep", "vpp"}) {
        if (auto st = Count(*l, k, path + ".layout", kMaxParallel); !st) return st;
      }
      for (const char* k : {"micro_batch", "num_microbatches"}) {
        if (auto st = Count(*l, k, path + ".layout", kMaxBatch); !st) return st;
      }
    }
    auto host = GetObject(p, "host", path);
    if (!host) return host.error();
    if (const Json* h = *host) {
      if (auto st = Count(*h, "cpu_cores", path + ".host", 1e5); !st) return st;
    }
  }
  return {};
}

}  // namespace gpuplan::internal
