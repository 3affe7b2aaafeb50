// Tests that the first answer is one an engineer would act on (issue 12): warnings that are true
// of the plan (storage sized from the plan's own input rate, A12 only when communication is
// material, unknown local NVMe is unknown), host rules no instance meets said once, suspect
// catalog rows kept out of the ranking, region duplicates collapsed, the nearest misses when
// nothing fits, the guide's A2 rule compared branch by branch, and serving plans that name the
// runtime their hardware runs and check the host's RAM.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/job.h"
#include "gpuplan/memory_fit.h"
#include "gpuplan/plan.h"
#include "gpuplan/planner.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/sizing.h"
#include "testing/fixtures.h"
#include "testing/test_util.h"

namespace gpuplan {
namespace {

using test::Cat;
using test::Has;
using test::Preset;

const Calibration& Cal() { return DefaultCalibration(); }

// The README's default run: guide B16, Llama-2-13B full fine-tuning in bf16.
TrainJobSpec B16Job() {
  TrainJobSpec j;
  j.model = Preset("llama-2-13b");
  j.model_arg = "llama-2-13b";
  j.method = TrainMethod::kFull;
  j.tokens = 2e9;
  j.top = 5;
  return j;
}

bool AnyHas(const std::vector<std::string>& v, std::string_view part) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return Has(s, part); });
}

// ---- layouts a framework runs ----------------------------------------------------------------

// The HF Trainer stack (DDP, FSDP, DeepSpeed) and torchtune checkpoint every layer or none:
// no plan of theirs recomputes selectively or a block of layers (what their emitted Trainer
// arguments, gradient_checkpointing, cannot express); and no tensor-parallel group straddles
// two machines.
TEST(TrustLayout, RecomputeAndTensorParallelAsTheFrameworksRunThem) {
  EXPECT_FALSE(FrameworkRecomputes(TrainFramework::kFsdp, Recompute::kSelective, 0));
  EXPECT_FALSE(FrameworkRecomputes(TrainFramework::kDeepSpeed, Recompute::kFull, 20));
  EXPECT_TRUE(FrameworkRecomputes(TrainFramework::kDdp, Recompute::kFull, 0));
  EXPECT_TRUE(FrameworkRecomputes(TrainFramework::kMegatronCore, Recompute::kSelective, 0));
  EXPECT_TRUE(FrameworkRecomputes(TrainFramework::kTorchtitan, Recompute::kFull, 8));
  for (const char* model : {"llama-2-13b", "llama-3-70b"}) {
    TrainJobSpec j = B16Job();
    j.model = Preset(model);
    j.model_arg = model;
    j.method = TrainMethod::kPretrain;
    j.tokens = 50e9;
    j.top = 40;
    auto r = PlanTraining(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    ASSERT_FALSE(r->plans.empty());
    for (const TrainPlan& p : r->plans) {
      SCOPED_TRACE(std::string(model) + " " + p.instance->instance_type);
      EXPECT_TRUE(FrameworkRecomputes(p.framework, p.opt.recompute, p.opt.recompute_layers))
          << TrainFrameworkName(p.framework) << " "
          << RecomputeLabel(p.opt.recompute, p.opt.recompute_layers);
      const int per_node = p.instance->accelerator_count;
      if (p.par.tp <= per_node) {
        EXPECT_EQ(per_node % p.par.tp, 0) << "tp " << p.par.tp;
      }
    }
  }
}

// ---- storage --------------------------------------------------------------------------------

TEST(TrustStorage, TextJobNeedsKilobytesNotGigabytes) {
  for (SizingPolicy pol : {SizingPolicy::kDefault, SizingPolicy::kGuideA, SizingPolicy::kGuideB}) {
    TrainJobSpec j = B16Job();
    j.host_policy = pol;
    auto r = PlanTraining(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    ASSERT_FALSE(r->plans.empty());
    for (const TrainPlan& p : r->plans) {
      SCOPED_TRACE(std::string(SizingPolicyName(pol)) + " " + p.instance->instance_type);
      // A 13B text job reads a few hundred KB/s of token ids per node at most; the checkpoint
      // restore term (default policy) is ~1 GB/s at most for 13B x 16 B / 300 s.
      EXPECT_LT(p.host.storage_bw.value(), 1e9);
      EXPECT_FALSE(AnyHas(p.warnings, "starve")) << "false storage alarm";
      EXPECT_TRUE(AnyHas(p.host.rationale, "the plan reads")) << "storage not sized from the plan";
    }
  }
}

TEST(TrustStorage, ImageJobReadsJpegRate) {
  TrainJobSpec j;
  j.model = Preset("resnet-50");
  j.method = TrainMethod::kFull;
  j.samples = 1.281167e6;
  j.epochs = 2;
  j.top = 1;
  j.gpus = {"H100-SXM5-80GB"};
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  const TrainPlan& p = r->plans.front();
  // 110 KB per image x the plan's images/s, twice for loader bursts.
  const double expect = 2 * 110e3 * p.eval.step.samples_per_s / p.nodes;
  EXPECT_GE(p.host.storage_bw.value(), expect * 0.999);
  EXPECT_TRUE(AnyHas(p.host.rationale, "JPEG"));
}

// One 8 x 80 GB training node's sizing input for a model of these file sizes.
SizingInput EightGpuTrainingNode(Bytes model_files, Bytes checkpoint, Bytes dataset) {
  SizingInput in;
  in.training = true;
  in.gpus_per_node = 8;
  in.nodes = 1;
  in.gpu_memory = GiB(80);
  in.model_files = model_files;
  in.checkpoint = checkpoint;
  in.dataset = dataset;
  return in;
}

TEST(TrustStorage, SizeHostUsesTheKnownFeedUnderEveryPolicy) {
  SizingInput in = EightGpuTrainingNode(GB(26), GB(208), Bytes(0));
  in.data_feed = BytesPerSec(50e3);
  in.data_feed_basis = "test";
  for (SizingPolicy pol : {SizingPolicy::kGuideA, SizingPolicy::kGuideB}) {
    const HostNeeds n = SizeHost(pol, in);
    EXPECT_DOUBLE_EQ(n.storage_bw.value(), 100e3) << SizingPolicyName(pol);
    EXPECT_TRUE(AnyHas(n.rationale, "the policy's fixed figure was")) << SizingPolicyName(pol);
  }
  // Default keeps the checkpoint-restore term: 208 GB / 300 s.
  EXPECT_NEAR(SizeHost(SizingPolicy::kDefault, in).storage_bw.value(), 208e9 / 300, 1);
  // A fast feed raises it above the restore term.
  in.data_feed = BytesPerSec(2e9);
  EXPECT_DOUBLE_EQ(SizeHost(SizingPolicy::kDefault, in).storage_bw.value(), 4e9);
}

TEST(TrustStorage, UnknownLocalNvmeIsNotAFailedCheck) {
  const SizingInput in = EightGpuTrainingNode(GB(140), GB(980), GB(1300));
  const HostNeeds needs = SizeHost(SizingPolicy::kGuideA, in);  // 7 GB/s, 4.24 TB data disk
  InstanceType inst;
  inst.cloud = "x";
  inst.instance_type = "x.8gpu";
  inst.vcpus = 192;
  inst.ram = GiB(2048);
  inst.network = Gbps(100);
  inst.local_nvme_known = false;
  for (const HostFinding& f : CheckHost(needs, inst)) {
    if (f.item == "storage_bw" || f.item == "data_disk") {
      EXPECT_TRUE(f.ok) << f.text;
      EXPECT_TRUE(Has(f.text, "not recorded")) << f.text;
    }
  }
  inst.local_nvme_known = true;  // stated as none: a real shortfall
  for (const HostFinding& f : CheckHost(needs, inst)) {
    if (f.item == "storage_bw" || f.item == "data_disk") {
      EXPECT_FALSE(f.ok) << f.text;
    }
  }
}

// ---- host rules, A12 ------------------------------------------------------------------------

TEST(TrustHost, RuleNoInstanceMeetsIsSaidOnce) {
  TrainJobSpec j = B16Job();
  j.host_policy = SizingPolicy::kGuideB;  // B6: RAM >= 4 x GPU memory
  j.gpus = {"H100-SXM5-80GB"};
  j.min_gpus = 8;
  j.max_gpus = 8;
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  // 8 x 80 GiB x 4 = 2,560 GiB of RAM: no 8 x H100 shape in the catalog has that much.
  EXPECT_TRUE(AnyHas(r->notes, "guide-b host policy asks for")) << "said once, in the notes";
  for (const TrainPlan& p : r->plans) {
    EXPECT_FALSE(AnyHas(p.warnings, "RAM")) << p.instance->instance_type;
    for (const HostFinding& f : p.host_findings) {
      if (f.item == "ram") {
        EXPECT_TRUE(f.ok) << f.text;
      }
    }
  }
}

TEST(TrustHost, PcieWarningOnlyWhenCommunicationIsMaterial) {
  for (const auto& gpu : {"L40S", "RTX-4090", "A10G", "L4"}) {
    TrainJobSpec j = B16Job();
    j.model = Preset("llama-3.2-1b");
    j.gpus = {gpu};
    j.top = 10;
    auto r = PlanTraining(j, Cat(), Cal());
    if (!r.ok()) continue;
    for (const TrainPlan& p : r->plans) {
      const double share =
          (p.eval.step.tp_comm + p.eval.step.dp_comm).value() / p.eval.step.total.value();
      if (AnyHas(p.warnings, "over PCIe only")) {
        EXPECT_GE(share, 0.10) << p.instance->instance_type;
      }
    }
  }
}

// ---- catalog quality, regions -----------------------------------------------------------------

TEST(TrustCatalog, SuspectRowsAreNotRankedUnlessAskedFor) {
  TrainJobSpec j;
  j.model = Preset("llama-2-70b");
  j.method = TrainMethod::kPretrain;
  j.tokens = 20e9;
  j.deadline_hours = 24 * 7;
  j.clouds = {"gcp"};
  j.top = 50;
  j.by_region = true;
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  for (const TrainPlan& p : r->plans) {
    EXPECT_TRUE(p.instance->suspect_reason.empty())
        << p.instance->instance_type << " " << p.instance->region;
  }
  EXPECT_TRUE(AnyHas(r->notes, "suspect"));
  j.include_suspect = true;
  auto all = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(std::any_of(all->plans.begin(), all->plans.end(), [](const TrainPlan& p) {
    return !p.instance->suspect_reason.empty();
  })) << "--include-suspect brings them back";
}

TEST(TrustCatalog, RegionDuplicatesCollapse) {
  TrainJobSpec j = B16Job();
  j.top = 10;
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  std::vector<std::string> seen;
  for (const TrainPlan& p : r->plans) {
    const std::string key =
        p.instance->cloud + "/" + p.instance->instance_type + "/" + std::to_string(p.nodes);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), key), 0) << key << " listed twice";
    seen.push_back(key);
  }
  j.by_region = true;
  auto apart = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(apart.ok());
  size_t regions = 0;
  for (const TrainPlan& p : r->plans) regions += p.also_regions.size();
  if (regions > 0) {
    bool dup = false;
    for (size_t a = 0; a < apart->plans.size(); ++a) {
      for (size_t b = a + 1; b < apart->plans.size(); ++b) {
        dup |= apart->plans[a].instance->instance_type == apart->plans[b].instance->instance_type &&
               apart->plans[a].nodes == apart->plans[b].nodes;
      }
    }
    EXPECT_TRUE(dup) << "by_region keeps regions apart";
  }
}

// ---- nothing fits -----------------------------------------------------------------------------

TEST(TrustNothingFits, NearestMissesSayHowFar) {
  TrainJobSpec j;
  j.model = Preset("llama-3-70b");
  j.method = TrainMethod::kFull;
  j.tokens = 10e9;
  j.deadline_hours = 24;
  j.budget = 5000;
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_TRUE(r->plans.empty());
  ASSERT_FALSE(r->nearest_misses.empty());
  EXPECT_TRUE(AnyHas(r->nearest_misses, "over the budget") || AnyHas(r->nearest_misses, "past the"))
      << r->nearest_misses.front();
}

// ---- guide comparison -------------------------------------------------------------------------

TEST(TrustGuide, A2BranchesAsWritten) {
  // 8 x H100 is not "2-4 x H100": a plan on 8 H100s must not be said to follow A2.
  TrainJobSpec j = B16Job();
  j.gpus = {"H100-SXM5-80GB"};
  j.min_gpus = 8;
  j.max_gpus = 8;
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  EXPECT_TRUE(Has(r->guide_rule, "4-8 x A100 or 2-4 x H100"));
  EXPECT_FALSE(Has(r->guide_comparison, "agrees")) << r->guide_comparison;
  ASSERT_FALSE(r->guide_plans.empty());
  const TrainPlan& g = r->guide_plans.front();
  const int n = g.nodes * g.instance->accelerator_count;
  const bool a100 = g.instance->accelerator.rfind("A100", 0) == 0;
  EXPECT_TRUE(a100 ? (n >= 4 && n <= 8) : (n >= 2 && n <= 4))
      << g.instance->accelerator << " x " << n;
}

TEST(TrustGuide, A1SparseFigureIsNamed) {
  TrainJobSpec j = B16Job();
  j.gpus = {"A100-SXM4-80GB"};
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  EXPECT_TRUE(AnyHas(r->guide_notes, "2:4-sparse"))
      << (r->guide_notes.empty() ? "" : r->guide_notes.front());
}

TEST(TrustGuide, B3ClaimsGetAVerdict) {
  for (const char* model : {"resnet-152", "vit-l-16"}) {
    TrainJobSpec j;
    j.model = Preset(model);
    j.method = TrainMethod::kFull;
    j.samples = 1.281167e6;
    j.epochs = 1;
    j.top = 1;
    auto r = PlanTraining(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_TRUE(AnyHas(r->guide_notes, "guide B3")) << model;
  }
}

// ---- serving ----------------------------------------------------------------------------------

TEST(TrustServing, RuntimeMatchesTheHardware) {
  ServeJobSpec j;
  j.model = Preset("llama-3-8b");
  j.qps = 2;
  j.clouds = {"aws"};
  j.top = 50;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const ServePlan& p : r->plans) {
    if (p.instance->accelerator.rfind("Inferentia", 0) == 0) {
      EXPECT_TRUE(Has(p.runtime, "Neuron")) << p.runtime;
    } else {
      EXPECT_EQ(p.runtime, "vllm");
    }
  }
  // 16 GB of bf16 weights cannot be staged through 16 GiB of host RAM: such a host ranks last.
  EXPECT_FALSE(r->plans.front().host_inadequate) << r->plans.front().instance->instance_type;
  bool seen_bad = false;
  for (const ServePlan& p : r->plans) {
    if (p.host_inadequate) {
      seen_bad = true;
    } else {
      EXPECT_FALSE(seen_bad) << "an inadequate host ranked above " << p.instance->instance_type;
    }
  }
}

TEST(TrustServing, EncoderOnCpuIsNotVllm) {
  ServeJobSpec j;
  j.model = Preset("bert-base-uncased");
  j.qps = 20;
  j.input_len = 128;
  j.output_len = 0;
  j.allow_cpu = true;
  j.allow_gpu = false;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const ServePlan& p : r->plans) EXPECT_EQ(p.runtime, "ONNX Runtime / OpenVINO");
}

// B16 serves its 13B model on A10G: the serving answer shows the guide's choice and its cost
// beside gpuplan's own.
TEST(TrustGuide, ServingShowsTheGuidesChoice) {
  ServeJobSpec j;
  j.model = Preset("llama-2-13b");
  j.qps = 2000.0 / 128;  // B16: 2000 tokens/s at 128 output tokens
  j.output_len = 128;
  j.tpot_p99_ms = 100;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  EXPECT_TRUE(Has(r->guide_rule, "B16")) << r->guide_rule;
  ASSERT_EQ(r->guide_plans.size(), 1u) << r->guide_comparison;
  EXPECT_EQ(r->guide_plans.front().instance->accelerator, "A10G");
  EXPECT_TRUE(Has(r->guide_comparison, "verdict:")) << r->guide_comparison;
  if (r->plans.front().instance->accelerator != "A10G") {
    EXPECT_GE(r->guide_plans.front().cost_per_month, r->plans.front().cost_per_month);
  }
}

// A ResNet-50 job is eager PyTorch unless it names the MLPerf benchmark it runs: batch norm and
// ReLU run as separate kernels (13 passes over each feature map, not MLPerf MXNet's fused 8), so
// its images/s on an A100 land near timm's ~2600 (AMP, channels-last) rather than MLPerf's rate.
TEST(TrustVision, PlainCnnJobsRunEagerKernels) {
  TrainJobSpec j;
  j.model = Preset("resnet-50");
  j.model_arg = "resnet-50";
  j.method = TrainMethod::kFull;
  j.samples = 1281167;
  j.global_batch = 1024;
  EXPECT_FALSE(RunsBenchmarkImplementation(j));
  EXPECT_FALSE(TrainOptionsFor(j).fused_kernels);
  TrainJobSpec mlperf = j;
  mlperf.benchmark = "mlperf/resnet";
  EXPECT_TRUE(RunsBenchmarkImplementation(mlperf));
  EXPECT_TRUE(TrainOptionsFor(mlperf).fused_kernels);
  mlperf.framework = TrainFramework::kDeepSpeed;  // not the benchmark's reference framework
  EXPECT_FALSE(TrainOptionsFor(mlperf).fused_kernels);

  j.gpus = {"A100-SXM4-80GB"};
  j.max_nodes = 1;
  auto r = PlanTraining(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const TrainPlan& p : r->plans) {
    const double per_gpu = p.eval.step.samples_per_s / (p.nodes * p.instance->accelerator_count);
    EXPECT_GT(per_gpu, 2000) << p.instance->instance_type;
    EXPECT_LT(per_gpu, 3200) << p.instance->instance_type;
  }
}

// ---- `gpuplan memory` -----------------------------------------------------------------------

// Llama-3-8B full fine-tuning at micro-batch 4 x 2048: 51.5 GiB of activations per GPU, which data
// parallelism does not shrink. Without recompute an 80 GB card holds it only at hundreds of GPUs
// (the rest sharded away); with full recompute, at 4. The fit with the fewest GPUs is the answer
// a user acts on, and no inference-only chip is offered for training.
TEST(TrustMemory, FewestGpusTakeRecomputeAndSkipInferenceChips) {
  MemoryRequest req;
  req.train = true;
  req.batch = 4;
  auto r = AnalyzeMemory(req, Preset("llama-3-8b"), Cat(), Currency::kUsd, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_TRUE(r->train.has_value());
  bool saw_h100 = false;
  for (const MemoryFit& f : r->train->fits) {
    SCOPED_TRACE(f.acc->id);
    EXPECT_FALSE(f.acc->InferenceOnly());
    if (f.acc->id == "H100-SXM5-80GB") {
      saw_h100 = true;
      EXPECT_LE(f.gpus, 8);
      EXPECT_EQ(f.recompute, Recompute::kFull);
    }
    // No fit needs more GPUs than the recompute search would give it.
    EXPECT_LE(f.gpus, 64);
  }
  EXPECT_TRUE(saw_h100);
  // The serving side still offers Inferentia (it serves an 8B model).
  MemoryRequest inf;
  inf.infer = true;
  auto s = AnalyzeMemory(inf, Preset("llama-3-8b"), Cat(), Currency::kUsd, std::nullopt);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  ASSERT_TRUE(s->infer.has_value());
  EXPECT_TRUE(std::any_of(s->infer->fits.begin(), s->infer->fits.end(),
                          [](const MemoryFit& f) { return f.acc->InferenceOnly(); }));
}

}  // namespace
}  // namespace gpuplan
