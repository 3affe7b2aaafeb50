// Private to src/plan: the serving planner's evaluation of one hardware shape (serve_eval.cc):
// the compute device of an instance row, the layouts it can serve and the best concurrency of
// each under the job's SLOs. Also used by the load curves of `simulate` and `tco`.
#pragma once

#include <vector>

#include "gpuplan/serve_planner.h"

namespace gpuplan::serve_internal {

// p99 queueing wait of an M/M/c queue: -ln(0.01) * S * rho / (c * (1 - rho)).
double QueueP99(double service_s, double rho, int servers);

// The compute device of a CPU instance: vCPUs are hardware threads, so cores = vCPUs x
// cores/threads of the CPU (Graviton and some EPYC shapes have no SMT); large shapes span two
// sockets.
ComputeDevice CpuInstanceDevice(const InstanceType& inst, const Cpu& cpu, const Calibration& cal);

// One serving layout of an instance: tensor parallel within a node, pipeline stages across
// nodes (pp = nodes per replica).
struct ServeLayout {
  int tp = 1;
  int pp = 1;
};

// What the serving estimate of an instance row reads from its hardware: the accelerator (or
// CPU and vCPUs), GPUs per node and links. Rows that share it (clouds, regions, sizes) get the
// same layouts and the same estimates, so a plan call evaluates each shape once.
struct ShapeKey {
  const void* hw = nullptr;  // the Accelerator, or the Cpu of a CPU-only row
  int count = 0;             // GPUs per node; vCPUs for a CPU-only row
  IntraNodeLink intra = IntraNodeLink::kNone;
  InterNodeFabric fabric = InterNodeFabric::kNone;
  double inter_bw = -1;  // bits/s; -1 = none recorded
  bool operator==(const ShapeKey&) const = default;
};

// The best concurrency of one layout on one shape (best_cap 0: nothing meets the SLOs).
struct LayoutEval {
  ServeLayout layout;
  bool fits = false;  // the model and one request's KV fit (LLMs)
  double best_cap = 0;
  ServePerf best;
  int best_b = 0;
  double ttft = 0, tpot = 0, e2e = 0;
  // The planned utilisation: the job's target, or lower where queueing missed an SLO at it.
  double utilization = 0;
  // Some concurrency missed an SLO whose queueing term falls with the utilisation (TTFT, e2e):
  // a lower planned utilisation may meet it. False when only TPOT (a service time) missed.
  bool queue_limited = false;
};

struct ShapeEval {
  ShapeKey key;
  BytesPerSec stage_link;  // node fabric per direction, achievable (pipeline stages)
  std::vector<LayoutEval> layouts;
};

// Calibration values the planner itself reads, looked up once per plan call.
struct ServeConstants {
  Seconds stage_latency;
  double eff_infiniband = 0, eff_efa = 0, eff_roce = 0, eff_tcp = 0;
  explicit ServeConstants(const Calibration& cal)
      : stage_latency(cal.Get("link_latency_us.inter", 15) * 1e-6),
        eff_infiniband(FabricEfficiency(InterNodeFabric::kInfiniband, cal)),
        eff_efa(FabricEfficiency(InterNodeFabric::kEfa, cal)),
        eff_roce(FabricEfficiency(InterNodeFabric::kRoce, cal)),
        eff_tcp(FabricEfficiency(InterNodeFabric::kNone, cal)) {}
  double Fabric(InterNodeFabric f) const {
    switch (f) {
      case InterNodeFabric::kInfiniband:
        return eff_infiniband;
      case InterNodeFabric::kEfa:
      case InterNodeFabric::kGpuDirectTcpx:
        return eff_efa;
      case InterNodeFabric::kRoce:
      case InterNodeFabric::kErdma:
        return eff_roce;
      case InterNodeFabric::kNone:
        break;
    }
    return eff_tcp;
  }
};

// The largest capacity at the target utilisation whose p99 latencies meet the SLOs, over the
// concurrencies 1, 2, 4, ... up to the KV-bound maximum (LLMs) or forward batches 1..256 (for
// encoders, the smallest batch that needs no more replicas at the job's load). Where queueing
// misses an SLO at the target, at the highest lower utilisation that meets it (`utilization`).
LayoutEval EvaluateLayout(const ServeJobSpec& job, const ComputeDevice& dev, ServeLayout layout,
                          BytesPerSec stage_link, Seconds stage_latency, const Calibration& cal);

// The layouts of a GPU shape and their evaluations, appended to `se.layouts`: each
// tensor-parallel width within a node that divides the heads; when none holds the model, tp over
// the whole node x the fewest pipeline stages across nodes that hold it, over the node fabric
// (vLLM multi-node serving).
void EvaluateGpuShape(const ServeJobSpec& job, const InstanceType& inst, const ComputeDevice& dev,
                      const ServeConstants& k, const Calibration& cal, ShapeEval& se);

}  // namespace gpuplan::serve_internal
