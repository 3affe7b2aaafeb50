// Adapter for SkyPilot catalog `vms.csv` files (skypilot-org/skypilot-catalog, schema v6-v8).
// The upstream schema is kept as is; this file maps it onto InstanceType:
//  * columns are found by header name (their order and set differ per cloud);
//  * one row per availability zone becomes one InstanceType per region;
//  * GCP bills GPUs apart from the host VM, so GPU rows (empty InstanceType) are added to the
//    host rows of the machine families that carry them;
//  * SkyPilot accelerator names map to our ids through the catalog's aliases, checked against
//    the device memory in `GpuInfo` (a Python-literal dict, not JSON);
//  * rows with unknown accelerators and TPU rows are skipped and counted; rows without any
//    price are kept with unknown prices (so SkyPilotImportStats::skipped_no_price stays 0);
//  * SkyPilot does not record network or local disks: those stay unknown (0, local_nvme_known
//    false) and the notes say so; MergeImportedInstances fills them from built-in rows;
//  * SkyPilot files carry no date: rows take a date column when a file has one, else the date
//    the caller gives (the file's modification date), else none ("undated" in the notes).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "gpuplan/catalog.h"
#include "io/csv.h"

namespace gpuplan {
namespace {

using internal::CsvRow;
using internal::CsvTable;
using internal::RowReader;
using internal::ToLower;

// Columns that may carry a row's date in a SkyPilot-format file (upstream files have none;
// refreshed or hand-made files sometimes add one). The first present column wins.
constexpr std::string_view kDateColumns[] = {"as_of", "AsOf", "Date", "date", "UpdatedAt"};
// A GpuInfo memory size this far from the matched accelerator's picks another variant.
constexpr double kMemoryMismatch = 0.10;
constexpr char kNoNetworkNote[] = "network and local NVMe not in SkyPilot catalog";
// Two on-demand prices this close (relative) are the same quote.
constexpr double kSamePriceTolerance = 0.01;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::optional<double> MinKnown(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

std::optional<double> SumIfBoth(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

void AppendNote(std::string& notes, std::string_view note) {
  if (note.empty() || Contains(notes, note)) return;
  if (!notes.empty()) notes += "; ";
  notes += note;
}

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
class AcceleratorResolver {
 public:
  explicit AcceleratorResolver(const Catalog& catalog) : catalog_(catalog) {}

  const Accelerator* Resolve(const std::string& name, std::optional<double> memory_mib,
                             bool pcie_hint) {
    auto key = std::make_tuple(ToLower(name), memory_mib.value_or(0), pcie_hint);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const Accelerator* a = Find(name, memory_mib, pcie_hint);
    cache_.emplace(std::move(key), a);
    return a;
  }

 private:
  const Accelerator* Find(const std::string& name, std::optional<double> memory_mib,
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

  const Catalog& catalog_;
  std::map<std::tuple<std::string, double, bool>, const Accelerator*> cache_;
};

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

// ---- GCP host families ------------------------------------------------------------------------

// The accelerator a GCP host VM family is built around (SkyPilot's names), or empty.
struct HostAccelerator {
  std::string sky_name;  // lower case
  int count = 0;
};

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

// Whether the host family exists only with its accelerators (never rented as a CPU machine).
bool IsGpuOnlyFamily(std::string_view type) {
  for (std::string_view p : {"a2-", "a3-", "a4-", "g2-"}) {
    if (StartsWith(type, p)) return true;
  }
  return false;
}

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
constexpr N1Limit kN1Limits[] = {
    {"t4", "nvidia-tesla-t4", 1, 48, 312},     {"t4", "nvidia-tesla-t4", 2, 48, 312},
    {"t4", "nvidia-tesla-t4", 4, 96, 624},     {"p4", "nvidia-tesla-p4", 1, 24, 156},
    {"p4", "nvidia-tesla-p4", 2, 48, 312},     {"p4", "nvidia-tesla-p4", 4, 96, 624},
    {"p100", "nvidia-tesla-p100", 1, 16, 104}, {"p100", "nvidia-tesla-p100", 2, 32, 208},
    {"p100", "nvidia-tesla-p100", 4, 64, 208}, {"v100", "nvidia-tesla-v100", 1, 12, 78},
    {"v100", "nvidia-tesla-v100", 2, 24, 156}, {"v100", "nvidia-tesla-v100", 4, 48, 312},
    {"v100", "nvidia-tesla-v100", 8, 96, 624},
};

// ---- Rows -------------------------------------------------------------------------------------

// One data row, parsed and checked.
struct SkyRow {
  std::string instance_type;
  std::string region;
  std::string zone;
  std::string accelerator_name;  // SkyPilot's name, as written
  int accelerator_count = 0;
  bool fractional_count = false;
  int vcpus = 0;
  bool fractional_vcpus = false;
  double memory_gib = 0;
  std::optional<double> gpu_memory_mib;
  std::optional<double> price;
  std::optional<double> spot;
  std::string date;  // YYYY-MM-DD from a date column, or empty
};

// "2026-05-01", "2026-05-01T07:00:00Z" -> "2026-05-01"; anything else -> empty.
std::string DatePrefix(std::string_view cell) {
  std::string t = internal::Trim(cell);
  if (t.size() < 10 || t[4] != '-' || t[7] != '-') return "";
  for (size_t i = 0; i < 10; ++i) {
    if (i == 4 || i == 7) continue;
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return "";
  }
  if (t.size() > 10 && t[10] != 'T' && t[10] != ' ') return "";
  return t.substr(0, 10);
}

Status RequireColumn(const CsvTable& t, std::string_view column) {
  if (t.Column(column) >= 0) return {};
  return MakeError(ErrorCode::kParse, t.label + ":1:" + std::string(column),
                   "missing column \"" + std::string(column) + "\"",
                   "a SkyPilot vms.csv names InstanceType, vCPUs, MemoryGiB, Price and Region "
                   "in its header line");
}

Result<SkyRow> ReadRow(const CsvTable& table, const CsvRow& row) {
  RowReader r(table, row);
  SkyRow s;
  s.instance_type = r.Str("InstanceType");
  s.region = r.Str("Region");
  s.zone = r.Str("AvailabilityZone");
  s.accelerator_name = r.Str("AcceleratorName");
  std::optional<double> count;
  GPUPLAN_ASSIGN_OR_RETURN(count, r.OptNumber("AcceleratorCount"));
  if (!s.accelerator_name.empty()) {
    if (!count || *count <= 0) {
      return MakeError(ErrorCode::kParse, r.Where("AcceleratorCount"),
                       "must be > 0 when AcceleratorName is \"" + s.accelerator_name +
                           "\", got \"" + r.Str("AcceleratorCount") + "\"");
    }
    s.fractional_count = *count != std::floor(*count) || *count > 1e6;
    if (!s.fractional_count) s.accelerator_count = static_cast<int>(*count);
  } else if (count && *count != 0) {
    return MakeError(ErrorCode::kParse, r.Where("AcceleratorName"),
                     "empty, but AcceleratorCount is " + r.Str("AcceleratorCount"));
  }
  // vCPUs and MemoryGiB describe a machine; GCP GPU rows (no InstanceType) have neither.
  if (!s.instance_type.empty()) {
    double v = 0;
    GPUPLAN_ASSIGN_OR_RETURN(v, r.Number("vCPUs", 0.0));
    if (v > 1e6) {
      return MakeError(ErrorCode::kParse, r.Where("vCPUs"), "too large: " + r.Str("vCPUs"));
    }
    // Shared-core shapes list fractions (0.25); count them as one whole vCPU and say so.
    s.fractional_vcpus = v != std::floor(v);
    s.vcpus = static_cast<int>(std::ceil(v));
    GPUPLAN_ASSIGN_OR_RETURN(s.memory_gib, r.Number("MemoryGiB", 0.0));
  } else {
    std::optional<double> unused;
    GPUPLAN_ASSIGN_OR_RETURN(unused, r.OptNumber("vCPUs"));
    GPUPLAN_ASSIGN_OR_RETURN(unused, r.OptNumber("MemoryGiB"));
  }
  GPUPLAN_ASSIGN_OR_RETURN(s.price, r.OptNumber("Price"));
  GPUPLAN_ASSIGN_OR_RETURN(s.spot, r.OptNumber("SpotPrice"));
  s.gpu_memory_mib = GpuInfoMemoryMiB(r.Str("GpuInfo"));
  for (std::string_view col : kDateColumns) {
    if (table.Column(col) < 0) continue;
    std::string cell = r.Str(col);
    if (!cell.empty()) {
      s.date = DatePrefix(cell);
      if (s.date.empty()) {
        return MakeError(ErrorCode::kParse, r.Where(col),
                         "expected a date YYYY-MM-DD, got \"" + cell + "\"");
      }
    }
    break;
  }
  return s;
}


bool IsTpu(std::string_view sky_name) { return StartsWith(ToLower(sky_name), "tpu-"); }

// Instances being built, one per (instance type, region, accelerator, count). The key's order
// is the output order. Names already make (instance type, region) unique in SkyPilot data; the
// accelerator and count only keep two different machines from merging if a file disagrees.
using InstanceKey = std::tuple<std::string, std::string, std::string, int>;

class InstanceSet {
 public:
  // Adds one zone's row. Zone rows normally agree on the on-demand price; when they do not the
  // lowest is kept, and the spot price is the lowest over the region's zones.
  void Add(InstanceType it) {
    InstanceKey key{it.instance_type, it.region, it.accelerator, it.accelerator_count};
    auto [pos, inserted] = items_.try_emplace(std::move(key), it);
    if (inserted) return;
    InstanceType& have = pos->second;
    have.price_on_demand = MinKnown(have.price_on_demand, it.price_on_demand);
    have.price_spot = MinKnown(have.price_spot, it.price_spot);
    for (const auto& note : internal::Split(it.notes, ';')) AppendNote(have.notes, note);
  }

  void MoveTo(std::vector<InstanceType>& out) {
    for (auto& [key, it] : items_) {
      it.suspect_reason = SuspectReason(it);
      out.push_back(std::move(it));
    }
    items_.clear();
  }

  size_t size() const { return items_.size(); }

 private:
  std::map<InstanceKey, InstanceType> items_;
};

struct Importer {
  std::string cloud;
  std::string source;
  std::string as_of;  // the file's date, or empty
  AcceleratorResolver resolver;
  SkyPilotImportStats stats;
  InstanceSet instances;

  InstanceType Base(const SkyRow& row) const {
    InstanceType it;
    it.cloud = cloud;
    it.instance_type = row.instance_type;
    it.region = row.region;
    it.vcpus = row.vcpus;
    it.ram = GiB(row.memory_gib);
    // Not in SkyPilot files: local_nvme and network stay 0, inter_node_bw unknown.
    it.currency = Currency::kUsd;  // SkyPilot prices are USD per hour
    it.source = source;
    it.as_of = row.date.empty() ? as_of : row.date;
    it.notes = kNoNetworkNote;
    if (it.as_of.empty()) AppendNote(it.notes, "undated SkyPilot snapshot");
    if (row.fractional_vcpus) AppendNote(it.notes, "fractional vCPUs in SkyPilot, rounded up");
    it.inter_node_fabric = FabricFor(cloud, row.instance_type);
    return it;
  }

  void SetAccelerator(InstanceType& it, const Accelerator& a, int count,
                      const std::string& sky_name) const {
    it.accelerator = a.id;
    it.accelerator_count = count;
    it.intra_node_link = IntraLinkFor(a, count);
    if (ToLower(sky_name) != ToLower(a.id)) {
      AppendNote(it.notes, "SkyPilot accelerator \"" + sky_name + "\"");
    }
  }

  // Resolves the row's accelerator; counts and returns nullptr for rows to skip.
  const Accelerator* AcceleratorOf(const SkyRow& row, std::string_view instance_type) {
    if (IsTpu(row.accelerator_name)) {
      ++stats.tpu_rows_skipped;
      return nullptr;
    }
    // A fraction of a device (vGPU slices) is not something gpuplan can place work on.
    if (row.fractional_count) {
      ++stats.skipped_unknown_accelerator;
      return nullptr;
    }
    bool pcie_hint = Contains(ToLower(instance_type), "pcie");
    const Accelerator* a = resolver.Resolve(row.accelerator_name, row.gpu_memory_mib, pcie_hint);
    if (!a) ++stats.skipped_unknown_accelerator;
    return a;
  }

  // Clouds that sell whole instances: one row = one instance in one zone.
  void AddPlainRow(const SkyRow& row) {
    InstanceType it = Base(row);
    if (!row.accelerator_name.empty()) {
      const Accelerator* a = AcceleratorOf(row, row.instance_type);
      if (!a) return;
      SetAccelerator(it, *a, row.accelerator_count, row.accelerator_name);
    }
    // A row without any price is kept with unknown prices (never invented, never dropped):
    // it still tells what exists; skipped_no_price stays 0.
    it.price_on_demand = row.price;
    it.price_spot = row.spot;
    instances.Add(std::move(it));
  }

  // GCP: host VM rows and GPU rows are joined in the same zone (SkyPilot launches both in one
  // zone; where a file has no zones, in the same region). Price and spot are host + GPUs, each
  // unknown when either part is.
  void ImportGcp(const std::vector<SkyRow>& rows) {
    struct GpuRow {
      const SkyRow* row;
      const Accelerator* accelerator;
      bool attached = false;
    };
    // GPU rows by (region, zone, lower-case name, count).
    std::map<std::tuple<std::string, std::string, std::string, int>, std::vector<GpuRow>> gpus;
    for (const auto& row : rows) {
      if (!row.instance_type.empty()) continue;
      const Accelerator* a = AcceleratorOf(row, "");
      if (!a) continue;
      gpus[{row.region, row.zone, ToLower(row.accelerator_name), row.accelerator_count}].push_back(
          {&row, a});
    }
    // `name`: the instance's name; the host type, except for N1 where the GPUs are the user's
    // choice and the name is "<host>+<count>x<gcp accelerator type>" as in data/instances/gcp.csv
    // (so one (instance type, region) is one machine).
    auto attach = [&](const SkyRow& host, std::string_view sky_name, int count,
                      const std::string& name) {
      auto found = gpus.find({host.region, host.zone, std::string(sky_name), count});
      if (found == gpus.end()) return;
      for (auto& gpu : found->second) {
        InstanceType it = Base(host);
        it.instance_type = name;
        SetAccelerator(it, *gpu.accelerator, count, gpu.row->accelerator_name);
        AppendNote(it.notes, "price = host VM + GPU row (GCP bills them apart)");
        it.price_on_demand = SumIfBoth(host.price, gpu.row->price);
        it.price_spot = SumIfBoth(host.spot, gpu.row->spot);
        instances.Add(std::move(it));
        gpu.attached = true;
      }
    };
    for (const auto& host : rows) {
      if (host.instance_type.empty()) continue;
      if (host.accelerator_name.empty()) {
        const std::string type = ToLower(host.instance_type);
        if (auto fixed = FixedHostAccelerator(type)) {
          attach(host, fixed->sky_name, fixed->count, host.instance_type);
          continue;
        }
        // a2/a3/a4/g2 shapes outside the known table cannot be priced with their GPUs.
        if (IsGpuOnlyFamily(type)) continue;
        if (StartsWith(type, "n1-")) {
          for (const auto& lim : kN1Limits) {
            if (host.vcpus <= lim.max_vcpus && host.memory_gib <= lim.max_memory) {
              attach(host, lim.sky_name, lim.count,
                     host.instance_type + "+" + std::to_string(lim.count) + "x" +
                         std::string(lim.gcp_type));
            }
          }
        }
        AddPlainRow(host);  // the CPU-only machine itself
        continue;
      }
      // A named machine with its own accelerator (TPU VMs in older files): price is whole.
      AddPlainRow(host);
    }
    for (const auto& [key, list] : gpus) {
      for (const auto& gpu : list) {
        if (gpu.attached) ++stats.gpu_rows_attached;
      }
    }
  }
};

}  // namespace

Status ImportSkyPilotVms(Catalog& catalog, std::string_view cloud, std::string_view label,
                         std::string_view text, SkyPilotImportStats* stats,
                         std::string_view as_of) {
  const std::string cloud_id = ToLower(internal::Trim(cloud));
  if (cloud_id.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(label),
                     "no cloud given for a SkyPilot vms.csv (its rows do not name one)",
                     "write --catalog CLOUD=PATH, e.g. --catalog aws=vms.csv");
  }
  auto table = internal::ParseCsv(text, label, /*allow_comments=*/false);
  if (!table) return table.error();
  for (std::string_view col : {"InstanceType", "vCPUs", "MemoryGiB", "Price", "Region"}) {
    if (auto s = RequireColumn(*table, col); !s) return s;
  }
  std::vector<SkyRow> rows;
  rows.reserve(table->rows.size());
  for (const auto& row : table->rows) {
    auto parsed = ReadRow(*table, row);
    if (!parsed) return parsed.error();
    if (parsed->instance_type.empty() && (cloud_id != "gcp" || parsed->accelerator_name.empty())) {
      RowReader r(*table, row);
      return MakeError(ErrorCode::kParse, r.Where("InstanceType"), "must not be empty",
                       cloud_id == "gcp" ? "only GCP accelerator rows leave it empty"
                                         : "only GCP files have rows without an InstanceType");
    }
    rows.push_back(std::move(*parsed));
  }

  const std::string source = "SkyPilot catalog (" + std::string(label) + ")";
  Importer imp{cloud_id, source, std::string(as_of), AcceleratorResolver(catalog), {}, {}};
  imp.stats.rows_read = static_cast<int>(rows.size());
  if (cloud_id == "gcp") {
    imp.ImportGcp(rows);
  } else {
    for (const auto& row : rows) imp.AddPlainRow(row);
  }
  imp.stats.instances_added = static_cast<int>(imp.instances.size());
  // Appended sorted by (instance type, region): std::map iteration order, deterministic.
  imp.instances.MoveTo(catalog.instances);
  if (stats) *stats = imp.stats;
  return {};
}

int MergeImportedInstances(Catalog& catalog, std::string_view cloud,
                           std::vector<InstanceType> imported) {
  const std::string cloud_id = ToLower(cloud);
  // Built-in rows of this cloud by shape, in table order (the first row of a shape in a
  // matching region is preferred below).
  std::map<std::string, std::vector<const InstanceType*>> known;
  for (const auto& i : catalog.instances) {
    if (i.cloud == cloud_id) known[i.instance_type].push_back(&i);
  }
  int filled = 0;
  for (auto& it : imported) {
    auto found = known.find(it.instance_type);
    if (found == known.end()) continue;
    const InstanceType* spec = nullptr;
    for (const InstanceType* k : found->second) {
      if (k->accelerator != it.accelerator || k->accelerator_count != it.accelerator_count) {
        continue;
      }
      if (!spec || (k->region == it.region && spec->region != it.region)) spec = k;
    }
    if (!spec) continue;  // same name, other hardware: the import's own view stands
    bool used = false;
    if (!it.local_nvme_known && spec->local_nvme_known) {
      it.local_nvme = spec->local_nvme;
      it.local_nvme_known = true;
      used = true;
    }
    if (it.network.value() <= 0 && spec->network.value() > 0) {
      it.network = spec->network;
      used = true;
    }
    if (spec->inter_node_fabric != InterNodeFabric::kNone &&
        (it.inter_node_fabric == InterNodeFabric::kNone ||
         it.inter_node_fabric == spec->inter_node_fabric)) {
      it.inter_node_fabric = spec->inter_node_fabric;
      if (!it.inter_node_bw && spec->inter_node_bw) it.inter_node_bw = spec->inter_node_bw;
      used = true;
    }
    // The built-in intra-node link is reviewed per shape; the import's is inferred from the
    // device's form factor.
    if (it.intra_node_link != spec->intra_node_link) {
      it.intra_node_link = spec->intra_node_link;
      used = true;
    }
    if (it.cpu.empty() && !spec->cpu.empty()) {
      it.cpu = spec->cpu;
      used = true;
    }
    // Flags and reserved prices describe the built-in row's price. They carry over only when the
    // import quotes the same on-demand price (within 1%) in the same region: the same data keeps
    // its review, a new price starts clean.
    if (spec->region == it.region && spec->price_on_demand && it.price_on_demand &&
        std::abs(*spec->price_on_demand - *it.price_on_demand) <=
            kSamePriceTolerance * *spec->price_on_demand) {
      it.flags = spec->flags;
      if (!it.price_reserved_1y && !it.price_reserved_3y) {
        it.price_reserved_1y = spec->price_reserved_1y;
        it.price_reserved_3y = spec->price_reserved_3y;
        it.reserved_source = spec->reserved_source.empty() && (spec->price_reserved_1y ||
                                                               spec->price_reserved_3y)
                                 ? spec->source
                                 : spec->reserved_source;
      }
      if (!it.flags.empty() || it.price_reserved_1y || it.price_reserved_3y) {
        AppendNote(it.notes, "flags and reserved prices kept from the built-in row (same "
                             "on-demand price)");
      }
    }
    if (used) {
      ++filled;
      std::string note = "specs the import lacks (local NVMe, network, fabric, link, CPU) from "
                         "the built-in row: " + spec->source;
      std::string kept;
      for (const auto& part : internal::Split(it.notes, ';')) {
        std::string p = internal::Trim(part);
        if (p != kNoNetworkNote) AppendNote(kept, p);
      }
      it.notes = kept;
      AppendNote(it.notes, note);
    }
    it.suspect_reason = SuspectReason(it);
  }
  std::set<std::string> shapes;
  for (const auto& it : imported) shapes.insert(it.instance_type);
  std::erase_if(catalog.instances, [&](const InstanceType& i) {
    return i.cloud == cloud_id && shapes.count(i.instance_type) > 0;
  });
  for (auto& it : imported) catalog.instances.push_back(std::move(it));
  return filled;
}

}  // namespace gpuplan
