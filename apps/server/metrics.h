// Request counters and latency histograms for /metrics (Prometheus text exposition format
// 0.0.4). Thread-safe; one instance per server.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace gpuplan::server {

class Metrics {
 public:
  // Upper bounds of the latency histogram buckets, seconds (+Inf is implied).
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

  // Records one request to `route` answered with `status` after `seconds`.
  void Record(const std::string& route, int status, double seconds);
  // Everything recorded so far as Prometheus text.
  std::string Render() const;

 private:
  struct Histogram {
    std::array<long long, kBuckets.size()> le{};  // counts per bucket (not cumulative)
    long long count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, long long> requests_;  // (route, status) -> count
  std::map<std::string, Histogram> latency_;                   // route -> histogram
  long long errors_ = 0;                                       // status >= 400
};

}  // namespace gpuplan::server
