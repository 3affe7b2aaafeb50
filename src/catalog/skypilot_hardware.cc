// SkyPilot names -> gpuplan hardware (see skypilot_internal.h).
#include "catalog/skypilot_internal.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "io/csv.h"

namespace gpuplan::skypilot_internal {

using internal::ToLower;

namespace {

// A GpuInfo memory size this far from the matched accelerator's picks another variant.
constexpr double kMemoryMismatch = 0.10;

// "A100-80GB" -> "a100", "H100-MEGA" -> "h100": the family part of a SkyPilot name.
std::string BaseName(std::string_view name) {
  std::string lower = ToLower(name);
  size_t cut = lower.find_first_of("-_ ");
  return cut == std::string::npos ? lower : lower.substr(0, cut);
}

// Whether `name` (an id or alias) belongs to family `base`: "a100-sxm4-80gb" does for "a100",
// "a100x" and "a10g" do not for "a10".
bool InFamily(std::string_view name, const std::string& base) {
  std::string lower = ToLower(name);
  if (!StartsWith(lower, base)) return false;
  if (lower.size() == base.size()) return true;
  char next = lower[base.size()];
  return next == '-' || next == '_' || next == ' ';
}

bool IsPcie(const Accelerator& a) {
  return ToLower(a.form_factor) == "pcie" || Contains(ToLower(a.id), "pcie");
}

bool MemoryMatches(const Accelerator& a, double mib) {
  double want = MiB(mib).value();
  return std::abs(a.memory.value() - want) <= kMemoryMismatch * want;
}

// Maps a SkyPilot accelerator name to a catalog accelerator, or nullptr when unknown.
// `memory_mib` (from GpuInfo) and a "pcie" in the instance type's name pick the right variant
// when SkyPilot's name is shared by several devices (SkyPilot's "A100" is both 40 and 80 GB).

}  // namespace

// The first `'SizeInMiB': N` of a GpuInfo cell, or empty. GpuInfo is a Python literal such as
// {'Gpus': [{'Name': 'A100', ..., 'MemoryInfo': {'SizeInMiB': 40960}}], ...}; some clouds put a
// bare accelerator name there instead. A cell we cannot read is treated as absent: the column
// is informational and never worth failing an import over.
std::optional<double> GpuInfoMemoryMiB(std::string_view info) {
  constexpr std::string_view kKey = "SizeInMiB";
  size_t pos = info.find(kKey);
  if (pos == std::string_view::npos) return std::nullopt;
  pos += kKey.size();
  while (pos < info.size() &&
         (info[pos] == '\'' || info[pos] == '"' || info[pos] == ':' || info[pos] == ' ')) {
    ++pos;
  }
  size_t end = pos;
  while (end < info.size() &&
         (std::isdigit(static_cast<unsigned char>(info[end])) || info[end] == '.')) {
    ++end;
  }
  auto v = internal::ParseDouble(info.substr(pos, end - pos));
  if (!v || *v <= 0) return std::nullopt;
  return v;
}

const Accelerator* AcceleratorResolver::Find(const std::string& name,
                                             std::optional<double> memory_mib,
                                             bool pcie_hint) const {
  const Accelerator* match = catalog_.FindAccelerator(name);
  if (!match) return nullptr;
  bool memory_ok = !memory_mib || MemoryMatches(*match, *memory_mib);
  bool form_ok = !pcie_hint || IsPcie(*match);
  if (memory_ok && form_ok) return match;
  // Look for a sibling: same family name, memory as GpuInfo says, and the form factor the
  // instance name says (else the same form factor as the first match). First in table order.
  const std::string base = BaseName(name);
  const Accelerator* best = nullptr;
  int best_score = -1;
  for (const auto& a : catalog_.accelerators) {
    bool family = InFamily(a.id, base);
    for (const auto& al : a.aliases) family = family || InFamily(al, base);
    if (!family) continue;
    if (memory_mib && !MemoryMatches(a, *memory_mib)) continue;
    int score = 0;
    if (pcie_hint ? IsPcie(a) : IsPcie(a) == IsPcie(*match)) score += 2;
    if (a.vendor == match->vendor) score += 1;
    if (score > best_score) {
      best = &a;
      best_score = score;
    }
  }
  // Memory is the stronger evidence: a sibling that fits it wins even with another form
  // factor. A form-factor hint alone never overrides a memory-consistent first match unless a
  // sibling satisfies both.
  if (best && (!memory_ok || (pcie_hint && IsPcie(*best)))) return best;
  return match;
}

// How the accelerators inside one instance talk to each other. SkyPilot does not say; it is
// implied by the device's form factor and count.
IntraNodeLink IntraLinkFor(const Accelerator& a, int count) {
  // One device has no peer to talk to.
  if (count <= 1) return IntraNodeLink::kNone;
  const std::string link = ToLower(a.intra_link);
  const std::string form = ToLower(a.form_factor);
  // AMD OAM boards (MI300X, MI355X) connect all devices with Infinity Fabric (xGMI).
  if (StartsWith(link, "infinity")) return IntraNodeLink::kInfinityFabric;
  // Inferentia/Trainium instances link their chips with NeuronLink.
  if (StartsWith(link, "neuronlink")) return IntraNodeLink::kNeuronLink;
  // TPU chips of a host are joined by ICI.
  if (link == "ici") return IntraNodeLink::kIci;
  // Gaudi's on-chip RoCE ports have no enum value; pcie is the conservative choice.
  if (StartsWith(link, "gaudi")) return IntraNodeLink::kPcie;
  bool module =
      form == "sxm" || form == "oam" || form == "superchip" || Contains(ToLower(a.id), "sxm");
  if (module) {
    // Two modules of a board (or a slice of one) talk over direct NVLink.
    if (count == 2) return IntraNodeLink::kNvlink;
    // V100 boards (HGX-1: AWS p3/p3dn) are an NVLink hybrid cube-mesh without NVSwitch.
    if (link == "nvlink2") return IntraNodeLink::kNvlink;
    // HGX A100/H100/H200/B200 boards, and cloud slices of them, route through NVSwitch.
    if (count >= 4) return IntraNodeLink::kNvswitch;
    return IntraNodeLink::kNvlink;
  }
  // PCIe cards: SkyPilot does not say whether bridges are fitted, so assume PCIe peer traffic.
  return IntraNodeLink::kPcie;
}

// The scale-out fabric of an instance type, by the cloud's documentation of the family.
InterNodeFabric FabricFor(std::string_view cloud, std::string_view type) {
  if (cloud == "aws") {
    // EFA is attached to the P3dn, P4d/P4de, P5/P5e/P5en and P6 families (AWS EFA docs,
    // "supported instance types"); p3.* and the G families have none.
    for (std::string_view p : {"p3dn.", "p4d.", "p4de.", "p5.", "p5e.", "p5en.", "p6-"}) {
      if (StartsWith(type, p)) return InterNodeFabric::kEfa;
    }
    return InterNodeFabric::kNone;
  }
  if (cloud == "gcp") {
    // A3 Ultra and A4 use GPUDirect RDMA over RoCE (ConnectX-7 NICs), per GCP's GPU network docs.
    if (StartsWith(type, "a3-ultragpu-8g") || StartsWith(type, "a4-highgpu-8g")) {
      return InterNodeFabric::kRoce;
    }
    // The 8-GPU A3 High/Edge shapes use GPUDirect-TCPX and A3 Mega its successor TCPXO; the enum
    // has one value for both. Smaller A3 High slices get the ordinary VM NIC.
    if (StartsWith(type, "a3-highgpu-8g") || StartsWith(type, "a3-edgegpu-8g") ||
        StartsWith(type, "a3-megagpu-8g")) {
      return InterNodeFabric::kGpuDirectTcpx;
    }
    return InterNodeFabric::kNone;
  }
  return InterNodeFabric::kNone;
}

bool MarketplaceCloud(std::string_view cloud) {
  // Vast.ai rents out hosts' machines at prices the hosts set; SkyPilot's vast catalog is a
  // snapshot of those offers.
  return cloud == "vast";
}

// ---- GCP host families ------------------------------------------------------------------------

// Parses "<N>g" or "<N>g-nolssd" (the tail of "a3-highgpu-8g-nolssd").
std::optional<int> GpuSuffixCount(std::string_view tail) {
  if (tail.size() >= 7 && tail.substr(tail.size() - 7) == "-nolssd") {
    tail.remove_suffix(7);
  }
  if (tail.size() < 2 || tail.back() != 'g') return std::nullopt;
  auto n = internal::ParseDouble(tail.substr(0, tail.size() - 1));
  if (!n || *n < 1 || *n > 64 || *n != std::floor(*n)) return std::nullopt;
  return static_cast<int>(*n);
}

// Host families with a fixed accelerator. The mapping is SkyPilot's own (gcp_catalog.py
// `_ACC_INSTANCE_TYPE_DICTS`): A100 40 GB on a2-highgpu/megagpu, A100 80 GB on a2-ultragpu,
// H100 on a3-highgpu/edgegpu, H100 Mega on a3-megagpu, H200 on a3-ultragpu, B200 on a4.
std::optional<HostAccelerator> FixedHostAccelerator(std::string_view type) {
  struct Family {
    std::string_view prefix;
    std::string_view sky_name;
  };
  static constexpr Family kFamilies[] = {
      {"a2-highgpu-", "a100"},  {"a2-megagpu-", "a100"}, {"a2-ultragpu-", "a100-80gb"},
      {"a3-highgpu-", "h100"},  {"a3-edgegpu-", "h100"}, {"a3-megagpu-", "h100-mega"},
      {"a3-ultragpu-", "h200"}, {"a4-highgpu-", "b200"},
  };
  for (const auto& f : kFamilies) {
    if (!StartsWith(type, f.prefix)) continue;
    auto n = GpuSuffixCount(type.substr(f.prefix.size()));
    if (!n) return std::nullopt;
    return HostAccelerator{std::string(f.sky_name), *n};
  }
  // G2: the L4 count is fixed per shape (GCP "G2 machine series" table).
  if (StartsWith(type, "g2-standard-")) {
    static constexpr std::pair<std::string_view, int> kG2[] = {
        {"4", 1}, {"8", 1}, {"12", 1}, {"16", 1}, {"24", 2}, {"32", 1}, {"48", 4}, {"96", 8}};
    std::string_view size = type.substr(12);
    for (const auto& [s, n] : kG2) {
      if (size == s) return HostAccelerator{"l4", n};
    }
  }
  return std::nullopt;
}

bool IsGpuOnlyFamily(std::string_view type) {
  for (std::string_view p : {"a2-", "a3-", "a4-", "g2-"}) {
    if (StartsWith(type, p)) return true;
  }
  return false;
}

}  // namespace gpuplan::skypilot_internal
