// The bill of materials for a custom (bare-metal) node: RAM rounded to a real DIMM population
// of a 2-socket server, boot and data NVMe drives, CPU and network lines (docs/sizing.md).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "gpuplan/sizing.h"
#include "sizing/sizing_internal.h"

namespace gpuplan {
namespace {

using sizing_internal::Bw;
using sizing_internal::Disk;
using sizing_internal::kLocalNvmeDriveBw;
using sizing_internal::kRamTolerance;
using sizing_internal::Mem;
using sizing_internal::Net;
using sizing_internal::Num;
using sizing_internal::TB;

constexpr int kSockets = 2;
// DIMMs per socket that interleave evenly: 8 or 16 fill an 8-channel socket (Intel Xeon 4th-6th
// gen) at 1 or 2 DIMMs per channel, 12 or 24 a 12-channel socket (AMD EPYC 9004/9005); 1, 2, 4
// and 6 are partial populations for small capacities.
constexpr int kDimmsPerSocket[] = {1, 2, 4, 6, 8, 12, 16, 24};
constexpr double kDimmSizesGiB[] = {32, 64, 96, 128, 256};
// Boot/system NVMe sizes (M.2 class) and enterprise data NVMe sizes (U.2/E1.S, 1 DWPD class).
constexpr double kSystemDiskTB[] = {0.5, 1, 2, 4, 8};
constexpr double kDataDriveTB[] = {0.48, 0.96, 1.92, 3.84, 7.68, 15.36};
constexpr int kMaxDataDrives = 24;  // a 2U 24-bay NVMe chassis

// ---- DIMM configurations ----------------------------------------------------------------------
struct DimmOption {
  int per_socket = 0;
  double dimm_gib = 0;
  double total_gib() const { return per_socket * kSockets * dimm_gib; }
};

// Fills every channel of an 8- or 12-channel socket equally.
bool IsBalanced(int per_socket) {
  return per_socket == 8 || per_socket == 12 || per_socket == 16 || per_socket == 24;
}
int DimmsPerChannel(int per_socket) { return per_socket > 12 ? 2 : 1; }

// Lower is preferred: balanced before partial; 1 DIMM per channel before 2 (DDR5 runs slower at
// 2 per channel); balanced: fewer DIMMs; partial: more DIMMs (more channels, more bandwidth).
bool Preferred(const DimmOption& a, const DimmOption& b) {
  auto key = [](const DimmOption& o) {
    const bool bal = IsBalanced(o.per_socket);
    return std::tuple(bal ? 0 : 1, DimmsPerChannel(o.per_socket),
                      bal ? o.per_socket : -o.per_socket);
  };
  return key(a) < key(b);
}

std::vector<DimmOption> AllDimmOptions() {
  std::vector<DimmOption> v;
  for (int per_socket : kDimmsPerSocket) {
    for (double size : kDimmSizesGiB) v.push_back({per_socket, size});
  }
  return v;
}

DimmConfig ToConfig(const DimmOption& o) {
  DimmConfig c;
  c.count = o.per_socket * kSockets;
  c.dimm = GiB(o.dimm_gib);
  c.total = GiB(o.total_gib());
  return c;
}

// The preferred option of capacity `total_gib` (which must be a standard capacity).
DimmOption BestOptionFor(double total_gib) {
  DimmOption best;
  bool found = false;
  for (const DimmOption& o : AllDimmOptions()) {
    if (std::abs(o.total_gib() - total_gib) > 1e-6) continue;
    if (!found || Preferred(o, best)) best = o;
    found = true;
  }
  return best;
}

std::string DimmLayout(const DimmConfig& c) {
  const int per_socket = c.count / kSockets;
  if (IsBalanced(per_socket)) {
    const int channels = (per_socket % 12 == 0) ? 12 : 8;
    return fmt::format("all {} channels per socket, {} DIMM per channel", channels,
                       DimmsPerChannel(per_socket));
  }
  return fmt::format("{} DIMMs per socket, partial population: less memory bandwidth", per_socket);
}

// ---- Drives ---------------------------------------------------------------------------------
Bytes RoundSystemDisk(Bytes need) {
  if (need.value() <= 0) return Bytes(0);
  for (double tb : kSystemDiskTB) {
    if (TB(tb).value() >= need.value() * (1 - 1e-9)) return TB(tb);
  }
  const double largest = kSystemDiskTB[std::size(kSystemDiskTB) - 1];
  return TB(largest * std::ceil(ToGB(need) / 1000 / largest - 1e-9));
}

struct DataDrives {
  int count = 0;
  double drive_tb = 0;
  Bytes total() const { return TB(drive_tb * count); }
};

// Fewest drives that give both the capacity and the read bandwidth (~7 GB/s per drive, A9),
// then the smallest drive size.
DataDrives PickDataDrives(Bytes need, BytesPerSec bw) {
  if (need.value() <= 0) return {};
  const int by_bw =
      std::max(1, static_cast<int>(std::ceil(bw.value() / kLocalNvmeDriveBw.value() - 1e-9)));
  for (int n = std::min(by_bw, kMaxDataDrives); n <= kMaxDataDrives; ++n) {
    for (double tb : kDataDriveTB) {
      if (TB(tb * n).value() >= need.value() * (1 - 1e-9)) return {n, tb};
    }
  }
  return {kMaxDataDrives, kDataDriveTB[std::size(kDataDriveTB) - 1]};
}

}  // namespace

DimmConfig RoundRamToDimms(Bytes needed) {
  if (needed.value() <= 0) return {};
  const double need = ToGiB(needed);
  std::vector<double> caps;
  for (const DimmOption& o : AllDimmOptions()) caps.push_back(o.total_gib());
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());

  const double eps = 1e-6;
  auto down = std::upper_bound(caps.begin(), caps.end(), need + eps);
  const bool has_down = down != caps.begin();
  const double down_gib = has_down ? *std::prev(down) : 0;
  auto up = std::lower_bound(caps.begin(), caps.end(), need - eps);
  if (up == caps.end()) return ToConfig(BestOptionFor(caps.back()));  // above 48 x 256 GiB
  const double up_gib = *up;
  if (has_down && need - down_gib <= kRamTolerance * need + eps &&
      need - down_gib <= up_gib - need + eps) {
    return ToConfig(BestOptionFor(down_gib));
  }
  return ToConfig(BestOptionFor(up_gib));
}

BillOfMaterials BuildBom(const HostNeeds& needs, const Accelerator& acc, int gpus_per_node) {
  BillOfMaterials bom;
  bom.accelerator = acc.id;
  bom.gpus = std::max(0, gpus_per_node);
  bom.cpu_cores = needs.cpu_cores;
  bom.ram = RoundRamToDimms(needs.ram);
  bom.system_disk = RoundSystemDisk(needs.system_disk);
  const DataDrives drives = PickDataDrives(needs.data_disk, needs.storage_bw);
  bom.data_disk = drives.total();

  // Network. One RDMA NIC per GPU (rail-optimized, as DGX/HGX systems); its speed is what the
  // GPU's PCIe generation can feed: Gen5 x16 ~ 504 Gbit/s -> 400G NDR (DGX H100: 8 x 400G),
  // Gen4 x16 ~ 252 Gbit/s -> 200G HDR (DGX A100: 8 x 200G), older -> 100G EDR.
  const std::string front_end = "2 x 25 GbE";
  std::string net_line;
  if (needs.network.value() <= 0) {
    bom.network = front_end;
    net_line = "network: " + front_end + " (front-end and storage; one node needs no RDMA fabric)";
  } else {
    const int nic_gbps = acc.pcie_gen >= 5 ? 400 : acc.pcie_gen == 4 ? 200 : 100;
    const char* ib_name = nic_gbps == 400 ? "NDR" : nic_gbps == 200 ? "HDR" : "EDR";
    const int gpus = std::max(1, bom.gpus);
    const double per_gpu_gbps = needs.network.value() / 1e9 / gpus;
    const int per_gpu_nics =
        std::max(1, static_cast<int>(std::ceil(per_gpu_gbps / nic_gbps - 1e-9)));
    const int nics = gpus * per_gpu_nics;
    bom.network = fmt::format("{} x {} Gb/s InfiniBand {}", nics, nic_gbps, ib_name);
    net_line = fmt::format(
        "network: {} ({} Gbit/s per node for {} needed; RoCE at the same speed also works) + "
        "{} front-end",
        bom.network, nics * nic_gbps, Net(needs.network), front_end);
  }

  const int per_socket = (needs.cpu_cores + kSockets - 1) / kSockets;
  bom.lines.push_back(fmt::format("GPU: {} x {} ({} GPU memory)", bom.gpus, acc.id,
                                  Mem(acc.memory * static_cast<double>(bom.gpus))));
  bom.lines.push_back(fmt::format("CPU: {} cores ({} sockets x {} cores or more)", needs.cpu_cores,
                                  kSockets, per_socket));
  if (bom.ram.count > 0) {
    const bool short_of_need = bom.ram.total < needs.ram * (1 - kRamTolerance);
    bom.lines.push_back(
        fmt::format("RAM: {} x {} RDIMM = {} (need {}; {}){}", bom.ram.count, Mem(bom.ram.dimm),
                    Mem(bom.ram.total), Mem(needs.ram), DimmLayout(bom.ram),
                    short_of_need ? "; below the need: the largest 2-socket configuration" : ""));
  } else {
    bom.lines.push_back("RAM: none needed");
  }
  bom.lines.push_back(fmt::format("system disk: {} NVMe (need {})", Disk(bom.system_disk),
                                  Disk(needs.system_disk)));
  if (drives.count > 0) {
    const bool short_of_need = bom.data_disk < needs.data_disk;
    bom.lines.push_back(
        fmt::format("data disk: {} x {} TB enterprise NVMe{} = {} (need {} and {} read){}",
                    drives.count, Num(drives.drive_tb, 2), drives.count > 1 ? " in RAID0" : "",
                    Disk(bom.data_disk), Disk(needs.data_disk), Bw(needs.storage_bw),
                    short_of_need ? "; below the need: add network storage" : ""));
  } else {
    bom.lines.push_back("data disk: none needed");
  }
  bom.lines.push_back(net_line);
  return bom;
}

}  // namespace gpuplan
