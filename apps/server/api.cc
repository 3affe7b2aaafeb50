// Route dispatch, request helpers, and the planning routes: plan train, plan infer, tco, memory.
#include <algorithm>
#include <climits>
#include <fmt/format.h>
#include <map>
#include <regex>

#include "api_internal.h"
#include "gpuplan/documents.h"
#include "gpuplan/input.h"
#include "gpuplan/job.h"
#include "gpuplan/job_checks.h"
#include "gpuplan/memory_fit.h"
#include "gpuplan/plan_document.h"
#include "gpuplan/planner.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/tco.h"
#include "io/json_fields.h"

namespace gpuplan::server {

namespace internal {

Result<json> ParseBody(std::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return MakeError(ErrorCode::kParse, "body", "is not valid JSON",
                     "send a JSON object with Content-Type: application/json");
  }
  if (!j.is_object()) {
    return MakeError(ErrorCode::kParse, "body",
                     std::string("must be a JSON object, got ") + j.type_name(),
                     "wrap the job in {...}");
  }
  return j;
}

ApiResponse Ok(const json& doc) {
  return {200, doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n"};
}

ApiResponse Bad(const Error& e) {
  // The job readers name "request:LINE:path"; the API's field is the path into the JSON body.
  Error out = e;
  static const std::regex kLabel(R"(^request(:\d+)*:)");
  out.field = std::regex_replace(out.field, kLabel, "");
  return {400, ErrorJson(out)};
}

Result<ModelSpec> RequestModel(json& j, const char* key, const std::string& field) {
  if (auto it = j.find("model_config"); it != j.end()) {
    std::string text = it->is_string() ? it->get<std::string>() : it->dump();
    if (!it->is_object() && !it->is_string()) {
      return MakeError(ErrorCode::kInvalidArgument, "model_config",
                       std::string("must be a config.json object, got ") + it->type_name());
    }
    j.erase(it);
    auto m = ParseHfConfig(text, "model_config");
    if (!m) return m.error();
    return m;
  }
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return MakeError(
        ErrorCode::kInvalidArgument, field, "is missing",
        "give a preset name (`gpuplan models`) or paste a config.json as model_config");
  }
  if (!it->is_string()) {
    return MakeError(
        ErrorCode::kInvalidArgument, field,
        std::string("must be a preset name, got ") + gpuplan::internal::JsonTypeName(*it),
        "give a preset name as a string (`gpuplan models`), or paste a config.json "
        "as model_config");
  }
  const std::string name = it->get<std::string>();
  const ModelSpec* p = FindPreset(name);
  if (p == nullptr) {
    // Presets only: resolving a path would make the server read its own file system.
    Error e =
        MakeError(ErrorCode::kNotFound, field,
                  "unknown preset " + Excerpt(name) + " (the API reads no files)",
                  "give a preset name (`gpuplan models`) or paste a config.json as model_config");
    return e;
  }
  return *p;
}

bool QueryFlag(std::string_view query, std::string_view name) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string_view::npos) end = query.size();
    std::string_view kv = query.substr(pos, end - pos);
    if (kv == name || kv == std::string(name) + "=1" || kv == std::string(name) + "=true")
      return true;
    pos = end + 1;
  }
  return false;
}

Error ServeFieldOfFlag(Error e) {
  const size_t bracket = e.field.find('[');  // "--clouds[1]": the flag --clouds, item 1
  if (std::string_view key = ServeFileKeyOfFlag(std::string_view(e.field).substr(0, bracket));
      !key.empty()) {
    e.field = std::string(key) + (bracket == std::string::npos ? "" : e.field.substr(bracket));
  } else if (e.field == "--years" || e.field == "--profile") {
    e.field = e.field.substr(2);
  }
  return e;
}

namespace {

// A serving job body (docs/serve-yaml.md schema as JSON) -> the library's ServeJobSpec.
// `extra` keys are API options of the route, removed before the job file reader sees the body.
Result<ServeJobSpec> ServeJobOfBody(const ApiContext& ctx, json& j) {
  std::optional<ModelSpec> pasted;
  if (j.contains("model_config")) {
    auto m = RequestModel(j, "model", "model");
    if (!m) return m.error();
    pasted = std::move(*m);
    if (!j.contains("model")) j["model"] = pasted->name;
  } else {
    auto m = RequestModel(j, "model", "model");
    if (!m) return m.error();
  }
  auto f = ParseServeJobYaml(j.dump(1), "request");
  if (!f) return f.error();
  ServeRequest r;
  MergeServeJobFile(r, *f);
  auto job = BuildServeJob(r, ctx.currency, pasted ? &*pasted : nullptr);
  if (!job) return ServeFieldOfFlag(job.error());
  return job;
}

// Removes and returns j[key] (null when absent).
json Take(json& j, const char* key) {
  json v;
  if (auto it = j.find(key); it != j.end()) {
    v = std::move(*it);
    j.erase(it);
  }
  return v;
}

}  // namespace

ApiResponse PlanTrain(const ApiContext& ctx, std::string_view query, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  if (j->contains("model_config")) {
    return Bad(MakeError(
        ErrorCode::kUnsupported, "model_config",
        "a pasted config.json is not yet supported for training jobs over the API "
        "(the job reader resolves `model` itself)",
        "give a preset name, or run `gpuplan plan train -f job.yaml` with a config.json path"));
  }
  if (auto m = RequestModel(*j, "model", "model"); !m) return Bad(m.error());
  // The body text itself goes to the job reader (YAML is a superset of JSON), so errors carry
  // the body's line numbers.
  auto job = ParseTrainJobYaml(body, "request");
  if (!job) return Bad(job.error());
  TrainJobFields fields;
  fields.method = "train.method";
  fields.tokens = "train.data.tokens";
  if (auto st = FinalizeTrainJob(*job, InputSource::kYaml, "request", fields); !st)
    return Bad(st.error());
  if (ctx.currency != "USD") {  // the server's --currency, as the CLI's global --currency
    auto c = ParseCurrency(ctx.currency);
    if (c) job->currency = *c;
  }
  const Calibration& cal = DefaultCalibration();
  auto res = PlanTraining(*job, ctx.catalog, cal, ctx.cny_per_usd);
  if (!res) return Bad(res.error());
  return Ok(TrainPlanDocument(*job, *res, ctx.catalog, cal, QueryFlag(query, "explain")));
}

ApiResponse PlanInfer(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  const std::string model_arg =
      j->contains("model") && (*j)["model"].is_string() ? (*j)["model"].get<std::string>() : "";
  auto job = ServeJobOfBody(ctx, *j);
  if (!job) return Bad(job.error());
  auto res = PlanServing(*job, ctx.catalog, DefaultCalibration(), ctx.cny_per_usd);
  if (!res) return Bad(ServeFieldOfFlag(res.error()));
  return Ok(ServePlanDocument(*job, model_arg, *res));
}

ApiResponse Tco(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  TcoRequest req;
  json years = Take(*j, "years");
  json profile = Take(*j, "profile");
  if (!years.is_null()) {
    if (!years.is_number()) {
      return Bad(MakeError(ErrorCode::kInvalidArgument, "years",
                           "must be a number, got " + gpuplan::internal::JsonTypeName(years),
                           "give the years to cost over as a number, e.g. \"years\": 3"));
    }
    req.years = years.get<double>();
  }
  if (auto st = CheckTcoYears(req.years, "years"); !st) return Bad(st.error());
  if (!profile.is_null()) {
    if (!profile.is_array()) {
      return Bad(
          MakeError(ErrorCode::kInvalidArgument, "profile", "must be a list of 24 loads (req/s)"));
    }
    for (size_t i = 0; i < profile.size(); ++i) {
      if (!profile[i].is_number() || !(profile[i].get<double>() >= 0)) {
        return Bad(MakeError(ErrorCode::kInvalidArgument, fmt::format("profile[{}]", i),
                             "must be a load >= 0 (req/s)"));
      }
      req.profile.push_back(profile[i].get<double>());
    }
    if (req.profile.size() != 24) {
      return Bad(MakeError(ErrorCode::kInvalidArgument, "profile",
                           fmt::format("needs 24 hourly loads, got {}", req.profile.size())));
    }
  }
  auto job = ServeJobOfBody(ctx, *j);
  if (!job) return Bad(job.error());
  auto r = PlanTco(*job, ctx.catalog, req, ctx.cny_per_usd);
  if (!r) return Bad(ServeFieldOfFlag(r.error()));
  return Ok(TcoDocument(*job, ctx.catalog, req, *r));
}

ApiResponse Memory(const ApiContext& ctx, std::string_view, std::string_view body) {
  auto j = ParseBody(body);
  if (!j) return Bad(j.error());
  auto model = RequestModel(*j, "model", "model");
  if (!model) return Bad(model.error());
  MemoryRequest r;
  // Body keys are the `gpuplan memory` flags with '_' for '-' (docs/api.md).
  enum Kind { kBool, kInt, kNum, kStr };
  struct Key {
    const char* name;
    Kind kind;
    void* dst;
  };
  const Key keys[] = {{"train", kBool, &r.train},
                      {"infer", kBool, &r.infer},
                      {"method", kStr, &r.method},
                      {"precision", kStr, &r.precision},
                      {"optimizer", kStr, &r.optimizer},
                      {"guide_b4", kBool, &r.guide_b4},
                      {"optimizer_states", kStr, &r.optimizer_states},
                      {"batch", kInt, &r.batch},
                      {"seq_len", kInt, &r.seq_len},
                      {"zero", kInt, &r.zero},
                      {"fsdp", kStr, &r.fsdp},
                      {"tp", kInt, &r.tp},
                      {"pp", kInt, &r.pp},
                      {"cp", kInt, &r.cp},
                      {"ep", kInt, &r.ep},
                      {"sequence_parallel", kBool, &r.sequence_parallel},
                      {"recompute", kStr, &r.recompute},
                      {"lora_rank", kInt, &r.lora_rank},
                      {"lora_targets", kStr, &r.lora_targets},
                      {"grad_accum", kInt, &r.grad_accum},
                      {"quant", kStr, &r.quant},
                      {"kv_precision", kStr, &r.kv_precision},
                      {"context", kInt, &r.context},
                      {"concurrency", kInt, &r.concurrency},
                      {"engine", kStr, &r.engine},
                      {"gpu_memory_utilization", kNum, &r.gpu_memory_utilization},
                      {"gpu", kStr, &r.gpu},
                      {"gpus", kInt, &r.gpus},
                      {"headroom", kNum, &r.headroom}};
  for (const auto& [k, v] : j->items()) {
    if (k == "model") continue;
    const Key* key = nullptr;
    for (const auto& c : keys) {
      if (k == c.name) key = &c;
    }
    if (key == nullptr) {
      return Bad(
          MakeError(ErrorCode::kInvalidArgument, FieldKey(k), "unknown key",
                    "see docs/api.md (/v1/memory): the `gpuplan memory` flags with _ for -"));
    }
    // The shared getters (io/json_fields.h): a wrong type is an error naming the key.
    Status st;
    if (key->kind == kBool) {
      st = Into(gpuplan::internal::GetBool(*j, k, ""), *static_cast<bool*>(key->dst));
    } else if (key->kind == kInt) {
      st = Into(gpuplan::internal::GetIntIn(*j, k, "", INT_MIN, INT_MAX),
                *static_cast<int*>(key->dst));
    } else if (key->kind == kNum) {
      st = Into(gpuplan::internal::GetNumber(*j, k, ""), *static_cast<double*>(key->dst));
    } else {
      st = Into(gpuplan::internal::GetString(*j, k, ""), *static_cast<std::string*>(key->dst));
    }
    if (!st) return Bad(st.error());
  }
  r.tp_given = j->contains("tp");
  r.context_given = j->contains("context");
  auto key_of = [](std::string_view flag) {  // "--seq-len" -> "seq_len"
    std::string k(flag.substr(2));
    std::replace(k.begin(), k.end(), '-', '_');
    return k;
  };
  if (auto wrong = MemoryFlagOfOtherMode(
          r, [&](std::string_view flag) { return j->contains(key_of(flag)); })) {
    Error e = *wrong;
    e.field = key_of(e.field);
    return Bad(e);
  }
  auto cur = ParseCurrency(ctx.currency);
  if (!cur)
    return Bad(
        MakeError(ErrorCode::kInvalidArgument, "currency", "unknown currency " + ctx.currency));
  auto an = AnalyzeMemory(r, *model, ctx.catalog, *cur, ctx.cny_per_usd);
  if (!an) {
    Error e = an.error();
    if (e.field.rfind("--", 0) == 0) {  // the flag -> the body key
      e.field = e.field.substr(2);
      std::replace(e.field.begin(), e.field.end(), '-', '_');
    }
    return Bad(e);
  }
  return Ok(MemoryDocument(*an));
}

}  // namespace internal

std::string ErrorJson(const Error& e) {
  nlohmann::json j = {{"code", ErrorCodeName(e.code)},
                      {"field", e.field},
                      {"message", e.message},
                      {"hint", e.hint}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ModelsJson() {
  nlohmann::json j = {{"models", nlohmann::json::array()}};
  for (const auto& m : Presets()) {
    j["models"].push_back(
        {{"name", m.name}, {"arch", ModelArchName(m.arch)}, {"params", CountParams(m).total}});
  }
  return j.dump(1) + "\n";
}

std::string AcceleratorsJson(const ApiContext& ctx) {
  nlohmann::json j = {{"accelerators", nlohmann::json::array()}};
  for (const auto& a : ctx.catalog.accelerators) {
    j["accelerators"].push_back(
        {{"id", a.id}, {"memory_bytes", a.memory.value()}, {"usable_bytes", a.Usable().value()}});
  }
  return j.dump(1) + "\n";
}

const std::vector<std::string>& ApiRoutes() {
  static const std::vector<std::string> k = {"/v1/plan/train", "/v1/plan/infer", "/v1/tco",
                                             "/v1/memory",     "/v1/check",      "/v1/emit",
                                             "/v1/validate",   "/v1/simulate"};
  return k;
}

ApiResponse HandleApi(const ApiContext& ctx, std::string_view route, std::string_view query,
                      std::string_view body) {
  using Handler = ApiResponse (*)(const ApiContext&, std::string_view, std::string_view);
  static const std::map<std::string, Handler, std::less<>> kRoutes = {
      {"/v1/plan/train", internal::PlanTrain},
      {"/v1/plan/infer", internal::PlanInfer},
      {"/v1/tco", internal::Tco},
      {"/v1/memory", internal::Memory},
      {"/v1/check", internal::Check},
      {"/v1/emit", internal::EmitFiles},
      {"/v1/validate", internal::Validate},
      {"/v1/simulate", internal::SimulateDay}};
  auto it = kRoutes.find(route);
  if (it == kRoutes.end()) {
    return {404,
            ErrorJson(MakeError(ErrorCode::kNotFound, "path", "no route " + Excerpt(route),
                                "POST one of /v1/plan/train, /v1/plan/infer, /v1/tco, /v1/memory, "
                                "/v1/check, /v1/emit, /v1/validate, /v1/simulate"))};
  }
  return it->second(ctx, query, body);
}

}  // namespace gpuplan::server
