// The HTTP API's routes as plain functions: request body text in, status + JSON text out. No
// HTTP library here (http_server.cc maps these onto sockets), so tests call them directly. Each
// handler is thin: parse the body -> the same library call as the CLI -> the same document the
// CLI's --json prints. Requests never touch the file system: models are presets or a pasted
// config.json (`model_config`), catalogs come from start-up flags only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"

namespace gpuplan::server {

// What every request shares, fixed at start-up: the catalog (built-in + --catalog overrides),
// the CNY/USD rate override and the default display currency.
struct ApiContext {
  Catalog catalog;
  std::optional<double> cny_per_usd;
  std::string currency = "USD";
};

struct ApiResponse {
  int status = 200;
  std::string body;  // JSON text (documents), or a JSON error {code, field, message, hint}
  std::string content_type = "application/json";
};

// The POST routes, in the order docs/api.md lists them.
const std::vector<std::string>& ApiRoutes();

// Dispatches `route` ("/v1/plan/train", ...) with `query` options ("explain=1") and `body`.
// 404 for an unknown route; 400 with the library Error for bad input; 200 with the document
// otherwise (a plan document with no plans is an answer, not an error).
ApiResponse HandleApi(const ApiContext& ctx, std::string_view route, std::string_view query,
                      std::string_view body);

// GET /v1/models: the preset names the API accepts as `model` ({"models": [{name, arch,
// params}]}); GET /v1/accelerators: the catalog's accelerators with their memory
// ({"accelerators": [{id, memory_bytes, usable_bytes}]}) for the page's capacity lines.
std::string ModelsJson();
std::string AcceleratorsJson(const ApiContext& ctx);

// An Error as the API's JSON error body.
std::string ErrorJson(const Error& e);

}  // namespace gpuplan::server
