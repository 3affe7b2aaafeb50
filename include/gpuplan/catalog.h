// The hardware and price catalog: accelerators, server CPUs, rentable instance types and
// currency rates. Built from gpuplan's own tables in data/ (embedded at build time), optionally
// overridden by user files and SkyPilot `vms.csv` catalogs. Knows nothing of search.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/precision.h"
#include "gpuplan/result.h"
#include "gpuplan/units.h"

namespace gpuplan {

// One accelerator device (a GPU, a TPU chip, an Inferentia chip), never a board or a node.
struct Accelerator {
  std::string id;                    // canonical id, e.g. "H100-SXM5-80GB"
  std::vector<std::string> aliases;  // other names: "H100", "H100-80GB"
  std::string vendor;
  std::string arch;
  Bytes memory;  // device memory (nominal capacity, the datasheet's memory_gib)
  // Capacity as the driver reports it (nvidia-smi memory.total), when the catalog has it, and
  // where that figure comes from; training fits against Usable().
  std::optional<Bytes> driver_memory;
  std::string memory_source;
  Bytes Usable() const { return driver_memory.value_or(memory); }
  BytesPerSec memory_bw;  // device memory bandwidth
  // Dense peaks (no 2:4 sparsity); empty when the device lacks that precision.
  std::optional<FlopPerSec> fp32, tf32, bf16, fp16, fp8, int8, int4;
  // FP4 tensor rate (Blackwell NVFP4/MXFP4 GEMMs with 4-bit inputs); empty: none.
  std::optional<FlopPerSec> fp4;
  std::string intra_link;     // scale-up link id: "nvlink4", "pcie4", "infinity-fabric", ...
  BytesPerSec intra_link_bw;  // per-device scale-up bandwidth, bidirectional as quoted
  // GPUs that share one scale-up (NVLink switch) domain when it spans more than one machine:
  // a GB200 NVL72 rack joins 18 trays of 4 GPUs in one NVLink domain of 72. 0 = the machine.
  int nvlink_domain = 0;
  int pcie_gen = 0;
  Watts tdp;
  std::string form_factor;
  std::string source;
  std::string as_of;
  std::string notes;

  // Dense tensor peak for math at precision `p`; falls back to the nearest lower-precision path
  // the device has (fp8 on an A100 runs at bf16 rate). Empty when the device has none, and for
  // bf16 on devices without bf16 (V100, T4: fp16 is not bf16).
  std::optional<FlopPerSec> PeakFor(Precision p) const;

  // An inference-only device: AWS Inferentia (the Neuron SDK trains on Trainium; Inf2 instances
  // are sold for inference). Training plans, fits and checks skip it.
  bool InferenceOnly() const;
  // An AWS Neuron device (Inferentia, Trainium): it runs the Neuron SDK, not CUDA or ROCm.
  bool AwsNeuron() const;
};

// (accelerator id, why) pairs grouped by why, in first-seen order: one note per reason when a
// search leaves accelerators out.
struct IdsWithWhy {
  std::string why;
  std::vector<std::string> ids;
};
std::vector<IdsWithWhy> GroupByWhy(const std::vector<std::pair<std::string, std::string>>& id_why);

// One server CPU socket.
struct Cpu {
  std::string id;  // "Xeon-Platinum-8380"
  std::vector<std::string> aliases;
  std::string vendor;
  std::string arch;
  int cores = 0;
  int threads = 0;
  double base_ghz = 0;
  std::optional<double> all_core_turbo_ghz;
  double fp32_flop_per_cycle = 0;             // per core, vector units
  std::optional<double> bf16_flop_per_cycle;  // per core, best path (AMX-BF16 = 1024)
  std::optional<double> int8_op_per_cycle;    // per core, best path
  std::string matrix_ext;                     // "amx", "sme", "none"
  BytesPerSec memory_bw;                      // per socket
  std::optional<double> l3_mib;
  std::optional<double> tdp_w;
  std::string source;
  std::string as_of;
  std::string notes;
};

// How the accelerators inside one machine talk to each other.
enum class IntraNodeLink : std::uint8_t {
  kNone,
  kPcie,
  kNvlink,
  kNvswitch,
  kInfinityFabric,
  kNeuronLink,
  kIci
};
// How machines talk to each other for collective communication.
enum class InterNodeFabric : std::uint8_t {
  kNone,
  kEfa,
  kInfiniband,
  kRoce,
  kErdma,
  kGpuDirectTcpx
};
const char* IntraNodeLinkName(IntraNodeLink l);
const char* InterNodeFabricName(InterNodeFabric f);
std::optional<IntraNodeLink> ParseIntraNodeLink(std::string_view s);
std::optional<InterNodeFabric> ParseInterNodeFabric(std::string_view s);
// The canonical names, in enum order (did-you-mean candidates).
std::vector<std::string> IntraNodeLinkNames();
std::vector<std::string> InterNodeFabricNames();

// One rentable machine type in one region, with its prices per instance-hour.
struct InstanceType {
  std::string cloud;          // "aws"
  std::string instance_type;  // "p5.48xlarge"
  std::string region;         // "us-east-1"; may be empty for imported rows without one
  std::string accelerator;    // Accelerator::id; empty for CPU-only instances
  int accelerator_count = 0;
  std::string cpu;  // Cpu::id when known
  int vcpus = 0;
  Bytes ram;
  Bytes local_nvme;               // 0 when none, or when not recorded (see local_nvme_known)
  bool local_nvme_known = false;  // the source states the local NVMe (0 = none, for real)
  BitsPerSec network;
  IntraNodeLink intra_node_link = IntraNodeLink::kNone;
  InterNodeFabric inter_node_fabric = InterNodeFabric::kNone;
  std::optional<BitsPerSec> inter_node_bw;  // aggregate fabric bandwidth per node
  // Prices per instance-hour in `currency`; empty = no public price (never invented).
  std::optional<double> price_on_demand, price_spot, price_reserved_1y, price_reserved_3y;
  Currency currency = Currency::kUsd;
  std::string source;
  std::string as_of;
  std::string notes;
  // Flags from the optional `flags` column (`;`-separated, see KnownInstanceFlags()): source
  // anomalies ("suspect-sku", "spot-above-on-demand") and the kind of offer ("marketplace").
  // Reviewable in the CSV.
  std::vector<std::string> flags;
  // Where the 1y/3y reserved prices come from (optional `reserved_source` column); empty when
  // the row has none or they share `source`.
  std::string reserved_source;
  // Non-empty when the row's own data marks it doubtful (a flag, or spot above on-demand):
  // excluded from ranking unless the user asks for suspect rows. Set by SuspectReason.
  std::string suspect_reason;

  bool is_cpu_only() const { return accelerator.empty() || accelerator_count == 0; }
};

// One flag an instance row may carry in its `flags` column.
struct InstanceFlag {
  const char* name;     // "suspect-sku"
  const char* meaning;  // the suspect reason shown to users, or what the flag says
  bool suspect = true;  // doubts the row's price (SuspectReason); false: describes the offer
};
// Every flag the loader accepts; an unknown flag is a parse error naming the cell.
const std::vector<InstanceFlag>& KnownInstanceFlags();

// The flag of a marketplace listing: one host's offer (vast.ai), not a provider's own SKU. Its
// price is real but set by the host and volatile, its capacity is that host's machines, and no
// provider SLA covers the host. Planners rank such rows (constraints.marketplace: false drops
// them) and say so beside each plan on one.
inline constexpr const char* kMarketplaceFlag = "marketplace";
bool IsMarketplace(const InstanceType& it);

// Why a row should not be trusted for ranking, or empty. The single place deciding: a flag from
// the `flags` column (its meaning), else spot above on-demand (a source anomaly the loader sees
// even in files without flags, e.g. SkyPilot imports).
std::string SuspectReason(const InstanceType& it);

// A conversion rate between currencies.
struct CurrencyRate {
  Currency from = Currency::kUsd;
  Currency to = Currency::kCny;
  double rate = 0;  // 1 unit of `from` = rate units of `to`
  std::string source;
  std::string as_of;
};

// Rows of one cloud an import skipped, and why.
struct ImportSkip {
  std::string cloud;
  std::string reason;
  int rows = 0;
};

// The whole catalog. Lookups by name are case-insensitive over ids and aliases.
struct Catalog {
  std::vector<Accelerator> accelerators;
  std::vector<Cpu> cpus;
  std::vector<InstanceType> instances;
  std::vector<CurrencyRate> rates;
  // Rows an import (SkyPilot vms.csv) read but did not turn into instances, per cloud and
  // reason ("unknown accelerator", "TPU (not modelled)"); CatalogCoverage reports them.
  std::vector<ImportSkip> import_skips;

  const Accelerator* FindAccelerator(std::string_view name) const;
  const Cpu* FindCpu(std::string_view name) const;
  // As Find*, but an unknown name is an Error for `field` with a did-you-mean hint.
  Result<const Accelerator*> ResolveAccelerator(std::string_view name,
                                                std::string_view field) const;
  Result<const Cpu*> ResolveCpu(std::string_view name, std::string_view field) const;
  // A cloud some instance row names, else an Error for `field` with a did-you-mean hint.
  Status CheckCloud(std::string_view name, std::string_view field) const;
  // The catalog's spelling of a region some instance row of `clouds` (all clouds when empty)
  // names, matched regardless of case ("texas, us" is "Texas, US"), else an Error for `field`
  // naming the nearest region, or those the clouds have.
  Result<std::string> ResolveRegion(std::string_view name, std::string_view field,
                                    const std::vector<std::string>& clouds = {}) const;
  // ResolveRegion of each name; item k's error names `field`[k].
  Result<std::vector<std::string>> ResolveRegions(const std::vector<std::string>& names,
                                                  std::string_view field,
                                                  const std::vector<std::string>& clouds) const;
  // Converts `amount` from one currency to another with the catalog's rate (or `override_rate`,
  // given as CNY per USD, when set). Same currency: unchanged.
  double Convert(double amount, Currency from, Currency to,
                 std::optional<double> cny_per_usd = std::nullopt) const;
  // Default CNY per USD rate from currency.csv, and its date.
  double CnyPerUsd() const;
  std::string CnyPerUsdAsOf() const;
  // Latest `as_of` among instance rows that carry a price (the date shown beside prices).
  std::string PricesAsOf() const;
};

// How much of one cloud's catalog a planner can use. Counts are of shapes (distinct
// instance_type names; a shape listed in several regions counts once).
struct CloudCoverage {
  std::string cloud;
  int shapes = 0;      // every shape of the cloud
  int gpu_shapes = 0;  // shapes with an accelerator
  int priced = 0;      // shapes with an on-demand price in at least one row not suspect
  int suspect = 0;     // shapes with at least one suspect row
  int reserved = 0;    // shapes with a 1-year or 3-year reserved price in some row
  // Shapes a planner skips, by reason ("no public price", "only suspect rows"), plus rows an
  // import skipped (Catalog::import_skips, counted in rows); sorted by reason.
  std::vector<std::pair<std::string, int>> skipped;
  int Skipped() const;
};

// Coverage per cloud, sorted by cloud name. Deterministic; pure.
std::vector<CloudCoverage> CatalogCoverage(const Catalog& catalog);

// Which table a text holds. Detected from the header line when loading user files.
enum class TableKind : std::uint8_t { kGpus, kCpus, kInstances, kCurrency, kSkyPilotVms };

// Parses one table and appends its rows to `catalog`. `label` names the file in errors
// ("instances/aws.csv"); a bad cell is reported as "label:line:column". For SkyPilot tables
// `cloud` names the cloud (SkyPilot files do not carry it). Rows of an instance table must
// reference accelerators and CPUs already in the catalog.
Status LoadTable(Catalog& catalog, TableKind kind, std::string_view label, std::string_view text,
                 std::string_view cloud = {});

// The catalog built into the binary (data/ at build time). Fails only on a build defect.
Result<Catalog> LoadBuiltinCatalog();

// Detects the table kind of a user file from its header line.
Result<TableKind> DetectTableKind(std::string_view label, std::string_view text);

// Applies a user override: `spec` is "PATH" or "CLOUD=PATH" (CLOUD for SkyPilot vms.csv, whose
// rows do not name their cloud; default: the name of PATH's parent directory). A gpus/cpus/
// currency table replaces the built-in one; an instance table in gpuplan's own format replaces
// the built-in rows of the clouds it contains. A SkyPilot vms.csv is merged: see
// MergeImportedInstances. Imported rows are dated by the file (its modification date, UTC).
Status ApplyCatalogOverride(Catalog& catalog, std::string_view spec);

// Merges `imported` rows of `cloud` (e.g. from a SkyPilot vms.csv) into `catalog`: for each shape
// the import lists, its rows replace the built-in rows of that shape (the import's prices and
// regions win), and specs the import lacks (local NVMe, network, fabric and its bandwidth, host
// CPU, intra-node link) are taken from a built-in row of the same shape and accelerators.
// Built-in shapes the import does not list are kept. Returns how many rows took built-in specs.
int MergeImportedInstances(Catalog& catalog, std::string_view cloud,
                           std::vector<InstanceType> imported);

// Summary of a SkyPilot import, for tests and the CLI.
struct SkyPilotImportStats {
  int rows_read = 0;
  int instances_added = 0;
  int gpu_rows_attached = 0;  // GCP: accelerator rows attached to host VMs
  int skipped_unknown_accelerator = 0;
  int skipped_no_price = 0;
  int tpu_rows_skipped = 0;
};

// Imports a SkyPilot catalog `vms.csv` (schema v6-v8) for `cloud` into `catalog`. Handles
// GCP's separate host-VM and GPU rows (a GPU row's price is added to a compatible host),
// blank prices (kept as unknown), CRLF/LF mixes and the Python-literal GpuInfo column.
// Rows are dated by a date column when the file has one (`Date`, `as_of`, YYYY-MM-DD...),
// else by `as_of` (the caller passes the file's date); with neither, `as_of` stays empty and
// the notes say the snapshot is undated.
Status ImportSkyPilotVms(Catalog& catalog, std::string_view cloud, std::string_view label,
                         std::string_view text, SkyPilotImportStats* stats = nullptr,
                         std::string_view as_of = {});

// The modification date of a file as YYYY-MM-DD (UTC), or empty when it cannot be read.
std::string FileDate(const std::string& path);

}  // namespace gpuplan
