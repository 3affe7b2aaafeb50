// gpuplan check: every rule has a setup that triggers it and one that does not (the guides'
// rule ids are cited in each row); bad YAML names the field; the CLI's exit codes 0/1/2.
#include "gpuplan/check.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpuplan {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Example(const std::string& name) {
  return Slurp(std::string(GPUPLAN_SOURCE_DIR) + "/examples/check/" + name + ".yaml");
}

const Catalog& Cat() {
  static const Catalog cat = [] {
    auto c = LoadBuiltinCatalog();
    EXPECT_TRUE(c.ok());
    return *c;
  }();
  return cat;
}

std::vector<Finding> Check(const std::string& yaml) {
  auto s = ParseSetupYaml(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
  if (!s.ok()) return {};
  Status st = ValidateSetup(*s, Cat());
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().ToString());
  return CheckSetup(*s, Cat(), DefaultCalibration());
}

const Finding* Find(const std::vector<Finding>& fs, const std::string& rule,
                    Severity min_severity) {
  for (const auto& f : fs) {
    if (f.rule == rule && static_cast<int>(f.severity) <= static_cast<int>(min_severity)) {
      return &f;
    }
  }
  return nullptr;
}

// A 4 x RTX 4090 PCIe box: a 3B model needs full recompute + accumulation (guide A3).
const char* kSmallCards = R"(
hardware: {accelerator: RTX-4090, gpus_per_node: 4, intra_link: pcie, storage: nvme, storage_gbps: 20}
train: {model: llama-3.2-3b, micro_batch: 1, seq_len: 2048, global_batch: 64, recompute: full, zero: 3}
)";
// An 8 x A100-80GB node with 256 GB RAM: the default sizing wants 1.2 x 640 GiB (guide A5).
const char* kSmallRam = R"(
hardware: {accelerator: A100-SXM4-80GB, gpus_per_node: 8, intra_link: nvswitch, ram_gb: 256, vcpus: 128, storage: nvme, storage_gbps: 20}
train: {model: llama-2-7b, micro_batch: 1, seq_len: 4096, global_batch: 64, zero: 3}
)";
// The same box on a 7B model: does not fit (guide B5).
const char* kOverMemory = R"(
hardware: {accelerator: RTX-4090, gpus_per_node: 4, intra_link: pcie, storage: nvme, storage_gbps: 20}
train: {model: qwen2.5-7b-instruct, micro_batch: 1, seq_len: 2048, global_batch: 64, recompute: full, zero: 3}
)";
// BERT-base at micro-batch 1 x 128 tokens on an A100 (guide B17).
const char* kSmallBatch = R"(
hardware: {accelerator: A100-SXM4-80GB, gpus_per_node: 1, storage: nvme, storage_gbps: 7}
train: {model: bert-base-uncased, micro_batch: 1, seq_len: 128, global_batch: 256}
)";
const char* kBigBatch = R"(
hardware: {accelerator: A100-SXM4-80GB, gpus_per_node: 1, storage: nvme, storage_gbps: 7}
train: {model: bert-base-uncased, micro_batch: 256, seq_len: 128, global_batch: 256}
)";
// Two RDMA nodes in one zone, spot with hourly checkpoints, enough RAM and NVMe.
const char* kTwoGoodNodes = R"(
hardware: {instance: p5.48xlarge, region: us-east-1, storage: nvme, storage_gbps: 50}
nodes: 2
zones: [us-east-1a, us-east-1a]
spot: true
checkpoint_every: 1h
train: {model: llama-2-7b, micro_batch: 1, seq_len: 4096, global_batch: 512, zero: 3, dataset_size: 500GB}
)";
const char* kServeSteadyAutoscaled = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-2-7b, qps: 0.5, input_len: 512, output_len: 128, autoscaling: true, load: variable}
)";
// FP8 weights on V100s (compute capability 7.0): vLLM has no FP8 kernels there; on L4s it has.
const char* kServeFp8OnVolta = R"(
hardware: {accelerator: V100-SXM2-32GB, gpus_per_node: 1}
serve: {model: llama-3.1-8b, precision: fp8, qps: 1, input_len: 512, output_len: 128}
)";
// The setup names its engine and quantization: TensorRT-LLM runs on Ampere or newer only; AWQ
// needs compute capability 7.5 in vLLM (V100 is 7.0); vLLM serves AWQ on a T4.
const char* kServeTrtllmOnT4 = R"(
hardware: {accelerator: T4, gpus_per_node: 4}
serve: {model: llama-2-7b, precision: fp16, engine: trt-llm, qps: 1, input_len: 512, output_len: 128}
)";
const char* kServeAwqOnVolta = R"(
hardware: {accelerator: V100-SXM2-32GB, gpus_per_node: 1}
serve: {model: llama-2-7b, quant: awq, qps: 1, input_len: 512, output_len: 128}
)";
const char* kServeAwqOnT4 = R"(
hardware: {accelerator: T4, gpus_per_node: 1}
serve: {model: llama-2-7b, quant: awq, qps: 1, input_len: 512, output_len: 128}
)";
// The setup's own tensor-parallel size: Llama-2-13B (26 GB of weights) does not fit one A10G
// (24 GB) but does at tp 4 (before, check always searched the smallest tp that fits).
const char* kServe13bTp1OnA10g = R"(
hardware: {instance: g5.12xlarge, region: us-east-1}
serve: {model: llama-2-13b, tp: 1, qps: 1, input_len: 512, output_len: 128}
)";
const char* kServe13bTp4OnA10g = R"(
hardware: {instance: g5.12xlarge, region: us-east-1}
serve: {model: llama-2-13b, tp: 4, qps: 1, input_len: 512, output_len: 128}
)";
// vLLM's default max_model_len is the model's context: Llama-3.1-8B's 131072 tokens of KV do not
// fit what one A10G leaves (~33K tokens), so `vllm serve` refuses to start; 8192 starts.
const char* kServe128kOnA10g = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-3.1-8b, qps: 1, input_len: 512, output_len: 128}
)";
const char* kServe8kOnA10g = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-3.1-8b, max_model_len: 8192, qps: 1, input_len: 512, output_len: 128}
)";
// The setup's memory fraction moves the KV budget: 40000 tokens do not fit at vLLM's default
// utilisation on one A10G, and do at 0.98.
const char* kServe40kOnA10g = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-3.1-8b, max_model_len: 40000, qps: 1, input_len: 512, output_len: 128}
)";
const char* kServe40kAt098OnA10g = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-3.1-8b, max_model_len: 40000, gpu_memory_utilization: 0.98, qps: 1, input_len: 512, output_len: 128}
)";
const char* kServeFp8OnAda = R"(
hardware: {accelerator: L4, gpus_per_node: 1}
serve: {model: llama-3.1-8b, precision: fp8, qps: 1, input_len: 512, output_len: 128}
)";
// FP8 training on A100s, which have no FP8 tensor cores.
const char* kFp8TrainOnAmpere = R"(
hardware: {accelerator: A100-SXM4-80GB, gpus_per_node: 8, intra_link: nvswitch, storage: nvme, storage_gbps: 20}
train: {model: llama-2-7b, precision: fp8, micro_batch: 1, seq_len: 4096, global_batch: 64, zero: 3}
)";
const char* kFp8TrainOnHopper = R"(
hardware: {accelerator: H100-SXM5-80GB, gpus_per_node: 8, intra_link: nvswitch, storage: nvme, storage_gbps: 20}
train: {model: llama-2-7b, precision: fp8, micro_batch: 1, seq_len: 4096, global_batch: 64, zero: 3}
)";
// The setup names its framework: Megatron-Core does not shard parameters (ZeRO-3); FSDP does.
const char* kMegatronZero3 = R"(
hardware: {accelerator: H100-SXM5-80GB, gpus_per_node: 8, intra_link: nvswitch, storage: nvme, storage_gbps: 20}
train: {model: llama-2-7b, micro_batch: 1, seq_len: 4096, global_batch: 64, zero: 3, recompute: full, framework: megatron-core}
)";
const char* kFsdpZero3 = R"(
hardware: {accelerator: H100-SXM5-80GB, gpus_per_node: 8, intra_link: nvswitch, storage: nvme, storage_gbps: 20}
train: {model: llama-2-7b, micro_batch: 1, seq_len: 4096, global_batch: 64, zero: 3, recompute: full, framework: fsdp}
)";
// 13B full fine-tune on 8 x A100 40GB under ZeRO-3: 32-bit AdamW states are near the headroom
// line; adamw-8bit's quarter-size states are not (before, check assumed AdamW whatever the run).
const char* kAdamw32On40GB = R"(
hardware: {accelerator: A100-SXM4-40GB, gpus_per_node: 8, intra_link: nvswitch, storage: nvme, storage_gbps: 20}
train: {model: llama-2-13b, micro_batch: 1, seq_len: 4096, global_batch: 128, zero: 3, recompute: full}
)";
const char* kAdamw8On40GB = R"(
hardware: {accelerator: A100-SXM4-40GB, gpus_per_node: 8, intra_link: nvswitch, storage: nvme, storage_gbps: 20}
train: {model: llama-2-13b, micro_batch: 1, seq_len: 4096, global_batch: 128, zero: 3, recompute: full, optimizer: adamw-8bit}
)";
// Expert parallelism in a setup: ep 8 over Mixtral's 8 experts runs; ep 3 divides none.
const char* kMixtralEp8 = R"(
hardware: {accelerator: H100-SXM5-80GB, gpus_per_node: 8, intra_link: nvswitch, inter_fabric: infiniband, network_gbps: 3200, storage: nvme, storage_gbps: 20}
nodes: 2
train: {model: mixtral-8x7b, micro_batch: 1, seq_len: 4096, global_batch: 256, tp: 2, ep: 8, recompute: selective, zero: 1}
)";
const char* kMixtralEp3 = R"(
hardware: {accelerator: H100-SXM5-80GB, gpus_per_node: 8, intra_link: nvswitch, inter_fabric: infiniband, network_gbps: 3200, storage: nvme, storage_gbps: 20}
nodes: 2
train: {model: mixtral-8x7b, micro_batch: 1, seq_len: 4096, global_batch: 256, tp: 2, ep: 3, recompute: selective, zero: 1}
)";
// QLoRA on Trainium: bitsandbytes has no Neuron backend.
const char* kQloraOnTrainium = R"(
hardware: {instance: trn1.32xlarge, region: us-east-1, storage: nvme, storage_gbps: 20}
train: {model: llama-2-7b, method: qlora, micro_batch: 1, seq_len: 4096, global_batch: 16}
)";
// Serving on a vast.ai listing (a host's offer) and on a provider's own g5.xlarge.
const char* kServeOnListing = R"(
hardware: {instance: 1x-RTX_4090-32-65536, region: "Germany, DE, EU"}
serve: {model: llama-3.1-8b, qps: 1, input_len: 512, output_len: 128, max_model_len: 8192}
)";
const char* kServeOnProvider = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-3.1-8b, qps: 1, input_len: 512, output_len: 128, max_model_len: 8192}
)";
const char* kServeOverloaded = R"(
hardware: {instance: g5.xlarge, region: us-east-1}
serve: {model: llama-2-7b, qps: 5000, input_len: 512, output_len: 128, load: steady}
)";

// ResNet-50 on 8 A100s with a 150 GB image dataset, 128 GB of RAM and slow network storage:
// the page cache cannot hold the data and storage cannot stream it at the step's rate (B6).
const char* const kImagesSlowStorage = R"(
hardware:
  accelerator: A100-SXM4-80GB
  gpus_per_node: 8
  intra_link: nvswitch
  ram_gb: 128
  vcpus: 96
  storage: network
  storage_gbps: 0.5
nodes: 1
train: {model: resnet-50, micro_batch: 256, global_batch: 2048, dataset_size: 150GB}
)";

struct RuleCase {
  const char* name;
  std::string yaml;
  const char* rule;
  bool expected;
  Severity severity;  // the least severe level that counts as triggered
  const char* source;
};

class RuleTest : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleTest, TriggersOrNot) {
  const RuleCase& c = GetParam();
  const auto fs = Check(c.yaml);
  const Finding* f = Find(fs, c.rule, c.severity);
  if (c.expected) {
    ASSERT_NE(f, nullptr) << c.rule << " expected (" << c.source << ")";
    EXPECT_FALSE(f->message.empty());
    EXPECT_FALSE(f->fix.empty());
    EXPECT_NE(f->message.find_first_of("0123456789"), std::string::npos) << f->message;
  } else {
    EXPECT_EQ(f, nullptr) << c.rule << " not expected (" << c.source
                          << "): " << (f ? f->message : "");
  }
}

std::vector<RuleCase> Cases() {
  const std::string good = Example("good_8xh100_training");
  const std::string pcie = Example("pcie_8gpu_7b");
  const std::string zones = Example("two_zones_spot_no_rdma");
  const std::string p4d = Example("p4d_light_variable_serving");
  const Severity W = Severity::kWarning, E = Severity::kError;
  return {
      {"b5_over", kOverMemory, "B5-memory-headroom", true, E, "guide B5: stay under 80%"},
      {"b5_ok", good, "B5-memory-headroom", false, W, "guide B5"},
      {"a12_pcie", pcie, "A12-pcie-multi-gpu", true, E, "guide A12: ~40% on PCIe"},
      {"a12_nvswitch", good, "A12-pcie-multi-gpu", false, W, "guide A12/B8: NVLink"},
      {"a13_no_rdma", zones, "A13-multi-node-rdma", true, E, "guide A13/B8: RDMA"},
      {"a13_efa", kTwoGoodNodes, "A13-multi-node-rdma", false, W, "guide B8"},
      {"a13_zones", zones, "A13-same-zone", true, E, "guide A13: one zone"},
      {"a13_one_zone", kTwoGoodNodes, "A13-same-zone", false, W, "guide A13"},
      {"a15_spot", zones, "A15-spot-checkpoint", true, E, "guide A15"},
      {"a15_checkpointed", kTwoGoodNodes, "A15-spot-checkpoint", false, W, "guide A15"},
      {"a3_small", kSmallCards, "A3-small-gpu-forced", true, W, "guide A3: A100 vs 4x4090"},
      {"a3_h100", good, "A3-small-gpu-forced", false, W, "guide A3"},
      {"b17_small", kSmallBatch, "B17-small-batch", true, W, "guide B17: too-small batch"},
      {"b17_ok", kBigBatch, "B17-small-batch", false, W, "guide B17"},
      {"a9_network", kImagesSlowStorage, "A9-B6-training-storage", true, W, "guide A9/B6"},
      {"a9_network_text", zones, "A9-B6-training-storage", false, W,
       "guide A9: text at KB/s, network storage keeps up (a note, not a warning)"},
      {"a9_nvme", good, "A9-B6-training-storage", false, W, "guide A9"},
      {"b7_slow", kImagesSlowStorage, "B7-storage-bandwidth", true, W,
       "guide B7: GPUs x 2 GB/s, and the job reads more than the storage gives"},
      {"b7_slow_text", zones, "B7-storage-bandwidth", false, W,
       "guide B7: text at KB/s, the declared 2 GB/s keeps up (a note, not a warning)"},
      {"b7_slow_text_note", zones, "B7-storage-bandwidth", true, Severity::kInfo,
       "guide B7's figure shown beside the verdict"},
      {"b7_fast", good, "B7-storage-bandwidth", false, Severity::kInfo, "guide B7"},
      {"b6_ram", kImagesSlowStorage, "B6-ram-dataset", true, W,
       "guide B6: RAM >= 1.5 x dataset, where storage cannot feed the step"},
      {"b6_ram_text", zones, "B6-ram-dataset", false, W,
       "guide B6: a 2 TB text dataset read at KB/s needs no page cache"},
      {"b6_ram_ok", good, "B6-ram-dataset", false, W, "guide B6"},
      {"a4_cpu", zones, "A4-host-cpu", true, W, "guide A4: GPUs x 8-12 cores"},
      {"a4_cpu_ok", good, "A4-host-cpu", false, W, "guide A4"},
      {"a5_ram", kSmallRam, "A5-host-ram", true, W, "guide A5: RAM = GPU memory x 2-3"},
      {"a5_ram_ok", good, "A5-host-ram", false, W, "guide A5"},
      {"b1_p4d", p4d, "B1-training-instance-serving", true, W, "guide B1: 50k vs <8k"},
      {"b1_g5", kServeSteadyAutoscaled, "B1-training-instance-serving", false, W, "guide B1"},
      {"b12_fixed", p4d, "B12-autoscaling", true, W, "guide B12: autoscaling"},
      {"b12_autoscaled", kServeSteadyAutoscaled, "B12-autoscaling", false, W, "guide B12"},
      {"capacity_over", kServeOverloaded, "serve-capacity", true, E, "load > capacity"},
      {"capacity_ok", p4d, "serve-capacity", false, W, "load < capacity"},
      {"fp8_volta", kServeFp8OnVolta, "serve-weight-format", true, E,
       "vLLM's FP8 kernels need compute capability 7.5"},
      {"fp8_ada", kServeFp8OnAda, "serve-weight-format", false, W, "FP8 runs natively on Ada"},
      {"engine_trtllm_t4", kServeTrtllmOnT4, "serve-weight-format", true, E,
       "TensorRT-LLM's support matrix starts at Ampere"},
      {"quant_awq_volta", kServeAwqOnVolta, "serve-weight-format", true, E,
       "vLLM's AWQ kernels need compute capability 7.5"},
      {"quant_awq_t4", kServeAwqOnT4, "serve-weight-format", false, W, "T4 is 7.5"},
      {"max_model_len_default", kServe128kOnA10g, "serve-max-model-len", true, E,
       "vLLM: max seq len larger than the KV cache it can store"},
      {"max_model_len_8k", kServe8kOnA10g, "serve-max-model-len", false, E, "8192 fits"},
      {"max_model_len_40k", kServe40kOnA10g, "serve-max-model-len", true, E,
       "~33K tokens left at the default utilisation"},
      {"max_model_len_40k_at_098", kServe40kAt098OnA10g, "serve-max-model-len", false, E,
       "gpu_memory_utilization 0.98 leaves more"},
      {"serve_tp1_13b_a10g", kServe13bTp1OnA10g, "B5-memory-headroom", true, E,
       "26 GB of weights on a 24 GB GPU"},
      {"serve_tp4_13b_a10g", kServe13bTp4OnA10g, "B5-memory-headroom", false, E,
       "6.5 GB of weights per GPU at tp 4"},
      {"fp8_train_ampere", kFp8TrainOnAmpere, "train-precision", true, E,
       "FP8 training needs compute capability 8.9"},
      {"fp8_train_hopper", kFp8TrainOnHopper, "train-precision", false, W, "Hopper has FP8"},
      {"qlora_trainium", kQloraOnTrainium, "train-qlora-backend", true, E,
       "bitsandbytes has no AWS Neuron backend"},
      {"qlora_h100", kFp8TrainOnHopper, "train-qlora-backend", false, W, "not QLoRA"},
      {"ep8_mixtral", kMixtralEp8, "layout-invalid", false, E, "8 experts over 8 ranks"},
      {"ep3_mixtral", kMixtralEp3, "layout-invalid", true, E, "ep must divide the experts"},
      {"framework_megatron_zero3", kMegatronZero3, "layout-framework", true, W,
       "Megatron-Core's distributed optimizer is ZeRO-1; parameters are not sharded"},
      {"framework_fsdp_zero3", kFsdpZero3, "layout-framework", false, W, "FSDP FULL_SHARD"},
      {"optimizer_adamw32_b5", kAdamw32On40GB, "B5-memory-headroom", true, W,
       "12 GiB of AdamW states per GPU"},
      {"optimizer_adamw8_b5", kAdamw8On40GB, "B5-memory-headroom", false, W,
       "bitsandbytes 8-bit states: a quarter of the size"},
      {"serve_marketplace_listing", kServeOnListing, "marketplace-listing", true, W,
       "a host's offer, priced by the host, no provider SLA"},
      {"serve_provider_row", kServeOnProvider, "marketplace-listing", false, W,
       "the provider's own SKU"},
  };
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, ::testing::ValuesIn(Cases()),
                         [](const auto& p) { return std::string(p.param.name); });

// A declared storage bandwidth is what the host check and B6 judge (0.5 GB/s here), not the
// figure assumed from the storage kind (network: ~1 GB/s).
TEST(CheckTest, DeclaredStorageBandwidthIsWhatIsJudged) {
  const auto fs = Check(kImagesSlowStorage);
  const Finding* b6 = Find(fs, "B6-ram-dataset", Severity::kWarning);
  ASSERT_NE(b6, nullptr);
  EXPECT_NE(b6->message.find("about 0.5 GB/s"), std::string::npos) << b6->message;
  const Finding* read = Find(fs, "A9-host-storage-read", Severity::kWarning);
  ASSERT_NE(read, nullptr);
  EXPECT_NE(read->message.find("declares 0.5 GB/s"), std::string::npos) << read->message;
}

// B5's fix offers only what the layout has not done: this one shards (ZeRO-3) and recomputes
// everything at micro-batch 1 already; its AdamW states are a third of the memory.
TEST(CheckTest, MemoryFixOffersOnlyStepsNotTaken) {
  const Finding* b5 = nullptr;
  const auto fs = Check(kAdamw32On40GB);
  b5 = Find(fs, "B5-memory-headroom", Severity::kWarning);
  ASSERT_NE(b5, nullptr);
  EXPECT_EQ(b5->fix.find("ZeRO-3"), std::string::npos) << b5->fix;
  EXPECT_EQ(b5->fix.find("recompute"), std::string::npos) << b5->fix;
  EXPECT_EQ(b5->fix.find("micro-batch"), std::string::npos) << b5->fix;
  EXPECT_NE(b5->fix.find("adamw-8bit"), std::string::npos) << b5->fix;
}

TEST(CheckTest, GoodSetupHasNoWarnings) {
  for (const auto& f : Check(Example("good_8xh100_training"))) {
    EXPECT_EQ(f.severity, Severity::kInfo) << f.rule << ": " << f.message;
  }
}

// A setup's training precision takes the planner's names, fp4 (NVFP4) included, and the same
// step model: NVFP4 on H100s cannot run (no FP4 tensor cores), with the reason.
TEST(CheckTest, Fp4SetupOnHopperCannotRun) {
  std::string yaml = Example("good_8xh100_training");
  const auto at = yaml.find("precision: bf16");
  ASSERT_NE(at, std::string::npos);
  yaml.replace(at, std::string("precision: bf16").size(), "precision: fp4");
  const auto fs = Check(yaml);
  const Finding* bad = Find(fs, "train-precision", Severity::kError);
  ASSERT_NE(bad, nullptr);
  EXPECT_NE(bad->message.find("no FP4 tensor cores"), std::string::npos) << bad->message;
  yaml.replace(yaml.find("precision: fp4"), std::string("precision: fp4").size(),
               "precision: int8");
  EXPECT_FALSE(ParseSetupYaml(yaml, "t.yaml").ok());  // not a training precision
}

// A layout no framework runs as written is said: selective recompute with ZeRO-2 (Megatron-Core
// shards at most the optimizer; FSDP and DeepSpeed checkpoint whole layers; torchtitan shards
// fully or not at all). ZeRO-3 with selective recompute is torchtitan's, so it is not flagged.
TEST(CheckTest, LayoutNoFrameworkRuns) {
  const std::string base =
      "hardware: {instance: p5.48xlarge, region: us-east-1, storage: nvme, storage_gbps: 50}\n"
      "train: {model: llama-2-7b, micro_batch: 1, seq_len: 4096, global_batch: 512, ";
  EXPECT_NE(Find(Check(base + "zero: 2, recompute: selective}\n"), "layout-no-framework",
                 Severity::kWarning),
            nullptr);
  EXPECT_EQ(Find(Check(base + "zero: 3, recompute: selective}\n"), "layout-no-framework",
                 Severity::kInfo),
            nullptr);
  EXPECT_EQ(
      Find(Check(base + "zero: 2, recompute: full}\n"), "layout-no-framework", Severity::kInfo),
      nullptr);
}

TEST(CheckTest, ErrorsComeFirst) {
  const auto fs = Check(Example("two_zones_spot_no_rdma"));
  ASSERT_FALSE(fs.empty());
  for (size_t i = 1; i < fs.size(); ++i) {
    EXPECT_LE(static_cast<int>(fs[i - 1].severity), static_cast<int>(fs[i].severity));
  }
}

struct BadCase {
  const char* name;
  const char* yaml;
  const char* field;    // substring of Error::field
  const char* message;  // substring of message or hint
};

class BadYamlTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadYamlTest, NamesTheField) {
  const BadCase& c = GetParam();
  auto s = ParseSetupYaml(c.yaml, "bad.yaml");
  Error e;
  if (s.ok()) {
    Status st = ValidateSetup(*s, Cat());
    ASSERT_FALSE(st.ok()) << c.name;
    e = st.error();
  } else {
    e = s.error();
  }
  EXPECT_NE(e.field.find(c.field), std::string::npos) << e.ToString();
  EXPECT_NE((e.message + " " + e.hint).find(c.message), std::string::npos) << e.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadYamlTest,
    ::testing::Values(
        BadCase{"unknown_key", "hardware: {instance: p5.48xlarge}\ntrian: {model: llama-2-7b}\n",
                "bad.yaml:2:trian", "did you mean \"train\""},
        BadCase{"unknown_train_key",
                "hardware: {instance: p5.48xlarge}\ntrain:\n  model: llama-2-7b\n  micro_bach: 2\n",
                "bad.yaml:4:train.micro_bach", "did you mean \"micro_batch\""},
        BadCase{
            "bad_number",
            "hardware: {instance: p5.48xlarge}\ntrain:\n  model: llama-2-7b\n  micro_batch: x\n",
            "bad.yaml:4:train.micro_batch", "whole number"},
        BadCase{"bad_storage",
                "hardware: {instance: p5.48xlarge, storage: nvem}\ntrain: {model: llama-2-7b}\n",
                "hardware.storage", "did you mean \"nvme\""},
        BadCase{"unknown_model", "hardware: {instance: p5.48xlarge}\ntrain: {model: lama-2-7b}\n",
                "train.model", "lama-2-7b"},
        BadCase{"unknown_instance",
                "hardware: {instance: p5.48xlarg}\ntrain: {model: llama-2-7b}\n",
                "hardware.instance", "did you mean \"p5.48xlarge\""},
        BadCase{"unknown_gpu",
                "hardware: {accelerator: HX-9000, gpus_per_node: 8}\ntrain: {model: llama-2-7b}\n",
                "hardware.accelerator", "HX-9000"},
        // A region the instance is not in names hardware.region, with the nearest one.
        BadCase{"region_typo",
                "hardware: {instance: p5.48xlarge, region: us-east-l}\n"
                "train: {model: llama-2-7b}\n",
                "hardware.region", "did you mean \"us-east-1\""},
        BadCase{"no_job", "hardware: {instance: p5.48xlarge}\n", "train", "missing the job"},
        BadCase{"malformed", "hardware: [\n", "bad.yaml", "malformed YAML"},
        BadCase{"tp_not_dividing",
                "hardware: {instance: p5.48xlarge}\ntrain: {model: llama-2-7b, tp: 3}\n",
                "train.tp", "divides the 8 GPUs (1, 2, 4, 8)"},
        // The hint lists the sizes this node allows, not a generic list (g5.12xlarge: 4 GPUs).
        BadCase{"serve_tp_not_dividing",
                "hardware: {instance: g5.12xlarge}\nserve: {model: llama-3.1-8b, qps: 1, tp: 8}\n",
                "serve.tp", "divides the node's GPUs (1, 2, 4)"}),
    [](const auto& p) { return std::string(p.param.name); });

// The shared YamlReader's rules in setup files (issue 10): duplicate keys, whole numbers bounded
// before any cast, a section that is not a map.
INSTANTIATE_TEST_SUITE_P(
    SharedReader, BadYamlTest,
    ::testing::Values(
        BadCase{"duplicate_key", "hardware: {instance: p5.48xlarge}\nnodes: 1\nnodes: 2\n",
                "bad.yaml:3:nodes", "duplicate key"},
        BadCase{"huge_nodes",
                "hardware: {instance: p5.48xlarge}\nnodes: 1000000000000\ntrain: {model: "
                "llama-2-7b}\n",
                "bad.yaml:2:nodes", "must be <="},
        BadCase{"hardware_scalar", "hardware: 3\ntrain: {model: llama-2-7b}\n",
                "bad.yaml:1:hardware", "expected a map of keys"},
        BadCase{"negative_ram",
                "hardware: {accelerator: H100-SXM5-80GB, gpus_per_node: 8, ram_gb: -1}\n"
                "train: {model: llama-2-7b}\n",
                "hardware.ram_gb", "must be > 0"}),
    [](const auto& p) { return std::string(p.param.name); });

int RunCli(const std::string& args) {
  const std::string cmd = std::string(GPUPLAN_BINARY) + " " + args + " >/dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(CheckCliTest, ExitCodes) {
  const std::string dir = std::string(GPUPLAN_SOURCE_DIR) + "/examples/check/";
  EXPECT_EQ(RunCli("check -f " + dir + "good_8xh100_training.yaml"), 0);
  EXPECT_EQ(RunCli("check -f " + dir + "p4d_light_variable_serving.yaml --json"), 0);
  EXPECT_EQ(RunCli("check -f " + dir + "two_zones_spot_no_rdma.yaml"), 1);
  EXPECT_EQ(RunCli("check -f " + dir + "pcie_8gpu_7b.yaml --json"), 1);
  EXPECT_EQ(RunCli("check -f " + dir + "a10g_vllm_default_context.yaml"), 1);
  EXPECT_EQ(RunCli("check -f " + dir + "does_not_exist.yaml"), 2);
  const std::string bad = ::testing::TempDir() + "gpuplan_check_bad.yaml";
  std::ofstream(bad) << "hardware: {instance: p5.48xlarge}\ntrain: {model: llama-2-7b, zero: 7}\n";
  EXPECT_EQ(RunCli("check -f " + bad), 2);
}

}  // namespace
}  // namespace gpuplan
