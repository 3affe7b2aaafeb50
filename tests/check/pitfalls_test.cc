// One rule set (issue 10, pitfalls.h): a training plan's findings and `gpuplan check` on the
// same setup (the plan's instance, node count, layout and batch) give the same rule ids, table
// driven over setups that each trigger a different guide rule. Each row also names the rule it
// must trigger in both, so the test fails if a rule silently stops firing.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/check.h"
#include "gpuplan/job.h"
#include "gpuplan/pitfalls.h"
#include "gpuplan/planner.h"
#include "testing/fixtures.h"

namespace gpuplan {
namespace {

using test::Cat;
using test::Preset;

struct AgreeCase {
  const char* name;
  TrainJobSpec job;
  const char* expected_rule;  // fires in both
  const char* source;
};

TrainJobSpec Job(const char* model, TrainMethod method, std::vector<std::string> clouds,
                 std::vector<std::string> gpus, int num_gpus) {
  TrainJobSpec j;
  j.model = Preset(model);
  j.model_arg = model;
  j.method = method;
  j.tokens = 1e9;
  j.clouds = std::move(clouds);
  j.gpus = std::move(gpus);
  j.num_gpus = num_gpus;
  j.top = 1;
  j.include_suspect = true;  // GCP's A100 rows are marked suspect; the rules do not depend on price
  return j;
}

std::vector<AgreeCase> Cases() {
  std::vector<AgreeCase> c;
  // 8 x L40S over PCIe (g6e.48xlarge), a 1B model at a small batch: exposed data-parallel and
  // pipeline traffic crosses PCIe.
  {
    TrainJobSpec j = Job("llama-3.2-1b", TrainMethod::kFull, {"aws"}, {"L40S"}, 8);
    j.nodes = 1;
    j.seq_len = 1024;
    j.global_batch = 32;
    c.push_back({"pcie_8gpu", j, "A12-pcie-multi-gpu", "guide A12: ~40% on PCIe"});
  }
  // 2 nodes of Azure A100 PCIe with no RDMA fabric.
  {
    TrainJobSpec j = Job("llama-3.2-1b", TrainMethod::kFull, {"azure"}, {"A100-PCIe-80GB"}, 0);
    j.nodes = 2;
    c.push_back({"multi_node_no_rdma", j, "A13-multi-node-rdma", "guide A13/B8: RDMA"});
    c.push_back({"multi_node_zone", j, "A13-same-zone", "guide A13: one zone"});
  }
  // Spot allowed, no checkpoints.
  {
    TrainJobSpec j = Job("llama-2-7b", TrainMethod::kFull, {"gcp"}, {"A100-SXM4-40GB"}, 8);
    j.spot_allowed = true;
    j.checkpoint_interval_hours = 0;
    c.push_back({"spot_no_checkpoint", j, "A15-spot-checkpoint", "guide A15"});
  }
  // LoRA on Llama-2-13B on one A100 40GB: memory at ~77% of the GPU.
  c.push_back({"memory_near_headroom",
               Job("llama-2-13b", TrainMethod::kLora, {"lambda"}, {"A100-SXM4-40GB"}, 1),
               "B5-memory-headroom", "guide B5: stay under 80%"});
  // A 3 TB image dataset on one 8-GPU node with network storage only (GCP a2): the page cache
  // cannot hold it and storage cannot stream it at the step's rate. (A text dataset read as
  // token ids at KB/s needs no page cache: B6 is silent there.)
  {
    TrainJobSpec j = Job("resnet-50", TrainMethod::kFull, {"gcp"}, {"A100-SXM4-40GB"}, 8);
    j.tokens = 0;
    j.samples = 1281167;
    j.dataset = GB(3000);
    c.push_back({"dataset_over_ram", j, "B6-ram-dataset",
                 "guide B6: RAM >= 1.5 x dataset, where storage cannot feed the step"});
  }
  return c;
}

// The setup `gpuplan check` reads for a plan: its instance, nodes and layout.
Setup SetupOf(const TrainJobSpec& j, const TrainPlan& p) {
  Setup s;
  s.hardware.instance_type = p.instance->instance_type;
  s.hardware.region = p.instance->region;
  s.nodes = p.nodes;
  s.spot = j.spot_allowed && p.cost_spot.has_value();
  s.checkpoint_interval_hours = j.checkpoint_interval_hours;
  s.headroom = j.headroom;
  SetupTraining t;
  t.model_arg = j.model_arg;
  t.model = j.model;
  t.method = j.method;
  t.precision = j.precision;
  t.micro_batch = p.opt.micro_batch;
  t.seq_len = p.opt.seq_len;
  t.global_batch = p.global_batch;
  t.recompute = p.opt.recompute;
  t.zero_stage = p.par.zero_stage;
  t.tp = p.par.tp;
  t.pp = p.par.pp;
  t.dataset = j.dataset;
  t.field = "setup:1:train";
  s.train = t;
  return s;
}

// The rule ids the shared rule set (TrainingPitfalls) can give; check's own rules (storage it
// declares, B17, A3's catalog search, layout-invalid) are not part of the comparison.
bool Shared(const std::string& rule) {
  static const std::set<std::string> kShared = {"B5-memory-headroom",  "A12-pcie-multi-gpu",
                                                "A13-multi-node-rdma", "A13-same-zone",
                                                "A15-spot-checkpoint", "B6-ram-dataset",
                                                "B17-jpeg-decode",     "A12-exposed-communication",
                                                "A4-host-cpu",         "A5-host-ram",
                                                "A6-host-disk",        "A9-host-storage-read",
                                                "B8-host-network"};
  return kShared.count(rule) > 0;
}

class AgreeTest : public ::testing::TestWithParam<AgreeCase> {};

TEST_P(AgreeTest, PlanAndCheckGiveTheSameRules) {
  const AgreeCase& c = GetParam();
  auto res = PlanTraining(c.job, Cat(), DefaultCalibration());
  ASSERT_TRUE(res.ok()) << res.error().ToString();
  ASSERT_FALSE(res->plans.empty()) << c.name;
  const TrainPlan& p = res->plans.front();
  // Host rules the planner waived (no candidate instance meets them; said once in the notes)
  // are the policy's, not this plan's: check, which sees one setup, still reports them.
  std::set<std::string> waived;
  for (const HostFinding& h : p.host_findings) {
    if (h.waived) waived.insert(HostRuleId(h.item));
  }
  std::set<std::string> plan_rules, check_rules;
  for (const Finding& f : p.findings) {
    if (Shared(f.rule)) plan_rules.insert(f.rule);
  }
  const gpuplan::Setup setup = SetupOf(c.job, p);
  ASSERT_TRUE(ValidateSetup(setup, Cat()).ok()) << c.name;
  for (const Finding& f : CheckSetup(setup, Cat(), DefaultCalibration())) {
    if (Shared(f.rule) && !waived.count(f.rule)) check_rules.insert(f.rule);
  }
  auto list = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& r : s) out += r + " ";
    return out;
  };
  SCOPED_TRACE(std::string(c.name) + " on " + std::to_string(p.nodes) + " x " +
               p.instance->instance_type + " (" + c.source + ")");
  EXPECT_EQ(plan_rules, check_rules)
      << "plan: " << list(plan_rules) << "\ncheck: " << list(check_rules);
  EXPECT_TRUE(plan_rules.count(c.expected_rule)) << c.expected_rule << " missing in the plan";
  EXPECT_TRUE(check_rules.count(c.expected_rule)) << c.expected_rule << " missing in check";
  // The plan's warnings are its findings' messages, in order.
  ASSERT_EQ(p.warnings.size(), p.findings.size());
  for (size_t k = 0; k < p.findings.size(); ++k) EXPECT_EQ(p.warnings[k], p.findings[k].message);
}

INSTANTIATE_TEST_SUITE_P(Setups, AgreeTest, ::testing::ValuesIn(Cases()),
                         [](const auto& tp_info) { return std::string(tp_info.param.name); });

// ---- each rule's one threshold, on synthetic numbers --------------------------------------

struct Synthetic {
  InstanceType inst;
  TrainEval eval;
  TrainFacts facts;
  Synthetic(const char* acc, int gpus, IntraNodeLink link) {
    inst.cloud = "test";
    inst.instance_type = "test";
    inst.accelerator = acc;
    inst.accelerator_count = gpus;
    inst.intra_node_link = link;
    inst.vcpus = 96;
    inst.ram = GB(1000);
    eval.fits = true;
    eval.step.valid = true;
    eval.step.total = Seconds(1);
    facts.model = &Preset("llama-2-7b");
    facts.instance = &inst;
    facts.accelerator = &test::Acc(acc);
    facts.par.dp = gpus;
    facts.eval = &eval;
  }
};

TEST(PitfallThresholds, PcieFiresAtTheMaterialShareAndErrsAtTheSevereShare) {
  Synthetic s("A100-PCIe-80GB", 8, IntraNodeLink::kPcie);
  s.eval.step.dp_comm = Seconds(kMaterialCommShare * 0.99);
  EXPECT_FALSE(PcieMultiGpuRule(s.facts));
  s.eval.step.dp_comm = Seconds(kMaterialCommShare);
  auto w = PcieMultiGpuRule(s.facts);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->severity, Severity::kWarning);
  s.eval.step.dp_comm = Seconds(kSevereCommShare);
  ASSERT_TRUE(PcieMultiGpuRule(s.facts));
  EXPECT_EQ(PcieMultiGpuRule(s.facts)->severity, Severity::kError);
  // Pipeline-only traffic is not the TP/DP collectives A12 is about.
  s.eval.step.dp_comm = Seconds(0);
  s.eval.step.pp_comm = Seconds(0.5);
  EXPECT_FALSE(PcieMultiGpuRule(s.facts));
  // NVSwitch: never.
  s.inst.intra_node_link = IntraNodeLink::kNvswitch;
  s.eval.step.dp_comm = Seconds(0.5);
  EXPECT_FALSE(PcieMultiGpuRule(s.facts));
}

TEST(PitfallThresholds, HeadroomWarnsAtItsFractionAndErrsOverUsableMemory) {
  Synthetic s("A100-SXM4-80GB", 1, IntraNodeLink::kNone);
  const double usable = s.facts.accelerator->Usable().value();
  const double line = s.facts.headroom * kHeadroomWarnFraction;
  s.eval.memory.weights = Bytes(usable * line * 0.999);
  EXPECT_FALSE(MemoryHeadroomRule(s.facts));
  s.eval.memory.weights = Bytes(usable * line * 1.001);
  ASSERT_TRUE(MemoryHeadroomRule(s.facts));
  EXPECT_EQ(MemoryHeadroomRule(s.facts)->severity, Severity::kWarning);
  s.eval.memory.weights = Bytes(usable * 1.01);
  ASSERT_TRUE(MemoryHeadroomRule(s.facts));
  EXPECT_EQ(MemoryHeadroomRule(s.facts)->severity, Severity::kError);
}

TEST(PitfallThresholds, ExposedCommunicationDefersToTheLinkRules) {
  Synthetic s("A100-PCIe-80GB", 8, IntraNodeLink::kPcie);
  s.eval.step.dp_comm = Seconds(kSevereCommShare);
  std::set<std::string> ids;
  for (const Finding& f : TrainingPitfalls(s.facts, DefaultCalibration())) ids.insert(f.rule);
  EXPECT_TRUE(ids.count("A12-pcie-multi-gpu"));
  EXPECT_FALSE(ids.count("A12-exposed-communication")) << "said twice";
  s.inst.intra_node_link = IntraNodeLink::kNvswitch;
  ids.clear();
  for (const Finding& f : TrainingPitfalls(s.facts, DefaultCalibration())) ids.insert(f.rule);
  EXPECT_TRUE(ids.count("A12-exposed-communication"));
  s.eval.step.dp_comm = Seconds(kSevereCommShare * 0.99);
  EXPECT_FALSE(ExposedCommunicationRule(s.facts));
}

// A pipeline whose stages idle a quarter of the step or more (too few micro-batches): a
// warning from kSevereBubbleShare, none without a pipeline. The planner's own top plan of a
// 405B fine-tune forced onto 16,384 GPUs at the default global batch of 128 (tp 8 x pp 16 x
// dp 128, one micro-batch per step) carries it.
TEST(PitfallThresholds, PipelineBubbleFromTheSevereShare) {
  Synthetic s("H100-SXM5-80GB", 8, IntraNodeLink::kNvswitch);
  s.facts.par.pp = 4;
  s.eval.step.num_microbatches = 2;
  s.eval.step.bubble = Seconds(kSevereBubbleShare * 0.99);
  EXPECT_FALSE(PipelineBubbleRule(s.facts));
  s.eval.step.bubble = Seconds(kSevereBubbleShare);
  auto w = PipelineBubbleRule(s.facts);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->severity, Severity::kWarning);
  EXPECT_NE(w->message.find("4 stages run 2 micro-batch"), std::string::npos) << w->message;
  s.facts.par.pp = 1;
  EXPECT_FALSE(PipelineBubbleRule(s.facts));
}

TEST(PitfallThresholds, SmallCardNeedsALargeEnoughAndCheapEnoughCard) {
  Synthetic s("RTX-4090", 1, IntraNodeLink::kNone);
  LargerCard larger{"a larger card", GiB(80), 89, 100, "USD for the job"};
  EXPECT_TRUE(SmallCardRule(s.facts, "full recompute", larger));
  EXPECT_FALSE(SmallCardRule(s.facts, "", larger)) << "nothing forced";
  larger.cost = 91;  // under kLargerCardMinSaving
  EXPECT_FALSE(SmallCardRule(s.facts, "full recompute", larger));
  larger.cost = 50;
  larger.memory = GiB(24 * kLargerCardMemoryRatio * 0.9);
  EXPECT_FALSE(SmallCardRule(s.facts, "full recompute", larger));
}

}  // namespace
}  // namespace gpuplan
