// Google Benchmark: catalog load, and a memory estimate of every preset on every accelerator.
// Run: ./build/bench/gpuplan_bench   (figures recorded in docs/performance.md)
#include <benchmark/benchmark.h>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"

namespace gpuplan {
namespace {

void BM_LoadBuiltinCatalog(benchmark::State& state) {
  for (auto _ : state) {
    auto cat = LoadBuiltinCatalog();
    benchmark::DoNotOptimize(cat);
  }
}
BENCHMARK(BM_LoadBuiltinCatalog)->Unit(benchmark::kMillisecond);

void BM_ParsePresets(benchmark::State& state) {
  // The preset library parses once per process; this measures one parse of all config.json files.
  for (auto _ : state) {
    size_t n = 0;
    for (const auto& m : Presets()) n += m.name.size();
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_ParsePresets);

// Catalog load + training and serving memory estimate of every preset on every accelerator at
// 1..1024 GPUs (the work `gpuplan memory` does when nothing is pinned).
void BM_MemoryEveryPresetEveryAccelerator(benchmark::State& state) {
  const auto& presets = Presets();
  std::int64_t estimates = 0;
  for (auto _ : state) {
    auto cat = LoadBuiltinCatalog();
    double sink = 0;
    for (const auto& m : presets) {
      for (const auto& acc : cat->accelerators) {
        const double limit = acc.memory.value() * 0.8;
        for (int n = 1; n <= 1024; n *= 2) {
          Parallelism par;
          par.dp = n;
          par.zero_stage = n > 1 ? 3 : 0;
          TrainMemoryOptions o;
          MemoryBreakdown b = EstimateTrainingMemory(m, par, o);
          ++estimates;
          if (b.Total().value() <= limit) break;
        }
        InferMemoryOptions io;
        io.engine = Engine::kVllm;
        InferMemory r = EstimateInferenceMemory(m, io, acc.memory);
        sink += static_cast<double>(r.kv_tokens);
        ++estimates;
      }
    }
    benchmark::DoNotOptimize(sink);
  }
  state.counters["estimates"] =
      benchmark::Counter(static_cast<double>(estimates), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MemoryEveryPresetEveryAccelerator)->Unit(benchmark::kMillisecond);

void BM_TrainingMemoryEstimate(benchmark::State& state) {
  const ModelSpec* m = FindPreset("Llama-3.1-70B");
  Parallelism par;
  par.tp = 8;
  par.dp = 8;
  par.zero_stage = 1;
  TrainMemoryOptions o;
  o.seq_len = 8192;
  for (auto _ : state) {
    MemoryBreakdown b = EstimateTrainingMemory(*m, par, o);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_TrainingMemoryEstimate);

}  // namespace
}  // namespace gpuplan
