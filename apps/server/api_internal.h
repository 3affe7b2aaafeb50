// Helpers shared by the route handlers (api.cc, api_tools.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api.h"
#include "gpuplan/model.h"

namespace gpuplan::server::internal {

using nlohmann::json;

// The body as a JSON object; a parse error or another type is a kParse Error on field "body".
Result<json> ParseBody(std::string_view body);

// A 200 response with `doc`; invalid UTF-8 from inputs becomes U+FFFD.
ApiResponse Ok(const json& doc);
// A 400 response with `e`.
ApiResponse Bad(const Error& e);

// The model of a request: `model_config` (a pasted Hugging Face config.json, an object or its
// text) when present, else `j[key]` which must name a preset: the API reads no files, so a path
// is an error naming `field`. Erases `model_config` from `j`.
Result<ModelSpec> RequestModel(json& j, const char* key, const std::string& field);

// A shared getter's value (io/json_fields.h) into `dst`: absent leaves `dst` as it is, a wrong
// type is the getter's Error naming the field.
template <class T>
Status Into(Result<std::optional<T>> v, T& dst) {
  if (!v) return v.error();
  if (*v) dst = std::move(**v);
  return {};
}

// Does `query` ("a=1&explain=1") set `name` to 1/true?
bool QueryFlag(std::string_view query, std::string_view name);

// Renames a CLI flag in `e.field` ("--qps") to the serving job file's path ("serve.qps").
Error ServeFieldOfFlag(Error e);

// Route handlers.
ApiResponse PlanTrain(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse PlanInfer(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse Tco(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse Memory(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse Check(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse EmitFiles(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse Validate(const ApiContext& ctx, std::string_view query, std::string_view body);
ApiResponse SimulateDay(const ApiContext& ctx, std::string_view query, std::string_view body);

}  // namespace gpuplan::server::internal
