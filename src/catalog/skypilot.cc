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
#include "catalog/skypilot_internal.h"
#include "io/csv.h"

namespace gpuplan {
namespace {

using internal::CsvRow;
using internal::CsvTable;
using internal::RowReader;
using internal::ToLower;
using skypilot_internal::AcceleratorResolver;
using skypilot_internal::Contains;
using skypilot_internal::FabricFor;
using skypilot_internal::FixedHostAccelerator;
using skypilot_internal::GpuInfoMemoryMiB;
using skypilot_internal::IntraLinkFor;
using skypilot_internal::IsGpuOnlyFamily;
using skypilot_internal::kN1Limits;
using skypilot_internal::StartsWith;

// Columns that may carry a row's date in a SkyPilot-format file (upstream files have none;
// refreshed or hand-made files sometimes add one). The first present column wins.
constexpr std::string_view kDateColumns[] = {"as_of", "AsOf", "Date", "date", "UpdatedAt"};
constexpr char kNoNetworkNote[] = "network and local NVMe not in SkyPilot catalog";
// Two on-demand prices this close (relative) are the same quote.
constexpr double kSamePriceTolerance = 0.01;

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
    if (skypilot_internal::MarketplaceCloud(cloud)) it.flags.emplace_back(kMarketplaceFlag);
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
    // A whole instance priced 0.00 is not free: SkyPilot's vast catalog writes SpotPrice 0.00
    // for offers with no interruptible price. (GCP's host rows of bundled shapes, a4-highgpu-8g,
    // are 0.00 for real: the GPU rows carry the price; see ImportGcp.)
    if (it.price_on_demand && *it.price_on_demand == 0) {
      it.price_on_demand.reset();
      AppendNote(it.notes, "SkyPilot Price 0.00 read as no price");
    }
    if (it.price_spot && *it.price_spot == 0) {
      it.price_spot.reset();
      AppendNote(it.notes, "SkyPilot SpotPrice 0.00 read as no spot price");
    }
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
      for (const auto& f : spec->flags) {
        if (std::find(it.flags.begin(), it.flags.end(), f) == it.flags.end()) it.flags.push_back(f);
      }
      if (!it.price_reserved_1y && !it.price_reserved_3y) {
        it.price_reserved_1y = spec->price_reserved_1y;
        it.price_reserved_3y = spec->price_reserved_3y;
        it.reserved_source =
            spec->reserved_source.empty() && (spec->price_reserved_1y || spec->price_reserved_3y)
                ? spec->source
                : spec->reserved_source;
      }
      if (!spec->flags.empty() || it.price_reserved_1y || it.price_reserved_3y) {
        AppendNote(it.notes,
                   "flags and reserved prices kept from the built-in row (same "
                   "on-demand price)");
      }
    }
    if (used) {
      ++filled;
      std::string note =
          "specs the import lacks (local NVMe, network, fabric, link, CPU) from "
          "the built-in row: " +
          spec->source;
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
