// Simulation options: policy names, the options' ranges and the cold-start estimate.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <string>
#include <utility>

#include "gpuplan/simulate.h"
#include "simulate/simulate_internal.h"

namespace gpuplan {

const char* ScalingPolicyName(ScalingPolicyKind k) {
  switch (k) {
    case ScalingPolicyKind::kHpa:
      return "hpa";
    case ScalingPolicyKind::kKpa:
      return "kpa";
    case ScalingPolicyKind::kSaturation:
      return "saturation";
    case ScalingPolicyKind::kSchedule:
      return "schedule";
    case ScalingPolicyKind::kStatic:
      return "static";
  }
  return "hpa";
}

std::optional<ScalingPolicyKind> ParseScalingPolicy(std::string_view s) {
  for (auto k : {ScalingPolicyKind::kHpa, ScalingPolicyKind::kKpa, ScalingPolicyKind::kSaturation,
                 ScalingPolicyKind::kSchedule, ScalingPolicyKind::kStatic}) {
    if (s == ScalingPolicyName(k)) return k;
  }
  return std::nullopt;
}

ColdStart EstimateColdStart(const InstanceType& inst, double weight_bytes,
                            const ColdStartOptions& o) {
  ColdStart c;
  c.node_s = o.node_provision_s;
  const double net = inst.network.value() > 0 ? inst.network.value() / 8.0
                                              : o.unknown_network_bytes_per_s;  // bytes/s
  c.image_s = o.image_bytes / (net * o.pull_efficiency);
  const double disk =
      inst.local_nvme.value() > 0 ? o.nvme_read_bytes_per_s : o.network_disk_bytes_per_s;
  // Weights stream from object storage over the network to the disk, then into device memory:
  // the slower of the two paths bounds the load.
  c.weights_s = weight_bytes / std::min(net, disk);
  return c;
}

namespace simulate_internal {

Status CheckOptions(const SimulationOptions& o) {
  auto bad = [](const char* f, std::string m, std::string hint = {}) {
    return MakeError(ErrorCode::kInvalidArgument, f, std::move(m), std::move(hint));
  };
  if (o.policies.empty())
    return bad("--policy", "no policy given", "use hpa, kpa, saturation, schedule or static");
  if (o.min_replicas < 0)
    return bad("--min-replicas", fmt::format("must be >= 0, got {}", o.min_replicas));
  if (o.max_replicas < 0 || o.max_replicas > 100000)
    return bad("--max-replicas", fmt::format("must be in [0, 100000], got {}", o.max_replicas));
  if (o.min_replicas > 100000)
    return bad("--min-replicas", fmt::format("must be at most 100000, got {}", o.min_replicas));
  if (o.max_replicas > 0 && o.max_replicas < std::max(1, o.min_replicas)) {
    return bad("--max-replicas", fmt::format("must be >= --min-replicas ({}), got {}",
                                             o.min_replicas, o.max_replicas));
  }
  if (!(o.tolerance >= 0 && o.tolerance < 1))
    return bad("--tolerance", fmt::format("must be in [0, 1), got {}", o.tolerance));
  if (o.hpa_sync_s < 1 || o.kpa_tick_s < 1 || o.sat_period_s < 1 || o.keda_polling_s < 1 ||
      o.step_s != 1) {
    return bad("--sync-s", "periods must be >= 1 s (and the step 1 s)");
  }
  if (o.keda_cooldown_s < 0)
    return bad("--cooldown-s", fmt::format("must be >= 0, got {}", o.keda_cooldown_s));
  for (const auto* rules : {&o.behavior.scale_up, &o.behavior.scale_down}) {
    if (rules->stabilization_window_s < 0 || rules->stabilization_window_s > 3600) {
      return bad("--stabilization", fmt::format("windows must be in [0, 3600] s, got {}",
                                                rules->stabilization_window_s));
    }
    for (const auto& p : rules->policies) {
      if (p.value <= 0 || p.period_s <= 0 || p.period_s > 1800) {
        return bad(
            "--behavior",
            fmt::format("a policy needs value > 0 and period in (0, 1800] s, got {} per {} s",
                        p.value, p.period_s));
      }
    }
  }
  const auto& c = o.cold_start;
  if (!(c.node_provision_s <= 86400)) {
    return bad("--node-provision-s",
               fmt::format("must be at most 86400 s (a day), got {}", c.node_provision_s));
  }
  if (!(c.image_bytes <= 1e13)) {
    return bad("--image-gb",
               fmt::format("must be at most 10000 GB, got {:g}", c.image_bytes / 1e9));
  }
  if (!(c.node_provision_s >= 0) || !(c.image_bytes >= 0) ||
      !(c.pull_efficiency > 0 && c.pull_efficiency <= 1) || !(c.nvme_read_bytes_per_s > 0) ||
      !(c.network_disk_bytes_per_s > 0) || !(c.unknown_network_bytes_per_s > 0)) {
    return bad("--node-provision-s",
               "cold-start figures must be >= 0 (bandwidths > 0, pull efficiency in (0, 1])");
  }
  return {};
}

}  // namespace simulate_internal
}  // namespace gpuplan
