// Shared roofline helpers for the training and serving estimators (internal).
#pragma once

#include <algorithm>

namespace gpuplan::internal {

// One GEMM (M x K) x (K x N): roofline with a size-dependent efficiency. Small GEMMs (low
// arithmetic intensity, partial waves) reach a fraction of the asymptotic rate:
// eff = eff_max * I / (I + knee), I = FLOPs / bytes. A board whose power limit lowers its clock
// under continuous tensor load caps eff at `power_cap` (the sustained fraction of peak; 1 =
// none): large GEMMs hit the cap, small ones (idle gaps, lower power) run at their size rate.
inline double GemmSeconds(double M, double N, double K, double elem_bytes, double peak,
                          double eff_max, double knee, double mem_bw, double kernel_s,
                          double power_cap = 1.0) {
  if (M <= 0 || N <= 0 || K <= 0) return 0;
  double flops = 2 * M * N * K;
  double bytes = elem_bytes * (M * K + K * N + M * N);
  double intensity = flops / bytes;
  double eff = std::min(eff_max * intensity / (intensity + knee), power_cap);
  return std::max(flops / (peak * eff), bytes / mem_bw) + kernel_s;
}

// The factor an FP4 (NVFP4) GEMM's achievable rate takes at its own peak, given FP8's
// (`fp8_factor`, fp8_gemm_efficiency_factor) and the two dense peaks (r = fp4 / fp8: 2 on B200
// and GB200; 2 where no FP8 peak is given).
// The quantisation around a low-precision GEMM (scaling casts of its inputs, amax and block-scale
// reductions) is memory-bound work per element, the same for 8-bit and 4-bit operands; only the
// GEMM itself runs r times faster. An FP8 GEMM of pure time t takes t / fp8_factor, so its casts
// take t (1 / fp8_factor - 1); the FP4 GEMM takes t / r plus the same casts:
// 1 / (1 + r (1 / fp8_factor - 1)) of its peak. With 0.8 and r = 2: 0.67, a GEMM rate 1.67x
// FP8's, not 2x (NVIDIA reports 1.35-1.44x end to end for Llama 3 8B and 3.1 405B NVFP4 over
// FP8 on GB200). docs/model.md 5.2.
inline double Fp4GemmFactor(double fp8_factor, double fp4_peak, double fp8_peak) {
  const double r = fp4_peak > 0 && fp8_peak > 0 ? fp4_peak / fp8_peak : 2.0;
  if (fp8_factor <= 0) return fp8_factor;
  return 1.0 / (1.0 + r * (1.0 / fp8_factor - 1.0));
}

// The share of its large-batch rate a convolutional forward of `fwd_flops` reaches: a small
// forward leaves SMs idle, half the rate at `knee_flops` of work (cnn_batch_knee samples of the
// reference network, ResNet-50 at 224x224), so a network whose one sample is hundreds of
// ResNet-50s (a diffusion UNet) fills the GPU at batch 1. docs/model.md 10.4.
inline double ConvFill(double fwd_flops, double knee_flops) {
  return fwd_flops > 0 ? fwd_flops / (fwd_flops + knee_flops) : 1.0;
}

// All-reduce of `bytes` over n ranks: a ring's bandwidth term (2(n-1)/n of the bytes per rank)
// plus the latency of the algorithm NCCL picks. A ring pays 2(n-1) hops; beyond a node NCCL's
// double binary tree (NCCL 2.4: "logarithmic latency") pays a chain through the node's 8 GPUs
// and log2 of the nodes up and down, so a ring of thousands of ranks never sets the latency
// (3584 ranks: 7166 ring hops, 32 tree hops).
inline double AllReduceSeconds(double bytes, int n, double bw, double latency_s) {
  if (n <= 1 || bytes <= 0) return 0;
  double hops = 2.0 * (n - 1);
  if (n > 8) {
    int tree_levels = 0;
    while ((8 << tree_levels) < n) ++tree_levels;
    hops = std::min(hops, 2.0 * (tree_levels + 7));
  }
  return 2.0 * (n - 1) / n * bytes / bw + hops * latency_s;
}

// Ring all-gather (or reduce-scatter) of `bytes` over n ranks: half an all-reduce.
inline double AllGatherSeconds(double bytes, int n, double bw, double latency_s) {
  if (n <= 1 || bytes <= 0) return 0;
  return 1.0 * (n - 1) / n * bytes / bw + (n - 1) * latency_s;
}

}  // namespace gpuplan::internal
