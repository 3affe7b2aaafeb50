// Tests of host sizing (src/sizing/sizing.cc) against the guides' rules and worked examples
// (../shared/seeds/README.md; source texts ../shared/seeds/000_*.txt and 002_*.txt):
//  - A7: 8 x H100 80GB training -> 640 GB GPU memory, 80 cores, 640 x 2.5 = 1600 GB -> 1536 GB,
//    2 TB NVMe system disk, 4 TB+ NVMe data disk;
//  - A8: 2 x A100 80GB inference -> 10 cores, 192 GB RAM, 500 GB NVMe;
//  - B6/B7: RAM = max(dataset x 1.5, GPU memory x 4); 4 x A100 -> RAM >= 1.28 TB, >= 8 GB/s;
//  - gpuplan's default policy (docs/sizing.md), instance checks, DIMM rounding and BOMs.
// Memory labels are binary: the guides' "80 GB" GPU and "256 GB" DIMM are GiB(80), GiB(256).
// Instance rows are copied from data/instances/*.csv (cited per helper).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/sizing.h"

namespace gpuplan {
namespace {

constexpr Bytes TB(double x) { return GB(x * 1000); }

void ExpectRel(double got, double want, std::string_view what, std::string_view row) {
  const double tol = 1e-9 * std::max(1.0, std::abs(want));
  EXPECT_NEAR(got, want, tol) << row << ": " << what;
}

// ---- Inputs of the worked examples -----------------------------------------------------------

// A7's node: 8 x H100 80GB training. The guide states only the results (2 TB system disk, 4 TB+
// data disk); these inputs make A6's rule give them: a 70B model (Llama-2-70B class) with
// 140 GB of bf16 weights, a full checkpoint of 70B x 14 B = 980 GB (bf16 weights + fp32 master
// + Adam m, v), and a 1.3 TB dataset: system = 140 x 5 + 1300 = 2000 GB (A6, A7: "2 TB");
// data = 1300 + 3 x 980 = 4240 GB (A7: "4 TB+", A10: keep 3 checkpoints).
SizingInput A7Input() {
  return {.training = true,
          .gpus_per_node = 8,
          .nodes = 1,
          .gpu_memory = GiB(80),
          .model_files = GB(140),
          .checkpoint = GB(980),
          .dataset = GB(1300)};
}

// A8's node: 2 x A100 80GB inference. 100 GB of model files make A6's x5 give the guide's
// 500 GB system disk; inference has no dataset.
SizingInput A8Input() {
  return {.training = false,
          .gpus_per_node = 2,
          .nodes = 1,
          .gpu_memory = GiB(80),
          .model_files = GB(100),
          .checkpoint = Bytes(0),
          .dataset = Bytes(0)};
}

// B7's node: 4 x A100 80GB training; a 7B fp16 model (B4: 14 GB of weights) with an unknown
// checkpoint (estimated 7 x 14 = 98 GB) and a 500 GB dataset, small enough that the GPU-memory
// term of B6 decides.
SizingInput B7Input() {
  return {.training = true,
          .gpus_per_node = 4,
          .nodes = 1,
          .gpu_memory = GiB(80),
          .model_files = GB(14),
          .checkpoint = Bytes(0),
          .dataset = GB(500)};
}

SizingInput WithNodes(SizingInput in, int nodes) {
  in.nodes = nodes;
  return in;
}

// ---- SizeHost: every policy's formulas ---------------------------------------------------------

struct NeedsCase {
  const char* name;
  SizingPolicy policy;
  SizingInput in;
  int cores;
  Bytes ram;
  Bytes system_disk;
  Bytes data_disk;
  BytesPerSec storage_bw;
  BitsPerSec network;
  const char* source;
};

const std::vector<NeedsCase>& NeedsCases() {
  static const std::vector<NeedsCase> cases = {
      // A7: 8 x 10 = 80 cores (A4); 640 x 2.5 = 1600 GB RAM (A5); 2 TB system (A6); 4 TB+ data;
      // local NVMe ~7 GB/s (A9); single node.
      {"a7_8xh100_train", SizingPolicy::kGuideA, A7Input(), 80, GiB(1600), GB(2000), GB(4240),
       GBps(7), Gbps(0), "A4 A5 A6 A7 A9 A10"},
      // A8: 2 x 5 = 10 cores (A4); RAM 160 x 1.25 = 200 GiB. The guide writes 160 x 1.2 = 192
      // (its A5 range is 1-1.5): our midpoint's 200 GiB rounds to the same 192 GiB in
      // RoundRamToDimms (DimmCases). System disk 100 x 5 = 500 GB (A6, A8); A9: inference may
      // use network storage.
      {"a8_2xa100_infer", SizingPolicy::kGuideA, A8Input(), 10, GiB(200), GB(500), Bytes(0),
       GBps(1), Gbps(0), "A4 A5 A6 A8 A9"},
      // Guide A on 4 nodes: the same node, plus 8 GPUs x 100 Gbit/s RDMA (A13/B8 ask for RDMA,
      // the per-GPU floor is gpuplan's: docs/sizing.md).
      {"a7_4_nodes", SizingPolicy::kGuideA, WithNodes(A7Input(), 4), 80, GiB(1600), GB(2000),
       GB(4240), GBps(7), Gbps(800), "A7 A13 B8 docs/sizing.md"},
      // B7: 4 x 80 x 4 = 1280 GiB ("1.28 TB"), 4 x 2 = 8 GB/s; cores 4 x 12 (B16's 96 for 8).
      // Disks by A6/A10 with the estimated 98 GB checkpoint: 14 x 5 + 500 = 570 GB;
      // 500 + 3 x 98 = 794 GB.
      {"b7_4xa100_train", SizingPolicy::kGuideB, B7Input(), 48, GiB(1280), GB(570), GB(794),
       GBps(8), Gbps(0), "B6 B7 B16 A6 A10"},
      // B6, dataset term: 1 x 24 GB GPU, 2 TB dataset -> max(2000 GB x 1.5, 24 x 4 GiB) = 3000 GB.
      {"b6_dataset_dominates",
       SizingPolicy::kGuideB,
       {.training = true,
        .gpus_per_node = 1,
        .nodes = 1,
        .gpu_memory = GiB(24),
        .model_files = GB(10),
        .checkpoint = GB(70),
        .dataset = GB(2000)},
       12,
       GB(3000),
       GB(2050),
       GB(2210),
       GBps(2),
       Gbps(0),
       "B6 B7"},
      // Guide B has no inference rule: A4/A5/A9 apply, as for A8.
      {"b_inference_falls_back_to_a", SizingPolicy::kGuideB, A8Input(), 10, GiB(200), GB(500),
       Bytes(0), GBps(1), Gbps(0), "A4 A5 A8 A9"},
      // Default, A7's node: 8 x 6 + 2 = 50 cores; RAM 1.2 x max(640 GiB, 980 GB) = 1176 GB;
      // system 200 + 2 x 140 = 480 GB; data 1300 + 3 x 980 = 4240 GB;
      // storage max(8 x 1 GB/s, 980 GB / 300 s) = 8 GB/s.
      {"default_train_a7_node", SizingPolicy::kDefault, A7Input(), 50, GB(1176), GB(480), GB(4240),
       GBps(8), Gbps(0), "docs/sizing.md"},
      // Default, 4 nodes: checkpoint share 245 GB -> RAM 1.2 x 640 GiB = 768 GiB;
      // data 1300 + 3 x 245 = 2035 GB; 8 x 100 Gbit/s RDMA.
      {"default_train_4_nodes", SizingPolicy::kDefault, WithNodes(A7Input(), 4), 50, GiB(768),
       GB(480), GB(2035), GBps(8), Gbps(800), "docs/sizing.md"},
      // Default, unknown checkpoint: 7 x 140 GB = 980 GB estimated (14 B/param over 2 B/param).
      {"default_train_unknown_checkpoint",
       SizingPolicy::kDefault,
       {.training = true,
        .gpus_per_node = 8,
        .nodes = 1,
        .gpu_memory = GiB(80),
        .model_files = GB(140),
        .checkpoint = Bytes(0),
        .dataset = Bytes(0)},
       50,
       GB(1176),
       GB(480),
       GB(2940),
       GBps(8),
       Gbps(0),
       "docs/sizing.md, ZeRO 2020"},
      // Default, checkpoint restore dominates the storage term: 1 GPU, 600 GB checkpoint ->
      // 600 GB / 300 s = 2 GB/s > 1 x 1 GB/s.
      {"default_train_restore_bw",
       SizingPolicy::kDefault,
       {.training = true,
        .gpus_per_node = 1,
        .nodes = 1,
        .gpu_memory = GiB(80),
        .model_files = GB(80),
        .checkpoint = GB(600),
        .dataset = Bytes(0)},
       8,
       GB(720),
       GB(360),
       GB(1800),
       GBps(2),
       Gbps(0),
       "docs/sizing.md"},
      // Default, A8's node: 2 x 3 + 2 = 8 cores; RAM 1.2 x 100 GB + 2 x 8 GiB;
      // system 200 + 2 x 100 = 400 GB; storage 100 GB / 60 s.
      {"default_infer_a8_node", SizingPolicy::kDefault, A8Input(), 8, GB(120) + GiB(16), GB(400),
       Bytes(0), GBps(100.0 / 60), Gbps(0), "docs/sizing.md"},
      // Default inference, model files unknown: the GPU memory stands in for the weights.
      {"default_infer_unknown_model",
       SizingPolicy::kDefault,
       {.training = false,
        .gpus_per_node = 1,
        .nodes = 1,
        .gpu_memory = GiB(24),
        .model_files = Bytes(0),
        .checkpoint = Bytes(0),
        .dataset = Bytes(0)},
       5,
       GiB(24 * 1.2 + 8),
       GB(200),
       Bytes(0),
       BytesPerSec(GiB(24).value() / 60),
       Gbps(0),
       "docs/sizing.md"},
  };
  return cases;
}

TEST(SizeHostTest, PolicyFormulasAndWorkedExamples) {
  for (const NeedsCase& c : NeedsCases()) {
    const std::string row = std::string(c.name) + " [" + c.source + "]";
    const HostNeeds n = SizeHost(c.policy, c.in);
    EXPECT_EQ(n.policy, c.policy) << row;
    EXPECT_EQ(n.cpu_cores, c.cores) << row;
    ExpectRel(n.ram.value(), c.ram.value(), "ram", row);
    ExpectRel(n.system_disk.value(), c.system_disk.value(), "system_disk", row);
    ExpectRel(n.data_disk.value(), c.data_disk.value(), "data_disk", row);
    ExpectRel(n.storage_bw.value(), c.storage_bw.value(), "storage_bw", row);
    ExpectRel(n.network.value(), c.network.value(), "network", row);
  }
}

// A7 and B7 in the guides' own words.
TEST(SizeHostTest, GuideFiguresAsWritten) {
  const HostNeeds a7 = SizeHost(SizingPolicy::kGuideA, A7Input());
  EXPECT_DOUBLE_EQ(ToGiB(a7.ram), 1600);                         // A7: 640 x 2.5 = 1600
  EXPECT_DOUBLE_EQ(ToGiB(RoundRamToDimms(a7.ram).total), 1536);  // A7: -> 1536
  EXPECT_DOUBLE_EQ(ToGB(a7.system_disk), 2000);                  // A7: 2 TB NVMe
  EXPECT_GE(a7.data_disk, TB(4));                                // A7: 4 TB+ NVMe
  const HostNeeds b7 = SizeHost(SizingPolicy::kGuideB, B7Input());
  EXPECT_DOUBLE_EQ(ToGiB(b7.ram), 1280);                     // B7: >= 1.28 TB
  EXPECT_DOUBLE_EQ(b7.storage_bw.value(), GBps(8).value());  // B7: >= 8 GB/s
}

// Every rationale line states the rule and its numbers, one per item, in a fixed order.
TEST(SizeHostTest, RationaleLines) {
  const std::vector<std::string> prefixes = {
      "CPU: ", "RAM: ", "system disk: ", "data disk: ", "storage: ", "network: "};
  for (const NeedsCase& c : NeedsCases()) {
    const HostNeeds n = SizeHost(c.policy, c.in);
    ASSERT_EQ(n.rationale.size(), prefixes.size()) << c.name;
    for (size_t i = 0; i < prefixes.size(); ++i) {
      EXPECT_EQ(n.rationale[i].rfind(prefixes[i], 0), 0u) << c.name << ": " << n.rationale[i];
      EXPECT_NE(n.rationale[i].find_first_of("0123456789"), std::string::npos)
          << c.name << ": " << n.rationale[i];
    }
  }
  struct LineCase {
    const char* name;
    SizingPolicy policy;
    SizingInput in;
    size_t line;
    const char* expected;  // a substring of the line
    const char* source;
  };
  const LineCase lines[] = {
      {"a7_cpu", SizingPolicy::kGuideA, A7Input(), 0, "CPU: 8 GPUs x 10 cores = 80 cores (guide A4",
       "A4 A7"},
      {"a7_ram", SizingPolicy::kGuideA, A7Input(), 1,
       "RAM: 640 GiB GPU memory x 2.5 = 1600 GiB (guide A5", "A5 A7"},
      {"a7_system", SizingPolicy::kGuideA, A7Input(), 2,
       "system disk: model files 140 GB x 5 + dataset 1.3 TB = 2 TB (guide A6)", "A6 A7"},
      {"a7_data", SizingPolicy::kGuideA, A7Input(), 3,
       "data disk: dataset 1.3 TB + 3 checkpoints x 980 GB = 4.24 TB", "A7 A10"},
      {"a7_storage", SizingPolicy::kGuideA, A7Input(), 4, "storage: 7 GB/s, local NVMe (guide A9",
       "A9"},
      {"a8_cpu", SizingPolicy::kGuideA, A8Input(), 0, "CPU: 2 GPUs x 5 cores = 10 cores", "A8"},
      {"a8_ram", SizingPolicy::kGuideA, A8Input(), 1,
       "RAM: 160 GiB GPU memory x 1.25 = 200 GiB (guide A5: 1-1.5x for inference", "A5 A8"},
      {"b7_ram", SizingPolicy::kGuideB, B7Input(), 1,
       "320 GiB GPU memory x 4 = 1280 GiB) = 1280 GiB (guide B6)", "B6 B7"},
      {"b7_storage", SizingPolicy::kGuideB, B7Input(), 4,
       "storage: 4 GPUs x 2 GB/s = 8 GB/s (guide B7", "B7"},
      {"b7_checkpoint_estimate", SizingPolicy::kGuideB, B7Input(), 3,
       "checkpoint size unknown: 7 x model files = 98 GB", "docs/sizing.md"},
      {"multi_node_network", SizingPolicy::kGuideA, WithNodes(A7Input(), 4), 5,
       "network: 4 nodes: 8 GPUs x 100 Gbit/s = 800 Gbit/s RDMA per node", "B8 docs/sizing.md"},
      {"single_node_network", SizingPolicy::kDefault, A7Input(), 5,
       "network: 1 node: 0 Gbit/s, no inter-node fabric needed", "docs/sizing.md"},
      {"default_cpu", SizingPolicy::kDefault, A7Input(), 0, "CPU: 8 GPUs x 6 cores + 2 = 50 cores",
       "docs/sizing.md"},
      {"default_storage", SizingPolicy::kDefault, A7Input(), 4,
       "storage: max(8 GPUs x 1 GB/s = 8 GB/s, checkpoint share 980 GB / 300 s = 3.27 GB/s) = "
       "8 GB/s",
       "docs/sizing.md"},
  };
  for (const LineCase& c : lines) {
    const HostNeeds n = SizeHost(c.policy, c.in);
    ASSERT_LT(c.line, n.rationale.size()) << c.name;
    EXPECT_NE(n.rationale[c.line].find(c.expected), std::string::npos)
        << c.name << " [" << c.source << "]: got \"" << n.rationale[c.line] << "\"";
  }
}

// ---- RoundRamToDimms --------------------------------------------------------------------------

bool Balanced(const DimmConfig& c) {
  const int per_socket = c.count / 2;
  return per_socket == 8 || per_socket == 12 || per_socket == 16 || per_socket == 24;
}

// When the plan's own input rate is known, every policy sizes storage from it (x2 for loader
// bursts) instead of its fixed figure; the default policy keeps its checkpoint-restore term.
TEST(SizeHostTest, DataFeedSizesStorage) {
  for (SizingPolicy pol : {SizingPolicy::kGuideA, SizingPolicy::kGuideB, SizingPolicy::kDefault}) {
    SizingInput in = A7Input();  // 980 GB checkpoint, 1 node: restore 3.27 GB/s
    in.data_feed = GBps(5);
    EXPECT_DOUBLE_EQ(SizeHost(pol, in).storage_bw.value(), GBps(10).value())
        << SizingPolicyName(pol);
    in.data_feed = BytesPerSec(1e5);  // a text job: 100 KB/s
    const double restore = pol == SizingPolicy::kDefault ? 980e9 / 300 : 0;
    EXPECT_NEAR(SizeHost(pol, in).storage_bw.value(), std::max(2e5, restore), 1)
        << SizingPolicyName(pol);
  }
}

TEST(RoundRamToDimmsTest, Table) {
  struct DimmCase {
    double need_gib;
    double total_gib;
    const char* source;
  };
  const DimmCase cases[] = {
      {1600, 1536, "A7: 1600 -> 1536 (4% below)"},
      {200, 192, "A8: 160 x 1.25 = 200 -> 192 (the guide's 160 x 1.2 = 192)"},
      {1280, 1536, "B7: 1.28 TB; 1152 is 10% below -> up"},
      {500, 512, "docs/sizing.md: up"},
      {1000, 1024, "docs/sizing.md: up"},
      {1300, 1536, "docs/sizing.md: 1152 is 11% below -> up"},
      {3000, 3072, "docs/sizing.md: up"},
      {512, 512, "docs/sizing.md: exact"},
      {2100, 2048, "docs/sizing.md: 2.4% below"},
      {2200, 2304, "docs/sizing.md: 2048 is 6.9% below -> up"},
      {100, 128, "docs/sizing.md: up"},
      {20000, 12288, "docs/sizing.md: capped at 48 x 256"},
  };
  for (const DimmCase& c : cases) {
    const DimmConfig d = RoundRamToDimms(GiB(c.need_gib));
    EXPECT_DOUBLE_EQ(ToGiB(d.total), c.total_gib) << c.need_gib << " GiB [" << c.source << "]";
    EXPECT_DOUBLE_EQ(ToGiB(d.dimm) * d.count, ToGiB(d.total)) << c.need_gib;
    EXPECT_EQ(d.count % 2, 0) << c.need_gib << ": both sockets populated alike";
    if (c.total_gib >= 512) {
      EXPECT_TRUE(Balanced(d)) << c.need_gib << ": " << d.count;
    }
  }
  const DimmConfig zero = RoundRamToDimms(Bytes(0));
  EXPECT_EQ(zero.count, 0);
  EXPECT_EQ(zero.total.value(), 0);
}

// A7 writes 1536 GB as 6 x 256 GB. That fills 3 of the 8 (or 12) channels per socket of a
// 2-socket server, about 3/8 of its memory bandwidth; RoundRamToDimms returns the balanced
// 16 x 96 GiB (every channel of an 8-channel socket, 1 DIMM per channel). Same capacity, so the
// guide's figure holds; the test accepts the guide's layout or a balanced one.
TEST(RoundRamToDimmsTest, A7LayoutGuideOrBalanced) {
  const DimmConfig d = RoundRamToDimms(GiB(1600));
  EXPECT_DOUBLE_EQ(ToGiB(d.total), 1536);
  const bool guide = d.count == 6 && ToGiB(d.dimm) == 256;
  EXPECT_TRUE(guide || Balanced(d)) << d.count << " x " << ToGiB(d.dimm);
}

TEST(RoundRamToDimmsTest, PreferredLayouts) {
  struct LayoutCase {
    double need_gib;
    int count;
    double dimm_gib;
    const char* why;
  };
  const LayoutCase cases[] = {
      {1536, 16, 96, "balanced, 1 DIMM/channel, fewest DIMMs (24 x 64, 48 x 32 also balanced)"},
      {1024, 16, 64, "balanced 8-channel 1 DPC beats 4 x 256, 8 x 128 (partial)"},
      {3072, 24, 128, "balanced 12-channel 1 DPC beats 32 x 96 (2 DPC) and 12 x 256 (partial)"},
      {768, 24, 32, "balanced 12-channel"},
      {192, 2, 96, "no balanced option: partial"},
  };
  for (const LayoutCase& c : cases) {
    const DimmConfig d = RoundRamToDimms(GiB(c.need_gib));
    EXPECT_EQ(d.count, c.count) << c.need_gib << ": " << c.why;
    EXPECT_DOUBLE_EQ(ToGiB(d.dimm), c.dimm_gib) << c.need_gib << ": " << c.why;
  }
}

// ---- CheckHost --------------------------------------------------------------------------------

// data/instances/aws.csv: p5.48xlarge, 8 x H100, 192 vCPUs, 2048 GiB, 30720 GB NVMe, EFA 3200.
InstanceType P5() {
  InstanceType i;
  i.cloud = "aws";
  i.instance_type = "p5.48xlarge";
  i.accelerator = "H100-SXM5-80GB";
  i.accelerator_count = 8;
  i.vcpus = 192;
  i.ram = GiB(2048);
  i.local_nvme = GB(30720);
  i.network = Gbps(3200);
  i.inter_node_fabric = InterNodeFabric::kEfa;
  i.inter_node_bw = Gbps(3200);
  return i;
}
// data/instances/aws.csv: p4de.24xlarge, 8 x A100 80GB, 96 vCPUs, 1152 GiB, 8000 GB, EFA 400.
InstanceType P4de() {
  InstanceType i;
  i.cloud = "aws";
  i.instance_type = "p4de.24xlarge";
  i.accelerator = "A100-SXM4-80GB";
  i.accelerator_count = 8;
  i.vcpus = 96;
  i.ram = GiB(1152);
  i.local_nvme = GB(8000);
  i.network = Gbps(400);
  i.inter_node_fabric = InterNodeFabric::kEfa;
  i.inter_node_bw = Gbps(400);
  return i;
}
// data/instances/gcp.csv: a3-highgpu-8g, 8 x H100, 208 vCPUs, 1872 GiB, no local NVMe recorded,
// GPUDirect-TCPX 800.
InstanceType A3High() {
  InstanceType i;
  i.cloud = "gcp";
  i.instance_type = "a3-highgpu-8g";
  i.accelerator = "H100-SXM5-80GB";
  i.accelerator_count = 8;
  i.vcpus = 208;
  i.ram = GiB(1872);
  i.inter_node_fabric = InterNodeFabric::kGpuDirectTcpx;
  i.inter_node_bw = Gbps(800);
  i.local_nvme_known = true;  // stated as none here, so the checks below are real shortfalls
  return i;
}
// data/instances/oci.csv: BM.GPU.H100.8, 224 vCPUs (bare metal), 2048 GiB, no fabric recorded.
InstanceType OciBmH100() {
  InstanceType i;
  i.cloud = "oci";
  i.instance_type = "BM.GPU.H100.8";
  i.accelerator = "H100-SXM5-80GB";
  i.accelerator_count = 8;
  i.vcpus = 224;
  i.ram = GiB(2048);
  return i;
}
// data/instances/aws.csv: g4dn.xlarge, 1 x T4, 4 vCPUs, 16 GiB, 125 GB NVMe, 5 Gbit/s.
InstanceType G4dnXlarge() {
  InstanceType i;
  i.cloud = "aws";
  i.instance_type = "g4dn.xlarge";
  i.accelerator = "T4";
  i.accelerator_count = 1;
  i.vcpus = 4;
  i.ram = GiB(16);
  i.local_nvme = GB(125);
  i.network = Gbps(5);
  return i;
}
// A p5-like shape with 1536 GiB of RAM: A7's own rounded figure.
InstanceType P5With1536() {
  InstanceType i = P5();
  i.ram = GiB(1536);
  return i;
}

const HostFinding* Find(const std::vector<HostFinding>& fs, std::string_view item) {
  for (const HostFinding& f : fs) {
    if (f.item == item) return &f;
  }
  return nullptr;
}

TEST(CheckHostTest, OneFindingPerItem) {
  const auto fs = CheckHost(SizeHost(SizingPolicy::kGuideA, A7Input()), P5());
  const std::vector<std::string> items = {"cpu",       "ram",        "system_disk",
                                          "data_disk", "storage_bw", "network"};
  const std::vector<std::string> units = {"cores", "GB", "GB", "GB", "GB/s", "Gbit/s"};
  ASSERT_EQ(fs.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(fs[i].item, items[i]);
    EXPECT_EQ(fs[i].unit, units[i]) << items[i];
    EXPECT_FALSE(fs[i].text.empty()) << items[i];
  }
}

TEST(CheckHostTest, Sentences) {
  const HostNeeds a7 = SizeHost(SizingPolicy::kGuideA, A7Input());
  const HostNeeds a7_multi = SizeHost(SizingPolicy::kGuideA, WithNodes(A7Input(), 2));
  const HostNeeds b7 = SizeHost(SizingPolicy::kGuideB, B7Input());
  const HostNeeds a8 = SizeHost(SizingPolicy::kGuideA, A8Input());
  // A plan that knows its step: a fabric below the floor is judged by what the step leaves
  // exposed at that fabric.
  auto with_share = [](SizingInput in, double share) {
    in.exposed_comm_share = share;
    return in;
  };
  const HostNeeds hidden =
      SizeHost(SizingPolicy::kGuideA, with_share(WithNodes(A7Input(), 2), 0.02));
  const HostNeeds exposed =
      SizeHost(SizingPolicy::kGuideA, with_share(WithNodes(A7Input(), 2), 0.25));
  struct CheckCase {
    const char* name;
    HostNeeds needs;
    InstanceType inst;
    const char* item;
    bool ok;
    double needed;
    double has;
    const char* text;  // a substring of the sentence
    const char* source;
  };
  const CheckCase cases[] = {
      {"a7_p5_cpu", a7, P5(), "cpu", true, 80, 96,
       "needs 80 cores, instance has 96 (192 vCPUs; vCPUs are hardware threads, 2 per core): ok",
       "A4 A7"},
      // 1600 GiB = 1718 GB; 2048 GiB = 2199 GB.
      {"a7_p5_ram", a7, P5(), "ram", true, ToGB(GiB(1600)), ToGB(GiB(2048)),
       "needs 1718 GB RAM, instance has 2199 GB: ok (decimal GB; 1600 GiB needed, 2048 GiB "
       "installed)",
       "A5 A7"},
      {"a7_1536_ram_within_rounding", a7, P5With1536(), "ram", true, ToGB(GiB(1600)),
       ToGB(GiB(1536)), "ok, within the 5% DIMM rounding tolerance", "A7"},
      {"a7_p4de_ram_short", a7, P4de(), "ram", false, ToGB(GiB(1600)), ToGB(GiB(1152)),
       "too little", "A5 A7"},
      {"a7_p5_data", a7, P5(), "data_disk", true, 4240, 30720,
       "data disk 4.24 TB local NVMe needed, instance has 30.72 TB: ok", "A7 A9"},
      {"a7_a3_no_nvme", a7, A3High(), "data_disk", false, 4240, 0,
       "data disk 4.24 TB local NVMe needed, instance has 0: attach network storage or pick a "
       "local-NVMe instance",
       "A7 A9"},
      {"a7_p5_storage", a7, P5(), "storage_bw", true, 7, 56, "needs 7 GB/s storage read", "A9"},
      {"a7_a3_storage", a7, A3High(), "storage_bw", false, 7, 1,
       "no local NVMe: network storage, typically 1-2 GB/s per guide A9): too slow", "A9"},
      // B7 on p4de: 8000 GB of NVMe -> 3 drives at ~7 GB/s = 21 GB/s >= 8 GB/s.
      {"b7_p4de_storage", b7, P4de(), "storage_bw", true, 8, 21, "about 21 GB/s", "B7 A9"},
      {"a7_system_disk", a7, P5(), "system_disk", true, 2000, 0,
       "system disk 2 TB needed: set the boot volume", "A6 A7"},
      {"single_node_network", a7, A3High(), "network", true, 0, 800, "single node", "B8"},
      {"multi_p5_network", a7_multi, P5(), "network", true, 800, 3200,
       "needs 800 Gbit/s RDMA per node, instance has 3200 Gbit/s (efa): ok", "B8 docs/sizing.md"},
      {"multi_p4de_network", a7_multi, P4de(), "network", false, 800, 400, "too slow",
       "B8 docs/sizing.md"},
      {"multi_p4de_network_hidden", hidden, P4de(), "network", true, 800, 400,
       "below the floor, but the job's step at 400 Gbit/s leaves 2% of it to exposed", "B8"},
      {"multi_p4de_network_exposed", exposed, P4de(), "network", false, 800, 400,
       "too slow: the job's step at 400 Gbit/s leaves 25%", "B8"},
      {"multi_p5_network_known_share", exposed, P5(), "network", true, 800, 3200,
       "needs 800 Gbit/s RDMA per node, instance has 3200 Gbit/s (efa): ok", "B8"},
      {"multi_oci_no_fabric", a7_multi, OciBmH100(), "network", false, 800, 0,
       "no RDMA fabric recorded", "B8"},
      {"oci_bare_metal_cpu", a7, OciBmH100(), "cpu", true, 80, 112,
       "instance has 112 (224 vCPUs; bare-metal threads, 2 per core): ok", "A4"},
      {"a8_g4dn_cpu", a8, G4dnXlarge(), "cpu", false, 10, 2, "too few", "A4 A8"},
      {"a8_g4dn_no_data_disk", a8, G4dnXlarge(), "data_disk", true, 0, 125, "no data disk needed",
       "A8"},
  };
  for (const CheckCase& c : cases) {
    const std::string row = std::string(c.name) + " [" + c.source + "]";
    const auto fs = CheckHost(c.needs, c.inst);
    const HostFinding* f = Find(fs, c.item);
    ASSERT_NE(f, nullptr) << row;
    EXPECT_EQ(f->ok, c.ok) << row << ": " << f->text;
    EXPECT_NEAR(f->needed, c.needed, 1e-6 * std::max(1.0, c.needed)) << row;
    EXPECT_NEAR(f->has, c.has, 1e-6 * std::max(1.0, c.has)) << row;
    EXPECT_NE(f->text.find(c.text), std::string::npos) << row << ": got \"" << f->text << "\"";
  }
}

// ---- BuildBom ---------------------------------------------------------------------------------

// data/gpus.csv: H100-SXM5-80GB (80 GiB, PCIe Gen5), A100-SXM4-80GB (80 GiB, PCIe Gen4).
Accelerator H100() {
  Accelerator a;
  a.id = "H100-SXM5-80GB";
  a.memory = GiB(80);
  a.pcie_gen = 5;
  return a;
}
Accelerator A100() {
  Accelerator a;
  a.id = "A100-SXM4-80GB";
  a.memory = GiB(80);
  a.pcie_gen = 4;
  return a;
}

bool HasLine(const BillOfMaterials& b, std::string_view s) {
  for (const std::string& l : b.lines) {
    if (l.find(s) != std::string::npos) return true;
  }
  return false;
}

std::string AllLines(const BillOfMaterials& b) {
  std::string s;
  for (const std::string& l : b.lines) s += l + "\n";
  return s;
}

TEST(BuildBomTest, Lines) {
  struct BomCase {
    const char* name;
    SizingPolicy policy;
    SizingInput in;
    Accelerator acc;
    double ram_gib;
    double system_tb;
    double data_tb;
    const char* network;
    std::vector<std::string> lines;  // substrings that must appear in some line
    const char* source;
  };
  const BomCase cases[] = {
      // A7: 8 x H100, 80 cores, 1536 GB RAM, 2 TB system NVMe, 4 TB+ data NVMe; 4.24 TB needs
      // one 7.68 TB drive (7 GB/s needs one drive).
      {"a7",
       SizingPolicy::kGuideA,
       A7Input(),
       H100(),
       1536,
       2,
       7.68,
       "2 x 25 GbE",
       {"GPU: 8 x H100-SXM5-80GB (640 GiB GPU memory)", "CPU: 80 cores (2 sockets x 40 cores",
        "RAM: 16 x 96 GiB RDIMM = 1536 GiB (need 1600 GiB", "system disk: 2 TB NVMe",
        "data disk: 1 x 7.68 TB enterprise NVMe = 7.68 TB", "network: 2 x 25 GbE"},
       "A7"},
      // A8: 192 GB RAM, 500 GB NVMe; no data disk.
      {"a8",
       SizingPolicy::kGuideA,
       A8Input(),
       A100(),
       192,
       0.5,
       0,
       "2 x 25 GbE",
       {"GPU: 2 x A100-SXM4-80GB", "RAM: 2 x 96 GiB RDIMM = 192 GiB", "system disk: 500 GB NVMe",
        "data disk: none needed"},
       "A8"},
      // B7: 8 GB/s needs two ~7 GB/s drives in RAID0 (B7: "RAID0 NVMe SSD"); 794 GB -> 2 x 0.48.
      {"b7",
       SizingPolicy::kGuideB,
       B7Input(),
       A100(),
       1536,
       1,
       0.96,
       "2 x 25 GbE",
       {"data disk: 2 x 0.48 TB enterprise NVMe in RAID0 = 960 GB", "RAM: 16 x 96 GiB"},
       "B7"},
      // Multi-node Hopper: one 400G NDR NIC per GPU (PCIe Gen5), as DGX H100.
      {"h100_multi_node",
       SizingPolicy::kDefault,
       WithNodes(A7Input(), 4),
       H100(),
       768,
       0.5,
       3.84,
       "8 x 400 Gb/s InfiniBand NDR",
       {"network: 8 x 400 Gb/s InfiniBand NDR"},
       "B8 docs/sizing.md"},
      // Multi-node Ampere: 200G HDR per GPU (PCIe Gen4 x16 feeds ~252 Gbit/s), as DGX A100.
      {"a100_multi_node",
       SizingPolicy::kDefault,
       WithNodes(A7Input(), 4),
       A100(),
       768,
       0.5,
       3.84,
       "8 x 200 Gb/s InfiniBand HDR",
       {"network: 8 x 200 Gb/s InfiniBand HDR"},
       "B8 docs/sizing.md"},
  };
  for (const BomCase& c : cases) {
    const std::string row = std::string(c.name) + " [" + c.source + "]";
    const HostNeeds n = SizeHost(c.policy, c.in);
    const BillOfMaterials b = BuildBom(n, c.acc, c.in.gpus_per_node);
    EXPECT_EQ(b.accelerator, c.acc.id) << row;
    EXPECT_EQ(b.gpus, c.in.gpus_per_node) << row;
    EXPECT_EQ(b.cpu_cores, n.cpu_cores) << row;
    EXPECT_DOUBLE_EQ(ToGiB(b.ram.total), c.ram_gib) << row;
    ExpectRel(b.system_disk.value(), TB(c.system_tb).value(), "system_disk", row);
    ExpectRel(b.data_disk.value(), TB(c.data_tb).value(), "data_disk", row);
    EXPECT_EQ(b.network, c.network) << row;
    EXPECT_GE(b.system_disk, n.system_disk) << row;
    EXPECT_GE(b.data_disk, n.data_disk) << row;
    EXPECT_EQ(b.lines.size(), 6u) << row << "\n" << AllLines(b);
    for (const std::string& s : c.lines) {
      EXPECT_TRUE(HasLine(b, s)) << row << ": missing \"" << s << "\" in\n" << AllLines(b);
    }
  }
}

// ---- Names ------------------------------------------------------------------------------------

TEST(SizingPolicyTest, NamesRoundTrip) {
  struct NameCase {
    SizingPolicy policy;
    const char* name;
  };
  const NameCase cases[] = {{SizingPolicy::kGuideA, "guide-a"},
                            {SizingPolicy::kGuideB, "guide-b"},
                            {SizingPolicy::kDefault, "default"}};
  for (const NameCase& c : cases) {
    EXPECT_STREQ(SizingPolicyName(c.policy), c.name);
    EXPECT_EQ(ParseSizingPolicy(c.name), c.policy) << c.name;
  }
  EXPECT_EQ(ParseSizingPolicy("Guide-A"), SizingPolicy::kGuideA);
  EXPECT_FALSE(ParseSizingPolicy("guide-c").has_value());
  EXPECT_FALSE(ParseSizingPolicy("").has_value());
}

}  // namespace
}  // namespace gpuplan
