// Tests of the training step-time model and the training planner:
//  - guide A12 (../shared/seeds/README.md): GPT-3 6.7B trained data-parallel on 8 x A100-80GB,
//    exposed communication ~15% of the step with NVLink vs ~40% with PCIe;
//  - properties of EstimateTrainStep / EvaluateTraining (STYLE.md section 9): more GPUs never
//    lower throughput, MFU in (0, 1), PCIe never faster than NVSwitch, recompute never faster,
//    fp8 never slower than bf16 on H100, the pipeline bubble (p-1)/v x one micro-batch
//    (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
//    Using Megatron-LM", Sec. 2.2), training FLOPs per token 6N + 12 L s h (same paper,
//    Sec. 5.1; Kaplan et al. 2020 Table 1 without embeddings);
//  - PlanTraining on the built-in catalog: determinism, deadline and budget, spot with and
//    without checkpoints (guide A15), objective time, the Pareto front, errors (unknown cloud),
//    "nothing fits" as notes, and the guide's A2 rule shown beside the answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/job.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/plan.h"
#include "gpuplan/planner.h"
#include "testing/fixtures.h"

namespace gpuplan {
namespace {

// ---- fixtures ------------------------------------------------------------------------------

// The built-in catalog, loaded once (plans point into it).
using test::Cat;

using test::Acc;

using test::Preset;

// GPT-3 6.7B (Brown et al. 2020, Table 2.1: n_layers 32, d_model 4096, n_heads 32, d_head 128,
// context 2048; GPT-2 vocabulary 50257, tied embeddings, learned positions, LayerNorm, biases).
ModelSpec Gpt3_6_7B() {
  ModelSpec m;
  m.name = "GPT-3 6.7B";
  m.arch = ModelArch::kDense;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.head_dim = 128;
  m.ffn_hidden = 16384;
  m.gated_mlp = false;
  m.vocab = 50257;
  m.tied_embeddings = true;
  m.norm = NormKind::kLayerNorm;
  m.linear_bias = true;
  m.learned_positions = 2048;
  m.max_positions = 2048;
  return m;
}

// One node of `count` x `acc` with the given scale-up link and a plain 100 Gbit/s network.
InstanceType Node(std::string_view acc, int count, IntraNodeLink intra,
                  InterNodeFabric inter = InterNodeFabric::kNone,
                  std::optional<double> fabric_gbps = std::nullopt) {
  InstanceType i;
  i.cloud = "test";
  i.instance_type = std::string(acc) + "-node";
  i.accelerator = std::string(acc);
  i.accelerator_count = count;
  i.intra_node_link = intra;
  i.inter_node_fabric = inter;
  i.network = Gbps(100);
  if (fabric_gbps) i.inter_node_bw = Gbps(*fabric_gbps);
  return i;
}

HardwareView Hw(std::string_view acc, IntraNodeLink intra, int nodes = 1,
                InterNodeFabric inter = InterNodeFabric::kNone,
                std::optional<double> fabric_gbps = std::nullopt) {
  return HardwareFromInstance(Node(acc, 8, intra, inter, fabric_gbps), Acc(acc), nodes);
}

Parallelism Layout(int tp, int pp, int dp, int zero = 0, int vpp = 1) {
  Parallelism p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.vpp = vpp;
  p.zero_stage = zero;
  p.sequence_parallel = tp > 1;
  return p;
}

TrainMemoryOptions Options(int micro_batch, int seq_len, Recompute rc = Recompute::kNone,
                           Precision precision = Precision::kBf16) {
  TrainMemoryOptions o;
  o.micro_batch = micro_batch;
  o.seq_len = seq_len;
  o.recompute = rc;
  o.precision = precision;
  o.notes = false;
  return o;
}

TrainJob Batch(int global_batch, double tokens = 0) {
  TrainJob j;
  j.global_batch = global_batch;
  j.tokens = tokens;
  return j;
}

TrainEval Eval(const ModelSpec& m, const Parallelism& par, const TrainMemoryOptions& o,
               int global_batch, const HardwareView& hw) {
  return EvaluateTraining(m, par, o, Batch(global_batch), hw, DefaultCalibration(), 0.8);
}

// Exposed communication as a share of the step (tensor + data + pipeline parallel).
double CommShare(const StepTime& st) {
  return (st.tp_comm + st.dp_comm + st.pp_comm).value() / st.total.value();
}

// Data-parallel communication as a share of the step if none of it overlapped backward.
double UnhiddenDpShare(const StepTime& st) {
  return st.dp_comm_total.value() / (st.total + st.dp_comm_total - st.dp_comm).value();
}

// ---- guide A12 -----------------------------------------------------------------------------

// Seeds A12: "8xA100 training GPT-3 6.7B: communication overhead ~15% with NVLink, ~40% with
// PCIe -> multi-GPU training needs NVLink". Same layout on both machines: tp1 pp1 dp8, ZeRO-1,
// micro-batch 4, seq 2048, global batch 512 (half of GPT-3 6.7B's 2M-token batch, Brown et al.
// 2020 Table 2.1), bf16: 16 accumulated micro-batches per gradient all-reduce.
TEST(GuideA12, NvlinkVsPcieCommunicationShare) {
  const ModelSpec m = Gpt3_6_7B();
  ASSERT_TRUE(ValidateModel(m, "gpt3-6.7b").ok());
  const Accelerator& a100 = Acc("A100-SXM4-80GB");
  const InstanceType nvl = Node(a100.id, 8, IntraNodeLink::kNvswitch);
  const InstanceType pcie = Node(a100.id, 8, IntraNodeLink::kPcie);
  const HardwareView hw_nvl = HardwareFromInstance(nvl, a100, 1);
  const HardwareView hw_pcie = HardwareFromInstance(pcie, a100, 1);
  ASSERT_EQ(hw_nvl.gpus(), 8);
  ASSERT_GT(hw_nvl.intra_bw.value(), hw_pcie.intra_bw.value());

  const Parallelism par = Layout(1, 1, 8, /*zero=*/1);
  const TrainMemoryOptions o = Options(4, 2048);
  // Plain data parallelism without gradient accumulation (one micro-batch of 4 per GPU, global
  // batch 32): the guide's setting, where every step pays one gradient all-reduce. With
  // accumulation the all-reduce amortises (the sweep below prints it).
  const TrainEval nv = Eval(m, par, o, 32, hw_nvl);
  const TrainEval pc = Eval(m, par, o, 32, hw_pcie);
  ASSERT_TRUE(nv.step.valid) << nv.step.reason;
  ASSERT_TRUE(pc.step.valid) << pc.step.reason;
  const double s_nv = CommShare(nv.step), s_pc = CommShare(pc.step);
  std::cout << "[A12] GPT-3 6.7B (" << static_cast<double>(CountParams(m).total) / 1e9
            << "B params), 8 x A100-80GB, tp1 pp1 dp8 ZeRO-1 mb4 seq2048 gb32 bf16\n"
            << "[A12]   NVSwitch: step " << nv.step.total.value() << " s, DP comm total "
            << nv.step.dp_comm_total.value() << " s, exposed comm " << 100 * s_nv << "%"
            << (nv.fits ? "" : " (does not fit: " + nv.why + ")") << "\n"
            << "[A12]   PCIe:     step " << pc.step.total.value() << " s, DP comm total "
            << pc.step.dp_comm_total.value() << " s, exposed comm " << 100 * s_pc << "%\n"
            << "[A12]   guide: ~15% (NVLink) vs ~40% (PCIe)\n";
  EXPECT_LT(s_nv, 0.20) << "A12: NVLink communication share should be small (~15%)";
  EXPECT_GT(s_pc, 0.15) << "A12: PCIe communication share should be large (~40%)";
  EXPECT_GE(s_pc, 2 * s_nv) << "A12: PCIe share should be several times NVLink's";

  // Context for the figures above: the same layout with fewer accumulated micro-batches per
  // step (the gradient all-reduce happens once per step, so its share shrinks as 1/m).
  for (int gb : {32, 64, 128, 512}) {
    const TrainEval a = Eval(m, par, o, gb, hw_nvl);
    const TrainEval b = Eval(m, par, o, gb, hw_pcie);
    std::cout << "[A12]   global batch " << gb << " (" << a.step.num_microbatches
              << " micro-batches): exposed comm NVSwitch " << 100 * CommShare(a.step) << "%, PCIe "
              << 100 * CommShare(b.step) << "%; with no overlap NVSwitch "
              << 100 * UnhiddenDpShare(a.step) << "%, PCIe " << 100 * UnhiddenDpShare(b.step)
              << "%\n";
  }

  // The best layout on each machine (the planner's search).
  for (const auto* hw : {&hw_nvl, &hw_pcie}) {
    auto best = BestTrainLayout(m, Options(1, 2048), Batch(512), *hw, DefaultCalibration(), 0.8,
                                LayoutConstraints{});
    ASSERT_TRUE(best.has_value());
    std::cout << "[A12]   best layout on " << IntraNodeLinkName(hw->intra) << ": tp" << best->par.tp
              << " pp" << best->par.pp << " dp" << best->par.dp << " z" << best->par.zero_stage
              << " mb" << best->opt.micro_batch << " rc:" << RecomputeName(best->opt.recompute)
              << ", step " << best->eval.step.total.value() << " s, MFU "
              << 100 * best->eval.step.mfu << "%, exposed comm " << 100 * CommShare(best->eval.step)
              << "% (" << best->evaluated << " layouts evaluated)\n";
    EXPECT_TRUE(best->eval.fits);
  }
}

// ---- properties of the step-time model -------------------------------------------------------

// A layout row: model, layout, micro-batch, sequence length, global batch, and where it comes from.
struct LayoutRow {
  const char* name;
  const char* model;  // preset name
  int tp, pp, dp, zero;
  int micro_batch, seq_len, global_batch;
  const char* source;
};

const ModelSpec& RowModel(const LayoutRow& r) { return Preset(r.model); }

// Megatron-style and FSDP-style layouts of the presets (dp is the single-node value).
const std::vector<LayoutRow>& Layouts() {
  static const std::vector<LayoutRow> rows = {
      {"7b-ddp", "llama-2-7b", 1, 1, 8, 0, 1, 4096, 256, "Llama-2 pretraining: DDP, 4k context"},
      {"7b-zero1", "llama-2-7b", 1, 1, 8, 1, 2, 4096, 512, "ZeRO-1 (Rajbhandari 2020)"},
      {"7b-fsdp", "llama-2-7b", 1, 1, 8, 3, 2, 4096, 512, "FSDP full shard (Zhao 2023)"},
      {"13b-tp2", "llama-2-13b", 2, 1, 4, 1, 1, 4096, 128, "Megatron tp2 (Narayanan 2021)"},
      {"13b-tp2pp2", "llama-2-13b", 2, 2, 2, 1, 1, 4096, 128, "Megatron PTD-P"},
      {"8b-tp4", "llama-3.1-8b", 4, 1, 2, 1, 1, 8192, 64, "Llama 3 8k context, tp4"},
      {"70b-tp8", "llama-2-70b", 8, 1, 1, 0, 1, 4096, 64, "one 8-GPU tensor-parallel group"},
      {"70b-tp4pp2", "llama-2-70b", 4, 2, 1, 0, 1, 4096, 64, "tp4 pp2 (Narayanan 2021 Table 1)"},
  };
  return rows;
}

StepTime Step(const LayoutRow& r, const HardwareView& hw, Recompute rc = Recompute::kNone,
              Precision p = Precision::kBf16, int dp_scale = 1) {
  Parallelism par = Layout(r.tp, r.pp, r.dp * dp_scale, r.zero);
  return EstimateTrainStep(RowModel(r), par, Options(r.micro_batch, r.seq_len, rc, p),
                           r.global_batch, hw, DefaultCalibration());
}

// Doubling dp (8 -> 16 data-parallel replicas' worth of GPUs, the second node over InfiniBand
// HDR/NDR, 8 x 200 Gbit/s per node as on Azure ND A100 v4 / 8 x 400 on H100 nodes) with the
// global batch fixed never lowers samples per second.
TEST(StepModel, MoreGpusNeverLowerThroughput) {
  struct Hardware {
    const char* acc;
    double fabric_gbps;
  };
  for (const Hardware& h : {Hardware{"A100-SXM4-80GB", 1600}, Hardware{"H100-SXM5-80GB", 3200}}) {
    for (const LayoutRow& r : Layouts()) {
      const int gpus = r.tp * r.pp * r.dp;
      const HardwareView one = Hw(h.acc, IntraNodeLink::kNvswitch, gpus / 8,
                                  InterNodeFabric::kInfiniband, h.fabric_gbps);
      const HardwareView two = Hw(h.acc, IntraNodeLink::kNvswitch, 2 * gpus / 8,
                                  InterNodeFabric::kInfiniband, h.fabric_gbps);
      const StepTime a = Step(r, one);
      const StepTime b = Step(r, two, Recompute::kNone, Precision::kBf16, 2);
      ASSERT_TRUE(a.valid && b.valid) << r.name << ": " << a.reason << b.reason;
      EXPECT_GE(b.samples_per_s, a.samples_per_s)
          << r.name << " on " << h.acc << " (" << r.source << "): " << gpus << " GPUs "
          << a.samples_per_s << " samples/s, " << 2 * gpus << " GPUs " << b.samples_per_s;
    }
  }
}

// MFU is a fraction of peak: strictly between 0 and 1 for every layout on every NVSwitch-class
// accelerator the catalog has 8-GPU nodes of.
TEST(StepModel, MfuIsAFraction) {
  for (const char* acc : {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "L40S"}) {
    ASSERT_NE(Cat().FindAccelerator(acc), nullptr) << acc;
    for (const LayoutRow& r : Layouts()) {
      for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        const StepTime st = Step(r, Hw(acc, IntraNodeLink::kNvswitch), rc);
        ASSERT_TRUE(st.valid) << r.name << " on " << acc << ": " << st.reason;
        EXPECT_GT(st.mfu, 0) << r.name << " on " << acc;
        EXPECT_LT(st.mfu, 1) << r.name << " on " << acc;
      }
    }
  }
}

// The same layout over PCIe is never faster than over NVSwitch, on every accelerator in the
// catalog that has a training precision (guide A11/B8: NVLink is the faster scale-up link).
TEST(StepModel, PcieNeverFasterThanNvswitch) {
  int compared = 0;
  for (const Accelerator& a : Cat().accelerators) {
    if (!a.PeakFor(Precision::kBf16)) continue;
    for (const LayoutRow& r : Layouts()) {
      const StepTime nv = Step(r, Hw(a.id, IntraNodeLink::kNvswitch));
      const StepTime pc = Step(r, Hw(a.id, IntraNodeLink::kPcie));
      if (!nv.valid || !pc.valid) continue;
      ++compared;
      EXPECT_GE(pc.total.value(), nv.total.value())
          << r.name << " on " << a.id << " (intra link " << a.intra_link << ")";
    }
  }
  EXPECT_GT(compared, 50);
}

// Full recompute runs the forward twice (Korthikanti et al. 2022 Sec. 4): never faster than
// selective recompute, which is never faster than none.
TEST(StepModel, RecomputeNeverFaster) {
  for (const char* acc : {"A100-SXM4-80GB", "H100-SXM5-80GB"}) {
    for (const LayoutRow& r : Layouts()) {
      const HardwareView hw = Hw(acc, IntraNodeLink::kNvswitch);
      const StepTime none = Step(r, hw, Recompute::kNone);
      const StepTime sel = Step(r, hw, Recompute::kSelective);
      const StepTime full = Step(r, hw, Recompute::kFull);
      EXPECT_GE(full.total.value(), sel.total.value()) << r.name << " on " << acc;
      EXPECT_GE(sel.total.value(), none.total.value()) << r.name << " on " << acc;
      EXPECT_GT(full.total.value(), none.total.value()) << r.name << " on " << acc;
      EXPECT_GT(full.hardware_flops.value(), none.hardware_flops.value()) << r.name;
      EXPECT_DOUBLE_EQ(full.model_flops.value(), none.model_flops.value()) << r.name;
    }
  }
}

// FP8 GEMMs at twice the bf16 peak (H100 datasheet: 1979 vs 989 dense TFLOP/s) never make a
// step slower (Transformer Engine: 1.3-1.5x end to end).
TEST(StepModel, Fp8NeverSlowerThanBf16OnH100) {
  const HardwareView hw = Hw("H100-SXM5-80GB", IntraNodeLink::kNvswitch);
  for (const LayoutRow& r : Layouts()) {
    const StepTime bf16 = Step(r, hw, Recompute::kNone, Precision::kBf16);
    const StepTime fp8 = Step(r, hw, Recompute::kNone, Precision::kFp8);
    ASSERT_TRUE(bf16.valid && fp8.valid) << r.name << ": " << fp8.reason;
    EXPECT_LE(fp8.total.value(), bf16.total.value()) << r.name;
    EXPECT_LT(fp8.compute.value(), bf16.compute.value()) << r.name;
  }
}

// Pipeline bubble (Narayanan et al. 2021, Sec. 2.2.1-2.2.2): (p - 1) / v micro-batch times of
// the most loaded stage, i.e. a fraction (p - 1) / (v m) of the ideal compute time.
TEST(StepModel, PipelineBubbleIsPMinusOneOverVMicroBatches) {
  const ModelSpec& m = Preset("llama-2-13b");  // 40 layers: pp 4 x vpp 2 divides them
  const HardwareView hw = Hw("H100-SXM5-80GB", IntraNodeLink::kNvswitch);
  const TrainMemoryOptions o = Options(1, 4096);
  double bubble_v1 = 0;
  for (int vpp : {1, 2}) {
    const Parallelism par = Layout(2, 4, 1, 0, vpp);
    const StepTime st = EstimateTrainStep(m, par, o, 64, hw, DefaultCalibration());
    ASSERT_TRUE(st.valid) << st.reason;
    ASSERT_EQ(st.num_microbatches, 64);
    const double one_micro = st.compute.value() / st.num_microbatches;
    EXPECT_NEAR(st.bubble.value(), (4 - 1) / static_cast<double>(vpp) * one_micro,
                1e-9 * st.bubble.value())
        << "vpp " << vpp;
    EXPECT_NEAR(st.bubble.value() / st.compute.value(), 3.0 / (vpp * 64), 1e-12);
    if (vpp == 1) bubble_v1 = st.bubble.value();
    if (vpp == 2) {
      EXPECT_NEAR(st.bubble.value(), bubble_v1 / 2, 1e-9 * bubble_v1);
    }
  }
  const StepTime flat = EstimateTrainStep(m, Layout(2, 1, 4), o, 64, hw, DefaultCalibration());
  EXPECT_EQ(flat.bubble.value(), 0);
}

// Training FLOPs per token for dense decoders: 6 x (params - input embeddings) + 12 L s h
// (Narayanan et al. 2021 eq. 3 divided by B s: 72 l h^2 + 12 l s h + 6 V h; Kaplan et al. 2020
// C = 6N with N excluding embeddings). Tied embeddings (GPT-3) still multiply by the LM head.
TEST(StepModel, TrainingFlopsPerTokenIsSixNPlusAttention) {
  struct Row {
    const char* name;
    ModelSpec model;
    int seq_len;
    const char* source;
  };
  const std::vector<Row> rows = {
      {"llama-2-7b", Preset("llama-2-7b"), 4096, "Touvron et al. 2023: 6.74B params, 4k context"},
      {"llama-2-13b", Preset("llama-2-13b"), 4096, "Touvron et al. 2023"},
      {"llama-2-70b", Preset("llama-2-70b"), 4096, "Touvron et al. 2023 (GQA: q heads)"},
      {"llama-3.1-8b", Preset("llama-3.1-8b"), 8192, "Llama 3 herd paper, 8k pretraining context"},
      {"gpt3-6.7b", Gpt3_6_7B(), 2048, "Brown et al. 2020 Table 2.1; tied LM head adds 6 V h"},
  };
  for (const Row& r : rows) {
    const ParamCounts pc = CountParams(r.model);
    double n = static_cast<double>(pc.total - pc.embedding);
    if (r.model.tied_embeddings) n += static_cast<double>(r.model.vocab * r.model.hidden);
    const double expected =
        6 * n + 12.0 * r.model.layers * r.seq_len * static_cast<double>(r.model.hidden);
    const double got =
        TrainingFlopsPerToken(r.model, r.seq_len, TrainMethod::kPretrain, Recompute::kNone, false)
            .value();
    EXPECT_NEAR(got / expected, 1.0, 0.01) << r.name << " (" << r.source << ")";
    // Full recompute adds one forward (2N + 4 L s h): 4/3 of the above.
    const double with_rc =
        TrainingFlopsPerToken(r.model, r.seq_len, TrainMethod::kPretrain, Recompute::kFull, true)
            .value();
    EXPECT_NEAR(with_rc / got, 4.0 / 3.0, 1e-9) << r.name;
  }
}

// ---- the planner --------------------------------------------------------------------------

TrainJobSpec JobFor(std::string_view preset, double tokens, int seq_len,
                    TrainMethod method = TrainMethod::kFull) {
  TrainJobSpec j;
  j.model_arg = std::string(preset);
  j.model = Preset(preset);
  j.method = method;
  j.tokens = tokens;
  j.seq_len = seq_len;
  return j;
}

Result<TrainPlanResult> Plan(const TrainJobSpec& j) {
  return PlanTraining(j, Cat(), DefaultCalibration());
}

// Everything that identifies a ranked plan.
using PlanKey = std::tuple<std::string, std::string, std::string, int, int, int, int, int, int, int,
                           int, double, double>;
std::vector<PlanKey> Keys(const std::vector<TrainPlan>& plans) {
  std::vector<PlanKey> out;
  for (const TrainPlan& p : plans) {
    out.emplace_back(p.instance->cloud, p.instance->instance_type, p.instance->region, p.nodes,
                     p.par.tp, p.par.pp, p.par.dp, p.par.vpp, p.par.zero_stage, p.opt.micro_batch,
                     static_cast<int>(p.opt.recompute), p.RankCost(), p.RankHours());
  }
  return out;
}

std::string Describe(const TrainPlan& p) {
  return p.instance->cloud + " " + p.instance->instance_type + " " + p.instance->region + " x" +
         std::to_string(p.nodes) + " (" + std::to_string(p.RankHours()) + " h, " +
         std::to_string(p.RankCost()) + ")";
}

// The CLI's `plan train --model llama-2-13b --tokens 2B --epochs 2` job.
TrainJobSpec Llama13BJob() {
  TrainJobSpec j = JobFor("llama-2-13b", 2e9, 4096);
  j.epochs = 2;
  return j;
}

TEST(Planner, Deterministic) {
  const TrainJobSpec j = Llama13BJob();
  auto a = Plan(j);
  auto b = Plan(j);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  ASSERT_TRUE(b.ok()) << b.error().ToString();
  ASSERT_FALSE(a->plans.empty());
  EXPECT_EQ(Keys(a->plans), Keys(b->plans));
  EXPECT_EQ(Keys(a->pareto), Keys(b->pareto));
  EXPECT_EQ(a->shapes, b->shapes);
  EXPECT_EQ(a->evaluated, b->evaluated);
  EXPECT_EQ(a->notes, b->notes);
  std::cout << "[plan] llama-2-13b 4B tokens: " << a->shapes << " shapes x node counts, "
            << a->evaluated << " layouts; best " << Describe(a->plans.front()) << "\n";
}

// A batch the job leaves to the planner is rounded down per data-parallel size, as the
// validation adapter does: LoRA's default 16 sequences on exactly 3 GPUs runs data-parallel at
// 15 (before, no dp-3 layout was searched at all, and every plan was a 3-node pipeline). A stated
// batch is still the job's: 16 on 3 GPUs keeps dp 3 out.
TEST(Planner, DefaultBatchRoundsToTheDataParallelSize) {
  TrainJobSpec j = JobFor("llama-2-7b", 1e7, 4096);
  j.method = TrainMethod::kLora;
  j.num_gpus = 3;
  j.top = 20;
  auto r = Plan(j);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  bool dp3 = false;
  for (const TrainPlan& p : r->plans) {
    if (p.par.dp != 3) continue;
    dp3 = true;
    EXPECT_EQ(p.global_batch % 3, 0) << Describe(p);
    EXPECT_LE(p.global_batch, 16) << Describe(p);
  }
  EXPECT_TRUE(dp3) << "no data-parallel plan on 3 GPUs";
  j.global_batch = 16;
  r = Plan(j);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  for (const TrainPlan& p : r->plans) EXPECT_NE(p.par.dp, 3) << Describe(p);
}

// Every plan returned (ranked and Pareto) meets the deadline and the budget it was given; a
// deadline nobody can meet leaves no plans and says why.
TEST(Planner, MeetsDeadlineAndBudget) {
  struct Row {
    double deadline_hours, budget;
    Objective objective;
    int max_nodes;  // time and Pareto objectives search every shape (no cost bound): keep small
  };
  for (const Row& r : {Row{12, 1000, Objective::kCost, 64}, Row{3, 2000, Objective::kTime, 8},
                       Row{30, 600, Objective::kPareto, 4}}) {
    TrainJobSpec j = Llama13BJob();
    j.deadline_hours = r.deadline_hours;
    j.budget = r.budget;
    j.objective = r.objective;
    j.max_nodes = r.max_nodes;
    auto res = Plan(j);
    ASSERT_TRUE(res.ok()) << res.error().ToString();
    EXPECT_FALSE(res->plans.empty()) << r.deadline_hours << " h, $" << r.budget;
    for (const auto* list : {&res->plans, &res->pareto}) {
      for (const TrainPlan& p : *list) {
        EXPECT_LE(p.RankHours(), r.deadline_hours) << Describe(p);
        EXPECT_LE(p.RankCost(), r.budget) << Describe(p);
      }
    }
  }
  TrainJobSpec j = Llama13BJob();
  j.deadline_hours = 0.01;
  auto res = Plan(j);
  ASSERT_TRUE(res.ok()) << res.error().ToString();
  EXPECT_TRUE(res->plans.empty());
  bool said = false;
  for (const auto& n : res->notes) said = said || n.find("deadline") != std::string::npos;
  EXPECT_TRUE(said) << "notes should say plans miss the deadline";
}

// Spot with checkpoints (guide A15): preemptions cost time, so spot hours >= on-demand hours and
// the expected interruptions are positive; without checkpoints every spot plan is warned.
TEST(Planner, SpotHoursAndInterruptions) {
  TrainJobSpec j = JobFor("llama-2-7b", 2e9, 4096);
  j.clouds = {"aws", "gcp"};
  j.spot_allowed = true;
  j.checkpoint_interval_hours = 1.0;
  j.objective = Objective::kPareto;
  j.max_nodes = 8;
  j.top = 20;
  auto res = Plan(j);
  ASSERT_TRUE(res.ok()) << res.error().ToString();
  int spot_plans = 0;
  for (const TrainPlan& p : res->plans) {
    EXPECT_GE(p.spot.hours, p.hours) << Describe(p);
    EXPECT_GT(p.spot.interruptions, 0) << Describe(p);
    EXPECT_GT(p.spot.checkpoint_hours, 0) << Describe(p);
    if (p.cost_spot) ++spot_plans;
  }
  EXPECT_GT(spot_plans, 0) << "some AWS/GCP GPU shapes have spot prices";

  j.checkpoint_interval_hours = 0;
  auto none = Plan(j);
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  int warned = 0;
  for (const TrainPlan& p : none->plans) {
    if (!p.cost_spot) continue;
    bool has = false;
    for (const auto& w : p.warnings) {
      has = has || (w.find("spot without checkpoints") != std::string::npos &&
                    w.find("A15") != std::string::npos);
    }
    EXPECT_TRUE(has) << Describe(p);
    EXPECT_GT(p.spot.hours, p.hours) << Describe(p);
    EXPECT_EQ(p.spot.checkpoint_hours, 0) << Describe(p);
    warned += has ? 1 : 0;
  }
  EXPECT_GT(warned, 0);
}

// objective: time ranks by hours ascending (plans with an inadequate host last, as documented
// in TrainPlan::HostInadequate).
TEST(Planner, ObjectiveTimeRanksByHours) {
  TrainJobSpec j = Llama13BJob();
  j.objective = Objective::kTime;
  j.max_nodes = 16;
  j.top = 10;
  auto res = Plan(j);
  ASSERT_TRUE(res.ok()) << res.error().ToString();
  ASSERT_GE(res->plans.size(), 2u);
  for (size_t k = 1; k < res->plans.size(); ++k) {
    const TrainPlan& a = res->plans[k - 1];
    const TrainPlan& b = res->plans[k];
    EXPECT_LE(a.HostInadequate(), b.HostInadequate()) << k;
    if (a.HostInadequate() == b.HostInadequate()) {
      EXPECT_LE(a.RankHours(), b.RankHours()) << Describe(a) << " ranked before " << Describe(b);
    }
  }
  TrainJobSpec c = Llama13BJob();
  auto cost = Plan(c);
  ASSERT_TRUE(cost.ok());
  ASSERT_FALSE(cost->plans.empty());
  EXPECT_LE(res->plans.front().RankHours(), cost->plans.front().RankHours());
  EXPECT_LE(cost->plans.front().RankCost(), res->plans.front().RankCost());
}

bool Dominates(const TrainPlan& a, const TrainPlan& b) {
  return a.RankCost() <= b.RankCost() && a.RankHours() <= b.RankHours() &&
         (a.RankCost() < b.RankCost() || a.RankHours() < b.RankHours());
}

// The cost/time Pareto front holds no plan that another plan returned dominates.
TEST(Planner, ParetoFrontHasNoDominatedPlan) {
  for (Objective obj : {Objective::kCost, Objective::kPareto}) {
    TrainJobSpec j = Llama13BJob();
    j.objective = obj;
    j.max_nodes = 16;
    j.top = obj == Objective::kPareto ? 50 : 5;
    auto res = Plan(j);
    ASSERT_TRUE(res.ok()) << res.error().ToString();
    ASSERT_GE(res->pareto.size(), 2u);
    for (const TrainPlan& p : res->pareto) {
      for (const auto* list : {&res->pareto, &res->plans}) {
        for (const TrainPlan& q : *list) {
          EXPECT_FALSE(Dominates(q, p)) << Describe(q) << " dominates " << Describe(p);
        }
      }
    }
    if (obj == Objective::kPareto) {
      EXPECT_EQ(Keys(res->plans), Keys(res->pareto));
    }
  }
}

// Errors name the field and suggest the nearest name (STYLE.md: errors as values).
TEST(Planner, UnknownCloudIsNotFoundWithDidYouMean) {
  struct Row {
    std::vector<std::string> clouds;
    const char* field;
    const char* suggestion;
  };
  for (const Row& r : {Row{{"awz"}, "constraints.clouds[0]", "aws"},
                       Row{{"aws", "gcpp"}, "constraints.clouds[1]", "gcp"}}) {
    TrainJobSpec j = Llama13BJob();
    j.clouds = r.clouds;
    auto res = Plan(j);
    ASSERT_FALSE(res.ok());
    EXPECT_EQ(res.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(res.error().field, r.field);
    EXPECT_NE(res.error().message.find(r.clouds.back()), std::string::npos)
        << res.error().ToString();
    EXPECT_NE(res.error().hint.find("did you mean"), std::string::npos) << res.error().ToString();
    EXPECT_NE(res.error().hint.find(std::string("\"") + r.suggestion + "\""), std::string::npos)
        << res.error().ToString();
  }
  TrainJobSpec j = Llama13BJob();
  j.gpus = {"H1000"};
  auto res = Plan(j);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(res.error().field, "constraints.gpus[0]");
}

// "Nothing fits" is an answer, not an error: Llama-3.1-405B full training cannot be held by
// one node of 16/24 GB cards, even with optimizer and parameter offload (the gradients alone
// are 405B x 2 B / 8 GPUs = 101 GB per GPU). (Llama-2-70B now fits there with ZeRO-Infinity
// offload, issue #11.)
TEST(Planner, TooBigForOneSmallNodeGivesNotesNotError) {
  for (const char* gpu : {"T4", "A10G", "L4"}) {
    if (Cat().FindAccelerator(gpu) == nullptr) continue;
    TrainJobSpec j = JobFor("llama-3.1-405b", 1e9, 4096);
    j.gpus = {gpu};
    j.max_nodes = 1;
    j.precision = Precision::kFp16;  // T4 has no bf16 path (issue #11): a separate note
    auto res = Plan(j);
    ASSERT_TRUE(res.ok()) << gpu << ": " << res.error().ToString();
    EXPECT_TRUE(res->plans.empty()) << gpu;
    EXPECT_TRUE(res->pareto.empty()) << gpu;
    ASSERT_FALSE(res->notes.empty()) << gpu;
    EXPECT_NE(res->notes.front().find("cannot hold the job"), std::string::npos)
        << res->notes.front();
  }
}

// Guide A2: "LoRA 7B-13B -> 1 x L40S or 1 x A100", shown beside the planner's own answer.
TEST(Planner, GuideA2LoraRuleShownBesideThePlan) {
  TrainJobSpec j = JobFor("llama-2-7b", 50e6, 2048, TrainMethod::kLora);
  auto res = Plan(j);
  ASSERT_TRUE(res.ok()) << res.error().ToString();
  ASSERT_FALSE(res->plans.empty());
  EXPECT_NE(res->guide_rule.find("A2"), std::string::npos) << res->guide_rule;
  ASSERT_EQ(res->guide_plans.size(), 1u) << res->guide_comparison;
  const TrainPlan& g = res->guide_plans.front();
  EXPECT_EQ(g.nodes * g.instance->accelerator_count, 1);
  const std::string& acc = g.instance->accelerator;
  EXPECT_TRUE(acc == "L40S" || acc.rfind("A100", 0) == 0) << acc;
  EXPECT_FALSE(res->guide_comparison.empty());
  std::cout << "[A2] " << res->guide_rule << ": " << Describe(g) << " " << acc << "; gpuplan's "
            << Describe(res->plans.front()) << " " << res->plans.front().instance->accelerator
            << "\n[A2] " << res->guide_comparison << "\n";
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// NVFP4 training is Transformer Engine's recipe under Megatron-Core: asking another framework
// for it is an input error that names the field, not "no layout" for every shape; without FP4
// tensor cores there is no plan, and the note says why.
TEST(Nvfp4Planning, MegatronCoreOnBlackwellOnly) {
  TrainJobSpec j = JobFor("llama-3.1-8b", 1e9, 4096);
  j.precision = Precision::kFp8;
  j.fp4_gemms = true;
  j.gpus = {"B200"};
  j.framework = TrainFramework::kDeepSpeed;
  auto bad = PlanTraining(j, Cat(), DefaultCalibration());
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().field, "train.framework");
  j.framework = TrainFramework::kGeneric;
  auto good = PlanTraining(j, Cat(), DefaultCalibration());
  ASSERT_TRUE(good) << good.error().ToString();
  ASSERT_FALSE(good->plans.empty());
  EXPECT_EQ(good->plans[0].framework, TrainFramework::kMegatronCore);
  j.gpus = {"H100"};
  auto hopper = PlanTraining(j, Cat(), DefaultCalibration());
  ASSERT_TRUE(hopper) << hopper.error().ToString();
  EXPECT_TRUE(hopper->plans.empty());
  bool said = false;
  for (const auto& n : hopper->notes)
    said = said || n.find("no FP4 tensor cores") != std::string::npos;
  EXPECT_TRUE(said);
}

// FP8 training needs FP8 tensor cores (Transformer Engine, torchao float8: compute capability
// 8.9): A100s get no plan and a note saying why; QLoRA's bitsandbytes has no AWS Neuron backend,
// so Trainium gets no QLoRA plan and a note.
TEST(Planner, NoFp8TrainingWithoutFp8TensorCoresNoQloraOnNeuron) {
  auto notes_of = [](const TrainPlanResult& r) {
    std::string all;
    for (const auto& n : r.notes) all += n + "\n";
    return all;
  };
  TrainJobSpec fp8 = JobFor("llama-2-7b", 1e9, 4096);
  fp8.precision = Precision::kFp8;
  fp8.gpus = {"A100-SXM4-80GB"};
  auto a100 = PlanTraining(fp8, Cat(), DefaultCalibration());
  ASSERT_TRUE(a100) << a100.error().ToString();
  EXPECT_TRUE(a100->plans.empty());
  EXPECT_NE(notes_of(*a100).find("no FP8 tensor cores"), std::string::npos) << notes_of(*a100);
  fp8.gpus = {"H100-SXM5-80GB"};
  auto h100 = PlanTraining(fp8, Cat(), DefaultCalibration());
  ASSERT_TRUE(h100) << h100.error().ToString();
  EXPECT_FALSE(h100->plans.empty());
  TrainJobSpec qlora = JobFor("llama-2-7b", 1e8, 4096, TrainMethod::kQlora);
  qlora.gpus = {"Trainium1"};
  auto trn = PlanTraining(qlora, Cat(), DefaultCalibration());
  ASSERT_TRUE(trn) << trn.error().ToString();
  EXPECT_TRUE(trn->plans.empty());
  EXPECT_NE(notes_of(*trn).find("bitsandbytes has no AWS Neuron backend"), std::string::npos)
      << notes_of(*trn);
  qlora.method = TrainMethod::kLora;
  auto lora = PlanTraining(qlora, Cat(), DefaultCalibration());
  ASSERT_TRUE(lora) << lora.error().ToString();
  EXPECT_FALSE(lora->plans.empty());
}

// Trainium trains with NeuronX Distributed Training: its plans have ZeRO <= 1 and no offload
// (Llama-2-13B on trn1 came out as FSDP ZeRO-3 with everything offloaded), and a note says why.
TEST(Planner, TrainiumLayoutsAreNeuronxDistributedOnes) {
  TrainJobSpec j = JobFor("llama-2-13b", 2e9, 4096);
  j.gpus = {"Trainium1"};
  j.top = 20;
  auto r = PlanTraining(j, Cat(), DefaultCalibration());
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const TrainPlan& p : r->plans) {
    EXPECT_LE(p.par.zero_stage, 1) << p.instance->instance_type;
    EXPECT_FALSE(p.opt.optimizer_offload) << p.instance->instance_type;
    EXPECT_FALSE(p.opt.param_offload) << p.instance->instance_type;
    EXPECT_NE(p.framework, TrainFramework::kFsdp) << p.instance->instance_type;
  }
  bool said = false;
  for (const auto& n : r->notes) said = said || n.find("NeuronX Distributed") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace gpuplan
