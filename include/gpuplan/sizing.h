// Host sizing: CPU cores, RAM, disks, storage bandwidth and network for a GPU plan, by a named
// policy (the guides' rules, and gpuplan's own default), checks of a concrete instance against
// those needs, and a bill of materials for a custom build. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"
#include "gpuplan/units.h"

namespace gpuplan {

enum class SizingPolicy : std::uint8_t {
  kGuideA,   // guide A4-A6: cores = GPUs x 8-12 (train) / 4-6 (infer); RAM = GPU memory x 2-3
             // (train) / 1-1.5 (infer); system disk = model files x 5 + dataset
  kGuideB,   // guide B6-B7: RAM = max(dataset x 1.5, GPU memory x 4); storage = GPUs x 2 GB/s
  kDefault,  // gpuplan's default (documented in docs/sizing.md)
};
const char* SizingPolicyName(SizingPolicy p);
std::optional<SizingPolicy> ParseSizingPolicy(std::string_view s);

struct SizingInput {
  bool training = true;
  int gpus_per_node = 8;
  int nodes = 1;
  Bytes gpu_memory;   // memory of ONE accelerator (device capacity)
  Bytes model_files;  // checkpoint size on disk (weights; training checkpoints add states)
  Bytes checkpoint;   // one full training checkpoint (weights + optimizer), 0 if unknown
  Bytes dataset;      // training data on disk, 0 if unknown
  // What the plan's GPUs read per second on one node: bytes per sample (dataset / samples per
  // epoch, or the data's form: token ids, JPEG images) x the plan's samples per second / nodes;
  // 0 if unknown. When known, every policy sizes training storage from it (x2 for the loaders'
  // bursts), and a policy's fixed rule (A9's NVMe speed, B7's 2 GB/s per GPU) is shown beside it.
  BytesPerSec data_feed{};
  std::string data_feed_basis{};  // how data_feed was obtained, for the rationale
  // Optimizer / parameter states one GPU offloads to host RAM (ZeRO-Offload); 0 = none.
  Bytes host_offload_per_gpu{};
  // The training input is pre-tokenised text read as token ids (memory-mapped, no decoding):
  // the default policy then counts 2 data-loader workers per GPU instead of 4.
  bool token_input = false;
  // Multi-node training: the share of the plan's step that its data-, pipeline- and
  // expert-parallel collectives leave exposed at this instance's fabric (EstimateTrainStep at
  // the instance's own bandwidth); unset when unknown. The network check then judges a fabric
  // below the per-GPU floor by what it does to this plan, not by the floor alone.
  std::optional<double> exposed_comm_share;
  // false: SizeHost leaves HostNeeds::rationale empty (search loops); every number is the same.
  bool explain = true;
};

// Needs of ONE node.
struct HostNeeds {
  SizingPolicy policy = SizingPolicy::kDefault;
  int cpu_cores = 0;  // physical cores (vCPUs = 2 x cores on SMT clouds)
  Bytes ram;
  Bytes system_disk;                   // OS + environment + model files
  Bytes data_disk;                     // dataset + checkpoints (local NVMe)
  BytesPerSec storage_bw;              // sustained read bandwidth the GPUs need
  BitsPerSec network;                  // per-node network for multi-node jobs (0 for single node)
  std::vector<std::string> rationale;  // one line per item: the rule and its numbers
  // What starves when the cores fall short, for the host check's verdict.
  std::string cpu_short = "data loading may starve the GPUs";
  std::optional<double> exposed_comm_share;  // SizingInput::exposed_comm_share
};

HostNeeds SizeHost(SizingPolicy policy, const SizingInput& in);

// A read rate in the unit that keeps it readable (KB/s for token streams, GB/s for images), as
// the sizing rationale writes it.
std::string ReadRateText(BytesPerSec r);

// One line of an instance check: "needs 1536 GB RAM, instance has 2048: ok".
struct HostFinding {
  std::string item;   // "cpu", "ram", "system_disk", "data_disk", "storage_bw", "network"
  double needed = 0;  // in the unit below
  double has = 0;
  std::string unit;  // "cores", "GB", "GB/s", "Gbit/s"
  bool ok = true;
  // Set by a planner when no candidate instance meets this policy rule: the check is reported
  // (text unchanged) but neither warns nor ranks (`ok` is then true).
  bool waived = false;
  std::string text;  // human sentence with the numbers
};

// Compares a node's needs with an instance (vCPUs count as 2 per core unless the instance is
// a GPU cloud's bare-metal shape); local NVMe serves the data disk.
std::vector<HostFinding> CheckHost(const HostNeeds& needs, const InstanceType& inst);
// Whether `inst`'s RAM holds `needs.ram`, within the 5% DIMM rounding tolerance: the `ok` of
// CheckHost's "ram" finding, without its text (for search loops).
bool RamAdequate(const HostNeeds& needs, const InstanceType& inst);

// A bill of materials for a custom (bare-metal) build of one node.
struct DimmConfig {
  int count = 0;
  Bytes dimm;  // size of one DIMM
  Bytes total;
};
// Rounds a RAM need to a real DIMM configuration of a 2-socket server (8 or 12 channels per
// socket, 1 or 2 DIMMs per channel, 32/64/96/128/256 GB DIMMs). Rounds to the nearest standard
// capacity when it is within 5% below the need (the guide's 1600 GB -> 1536 GB = 6 x 256 GB
// example is a test), otherwise up.
DimmConfig RoundRamToDimms(Bytes needed);

struct BillOfMaterials {
  std::string accelerator;
  int gpus = 0;
  int cpu_cores = 0;
  DimmConfig ram;
  Bytes system_disk;  // rounded to a real NVMe size (0.5/1/2/4/8 TB)
  Bytes data_disk;
  std::string network;             // e.g. "8 x 400 Gb/s InfiniBand NDR" or "2 x 25 GbE"
  std::vector<std::string> lines;  // printable BOM lines
};
BillOfMaterials BuildBom(const HostNeeds& needs, const Accelerator& acc, int gpus_per_node);

}  // namespace gpuplan
