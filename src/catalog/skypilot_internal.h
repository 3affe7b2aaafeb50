// Private to src/catalog: how SkyPilot's names map onto gpuplan's hardware (accelerator ids
// checked against device memory, links implied by form factor and count, fabrics by shape,
// GCP host families and their GPUs). Used by the vms.csv importer (skypilot.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "base/strings.h"
#include "gpuplan/catalog.h"

namespace gpuplan::skypilot_internal {

inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

inline bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Device memory in MiB from SkyPilot's GpuInfo cell (a Python-literal dict), if present.
std::optional<double> GpuInfoMemoryMiB(std::string_view info);

// SkyPilot accelerator name (+ GpuInfo memory, + a PCIe hint from the instance name) -> the
// catalog's accelerator, cached.
class AcceleratorResolver {
 public:
  explicit AcceleratorResolver(const Catalog& catalog) : catalog_(catalog) {}

  const Accelerator* Resolve(const std::string& name, std::optional<double> memory_mib,
                             bool pcie_hint) {
    auto key = std::make_tuple(internal::ToLower(name), memory_mib.value_or(0), pcie_hint);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const Accelerator* a = Find(name, memory_mib, pcie_hint);
    cache_.emplace(std::move(key), a);
    return a;
  }

 private:
  const Accelerator* Find(const std::string& name, std::optional<double> memory_mib,
                          bool pcie_hint) const;

  const Catalog& catalog_;
  std::map<std::tuple<std::string, double, bool>, const Accelerator*> cache_;
};

// How the accelerators inside one instance talk to each other (form factor and count).
IntraNodeLink IntraLinkFor(const Accelerator& a, int count);
// The inter-node fabric of a cloud's instance type (EFA, InfiniBand, RoCE), or none.
InterNodeFabric FabricFor(std::string_view cloud, std::string_view type);
// True for a cloud whose rows are hosts' marketplace listings (kMarketplaceFlag): vast.ai.
bool MarketplaceCloud(std::string_view cloud);

// The accelerator a GCP host VM family is built around (SkyPilot's names), or empty.
struct HostAccelerator {
  std::string sky_name;  // lower case
  int count = 0;
};
std::optional<HostAccelerator> FixedHostAccelerator(std::string_view type);
// Whether the host family exists only with its accelerators (never rented as a CPU machine).
bool IsGpuOnlyFamily(std::string_view type);

// N1 takes T4/V100/P100/P4 in the counts and up to the vCPU/RAM (GB) the GPUs allow; GCP "GPU
// machine types", N1 table (the same numbers as SkyPilot's `_NUM_ACC_TO_MAX_CPU_AND_MEMORY`).
// `gcp_type` is GCP's accelerator type, used to name the combination.
struct N1Limit {
  std::string_view sky_name;
  std::string_view gcp_type;
  int count;
  double max_vcpus;
  double max_memory;
};
inline constexpr N1Limit kN1Limits[] = {
    {"t4", "nvidia-tesla-t4", 1, 48, 312},     {"t4", "nvidia-tesla-t4", 2, 48, 312},
    {"t4", "nvidia-tesla-t4", 4, 96, 624},     {"p4", "nvidia-tesla-p4", 1, 24, 156},
    {"p4", "nvidia-tesla-p4", 2, 48, 312},     {"p4", "nvidia-tesla-p4", 4, 96, 624},
    {"p100", "nvidia-tesla-p100", 1, 16, 104}, {"p100", "nvidia-tesla-p100", 2, 32, 208},
    {"p100", "nvidia-tesla-p100", 4, 64, 208}, {"v100", "nvidia-tesla-v100", 1, 12, 78},
    {"v100", "nvidia-tesla-v100", 2, 24, 156}, {"v100", "nvidia-tesla-v100", 4, 48, 312},
    {"v100", "nvidia-tesla-v100", 8, 96, 624},
};

}  // namespace gpuplan::skypilot_internal
