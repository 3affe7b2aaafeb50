// Private to src/estimate: many calibration values in one pass over the table
// (calibration_lookup.cc), for the estimators that resolve their constants once per hardware
// shape (StepConstants::From, DeviceFromAccelerator, DeviceFromCpu).
#pragma once

#include <cstddef>
#include <string_view>

#include "gpuplan/perf.h"

namespace gpuplan::internal {

struct CalKey {
  std::string_view key;
  double fallback = 0;
};

// out[i] = cal.Get(keys[i].key, keys[i].fallback) for i < n, with the same first-match rule,
// but one scan of the entries for all n keys (Get scans them once per key). No allocation.
void GetAll(const Calibration& cal, const CalKey* keys, double* out, std::size_t n);

template <std::size_t N>
void GetAll(const Calibration& cal, const CalKey (&keys)[N], double (&out)[N]) {
  GetAll(cal, keys, out, N);
}

}  // namespace gpuplan::internal
