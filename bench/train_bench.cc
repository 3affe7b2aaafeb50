// Google Benchmark: training evaluations per second on one core, and the physical layout
// space of Calculon's llm-optimal-execution example (530B: hidden 20480, 105 layers, 128
// heads, seq 2048, global batch 2520, on 5128 A100-80GB): every valid tp x pp x dp (tp
// dividing the heads within a node, pp up to the layers, tp x pp x dp = 5128, the batch
// rounded down to one the dp runs) x micro-batch (divisors of the per-rank batch) x recompute
// (none, selective, block 1/4 1/2 3/4, full) x ZeRO stage x offload (none, optimizer,
// optimizer + parameters) x interleaving, kept only where a framework runs it.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/plan.h"
#include "gpuplan/planner.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {
namespace {

// Calculon's 530B example, from the repository's config.json for it (the model the CLI plans).
ModelSpec Megatron530B() {
  static const ModelSpec m = [] {
    auto r = ResolveModel(
        std::string(GPUPLAN_SOURCE_DIR) + "/examples/models/megatron-turing-530b.json", "bench");
    if (!r.ok()) std::abort();
    return *r;
  }();
  return m;
}

struct Space {
  std::vector<Parallelism> pars;
  std::vector<TrainMemoryOptions> opts;
  std::vector<int> batches;
};

Space Calculon530BSpace(const ModelSpec& m, const HardwareView& hw, int batch) {
  Space s;
  const int procs = hw.gpus();
  for (int tp = 1; tp <= hw.gpus_per_node; ++tp) {
    for (int pp = 1; pp <= m.layers; ++pp) {
      if (procs % (tp * pp) != 0) continue;
      const int dp = procs / (tp * pp);
      const int gb = batch / dp * dp;  // rounded down to a batch this dp runs
      if (gb == 0) continue;
      for (int vpp = 1; vpp <= m.layers + 2; ++vpp) {
        for (int mb = 1; mb <= gb / dp; ++mb) {
          if ((gb / dp) % mb != 0) continue;
          for (int rc = 0; rc < 3; ++rc) {
            const int stage = (m.layers + pp - 1) / pp;
            for (int q = rc == 2 ? 1 : 4; q <= 4; ++q) {
              for (int z = 0; z <= 3; ++z) {
                for (int off = 0; off < 3; ++off) {
                  Parallelism par;
                  par.tp = tp;
                  par.pp = pp;
                  par.dp = dp;
                  par.vpp = vpp;
                  par.zero_stage = z;
                  par.sequence_parallel = tp > 1;
                  TrainMemoryOptions o;
                  o.micro_batch = mb;
                  o.recompute = static_cast<Recompute>(rc);
                  o.recompute_layers = q < 4 ? stage * q / 4 : 0;
                  o.optimizer_offload = off >= 1;
                  o.param_offload = off == 2;
                  o.seq_len = 2048;
                  o.precision = Precision::kBf16;
                  o.notes = false;
                  TrainJob job;
                  job.global_batch = gb;
                  if (!LayoutError(m, par, o, job, hw, true).empty()) continue;
                  if (!FrameworkFor(TrainFramework::kGeneric, par, o)) continue;
                  s.pars.push_back(par);
                  s.opts.push_back(o);
                  s.batches.push_back(gb);
                }
              }
            }
          }
        }
      }
    }
  }
  return s;
}

HardwareView Calculon530BHardware(const Catalog& cat) {
  const Accelerator* a100 = cat.FindAccelerator("A100-SXM4-80GB");
  InstanceType node;
  node.accelerator_count = 8;
  node.intra_node_link = IntraNodeLink::kNvswitch;
  node.inter_node_fabric = InterNodeFabric::kInfiniband;
  node.inter_node_bw = Gbps(8 * 200);
  return HardwareFromInstance(node, *a100, 5128 / 8);
}

// Every configuration of the physical space, evaluated (no pruning): the space's size and the
// evaluation rate on one core.
void BM_Calculon530BPhysicalSpace(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  const HardwareView hw = Calculon530BHardware(*cat);
  const ModelSpec m = Megatron530B();
  const Calibration& cal = DefaultCalibration();
  Space space = Calculon530BSpace(m, hw, 2520);
  long fits = 0;
  double best = 1e300;
  for (auto _ : state) {
    best = 1e300;
    fits = 0;
    // As the planner's search loop does: the step's calibration values once per shape.
    const StepConstants k = StepConstants::From(cal, hw);
    for (size_t i = 0; i < space.pars.size(); ++i) {
      TrainJob job;
      job.global_batch = space.batches[i];
      TrainEval ev =
          EvaluateTraining(m, space.pars[i], space.opts[i], job, hw, cal, 0.8, nullptr, &k);
      if (ev.fits) {
        ++fits;
        best = std::min(best, ev.step.total.value() / job.global_batch);
      }
    }
    benchmark::DoNotOptimize(best);
  }
  state.counters["configs"] = static_cast<double>(space.pars.size());
  state.counters["fitting"] = static_cast<double>(fits);
  state.counters["best_s_per_1923"] = best * 1923;
  state.counters["configs_per_s"] = benchmark::Counter(
      static_cast<double>(space.pars.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Calculon530BPhysicalSpace)->Unit(benchmark::kMillisecond);

// The layout search on the same problem (bound pruning, dominance skips).
void BM_Calculon530BSearch(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  const HardwareView hw = Calculon530BHardware(*cat);
  const ModelSpec m = Megatron530B();
  TrainMemoryOptions base;
  base.seq_len = 2048;
  base.method = TrainMethod::kPretrain;
  base.notes = false;
  TrainJob job;
  job.global_batch = 2520;
  LayoutConstraints fixed;
  fixed.round_global_batch = true;
  LayoutSearchStats st;
  double step = 0;
  for (auto _ : state) {
    st = LayoutSearchStats{};
    auto c = BestTrainLayout(m, base, job, hw, DefaultCalibration(), 0.8, fixed, &st);
    step = c ? c->eval.step.total.value() : 0;
    benchmark::DoNotOptimize(c);
  }
  state.counters["evaluated"] = static_cast<double>(st.evaluated);
  state.counters["step_s"] = step;
}
BENCHMARK(BM_Calculon530BSearch)->Unit(benchmark::kMillisecond);

// The same search with Calculon's own efficiencies for its A100 system
// (calculon-ai/calculon systems/a100_80g.json): matrix efficiency 0.95 for large GEMMs,
// NVLink 300 GB/s at 0.6, the 25 GB/s-per-GPU network at 0.9. The step time it reports
// separates the calibration's share of the gap to Calculon's 17.30 s (docs/performance.md).
void BM_Calculon530BSearchCalculonEfficiencies(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  const HardwareView hw = Calculon530BHardware(*cat);
  const ModelSpec m = Megatron530B();
  Calibration cal = DefaultCalibration();
  auto set = [&cal](const char* key, double v) {
    bool found = false;
    for (auto& e : cal.entries) {
      if (e.key == key) {
        e.value = v;
        found = true;
      }
    }
    if (!found) cal.entries.push_back({key, v, "Calculon a100_80g.json"});
  };
  set("gemm_efficiency.ampere", 0.95);
  set("link_efficiency.infiniband", 0.9);
  set("link_efficiency.nvlink", 0.6);
  TrainMemoryOptions base;
  base.seq_len = 2048;
  base.method = TrainMethod::kPretrain;
  base.notes = false;
  TrainJob job;
  job.global_batch = 2520;
  LayoutConstraints fixed;
  fixed.round_global_batch = true;
  double step = 0, compute = 0, dp = 0, tp = 0, offload = 0, optimizer = 0;
  int mb = 0, z = 0, rc = 0, off = 0;
  for (auto _ : state) {
    auto c = BestTrainLayout(m, base, job, hw, cal, 0.8, fixed);
    if (c) {
      step = c->eval.step.total.value();
      compute = c->eval.step.compute.value();
      dp = c->eval.step.dp_comm.value();
      tp = c->eval.step.tp_comm.value();
      offload = c->eval.step.offload.value();
      optimizer = c->eval.step.optimizer.value();
      mb = c->opt.micro_batch;
      z = c->par.zero_stage;
      rc = static_cast<int>(c->opt.recompute);
      off = c->opt.optimizer_offload ? 1 : 0;
    }
    benchmark::DoNotOptimize(c);
  }
  state.counters["step_s"] = step;
  state.counters["compute_s"] = compute;
  state.counters["dp_s"] = dp;
  state.counters["tp_s"] = tp;
  state.counters["offload_s"] = offload;
  state.counters["optimizer_s"] = optimizer;
  state.counters["mb"] = mb;
  state.counters["zero"] = z;
  state.counters["recompute"] = rc;
  state.counters["opt_offload"] = off;
}
BENCHMARK(BM_Calculon530BSearchCalculonEfficiencies)->Unit(benchmark::kMillisecond);

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

// One serving search per iteration; the configurations it evaluated as a counter.
void RunServingSearch(benchmark::State& state, const ServeJobSpec& job, const Catalog& cat) {
  long evaluated = 0;
  for (auto _ : state) {
    auto r = PlanServing(job, cat, DefaultCalibration());
    evaluated = r->evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs"] = static_cast<double>(evaluated);
}

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
  RunServingSearch(state, job, *cat);
}
BENCHMARK(BM_PlanServingMultiCloud)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// Encoder-decoder searches (docs/model.md 10.7): Whisper-large-v3 serving at 5 req/s over the
// whole catalog, and fine-tuning it on 680k 30 s clips (every shape x layout; each evaluation
// costs both stacks, the split cached per model).
void BM_PlanServingWhisper(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  ServeJobSpec job;
  job.model = *FindPreset("Whisper-large-v3");
  job.weight_precision = Precision::kFp16;
  job.qps = 5;
  job.input_len = 1500;
  job.output_len = 128;
  RunServingSearch(state, job, *cat);
}
BENCHMARK(BM_PlanServingWhisper)->Unit(benchmark::kMillisecond);

void BM_PlanTrainingWhisper(benchmark::State& state) {
  auto cat = LoadBuiltinCatalog();
  TrainJobSpec job;
  job.model = *FindPreset("Whisper-large-v3");
  job.samples = 680000;
  job.seq_len = 448;
  for (auto _ : state) {
    auto r = PlanTraining(job, *cat, DefaultCalibration());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_PlanTrainingWhisper)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplan
