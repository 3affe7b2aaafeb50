// Host sizing for a GPU node: CPU cores, RAM, disks, storage bandwidth and network, by the
// guides' rules (../shared/seeds/README.md, A4-A10 and B6-B8, B15-B16) or by gpuplan's default
// policy (docs/sizing.md), an instance check and a bill of materials. Pure functions.
//
// Units. Memory capacities (GPU memory, RAM, DIMMs) are binary: an "80 GB" GPU and a "256 GB"
// DIMM hold 80 GiB and 256 GiB. The guides do their arithmetic on those labels (A7: 640 x 2.5 =
// 1600 -> 1536 = 6 x 256), so the rationale shows memory in GiB; disks and bandwidths are
// decimal (TB, GB/s). CheckHost reports RAM in decimal GB, with the GiB figures beside it.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpuplan/sizing.h"
#include "io/csv.h"
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
using sizing_internal::Rate;
using sizing_internal::TB;

// CheckHost: instance local NVMe is counted as drives of 3.84 TB, each ~7 GB/s (A9).
constexpr double kInstanceDriveTB = 3.84;

// ---- Guide A (seed 000, "selection guide") -----------------------------------------------
// A4: cores = GPUs x 8-12 (training), x 4-6 (inference); A7 and A8 use the midpoints 10 and 5.
constexpr int kGuideACoresPerGpuTrain = 10;
constexpr int kGuideACoresPerGpuInfer = 5;
// A5: RAM = total GPU memory x 2-3 (training), x 1-1.5 (inference). A7 uses 2.5; A8 writes
// 160 GB x 1.2 = 192 GB. The midpoint 1.25 gives 200 GiB, which RoundRamToDimms takes to the
// same 192 GiB (4% below the need).
constexpr double kGuideARamFactorTrain = 2.5;
constexpr double kGuideARamFactorInfer = 1.25;
// A6: system SSD = model files x 5 + dataset ("room for checkpoints").
constexpr double kGuideASystemModelFactor = 5;
// A10: save_total_limit=3, checkpoints on local NVMe.
constexpr int kCheckpointsKept = 3;
// A9: network storage typically 1-2 GB/s (the low end is counted); local NVMe: sizing_internal.h.
constexpr BytesPerSec kNetworkStorageBw = GBps(1);

// ---- Guide B (seed 002, "training vs inference guide") ------------------------------------
// B6: RAM = max(dataset x 1.5, total GPU memory x 4).
constexpr double kGuideBRamPerDataset = 1.5;
constexpr double kGuideBRamPerGpuMemory = 4;
// B7: storage bandwidth = GPUs x 2 GB/s.
constexpr BytesPerSec kGuideBStorageBwPerGpu = GBps(2);
// Guide B has no core rule; its training scenarios give 96 cores for 8 x H100 (B16, 12 per GPU)
// and 64 cores for 4 x A100 (B15, 16 per GPU). The lower ratio is used.
constexpr int kGuideBCoresPerGpuTrain = 12;

// ---- gpuplan default (docs/sizing.md) ------------------------------------------------------
// Training, per GPU: 1 core for the rank's training loop, 4 data-loader workers, 1 for NCCL
// proxy / async checkpoint threads. Inference, per GPU: the engine worker's scheduling loop,
// tokenization/detokenization, request handling. Per node: 2 for the OS, logging, monitoring.
constexpr int kDefaultCoresPerGpuTrain = 6;
// Pre-tokenised text is memory-mapped token ids that loaders only slice and collate: Megatron-LM
// runs 2 workers per rank by default (`--num-workers 2`, megatron/training/arguments.py) and the
// Hugging Face Trainer none (`dataloader_num_workers=0`). 1 loop + 2 workers + 1 NCCL/checkpoint.
constexpr int kDefaultCoresPerGpuTrainTokens = 4;
constexpr int kDefaultCoresPerGpuInfer = 3;
constexpr int kDefaultCoresPerNode = 2;
// Headroom over what the host must hold (OS, rank processes, page cache).
constexpr double kDefaultRamHeadroom = 1.2;
// Inference worker process per GPU: CUDA context and framework (a few GiB) plus vLLM's default
// 4 GiB CPU swap space for preempted KV blocks.
constexpr Bytes kDefaultInferRamPerGpu = GiB(8);
// OS, drivers, CUDA/framework container images.
constexpr Bytes kDefaultSystemBase = GB(200);
// Model files twice: the downloaded copy and one converted/resharded copy.
constexpr double kDefaultSystemModelCopies = 2;
// Training read bandwidth per GPU: ImageNet-class vision at A100/H100 rates reads ~0.3 GB/s per
// GPU (3000 images/s x ~110 KB); tokenized text needs well under 1 MB/s. 1 GB/s covers both.
constexpr BytesPerSec kDefaultStorageBwPerGpu = GBps(1);
// When the plan's input rate is known: data loaders read ahead in bursts (prefetch, shuffle
// buffers refilled per worker), so storage is sized at twice the mean rate.
constexpr double kInputBurstFactor = 2;
// Restart after a preemption (spot, A15): read the node's checkpoint share in 5 minutes.
constexpr Seconds kDefaultCheckpointRestoreTime = Seconds(300);
// Inference cold start (autoscaling, B12): load the node's weights in one minute.
constexpr Seconds kDefaultModelLoadTime = Seconds(60);

// ---- All policies -----------------------------------------------------------------------------
// Multi-node floor: one RDMA link of >= 100 Gbit/s per GPU (B8: RDMA between nodes; the guides
// give no figure: gpuplan's floor, docs/sizing.md).
constexpr BitsPerSec kRdmaFloorPerGpu = Gbps(100);
// A fabric below that floor still carries a plan whose step leaves at most this share of its
// time to exposed inter-node collectives (the planner's "material" communication share, A12).
constexpr double kFabricExposedShareOk = 0.10;
// Unknown training checkpoint: mixed-precision Adam saves bf16 weights (2 B/param) + fp32
// master (4) + m, v (8) = 14 B/param (ZeRO, Rajbhandari et al. 2020, minus the gradients),
// i.e. 7 x bf16 model files.
constexpr double kCheckpointPerModelFile = 7;

// Values every policy derives from the input.
struct Basis {
  int gpus = 0;
  int nodes = 1;
  Bytes gpu_total;        // GPU memory of one node
  Bytes checkpoint;       // one full checkpoint (given, or estimated for training)
  std::string ckpt_note;  // how `checkpoint` was obtained, when not given
  bool explain = true;    // SizingInput::explain: build the rationale lines
};

Basis MakeBasis(const SizingInput& in) {
  Basis b;
  b.gpus = std::max(0, in.gpus_per_node);
  b.nodes = std::max(1, in.nodes);
  b.explain = in.explain;
  b.gpu_total = in.gpu_memory * static_cast<double>(b.gpus);
  b.checkpoint = in.checkpoint;
  if (in.training && in.checkpoint.value() <= 0) {
    if (in.model_files.value() > 0) {
      b.checkpoint = in.model_files * kCheckpointPerModelFile;
      b.ckpt_note = fmt::format(
          "; checkpoint size unknown: {} x model files = {} (bf16 weights + fp32 master + Adam "
          "m, v = 14 B/param)",
          Num(kCheckpointPerModelFile, 0), Disk(b.checkpoint));
    } else {
      b.ckpt_note = "; checkpoint size unknown: not counted";
    }
  }
  return b;
}

int Cores(int gpus, int per_gpu, int per_node) { return gpus * per_gpu + per_node; }

// The network line shared by all policies.
void SizeNetwork(const Basis& b, HostNeeds& n) {
  if (b.nodes <= 1) {
    n.network = BitsPerSec(0);
    if (b.explain) n.rationale.push_back("network: 1 node: 0 Gbit/s, no inter-node fabric needed");
    return;
  }
  n.network = kRdmaFloorPerGpu * static_cast<double>(b.gpus);
  if (b.explain)
    n.rationale.push_back(fmt::format(
        "network: {} nodes: {} GPUs x {} = {} RDMA per node (guides A13, B8: RDMA, one zone; "
        "the per-GPU floor is gpuplan's, docs/sizing.md)",
        b.nodes, b.gpus, Net(kRdmaFloorPerGpu), Net(n.network)));
}

// Guide A's disks (A6, A7, A10); guide B reuses them (it has no disk rule).
void SizeGuideDisks(const SizingInput& in, const Basis& b, std::string_view prefix, HostNeeds& n) {
  n.system_disk = in.model_files * kGuideASystemModelFactor + in.dataset;
  if (b.explain)
    n.rationale.push_back(fmt::format("system disk: model files {} x {} + dataset {} = {} ({}A6)",
                                      Disk(in.model_files), Num(kGuideASystemModelFactor, 0),
                                      Disk(in.dataset), Disk(n.system_disk), prefix));
  if (in.training) {
    n.data_disk = in.dataset + b.checkpoint * static_cast<double>(kCheckpointsKept);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "data disk: dataset {} + {} checkpoints x {} = {} ({}A7: sized by the dataset; A10: "
          "keep the last {} checkpoints on local NVMe{})",
          Disk(in.dataset), kCheckpointsKept, Disk(b.checkpoint), Disk(n.data_disk), prefix,
          kCheckpointsKept, b.ckpt_note));
  } else {
    n.data_disk = in.dataset;
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "data disk: dataset {}; inference keeps no checkpoints ({}A9: model loading is one-off)",
          Disk(n.data_disk), prefix));
  }
}

void SizeGuideInferenceStorage(const Basis& b, HostNeeds& n) {
  n.storage_bw = kNetworkStorageBw;
  if (b.explain)
    n.rationale.push_back(fmt::format(
        "storage: {}, network storage suffices for inference (guide A9: model loading is "
        "one-off; network storage 1-2 GB/s)",
        Bw(n.storage_bw)));
}

void SizeGuideAInferenceRam(const Basis& b, std::string_view note, HostNeeds& n) {
  n.ram = b.gpu_total * kGuideARamFactorInfer;
  if (b.explain)
    n.rationale.push_back(
        fmt::format("RAM: {} GPU memory x {} = {} (guide A5: 1-1.5x for inference, midpoint; "
                    "A8 uses 1.2{})",
                    Mem(b.gpu_total), Num(kGuideARamFactorInfer, 2), Mem(n.ram), note));
}

HostNeeds SizeGuideA(const SizingInput& in) {
  const Basis b = MakeBasis(in);
  HostNeeds n;
  n.policy = SizingPolicy::kGuideA;
  if (in.training) {
    n.cpu_cores = Cores(b.gpus, kGuideACoresPerGpuTrain, 0);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "CPU: {} GPUs x {} cores = {} cores (guide A4: 8-12 per GPU for training; A7 uses {})",
          b.gpus, kGuideACoresPerGpuTrain, n.cpu_cores, kGuideACoresPerGpuTrain));
    n.ram = b.gpu_total * kGuideARamFactorTrain;
    if (b.explain)
      n.rationale.push_back(
          fmt::format("RAM: {} GPU memory x {} = {} (guide A5: 2-3x for training; A7 uses {})",
                      Mem(b.gpu_total), Num(kGuideARamFactorTrain, 2), Mem(n.ram),
                      Num(kGuideARamFactorTrain, 2)));
  } else {
    n.cpu_cores = Cores(b.gpus, kGuideACoresPerGpuInfer, 0);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "CPU: {} GPUs x {} cores = {} cores (guide A4: 4-6 per GPU for inference; A8 uses {})",
          b.gpus, kGuideACoresPerGpuInfer, n.cpu_cores, kGuideACoresPerGpuInfer));
    SizeGuideAInferenceRam(b, "", n);
  }
  SizeGuideDisks(in, b, "guide ", n);
  if (in.training) {
    n.storage_bw = kLocalNvmeDriveBw;
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "storage: {}, local NVMe (guide A9: training reads large files sequentially; local "
          "NVMe ~7 GB/s vs network storage 1-2 GB/s)",
          Bw(n.storage_bw)));
  } else {
    SizeGuideInferenceStorage(b, n);
  }
  SizeNetwork(b, n);
  return n;
}

HostNeeds SizeGuideB(const SizingInput& in) {
  const Basis b = MakeBasis(in);
  HostNeeds n;
  n.policy = SizingPolicy::kGuideB;
  if (in.training) {
    n.cpu_cores = Cores(b.gpus, kGuideBCoresPerGpuTrain, 0);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "CPU: {} GPUs x {} cores = {} cores (guide B has no core rule; B16 gives 96 cores for "
          "8 x H100, B15 64 for 4 x A100)",
          b.gpus, kGuideBCoresPerGpuTrain, n.cpu_cores));
    const Bytes by_data = in.dataset * kGuideBRamPerDataset;
    const Bytes by_gpu = b.gpu_total * kGuideBRamPerGpuMemory;
    n.ram = std::max(by_data, by_gpu);
    if (b.explain)
      n.rationale.push_back(
          fmt::format("RAM: max(dataset {} x {} = {}, {} GPU memory x {} = {}) = {} (guide B6)",
                      Disk(in.dataset), Num(kGuideBRamPerDataset, 2), Mem(by_data),
                      Mem(b.gpu_total), Num(kGuideBRamPerGpuMemory, 2), Mem(by_gpu), Mem(n.ram)));
  } else {
    n.cpu_cores = Cores(b.gpus, kGuideACoresPerGpuInfer, 0);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "CPU: {} GPUs x {} cores = {} cores (guide B has no inference core rule; guide A4)",
          b.gpus, kGuideACoresPerGpuInfer, n.cpu_cores));
    SizeGuideAInferenceRam(b, "; guide B has no inference RAM rule", n);
  }
  SizeGuideDisks(in, b, "guide B has no disk rule; guide ", n);
  if (in.training) {
    n.storage_bw = kGuideBStorageBwPerGpu * static_cast<double>(b.gpus);
    if (b.explain)
      n.rationale.push_back(fmt::format("storage: {} GPUs x {} = {} (guide B7: RAID0 NVMe)", b.gpus,
                                        Bw(kGuideBStorageBwPerGpu), Bw(n.storage_bw)));
  } else {
    SizeGuideInferenceStorage(b, n);
  }
  SizeNetwork(b, n);
  return n;
}

HostNeeds SizeDefault(const SizingInput& in) {
  const Basis b = MakeBasis(in);
  const double nodes = static_cast<double>(b.nodes);
  HostNeeds n;
  n.policy = SizingPolicy::kDefault;
  if (in.training) {
    const int per_gpu = in.token_input ? kDefaultCoresPerGpuTrainTokens : kDefaultCoresPerGpuTrain;
    n.cpu_cores = Cores(b.gpus, per_gpu, kDefaultCoresPerNode);
    // Token ids cost the loaders next to nothing: the cores go to each GPU's training process
    // (Python launching its kernels) and NCCL's proxy threads.
    if (in.token_input) {
      n.cpu_short =
          "the GPUs' training processes and NCCL threads contend for cores (slower "
          "kernel launches)";
    }
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "CPU: {} GPUs x {} cores + {} = {} cores (default: per GPU the training loop, {} "
          "data-loader workers{} and NCCL/checkpoint threads; {} per node for the OS)",
          b.gpus, per_gpu, kDefaultCoresPerNode, n.cpu_cores, per_gpu - 2,
          in.token_input ? " for token ids" : "", kDefaultCoresPerNode));
    const Bytes ckpt_share = b.checkpoint / nodes;
    n.ram = std::max(b.gpu_total, ckpt_share) * kDefaultRamHeadroom;
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "RAM: {} x max({} GPU memory, checkpoint share {} = {}) = {} (default: the host holds "
          "a copy of the node's device state or checkpoint share for async saving, +20% for "
          "OS, processes and page cache{})",
          Num(kDefaultRamHeadroom, 2), Mem(b.gpu_total), Disk(ckpt_share), Mem(ckpt_share),
          Mem(n.ram), b.ckpt_note));
  } else {
    n.cpu_cores = Cores(b.gpus, kDefaultCoresPerGpuInfer, kDefaultCoresPerNode);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "CPU: {} GPUs x {} cores + {} = {} cores (default: per GPU the engine worker, "
          "tokenization and request handling; {} per node for the OS)",
          b.gpus, kDefaultCoresPerGpuInfer, kDefaultCoresPerNode, n.cpu_cores,
          kDefaultCoresPerNode));
    const bool known = in.model_files.value() > 0;
    const Bytes weights = known ? in.model_files / nodes : b.gpu_total;
    const Bytes staged = weights * kDefaultRamHeadroom;
    const Bytes workers = kDefaultInferRamPerGpu * static_cast<double>(b.gpus);
    n.ram = staged + workers;
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "RAM: {} {} x {} = {} + {} GPUs x {} = {} (default: weights pass through host memory "
          "when loading; per GPU worker: CUDA context, framework, vLLM's 4 GiB swap space)",
          known ? "model files per node" : "GPU memory (model files unknown)", Mem(weights),
          Num(kDefaultRamHeadroom, 2), Mem(staged), b.gpus, Mem(kDefaultInferRamPerGpu),
          Mem(n.ram)));
  }
  n.system_disk = kDefaultSystemBase + in.model_files * kDefaultSystemModelCopies;
  if (b.explain)
    n.rationale.push_back(fmt::format(
        "system disk: {} OS and images + {} x model files {} = {} (default: a downloaded and a "
        "converted copy of the weights)",
        Disk(kDefaultSystemBase), Num(kDefaultSystemModelCopies, 0), Disk(in.model_files),
        Disk(n.system_disk)));
  if (in.training) {
    const Bytes ckpt_share = b.checkpoint / nodes;
    n.data_disk = in.dataset + ckpt_share * static_cast<double>(kCheckpointsKept);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "data disk: dataset {} + {} x checkpoint share {} = {} (default: the dataset copied to "
          "each node's local NVMe, A9; this node's last {} checkpoint shards, A10{})",
          Disk(in.dataset), kCheckpointsKept, Disk(ckpt_share), Disk(n.data_disk), kCheckpointsKept,
          b.ckpt_note));
    const BytesPerSec by_gpus = kDefaultStorageBwPerGpu * static_cast<double>(b.gpus);
    const BytesPerSec by_restore =
        BytesPerSec(ckpt_share.value() / kDefaultCheckpointRestoreTime.value());
    n.storage_bw = std::max(by_gpus, by_restore);
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "storage: max({} GPUs x {} = {}, checkpoint share {} / {} s = {}) = {} (default: data "
          "feed per GPU; restore after a preemption in 5 minutes)",
          b.gpus, Bw(kDefaultStorageBwPerGpu), Bw(by_gpus), Disk(ckpt_share),
          Num(kDefaultCheckpointRestoreTime.value(), 0), Bw(by_restore), Bw(n.storage_bw)));
  } else {
    n.data_disk = in.dataset;
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "data disk: dataset {} (default: inference keeps no checkpoints)", Disk(n.data_disk)));
    const bool known = in.model_files.value() > 0;
    const Bytes weights = known ? in.model_files / nodes : b.gpu_total;
    n.storage_bw = BytesPerSec(weights.value() / kDefaultModelLoadTime.value());
    if (b.explain)
      n.rationale.push_back(fmt::format(
          "storage: {} {} / {} s = {} (default: a replica loads its weights within a minute)",
          known ? "model files per node" : "GPU memory (model files unknown)", Disk(weights),
          Num(kDefaultModelLoadTime.value(), 0), Bw(n.storage_bw)));
  }
  SizeNetwork(b, n);
  return n;
}

HostFinding MakeFinding(std::string item, double needed, double has, std::string unit) {
  HostFinding f;
  f.item = std::move(item);
  f.needed = needed;
  f.has = has;
  f.unit = std::move(unit);
  return f;
}

bool IsBareMetal(const InstanceType& inst) {
  const std::string t = internal::ToLower(inst.instance_type);
  return t.find("metal") != std::string::npos || t.rfind("bm.", 0) == 0 ||
         t.find("ebm") != std::string::npos;
}

}  // namespace

const char* SizingPolicyName(SizingPolicy p) {
  switch (p) {
    case SizingPolicy::kGuideA:
      return "guide-a";
    case SizingPolicy::kGuideB:
      return "guide-b";
    case SizingPolicy::kDefault:
      return "default";
  }
  return "?";
}

std::optional<SizingPolicy> ParseSizingPolicy(std::string_view s) {
  const std::string t = internal::ToLower(s);
  for (SizingPolicy p : {SizingPolicy::kGuideA, SizingPolicy::kGuideB, SizingPolicy::kDefault}) {
    if (t == SizingPolicyName(p)) return p;
  }
  return std::nullopt;
}

std::string ReadRateText(BytesPerSec r) { return Rate(r); }

HostNeeds SizeHost(SizingPolicy policy, const SizingInput& in) {
  HostNeeds n;
  switch (policy) {
    case SizingPolicy::kGuideA:
      n = SizeGuideA(in);
      break;
    case SizingPolicy::kGuideB:
      n = SizeGuideB(in);
      break;
    case SizingPolicy::kDefault:
      n = SizeDefault(in);
      break;
  }
  n.exposed_comm_share = in.exposed_comm_share;
  // Every policy, training: when the plan's own input rate is known, storage is sized from it
  // (a fixed per-GPU rule is a rule of thumb for vision-class input and over-sizes text jobs by
  // orders of magnitude); the default policy keeps its checkpoint-restore term.
  if (in.training && in.data_feed.value() > 0) {
    const BytesPerSec rule = n.storage_bw;
    const BytesPerSec feed = in.data_feed * kInputBurstFactor;
    BytesPerSec restore(0);
    if (policy == SizingPolicy::kDefault) {
      const Basis b = MakeBasis(in);
      restore = BytesPerSec(b.checkpoint.value() / b.nodes / kDefaultCheckpointRestoreTime.value());
    }
    n.storage_bw = std::max(feed, restore);
    const double ratio = rule.value() / n.storage_bw.value();
    if (in.explain) {  // the storage line now says what the plan reads
      std::string line =
          fmt::format("storage: the plan reads {} per node ({}) x {} for loader bursts = {}",
                      Rate(in.data_feed),
                      in.data_feed_basis.empty() ? "dataset bytes per sample x samples per second"
                                                 : in.data_feed_basis,
                      Num(kInputBurstFactor, 0), Rate(feed));
      if (restore.value() > 0) {
        line += fmt::format("; checkpoint restore in {} s needs {}",
                            Num(kDefaultCheckpointRestoreTime.value(), 0), Rate(restore));
      }
      line += fmt::format(
          " -> {} (the policy's fixed figure was {}{})", Rate(n.storage_bw), Bw(rule),
          ratio > 2 ? fmt::format(", {}x this plan's need", Num(ratio, ratio < 10 ? 1 : 0)) : "");
      for (auto& r : n.rationale) {
        if (r.rfind("storage:", 0) == 0) r = line;
      }
    }
  }
  // Every policy: offloaded optimizer / parameter states live in host RAM on top of the rule.
  if (in.training && in.host_offload_per_gpu.value() > 0) {
    const Bytes off = in.host_offload_per_gpu * static_cast<double>(in.gpus_per_node);
    n.ram = n.ram + off;
    if (in.explain)
      n.rationale.push_back(fmt::format(
          "RAM raised by the offloaded states: {} GPUs x {} = {} (optimizer/parameter offload "
          "keeps them in host memory)",
          in.gpus_per_node, Mem(in.host_offload_per_gpu), Mem(off)));
  }
  return n;
}

bool RamAdequate(const HostNeeds& needs, const InstanceType& inst) {
  return inst.ram >= needs.ram || inst.ram.value() >= needs.ram.value() * (1 - kRamTolerance);
}

std::vector<HostFinding> CheckHost(const HostNeeds& needs, const InstanceType& inst) {
  std::vector<HostFinding> out;

  {  // CPU: cloud vCPUs are hardware threads, 2 per core. The catalog lists threads for the
     // bare-metal shapes too (OCI BM.GPU.H100.8: 224 = 2 x 56 cores x 2), so they are halved.
    HostFinding f =
        MakeFinding("cpu", static_cast<double>(needs.cpu_cores), inst.vcpus / 2.0, "cores");
    f.ok = f.has >= f.needed;
    const std::string how = IsBareMetal(inst) ? "bare-metal threads, 2 per core"
                                              : "vCPUs are hardware threads, 2 per core";
    f.text =
        fmt::format("needs {} cores, instance has {} ({} vCPUs; {}): {}", needs.cpu_cores,
                    Num(f.has, 1), inst.vcpus, how,
                    f.ok ? "ok" : "too few; " + needs.cpu_short + ", pick a shape with more vCPUs");
    out.push_back(f);
  }
  {  // RAM, in decimal GB (the catalog's RAM and the need are binary; GiB shown beside them).
    HostFinding f = MakeFinding("ram", ToGB(needs.ram), ToGB(inst.ram), "GB");
    const bool full = inst.ram >= needs.ram;
    f.ok = RamAdequate(needs, inst);
    const std::string verdict =
        full   ? "ok"
        : f.ok ? "ok, within the 5% DIMM rounding tolerance (guide A7 takes 1536 GiB for 1600 GiB)"
               : "too little; pick a shape with more memory";
    f.text = fmt::format(
        "needs {} GB RAM, instance has {} GB: {} (decimal GB; {} needed, {} "
        "installed)",
        Num(f.needed, 0), Num(f.has, 0), verdict, Mem(needs.ram), Mem(inst.ram));
    out.push_back(f);
  }
  {  // System disk: the boot volume is chosen at launch, not part of the instance type.
    HostFinding f = MakeFinding("system_disk", ToGB(needs.system_disk), 0, "GB");
    f.ok = true;
    f.text = fmt::format(
        "system disk {} needed: set the boot volume to at least this at launch (cloud block "
        "storage, not part of the instance type): ok",
        Disk(needs.system_disk));
    out.push_back(f);
  }
  {  // Data disk on local NVMe (A9).
    HostFinding f = MakeFinding("data_disk", ToGB(needs.data_disk), ToGB(inst.local_nvme), "GB");
    if (needs.data_disk.value() <= 0) {
      f.ok = true;
      f.text =
          fmt::format("no data disk needed, instance has {} local NVMe: ok", Disk(inst.local_nvme));
    } else if (inst.local_nvme.value() <= 0 && !inst.local_nvme_known) {
      f.ok = true;  // unknown is not a failure
      f.text = fmt::format(
          "data disk {} needed; local NVMe not recorded for this shape: check the provider's "
          "spec, or attach network storage of that size",
          Disk(needs.data_disk));
    } else if (inst.local_nvme.value() <= 0) {
      f.ok = false;
      f.text = fmt::format(
          "data disk {} local NVMe needed, instance has 0: attach network storage or pick a "
          "local-NVMe instance",
          Disk(needs.data_disk));
    } else {
      f.ok = inst.local_nvme >= needs.data_disk;
      f.text = fmt::format(
          "data disk {} local NVMe needed, instance has {}: {}", Disk(needs.data_disk),
          Disk(inst.local_nvme),
          f.ok ? "ok"
               : "too small; attach network storage for the rest or pick a larger local-NVMe "
                 "instance");
    }
    out.push_back(f);
  }
  {  // Storage read bandwidth. The catalog has no drive count: local NVMe is counted as drives
     // of 3.84 TB at ~7 GB/s each (A9); without it, network storage at ~1 GB/s (A9: 1-2 GB/s),
     // capped by the instance network.
    BytesPerSec has;
    std::string how;
    if (inst.local_nvme.value() > 0) {
      const int drives = std::max(
          1, static_cast<int>(std::ceil(ToGB(inst.local_nvme) / 1000 / kInstanceDriveTB - 1e-9)));
      has = kLocalNvmeDriveBw * static_cast<double>(drives);
      how = fmt::format("local NVMe, estimated {} drive(s) of ~{} TB at ~{} per guide A9", drives,
                        Num(kInstanceDriveTB, 2), Bw(kLocalNvmeDriveBw));
    } else {
      has = kNetworkStorageBw;
      if (inst.network.value() > 0) has = std::min(has, ToBytesPerSec(inst.network));
      how = inst.local_nvme_known
                ? "no local NVMe: network storage, typically 1-2 GB/s per guide A9"
                : "local NVMe not recorded for this shape: network storage, typically 1-2 GB/s "
                  "per guide A9";
    }
    HostFinding f =
        MakeFinding("storage_bw", needs.storage_bw.value() / 1e9, has.value() / 1e9, "GB/s");
    f.ok = has >= needs.storage_bw;
    // Unknown is unknown: the shape may have local NVMe that the catalog does not record.
    const bool unknown = !f.ok && inst.local_nvme.value() <= 0 && !inst.local_nvme_known;
    if (unknown) f.ok = true;
    f.text = fmt::format(
        "needs {} storage read, instance has about {} ({}): {}", Rate(needs.storage_bw), Bw(has),
        how,
        unknown ? "unknown, check the provider's spec or use a parallel file system"
        : f.ok  ? "ok"
                : "too slow: input will starve the GPUs (guides: GPU utilisation under 70%, "
                  "check data loading); pick a local-NVMe instance, more drives or a parallel "
                  "file system");
    out.push_back(f);
  }
  {  // Inter-node network: RDMA (B8) at the needed rate.
    const BitsPerSec has = inst.inter_node_bw.value_or(inst.network);
    HostFinding f =
        MakeFinding("network", needs.network.value() / 1e9, has.value() / 1e9, "Gbit/s");
    if (needs.network.value() <= 0) {
      f.ok = true;
      f.text = "single node: no inter-node network needed: ok";
    } else if (inst.inter_node_fabric == InterNodeFabric::kNone) {
      f.ok = false;
      f.text = fmt::format(
          "needs {} RDMA per node, instance has no RDMA fabric recorded ({} Ethernet): "
          "multi-node training needs RDMA (guide B8); pick an instance with InfiniBand, EFA or "
          "RoCE",
          Net(needs.network), Net(has));
    } else if (has >= needs.network || !needs.exposed_comm_share) {
      f.ok = has >= needs.network;
      f.text = fmt::format("needs {} RDMA per node, instance has {} ({}): {}", Net(needs.network),
                           Net(has), InterNodeFabricName(inst.inter_node_fabric),
                           f.ok ? "ok" : "too slow; communication will dominate the step time");
    } else {
      // Below the floor, the plan's own step (computed at this fabric) is the verdict.
      const double share = *needs.exposed_comm_share;
      f.ok = share <= kFabricExposedShareOk;
      f.text = fmt::format(
          "needs {} RDMA per node by the {} per-GPU floor, instance has {} ({}): {} the job's "
          "step at {} leaves {:.0f}% of it to exposed inter-node communication{}",
          Net(needs.network), Net(kRdmaFloorPerGpu), Net(has),
          InterNodeFabricName(inst.inter_node_fabric),
          f.ok ? "below the floor, but" : "too slow:", Net(has), 100 * share,
          f.ok ? ": ok" : "; a faster fabric, fewer nodes or a layout that communicates less");
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace gpuplan
