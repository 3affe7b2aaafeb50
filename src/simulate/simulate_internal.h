// Private to src/simulate: replica pricing and counting shared by the simulator and the
// day/night planner, and the option check.
#pragma once

#include <algorithm>
#include <cmath>

#include "gpuplan/simulate.h"

namespace gpuplan::simulate_internal {

// A replica's share of its instances: 1 / replicas_per_instance of one, or `pp` whole instances
// when the replica spans nodes (multi-node serving).
inline double PricePerReplicaHour(const ServePlan& p) {
  if (!p.cost_per_hour || p.instances <= 0) return 0;
  return *p.cost_per_hour / p.instances * std::max(1, p.pp) / std::max(1, p.replicas_per_instance);
}

inline int ReplicasFor(double rps, double capacity) {
  if (!(rps > 0) || !(capacity > 0)) return 0;
  return static_cast<int>(std::ceil(rps / capacity - 1e-9));
}

// The simulation options' ranges; errors name the flag.
Status CheckOptions(const SimulationOptions& o);

}  // namespace gpuplan::simulate_internal
