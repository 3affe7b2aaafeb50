// Private to src/estimate: the hardware a training step runs on (hardware.cc): per-GPU link
// bandwidths and the calibration keys of each link. HardwareFromInstance and
// StepConstants::From (perf.h) are defined beside them.
#pragma once

#include "gpuplan/perf.h"

namespace gpuplan::internal {

// Per-direction bandwidth of one GPU's scale-up link. Vendors quote NVLink bidirectional.
BytesPerSec IntraBandwidth(const Accelerator& acc, IntraNodeLink link);

// Full calibration keys of a link's achievable efficiency (string literals: no allocation in
// the search loop).
const char* LinkKey(IntraNodeLink l);
const char* FabricKey(InterNodeFabric f);

// GPU <-> host bandwidth of the view (offload traffic): its host link, else PCIe of the GPU.
BytesPerSec HostLink(const HardwareView& hw);

}  // namespace gpuplan::internal
