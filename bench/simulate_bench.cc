// Google Benchmark: `simulate` over a week of per-minute load (10,080 intervals, 604,800 one-second
// steps per policy). The target: a week simulates in under one second.
// Run: ./build/bench/gpuplan_bench --benchmark_filter=Simulate   (figures in docs/performance.md)
#include <benchmark/benchmark.h>

#include "gpuplan/catalog.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/simulate.h"

namespace gpuplan {
namespace {

struct WeekSetup {
  Catalog cat;
  ServeJobSpec job;
  LoadTrace trace;
  WeekSetup() {
    cat = *LoadBuiltinCatalog();
    job.model = *FindPreset("llama-3.1-8b");
    job.input_len = 512;
    job.output_len = 256;
    job.ttft_p99_ms = 2000;
    job.tpot_p99_ms = 100;
    job.clouds = {"aws"};
    SyntheticTraceOptions o;
    o.days = 7;
    o.peak_rps = 40;
    o.bursts_per_day = 2;
    trace = *SyntheticTrace(o);
  }
};

const WeekSetup& Week() {
  static const WeekSetup w;
  return w;
}

// One policy (HPA with the default behavior) and static peak provisioning, the plan included.
void BM_SimulateWeekHpa(benchmark::State& state) {
  const WeekSetup& w = Week();
  SimulationOptions o;
  o.policies = {ScalingPolicyKind::kHpa};
  for (auto _ : state) {
    auto r = Simulate(w.job, w.cat, DefaultCalibration(), w.trace, o);
    benchmark::DoNotOptimize(r);
  }
  state.counters["intervals"] = static_cast<double>(w.trace.rps.size());
}
BENCHMARK(BM_SimulateWeekHpa)->Unit(benchmark::kMillisecond);

// Every policy (hpa, kpa, saturation, schedule, static) over the same week.
void BM_SimulateWeekAllPolicies(benchmark::State& state) {
  const WeekSetup& w = Week();
  SimulationOptions o;
  o.policies = {ScalingPolicyKind::kHpa, ScalingPolicyKind::kKpa, ScalingPolicyKind::kSaturation,
                ScalingPolicyKind::kSchedule, ScalingPolicyKind::kStatic};
  for (auto _ : state) {
    auto r = Simulate(w.job, w.cat, DefaultCalibration(), w.trace, o);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_SimulateWeekAllPolicies)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplan
