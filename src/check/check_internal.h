// Private to src/check: the setup resolved against the catalog and the training shape it
// describes, shared by the setup validation (setup.cc) and the rules (rules.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/check.h"
#include "gpuplan/perf.h"
#include "gpuplan/result.h"

namespace gpuplan::check_internal {

struct Resolved {
  InstanceType inst;  // the catalog row, or one built from the custom description
  const Accelerator* acc = nullptr;
  bool custom = false;
  std::optional<double> price_usd;  // per node-hour, on demand (spot when `spot` and known)
  int gpus() const { return inst.accelerator_count; }
};

// A node-hour price in USD (spot when asked and known), or none when the catalog has none.
std::optional<double> UsdPerHour(const Catalog& cat, const InstanceType& i, bool spot);

// The catalog row (or the custom description) and the GPU a setup names, with its price.
Result<Resolved> Resolve(const Setup& s, const Catalog& cat);

// The training layout and batch of a setup on `gpus` GPUs.
struct TrainShape {
  Parallelism par;
  TrainMemoryOptions opt;
  TrainJob job;
  int accumulation = 1;
};

// The sizes that divide `n` GPUs, listed for a hint ("1, 2, 4, 8").
std::string DivisorsHint(int n);
// The training layout and batch of a setup on `gpus` GPUs; errors name the setup field.
Result<TrainShape> ShapeTraining(const SetupTraining& t, int gpus);

}  // namespace gpuplan::check_internal
