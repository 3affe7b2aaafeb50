// The hardware a training step runs on: link bandwidths per GPU (NVLink per direction, PCIe by
// generation), the calibration keys of each link, the hardware view of an instance, and the
// step's calibration constants resolved once per hardware shape (StepConstants).
#include "estimate/hardware.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "estimate/calibration_lookup.h"

namespace gpuplan {
namespace internal {

BytesPerSec IntraBandwidth(const Accelerator& acc, IntraNodeLink link) {
  switch (link) {
    case IntraNodeLink::kNvlink:
    case IntraNodeLink::kNvswitch:
    case IntraNodeLink::kInfinityFabric:
    case IntraNodeLink::kNeuronLink:
    case IntraNodeLink::kIci:
      if (acc.intra_link_bw.value() > 0 && acc.intra_link.rfind("pcie", 0) != 0) {
        return acc.intra_link_bw * 0.5;
      }
      [[fallthrough]];
    case IntraNodeLink::kPcie:
    case IntraNodeLink::kNone: {
      // PCIe x16 per direction: gen3 16, gen4 32, gen5 64 GB/s (nominal, 128b/130b).
      int gen = acc.pcie_gen > 0 ? acc.pcie_gen : 4;
      return GBps(16.0 * std::pow(2.0, std::max(0, gen - 3)));
    }
  }
  return GBps(32);
}

const char* LinkKey(IntraNodeLink l) {
  switch (l) {
    case IntraNodeLink::kNvlink:
    case IntraNodeLink::kNvswitch:
    case IntraNodeLink::kNeuronLink:
    case IntraNodeLink::kIci:
      return "link_efficiency.nvlink";
    case IntraNodeLink::kInfinityFabric:
      return "link_efficiency.infinity-fabric";
    case IntraNodeLink::kPcie:
    case IntraNodeLink::kNone:
      return "link_efficiency.pcie";
  }
  return "link_efficiency.pcie";
}

const char* FabricKey(InterNodeFabric f) {
  switch (f) {
    case InterNodeFabric::kInfiniband:
      return "link_efficiency.infiniband";
    case InterNodeFabric::kEfa:
    case InterNodeFabric::kGpuDirectTcpx:
      return "link_efficiency.efa";
    case InterNodeFabric::kRoce:
    case InterNodeFabric::kErdma:
      return "link_efficiency.roce";
    case InterNodeFabric::kNone:
      return "link_efficiency.tcp";
  }
  return "link_efficiency.tcp";
}

BytesPerSec HostLink(const HardwareView& hw) {
  return hw.host_bw.value() > 0 ? hw.host_bw : IntraBandwidth(*hw.acc, IntraNodeLink::kPcie);
}

}  // namespace internal

using internal::FabricKey;
using internal::IntraBandwidth;
using internal::LinkKey;

HardwareView HardwareFromInstance(const InstanceType& inst, const Accelerator& acc, int nodes) {
  HardwareView hw;
  hw.acc = &acc;
  hw.gpus_per_node = std::max(1, inst.accelerator_count);
  hw.nodes = std::max(1, nodes);
  hw.intra = inst.intra_node_link;
  hw.inter = inst.inter_node_fabric;
  hw.intra_bw =
      IntraBandwidth(acc, inst.intra_node_link == IntraNodeLink::kNone ? IntraNodeLink::kPcie
                                                                       : inst.intra_node_link);
  double node_bits = inst.inter_node_bw ? inst.inter_node_bw->value() : inst.network.value();
  hw.inter_bw = BytesPerSec(node_bits / 8.0 / hw.gpus_per_node);
  hw.host_bw = IntraBandwidth(acc, IntraNodeLink::kPcie);
  // An 8-GPU OAM board wires every GPU to each of its 7 peers (AMD MI300X data sheet: 7 x 128
  // GB/s bidirectional Infinity Fabric links = 896 GB/s); the datasheet total is `intra_bw`.
  if (inst.intra_node_link == IntraNodeLink::kInfinityFabric) hw.mesh_links = 7;
  // A rack-scale NVLink domain (GB200 NVL72) reaches past the machine over the same NVLink.
  if (inst.intra_node_link == IntraNodeLink::kNvswitch ||
      inst.intra_node_link == IntraNodeLink::kNvlink)
    hw.scaleup_gpus = acc.nvlink_domain;
  return hw;
}

BytesPerSec HardwareView::IntraBwFor(int group) const {
  if (mesh_links <= 0 || group <= 1) return intra_bw;
  return intra_bw * (std::min(group - 1, mesh_links) / static_cast<double>(mesh_links));
}

StepConstants StepConstants::From(const Calibration& cal, const HardwareView& hw) {
  // One pass over the calibration table for every constant of the step (Calibration::Get would
  // scan it once per key).
  const internal::CalKey keys[] = {
      {"gemm_knee_flops_per_byte", 160},
      {"hbm_efficiency", 0.8},
      {"attention_efficiency", 0.55},
      {"kernel_overhead_us", 4},
      {"fp8_gemm_efficiency_factor", 0.7},
      {"elementwise_passes_fused", 10},
      {"elementwise_passes_eager", 24},
      {"kernels_per_layer", 24},
      {"attention_backward_factor", 2.5},
      {"cnn_batch_knee", 16},
      {"cnn_efficiency_factor", 0.6},
      {"cnn_train_elementwise_passes", 8},
      {LinkKey(hw.intra), 0.7},
      {FabricKey(hw.inter), 0.7},
      {"link_latency_us.intra", 5},
      {"link_latency_us.inter", 15},
      {"tp_comm_overlap", 0.0},
      {"param_gather_overlap", 0.0},
      {"zero3_overlap", 0.7},
      {"dp_overlap", 0.8},
      {"host_link_efficiency", 0.8},
      {"host_memory_gbps_per_gpu", 32},
      {"nf4_dequant_bytes_per_param", 2.5},
      {"cnn_frozen_norm_forward_passes", 1},
      {"cnn_frozen_norm_backward_passes", 3},
      {"cnn_train_elementwise_passes_eager", 13},
      {"cnn_knee_reference_gflops", 8.18},
  };
  double v[std::size(keys)];
  internal::GetAll(cal, keys, v);
  StepConstants k;
  const ArchEfficiency ae = cal.ForAccelerator(*hw.acc);
  k.gemm_eff = ae.gemm_eff;
  k.power_cap = ae.power_cap;
  k.gemm_knee = v[0];
  k.hbm_eff = v[1];
  // Attention kernels per architecture where the framework's differ (attention_efficiency.hopper:
  // FlashAttention-2 on Hopper), else the plain entry.
  k.attn_eff = cal.ForArch("attention_efficiency", hw.acc->arch, v[2]);
  k.kernel_s = v[3] * 1e-6;
  k.fp8_factor = v[4];
  k.passes_fused = v[5];
  k.passes_eager = v[6];
  k.kernels_per_layer = v[7];
  k.attn_bwd_factor = v[8];
  k.cnn_knee_flops = v[9] * v[std::size(keys) - 1] * 1e9;
  k.cnn_factor = v[10];
  k.cnn_train_passes = v[11];
  k.intra_link_eff = v[12];
  k.inter_link_eff = v[13];
  k.lat_intra_s = v[14] * 1e-6;
  k.lat_inter_s = v[15] * 1e-6;
  k.tp_overlap = std::clamp(v[16], 0.0, 1.0);
  k.param_gather_overlap = v[17];
  k.zero3_overlap = v[18];
  k.dp_overlap = v[19];
  k.host_link_eff = v[20];
  k.host_memory_bw = v[21] * 1e9;
  k.nf4_dequant_bytes = v[22];
  k.cnn_frozen_fwd_passes = v[23];
  k.cnn_frozen_bwd_passes = v[24];
  k.cnn_train_passes_eager = v[25];
  return k;
}

}  // namespace gpuplan
