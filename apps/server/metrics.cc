#include "metrics.h"

#include <fmt/format.h>

namespace gpuplan::server {

void Metrics::Record(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, status}];
  Histogram& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++h.le[i];
      break;
    }
  }
  ++h.count;
  h.sum += seconds;
  if (status >= 400) ++errors_;
}

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string s;
  s += "# HELP gpuplan_http_requests_total HTTP requests by route and status code.\n";
  s += "# TYPE gpuplan_http_requests_total counter\n";
  for (const auto& [k, n] : requests_) {
    s += fmt::format("gpuplan_http_requests_total{{route=\"{}\",code=\"{}\"}} {}\n", k.first,
                     k.second, n);
  }
  s += "# HELP gpuplan_http_errors_total HTTP responses with a status >= 400.\n";
  s += "# TYPE gpuplan_http_errors_total counter\n";
  s += fmt::format("gpuplan_http_errors_total {}\n", errors_);
  s += "# HELP gpuplan_http_request_duration_seconds Time from request parsed to response built.\n";
  s += "# TYPE gpuplan_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    long long cum = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cum += h.le[i];
      s +=
          fmt::format("gpuplan_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n",
                      route, kBuckets[i], cum);
    }
    s +=
        fmt::format("gpuplan_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n",
                    route, h.count);
    s += fmt::format("gpuplan_http_request_duration_seconds_sum{{route=\"{}\"}} {:.6f}\n", route,
                     h.sum);
    s += fmt::format("gpuplan_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", route,
                     h.count);
  }
  return s;
}

}  // namespace gpuplan::server
