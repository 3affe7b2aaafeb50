// Google Benchmark: training evaluations per second on one core, and the full layout space of
// Calculon's llm-optimal-execution example (530B: hidden 20480, 105 layers, 128 heads, seq
// 2048, global batch 2520, on 5128 A100-80GB): every tp x pp x dp factorisation of 5128 x
// micro-batch (divisors of the per-replica batch) x recompute x ZeRO stage x sequence parallel.
#include <benchmark/benchmark.h>

#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/plan.h"
#include "gpuplan/planner.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {
namespace {

ModelSpec Megatron530B() {
  ModelSpec m;
  m.name = "Megatron-Turing 530B";
  m.arch = ModelArch::kDense;
  m.layers = 105;
  m.hidden = 20480;
  m.heads = 128;
  m.kv_heads = 128;
  m.head_dim = 160;
  m.ffn_hidden = 4 * 20480;
  m.gated_mlp = false;
  m.vocab = 51200;
  m.norm = NormKind::kLayerNorm;
  return m;
}

std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

struct Space {
  std::vector<Parallelism> pars;
  std::vector<TrainMemoryOptions> opts;
};

Space Calculon530BSpace(int procs, int batch) {
  Space s;
  for (int tp : Divisors(procs)) {
    for (int pp : Divisors(procs / tp)) {
      int dp = procs / (tp * pp);
      if (batch % dp != 0) continue;
      for (int mb : Divisors(batch / dp)) {
        for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
          for (int z = 0; z <= 3; ++z) {
            for (bool sp : {false, true}) {
              if (sp && tp == 1) continue;
              Parallelism par;
              par.tp = tp;
              par.pp = pp;
              par.dp = dp;
              par.zero_stage = z;
              par.sequence_parallel = sp;
              TrainMemoryOptions o;
              o.micro_batch = mb;
              o.recompute = rc;
              o.seq_len = 2048;
              o.precision = Precision::kBf16;
              o.notes = false;
              s.pars.push_back(par);
              s.opts.push_back(o);
            }
          }
        }
      }
    }
  }
  return s;
}

void BM_Calculon530BFullSpace(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  const Accelerator* a100 = cat->FindAccelerator("A100-SXM4-80GB");
  InstanceType node;
  node.accelerator_count = 8;
  node.intra_node_link = IntraNodeLink::kNvswitch;
  node.inter_node_fabric = InterNodeFabric::kInfiniband;
  node.inter_node_bw = Gbps(8 * 200);
  const int procs = 5128, batch = 2520;
  HardwareView hw = HardwareFromInstance(node, *a100, procs / 8);
  const ModelSpec m = Megatron530B();
  const Calibration& cal = DefaultCalibration();
  TrainJob job;
  job.global_batch = batch;
  Space space = Calculon530BSpace(procs, batch);
  long fits = 0;
  for (auto _ : state) {
    double best = 1e300;
    fits = 0;
    // As the planner's search loop does: the step's calibration values once per shape.
    const StepConstants k = StepConstants::From(cal, hw);
    for (size_t i = 0; i < space.pars.size(); ++i) {
      TrainEval ev = EvaluateTraining(m, space.pars[i], space.opts[i], job, hw, cal, 1.0, nullptr, &k);
      if (ev.fits) {
        ++fits;
        if (ev.step.total.value() < best) best = ev.step.total.value();
      }
    }
    benchmark::DoNotOptimize(best);
  }
  state.counters["configs"] = static_cast<double>(space.pars.size());
  state.counters["fitting"] = static_cast<double>(fits);
  state.counters["configs_per_s"] = benchmark::Counter(
      static_cast<double>(space.pars.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Calculon530BFullSpace)->Unit(benchmark::kMillisecond);

// One memory + step-time evaluation (Llama-3.1-70B, tp 8, pp 4, dp 16 on H100 nodes).
void BM_EvaluateTrainingOne(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  const Accelerator* h100 = cat->FindAccelerator("H100-SXM5-80GB");
  InstanceType node;
  node.accelerator_count = 8;
  node.intra_node_link = IntraNodeLink::kNvswitch;
  node.inter_node_fabric = InterNodeFabric::kInfiniband;
  node.inter_node_bw = Gbps(3200);
  HardwareView hw = HardwareFromInstance(node, *h100, 64);
  const ModelSpec* m = FindPreset("Llama-3.1-70B");
  Parallelism par;
  par.tp = 8;
  par.pp = 4;
  par.dp = 16;
  par.zero_stage = 1;
  par.sequence_parallel = true;
  TrainMemoryOptions o;
  o.seq_len = 8192;
  o.micro_batch = 1;
  o.recompute = Recompute::kSelective;
  o.notes = false;
  TrainJob job;
  job.global_batch = 512;
  for (auto _ : state) {
    TrainEval ev = EvaluateTraining(*m, par, o, job, hw, DefaultCalibration(), 0.8);
    benchmark::DoNotOptimize(ev);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateTrainingOne);

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// A full multi-cloud serving search: every priced GPU instance x tensor-parallel width x
// concurrency for Llama-2-13B at 8 req/s with TTFT/TPOT SLOs (the issue's < 50 ms target).
void BM_PlanServingMultiCloud(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  ServeJobSpec job;
  job.model = *FindPreset("Llama-2-13B");
  job.weight_precision = Precision::kFp16;
  job.qps = 8;
  job.input_len = 512;
  job.output_len = 256;
  job.ttft_p99_ms = 2000;
  job.tpot_p99_ms = 100;
  long evaluated = 0;
  for (auto _ : state) {
    auto r = PlanServing(job, *cat, DefaultCalibration());
    evaluated = r->evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_PlanServingMultiCloud)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplan
