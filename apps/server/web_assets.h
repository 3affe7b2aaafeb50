// The web page's files (web/ and the vendored Chart.js), embedded at build time by
// cmake/embed_web.cmake into a generated source. Never hand-edited.
#pragma once

#include <string_view>

namespace gpuplan::server {

struct WebAsset {
  std::string_view path;          // "/", "/app.js", "/vendor/chart.min.js", ...
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

// The asset served at `path`, or nullptr.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace gpuplan::server
