// Tests of the SkyPilot `vms.csv` importer: the real catalog excerpts in
// ../shared/catalogs/skypilot/<cloud>/vms.csv (provenance in SOURCE.md there) and small inline
// tables for each rule of the adapter.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpuplan/catalog.h"

#ifndef GPUPLAN_SHARED_DIR
// Default: ../shared beside the source tree (this file is tests/catalog/ in it).
#define GPUPLAN_SHARED_DIR ""
#endif

namespace gpuplan {
namespace {

std::filesystem::path SharedDir() {
  std::string dir = GPUPLAN_SHARED_DIR;
  if (!dir.empty()) return dir;
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared";
}

std::filesystem::path FixturePath(const std::string& cloud) {
  return SharedDir() / "catalogs" / "skypilot" / cloud / "vms.csv";
}

std::optional<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Catalog Builtin() {
  auto cat = LoadBuiltinCatalog();
  EXPECT_TRUE(cat.ok()) << (cat.ok() ? "" : cat.error().ToString());
  return cat.ok() ? std::move(*cat) : Catalog{};
}

// An empty instance list plus the built-in accelerators, so each test sees only its import.
Catalog AcceleratorsOnly() {
  Catalog cat = Builtin();
  cat.instances.clear();
  return cat;
}

const InstanceType* Find(const Catalog& cat, const std::string& type, const std::string& region,
                         const std::string& accelerator = {}) {
  for (const auto& i : cat.instances) {
    if (i.instance_type == type && i.region == region &&
        (accelerator.empty() || i.accelerator == accelerator)) {
      return &i;
    }
  }
  return nullptr;
}

// Imports `text` into a fresh catalog; fails the test on error.
Catalog ImportOk(const std::string& cloud, const std::string& text,
                 SkyPilotImportStats* stats = nullptr) {
  Catalog cat = AcceleratorsOnly();
  Status s = ImportSkyPilotVms(cat, cloud, "inline.csv", text, stats);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
  return cat;
}

// Loads ../shared/catalogs/skypilot/<cloud>/vms.csv or skips the test.
#define LOAD_FIXTURE_OR_SKIP(cloud, cat, stats)                                                \
  Catalog cat = AcceleratorsOnly();                                                            \
  SkyPilotImportStats stats;                                                                   \
  do {                                                                                         \
    auto text = ReadFile(FixturePath(cloud));                                                  \
    if (!text) {                                                                               \
      GTEST_SKIP() << "SkyPilot fixture " << FixturePath(cloud)                                \
                   << " not found (set GPUPLAN_SHARED_DIR to the shared/ folder)";             \
    }                                                                                          \
    Status st = ImportSkyPilotVms(cat, cloud, std::string(cloud) + "/vms.csv", *text, &stats); \
    ASSERT_TRUE(st.ok()) << st.error().ToString();                                             \
  } while (0)

// ---- Real catalogs ----------------------------------------------------------------------------

struct CloudCase {
  const char* cloud;
  int min_instances;  // a floor well below the current count, so refreshed files still pass
};

class SkyPilotFixtureTest : public testing::TestWithParam<CloudCase> {};

TEST_P(SkyPilotFixtureTest, ImportsCleanSortedUniqueRows) {
  const CloudCase& c = GetParam();
  LOAD_FIXTURE_OR_SKIP(c.cloud, cat, stats);
  ASSERT_GT(cat.instances.size(), 0u);
  EXPECT_GE(static_cast<int>(cat.instances.size()), c.min_instances);
  EXPECT_EQ(stats.instances_added, static_cast<int>(cat.instances.size()));
  EXPECT_GT(stats.rows_read, 0);
  EXPECT_EQ(stats.skipped_no_price, 0);  // rows without prices are kept, price unknown
  std::set<std::tuple<std::string, std::string, std::string, int>> seen;
  for (size_t k = 0; k < cat.instances.size(); ++k) {
    const InstanceType& i = cat.instances[k];
    SCOPED_TRACE(i.instance_type + " " + i.region);
    EXPECT_EQ(i.cloud, c.cloud);
    EXPECT_FALSE(i.instance_type.empty());
    EXPECT_EQ(i.source, "SkyPilot catalog (" + std::string(c.cloud) + "/vms.csv)");
    // SkyPilot files carry no date and none was passed: undated, and the notes say so.
    EXPECT_EQ(i.as_of, "");
    EXPECT_NE(i.notes.find("undated SkyPilot snapshot"), std::string::npos);
    EXPECT_EQ(i.currency, Currency::kUsd);
    EXPECT_NE(i.notes.find("not in SkyPilot catalog"), std::string::npos);
    EXPECT_EQ(i.network.value(), 0.0);
    EXPECT_EQ(i.local_nvme.value(), 0.0);
    EXPECT_FALSE(i.local_nvme_known);  // SkyPilot does not record local disks: unknown, not 0
    EXPECT_GT(i.ram.value(), 0.0);
    if (!i.accelerator.empty()) {
      EXPECT_NE(cat.FindAccelerator(i.accelerator), nullptr);
      EXPECT_GE(i.accelerator_count, 1);
    } else {
      EXPECT_EQ(i.accelerator_count, 0);
      EXPECT_EQ(i.intra_node_link, IntraNodeLink::kNone);
    }
    if (i.price_on_demand) {
      EXPECT_GE(*i.price_on_demand, 0.0);
    }
    EXPECT_TRUE(seen.emplace(i.instance_type, i.region, i.accelerator, i.accelerator_count).second)
        << "duplicate row";
    if (k > 0) {
      const InstanceType& p = cat.instances[k - 1];
      EXPECT_LE(std::tie(p.instance_type, p.region), std::tie(i.instance_type, i.region))
          << "not sorted";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Clouds, SkyPilotFixtureTest,
                         testing::Values(CloudCase{"aws", 50}, CloudCase{"gcp", 50},
                                         CloudCase{"lambda", 100}, CloudCase{"nebius", 30},
                                         CloudCase{"oci", 40}, CloudCase{"paperspace", 10}),
                         [](const testing::TestParamInfo<CloudCase>& param_info) {
                           return std::string(param_info.param.cloud);
                         });

TEST(SkyPilotAws, P4dMatchesTheFile) {
  LOAD_FIXTURE_OR_SKIP("aws", cat, stats);
  // aws/vms.csv lines 81-84: four us-east-1 zones, Price 21.957642 in each, SpotPrice
  // 2.465500 / 8.191500 / 8.120300 / 7.879900.
  const InstanceType* p4d = Find(cat, "p4d.24xlarge", "us-east-1");
  ASSERT_NE(p4d, nullptr);
  EXPECT_EQ(p4d->accelerator, "A100-SXM4-40GB");
  EXPECT_EQ(p4d->accelerator_count, 8);
  EXPECT_EQ(p4d->vcpus, 96);
  EXPECT_DOUBLE_EQ(ToGiB(p4d->ram), 1152.0);
  ASSERT_TRUE(p4d->price_on_demand.has_value());
  EXPECT_DOUBLE_EQ(*p4d->price_on_demand, 21.957642);
  ASSERT_TRUE(p4d->price_spot.has_value());
  EXPECT_DOUBLE_EQ(*p4d->price_spot, 2.4655);  // the lowest zone
  EXPECT_EQ(p4d->intra_node_link, IntraNodeLink::kNvswitch);
  EXPECT_EQ(p4d->inter_node_fabric, InterNodeFabric::kEfa);
  EXPECT_EQ(p4d->cloud, "aws");
}

TEST(SkyPilotAws, AcceleratorVariantsAndLinks) {
  LOAD_FIXTURE_OR_SKIP("aws", cat, stats);
  struct Case {
    const char* type;
    const char* region;
    const char* accelerator;
    int count;
    IntraNodeLink link;
    InterNodeFabric fabric;
  };
  const Case cases[] = {
      {"p3.2xlarge", "us-east-1", "V100-SXM2-16GB", 1, IntraNodeLink::kNone,
       InterNodeFabric::kNone},
      // V100 boards are NVLink cube-meshes, not NVSwitch.
      {"p3.8xlarge", "us-east-1", "V100-SXM2-16GB", 4, IntraNodeLink::kNvlink,
       InterNodeFabric::kNone},
      {"p3dn.24xlarge", "us-east-1", "V100-SXM2-32GB", 8, IntraNodeLink::kNvlink,
       InterNodeFabric::kEfa},
      {"p4de.24xlarge", "us-east-1", "A100-SXM4-80GB", 8, IntraNodeLink::kNvswitch,
       InterNodeFabric::kEfa},
      {"p5.48xlarge", "us-east-1", "H100-SXM5-80GB", 8, IntraNodeLink::kNvswitch,
       InterNodeFabric::kEfa},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type);
    const InstanceType* i = Find(cat, c.type, c.region);
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->accelerator, c.accelerator);
    EXPECT_EQ(i->accelerator_count, c.count);
    EXPECT_EQ(i->intra_node_link, c.link);
    EXPECT_EQ(i->inter_node_fabric, c.fabric);
  }
}

TEST(SkyPilotAws, BlankPriceIsUnknownNotDropped) {
  LOAD_FIXTURE_OR_SKIP("aws", cat, stats);
  // aws/vms.csv line 158: p5e.48xlarge in ap-southeast-2 has neither Price nor SpotPrice.
  const InstanceType* none = Find(cat, "p5e.48xlarge", "ap-southeast-2");
  ASSERT_NE(none, nullptr);
  EXPECT_FALSE(none->price_on_demand.has_value());
  EXPECT_FALSE(none->price_spot.has_value());
  // Lines 163-165: us-east-2 has no on-demand price but spot in two of three zones.
  const InstanceType* spot_only = Find(cat, "p5e.48xlarge", "us-east-2");
  ASSERT_NE(spot_only, nullptr);
  EXPECT_FALSE(spot_only->price_on_demand.has_value());
  ASSERT_TRUE(spot_only->price_spot.has_value());
  EXPECT_DOUBLE_EQ(*spot_only->price_spot, 18.7359);
  EXPECT_EQ(spot_only->accelerator, "H200-SXM-141GB");
}

TEST(SkyPilotGcp, HostPlusGpuRows) {
  LOAD_FIXTURE_OR_SKIP("gcp", cat, stats);
  struct Case {
    const char* type;
    const char* region;
    const char* accelerator;
    int count;
    double host, gpus, host_spot, gpus_spot;  // gcp/vms.csv, same region and zone
    InterNodeFabric fabric;
  };
  const Case cases[] = {
      // Lines 70 and 377.
      {"a2-highgpu-8g", "us-central1", "A100-SXM4-40GB", 8, 5.91582, 23.47126, 2.958, 11.4728,
       InterNodeFabric::kNone},
      // Lines 82 and 396: the 16-GPU A100 shape.
      {"a2-megagpu-16g", "us-central1", "A100-SXM4-40GB", 16, 8.79698, 46.94253, 4.39824, 22.9456,
       InterNodeFabric::kNone},
      // Lines 109 and 427: A100-80GB GPU rows go to a2-ultragpu.
      {"a2-ultragpu-8g", "us-central1", "A100-SXM4-80GB", 8, 8.79698, 14.76958, 4.39824, 15.712,
       InterNodeFabric::kNone},
      // Lines 249 and 549.
      {"a3-highgpu-8g", "us-central1", "H100-SXM5-80GB", 8, 9.46006, 33.60609, 2.88933, 23.9408,
       InterNodeFabric::kGpuDirectTcpx},
      // Lines 302 and 436: a4 hosts are priced 0, the B200 SKU carries the VM.
      {"a4-highgpu-8g", "us-central1", "B200-HGX", 8, 0.0, 90.216, 0.0, 32.6064,
       InterNodeFabric::kRoce},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type);
    const InstanceType* i = Find(cat, c.type, c.region);
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->accelerator, c.accelerator);
    EXPECT_EQ(i->accelerator_count, c.count);
    ASSERT_TRUE(i->price_on_demand.has_value());
    EXPECT_DOUBLE_EQ(*i->price_on_demand, c.host + c.gpus);
    ASSERT_TRUE(i->price_spot.has_value());
    EXPECT_DOUBLE_EQ(*i->price_spot, c.host_spot + c.gpus_spot);
    EXPECT_EQ(i->intra_node_link, IntraNodeLink::kNvswitch);
    EXPECT_EQ(i->inter_node_fabric, c.fabric);
  }
  // Smaller slices: one GPU has no peer, two talk over NVLink; no TCPX below 8 GPUs.
  const InstanceType* one = Find(cat, "a3-highgpu-1g", "us-central1");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->accelerator_count, 1);
  EXPECT_EQ(one->intra_node_link, IntraNodeLink::kNone);
  EXPECT_EQ(one->inter_node_fabric, InterNodeFabric::kNone);
  const InstanceType* two = Find(cat, "a2-highgpu-2g", "us-central1");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->intra_node_link, IntraNodeLink::kNvlink);
}

TEST(SkyPilotGcp, RowKindsAreAccountedFor) {
  LOAD_FIXTURE_OR_SKIP("gcp", cat, stats);
  // tpu-v6e-{1..256}: 8 sizes x 22 region rows.
  EXPECT_EQ(stats.tpu_rows_skipped, 176);
  EXPECT_GT(stats.gpu_rows_attached, 0);
  for (const auto& i : cat.instances) {
    SCOPED_TRACE(i.instance_type + " " + i.region);
    // Every a2/a3/a4 host is sold only with its GPUs.
    EXPECT_FALSE(i.is_cpu_only());
    EXPECT_NE(i.notes.find("host VM + GPU row"), std::string::npos);
    // The excerpt has no g2/n1 hosts, so L4/T4/P100/P4 rows cannot be priced.
    EXPECT_EQ(i.instance_type.rfind("g2-", 0), std::string::npos);
  }
  // a3-megagpu-8g takes the H100-MEGA rows (lines 270 and 573).
  const InstanceType* mega = Find(cat, "a3-megagpu-8g", "us-central1");
  ASSERT_NE(mega, nullptr);
  EXPECT_EQ(mega->accelerator, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(*mega->price_on_demand, 9.46006 + 82.75421);
  EXPECT_DOUBLE_EQ(*mega->price_spot, 2.88933 + 25.2808);
  EXPECT_EQ(mega->inter_node_fabric, InterNodeFabric::kGpuDirectTcpx);
  // asia-northeast3 has H100-MEGA rows (lines 560-561) but no a3-megagpu-8g host: no instance.
  EXPECT_EQ(Find(cat, "a3-megagpu-8g", "asia-northeast3"), nullptr);
}

TEST(SkyPilotLambda, NamesResolveToVariants) {
  LOAD_FIXTURE_OR_SKIP("lambda", cat, stats);
  const InstanceType* a100 = Find(cat, "gpu_8x_a100_80gb_sxm4", "us-east-1");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->accelerator, "A100-SXM4-80GB");
  EXPECT_EQ(a100->accelerator_count, 8);
  ASSERT_TRUE(a100->price_on_demand.has_value());
  EXPECT_DOUBLE_EQ(*a100->price_on_demand, 22.32);
  EXPECT_FALSE(a100->price_spot.has_value());  // Lambda sells no spot
  EXPECT_EQ(a100->intra_node_link, IntraNodeLink::kNvswitch);

  const InstanceType* a100_40 = Find(cat, "gpu_1x_a100_sxm4", "us-east-1");
  ASSERT_NE(a100_40, nullptr);
  EXPECT_EQ(a100_40->accelerator, "A100-SXM4-40GB");

  const InstanceType* cpu = Find(cat, "cpu_4x_general", "us-east-1");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->is_cpu_only());
  EXPECT_EQ(cpu->vcpus, 4);
  EXPECT_DOUBLE_EQ(*cpu->price_on_demand, 0.2);

  // "pcie" in the name picks the PCIe H100 when the catalog has one.
  const InstanceType* pcie = Find(cat, "gpu_1x_h100_pcie", "us-east-1");
  ASSERT_NE(pcie, nullptr);
  const Accelerator* a = cat.FindAccelerator(pcie->accelerator);
  ASSERT_NE(a, nullptr);
  bool catalog_has_pcie_h100 = false;
  for (const auto& acc : cat.accelerators) {
    if (acc.id.rfind("H100-PCIe", 0) == 0) catalog_has_pcie_h100 = true;
  }
  if (catalog_has_pcie_h100) {
    EXPECT_EQ(a->id.rfind("H100-PCIe", 0), 0u) << a->id;
  }
  EXPECT_EQ(Find(cat, "gpu_1x_h100_sxm5", "us-east-1")->accelerator, "H100-SXM5-80GB");
}

TEST(SkyPilotNebius, GpuAndCpuPresets) {
  LOAD_FIXTURE_OR_SKIP("nebius", cat, stats);
  const InstanceType* h100 = Find(cat, "gpu-h100-sxm_8gpu-128vcpu-1600gb", "eu-north1");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->accelerator, "H100-SXM5-80GB");
  EXPECT_EQ(h100->accelerator_count, 8);
  EXPECT_EQ(h100->vcpus, 128);
  EXPECT_DOUBLE_EQ(*h100->price_on_demand, 23.60);
  EXPECT_DOUBLE_EQ(*h100->price_spot, 10.00);
  // AcceleratorCount 0 with no name: a CPU machine.
  const InstanceType* cpu = Find(cat, "cpu-d3_4vcpu-16gb", "eu-north1");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->is_cpu_only());
  EXPECT_DOUBLE_EQ(ToGiB(cpu->ram), 16.0);
}

TEST(SkyPilotOci, FlexShapesAndGpuShapes) {
  LOAD_FIXTURE_OR_SKIP("oci", cat, stats);
  const InstanceType* flex = Find(cat, "VM.Standard.E4.Flex$_2_8", "af-casablanca-1");
  ASSERT_NE(flex, nullptr);
  EXPECT_TRUE(flex->is_cpu_only());
  EXPECT_EQ(flex->vcpus, 2);
  EXPECT_DOUBLE_EQ(*flex->price_on_demand, 0.037);
  EXPECT_DOUBLE_EQ(*flex->price_spot, 0.0185);
  const InstanceType* v100 = Find(cat, "VM.GPU3.4", "af-casablanca-1");
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->accelerator, "V100-SXM2-16GB");
  EXPECT_EQ(v100->accelerator_count, 4);
  if (const InstanceType* mi = Find(cat, "BM.GPU.MI300X.8", "af-casablanca-1")) {
    EXPECT_EQ(mi->intra_node_link, IntraNodeLink::kInfinityFabric);
  }
}

TEST(SkyPilotPaperspace, PriceIsTheLastColumn) {
  LOAD_FIXTURE_OR_SKIP("paperspace", cat, stats);
  const InstanceType* h100 = Find(cat, "H100x8", "East Coast (NY2)");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->accelerator, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(*h100->price_on_demand, 47.60);
  const InstanceType* a100 = Find(cat, "A100-80G", "East Coast (NY2)");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->accelerator, "A100-SXM4-80GB");
  const InstanceType* cpu = Find(cat, "C5", "East Coast (NY2)");
  ASSERT_NE(cpu, nullptr);
  EXPECT_DOUBLE_EQ(ToGiB(cpu->ram), 8.59);
  // M4000 (GPU+) is not an accelerator gpuplan knows: counted, not an error.
  if (cat.FindAccelerator("M4000") == nullptr) {
    EXPECT_GE(stats.skipped_unknown_accelerator, 1);
    EXPECT_EQ(Find(cat, "GPU+", "East Coast (NY2)"), nullptr);
  }
}

// ---- Inline tables ----------------------------------------------------------------------------

constexpr char kLambdaHeader[] =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
    "SpotPrice";

TEST(SkyPilotInline, MixedCrlfAndLf) {
  std::string text = std::string(kLambdaHeader) +
                     "\r\n"
                     "cpu_a,,,4.0,16.0,0.2,r1,,\n"
                     "cpu_b,,,8.0,32.0,0.4,r1,,\r\n"
                     "cpu_c,,,2,8,0.1,r2,,";  // no final line end
  SkyPilotImportStats stats;
  Catalog cat = ImportOk("Lambda", text, &stats);
  ASSERT_EQ(cat.instances.size(), 3u);
  EXPECT_EQ(stats.rows_read, 3);
  EXPECT_EQ(stats.instances_added, 3);
  EXPECT_EQ(cat.instances[0].instance_type, "cpu_a");
  EXPECT_EQ(cat.instances[0].cloud, "lambda");  // lower-cased
  EXPECT_EQ(cat.instances[1].vcpus, 8);
  EXPECT_EQ(cat.instances[2].region, "r2");
  EXPECT_EQ(cat.instances[2].notes.find('\r'), std::string::npos);
}

TEST(SkyPilotInline, BlankPrices) {
  std::string text = std::string(kLambdaHeader) +
                     "\n"
                     "no_price,,,4,16,,r1,,\n"
                     "spot_only,,,4,16,,r1,,0.5\n"
                     "both,,,4,16,1.5,r1,,0.7\n";
  SkyPilotImportStats stats;
  Catalog cat = ImportOk("lambda", text, &stats);
  ASSERT_EQ(cat.instances.size(), 3u);
  EXPECT_EQ(stats.skipped_no_price, 0);
  const InstanceType* none = Find(cat, "no_price", "r1");
  ASSERT_NE(none, nullptr);
  EXPECT_FALSE(none->price_on_demand.has_value());
  EXPECT_FALSE(none->price_spot.has_value());
  const InstanceType* spot = Find(cat, "spot_only", "r1");
  EXPECT_FALSE(spot->price_on_demand.has_value());
  EXPECT_DOUBLE_EQ(*spot->price_spot, 0.5);
  EXPECT_DOUBLE_EQ(*Find(cat, "both", "r1")->price_on_demand, 1.5);
}

TEST(SkyPilotInline, ZonesCollapseToRegion) {
  const std::string text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
      "Region,AvailabilityZone,Arch\n"
      "m.big,,,8,32,,2.0,0.9,us-x,us-x-a,x86_64\n"
      "m.big,,,8,32,,1.8,,us-x,us-x-b,x86_64\n"  // zones disagree: keep the lowest
      "m.big,,,8,32,,2.0,0.6,us-x,us-x-c,x86_64\n"
      "m.big,,,8,32,,3.0,1.0,eu-y,eu-y-a,x86_64\n"
      "a.small,,,2,4,,0.1,0.05,us-x,us-x-a,x86_64\n";
  Catalog cat = ImportOk("aws", text);
  ASSERT_EQ(cat.instances.size(), 3u);
  // Sorted by (instance type, region).
  EXPECT_EQ(cat.instances[0].instance_type, "a.small");
  EXPECT_EQ(cat.instances[1].region, "eu-y");
  EXPECT_EQ(cat.instances[2].region, "us-x");
  EXPECT_DOUBLE_EQ(*cat.instances[2].price_on_demand, 1.8);
  EXPECT_DOUBLE_EQ(*cat.instances[2].price_spot, 0.6);
  EXPECT_DOUBLE_EQ(*cat.instances[1].price_on_demand, 3.0);
}

TEST(SkyPilotInline, ErrorsNameLineAndColumn) {
  struct Case {
    const char* name;
    std::string text;
    const char* field_part;
  };
  const std::string h = std::string(kLambdaHeader) + "\n";
  const Case cases[] = {
      {"bad vCPUs", h + "ok,,,4,16,0.2,r1,,\nbad,,,abc,16,0.2,r1,,\n", ":3:4 (vCPUs)"},
      {"bad price", h + "bad,,,4,16,1.x,r1,,\n", ":2:6 (Price)"},
      {"negative spot", h + "bad,,,4,16,1,r1,,-1\n", ":2:9 (SpotPrice)"},
      {"bad count", h + "bad,A100,eight,4,16,1,r1,,\n", ":2:3 (AcceleratorCount)"},
      {"name without count", h + "bad,A100,,4,16,1,r1,,\n", ":2:3 (AcceleratorCount)"},
      {"count without name", h + "bad,,2,4,16,1,r1,,\n", ":2:2 (AcceleratorName)"},
      {"blank memory", h + "bad,,,4,,1,r1,,\n", ":2:5 (MemoryGiB)"},
      {"no instance type", h + ",A100,1,4,16,1,r1,,\n", ":2:1 (InstanceType)"},
      {"missing Region", "InstanceType,vCPUs,MemoryGiB,Price\nx,1,1,1\n", "inline.csv:1:Region"},
      {"missing vCPUs", "InstanceType,MemoryGiB,Price,Region\nx,1,1,r\n", "inline.csv:1:vCPUs"},
      {"ragged row", h + "bad,,,4,16\n", "inline.csv:2"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Catalog cat = AcceleratorsOnly();
    Status s = ImportSkyPilotVms(cat, "lambda", "inline.csv", c.text);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kParse);
    EXPECT_NE(s.error().field.find(c.field_part), std::string::npos) << s.error().field;
    EXPECT_EQ(s.error().field.rfind("inline.csv:", 0), 0u) << s.error().field;
    EXPECT_FALSE(s.error().message.empty());
    EXPECT_TRUE(cat.instances.empty());  // nothing half-imported
  }
}

TEST(SkyPilotInline, EmptyCloudIsAnError) {
  Catalog cat = AcceleratorsOnly();
  Status s = ImportSkyPilotVms(cat, " ", "inline.csv", std::string(kLambdaHeader) + "\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(s.error().hint.empty());
}

TEST(SkyPilotInline, UnknownAcceleratorsAndTpusAreSkippedAndCounted) {
  std::string text = std::string(kLambdaHeader) +
                     "\n"
                     "weird_1x,NoSuchGpu-9000,1,8,32,1.0,r1,,\n"
                     "weird_2x,NoSuchGpu-9000,2,8,32,2.0,r1,,\n"
                     "slice,A100,0.5,4,16,0.5,r1,,\n"  // a fraction of a device
                     "tpu_vm,tpu-v5p-8,1,8,32,4.0,r1,,\n"
                     "cpu,,,4,16,0.2,r1,,\n";
  SkyPilotImportStats stats;
  Catalog cat = ImportOk("lambda", text, &stats);
  EXPECT_EQ(stats.rows_read, 5);
  EXPECT_EQ(stats.skipped_unknown_accelerator, 3);
  EXPECT_EQ(stats.tpu_rows_skipped, 1);
  EXPECT_EQ(stats.instances_added, 1);
  ASSERT_EQ(cat.instances.size(), 1u);
  EXPECT_EQ(cat.instances[0].instance_type, "cpu");
}

TEST(SkyPilotInline, GpuInfoMemoryPicksTheVariant) {
  const std::string gi40 =
      "\"{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', 'Count': 8.0, 'MemoryInfo': "
      "{'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 40960}\"";
  const std::string gi80 =
      "\"{'Gpus': [{'Name': 'A100', 'Manufacturer': 'NVIDIA', 'Count': 8.0, 'MemoryInfo': "
      "{'SizeInMiB': 81920}}], 'TotalGpuMemoryInMiB': 81920}\"";
  std::string text = std::string(kLambdaHeader) + "\n" + "a40,A100,8,96,900,10," + "r1," + gi40 +
                     ",\n" + "a80,A100,8,96,900,12," + "r1," + gi80 + ",\n" +
                     "plain,A100,8,96,900,10,r1,A100,\n";  // GpuInfo without memory
  Catalog cat = ImportOk("lambda", text);
  ASSERT_EQ(cat.instances.size(), 3u);
  EXPECT_EQ(Find(cat, "a40", "r1")->accelerator, "A100-SXM4-40GB");
  EXPECT_EQ(Find(cat, "a80", "r1")->accelerator, "A100-SXM4-80GB");
  EXPECT_EQ(Find(cat, "plain", "r1")->accelerator, "A100-SXM4-40GB");
  EXPECT_NE(Find(cat, "a80", "r1")->notes.find("SkyPilot accelerator \"A100\""), std::string::npos);
}

TEST(SkyPilotInline, IntraNodeLinkRules) {
  struct Case {
    const char* sky_name;
    int count;
    IntraNodeLink link;
  };
  const Case cases[] = {
      {"H100", 1, IntraNodeLink::kNone},           // one device
      {"H100", 2, IntraNodeLink::kNvlink},         // SXM pair
      {"H100", 4, IntraNodeLink::kNvswitch},       // HGX slice
      {"H100", 8, IntraNodeLink::kNvswitch},       // full board
      {"A100-80GB", 8, IntraNodeLink::kNvswitch},  // full board
      {"V100", 8, IntraNodeLink::kNvlink},         // cube-mesh, no NVSwitch
      {"L4", 1, IntraNodeLink::kNone},             // one card
      {"L4", 4, IntraNodeLink::kPcie},             // PCIe cards
      {"T4", 2, IntraNodeLink::kPcie},             // PCIe cards
  };
  std::string text = std::string(kLambdaHeader) + "\n";
  for (const auto& c : cases) {
    text += std::string("t_") + c.sky_name + "_" + std::to_string(c.count) + "," + c.sky_name +
            "," + std::to_string(c.count) + ",8,64,1,r1,,\n";
  }
  Catalog cat = ImportOk("lambda", text);
  for (const auto& c : cases) {
    std::string type = std::string("t_") + c.sky_name + "_" + std::to_string(c.count);
    SCOPED_TRACE(type);
    if (cat.FindAccelerator(c.sky_name) == nullptr) continue;  // not in this catalog build
    const InstanceType* i = Find(cat, type, "r1");
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->intra_node_link, c.link);
    EXPECT_EQ(i->accelerator_count, c.count);
  }
}

constexpr char kGcpHeader[] =
    "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
    "AvailabilityZone,Price,SpotPrice";

TEST(SkyPilotInline, GcpAttachesGpuRowsInTheSameZone) {
  std::string text = std::string(kGcpHeader) +
                     "\n"
                     "a2-highgpu-8g,96.0,680.0,,,,r1,r1-a,5.0,2.0\n"
                     "a2-highgpu-8g,96.0,680.0,,,,r1,r1-b,5.0,1.5\n"
                     "a2-highgpu-8g,96.0,680.0,,,,r2,r2-a,6.0,\n"
                     "a2-highgpu-4g,48.0,340.0,,,,r3,r3-a,2.5,1.0\n"
                     "c3-standard-4,4.0,16.0,,,,r1,r1-a,0.2,0.05\n"
                     ",,,A100,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]},r1,r1-a,20.0,9.0\n"
                     ",,,A100,8,,r1,r1-b,20.0,8.0\n"
                     ",,,A100,8,,r2,r2-a,21.0,7.0\n"
                     ",,,A100,4,,r3,r3-b,10.0,4.0\n"  // other zone than the host: no match
                     ",,,L4,1,,r1,r1-a,0.6,0.2\n"     // no g2 host in this file
                     ",,,tpu-v6e-8,1,tpu-v6e-8,r1,r1-a,700.0,700.0\n";
  SkyPilotImportStats stats;
  Catalog cat = ImportOk("gcp", text, &stats);
  EXPECT_EQ(stats.rows_read, 11);
  EXPECT_EQ(stats.gpu_rows_attached, 3);
  EXPECT_EQ(stats.tpu_rows_skipped, 1);
  ASSERT_EQ(cat.instances.size(), 3u);  // a2-highgpu-8g in r1 and r2, c3 as a CPU machine
  const InstanceType* r1 = Find(cat, "a2-highgpu-8g", "r1");
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->accelerator, "A100-SXM4-40GB");
  EXPECT_EQ(r1->accelerator_count, 8);
  EXPECT_EQ(r1->vcpus, 96);
  EXPECT_DOUBLE_EQ(*r1->price_on_demand, 25.0);
  EXPECT_DOUBLE_EQ(*r1->price_spot, 9.5);  // zone b: 1.5 + 8.0
  const InstanceType* r2 = Find(cat, "a2-highgpu-8g", "r2");
  ASSERT_NE(r2, nullptr);
  EXPECT_DOUBLE_EQ(*r2->price_on_demand, 27.0);
  EXPECT_FALSE(r2->price_spot.has_value());  // host has no spot price
  EXPECT_EQ(Find(cat, "a2-highgpu-4g", "r3"), nullptr);
  const InstanceType* cpu = Find(cat, "c3-standard-4", "r1");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->is_cpu_only());
}

TEST(SkyPilotInline, GcpN1TakesGpusWithinLimits) {
  std::string text = std::string(kGcpHeader) +
                     "\n"
                     "n1-standard-8,8.0,30.0,,,,r1,r1-a,0.38,0.08\n"
                     "n1-standard-64,64.0,240.0,,,,r1,r1-a,3.04,0.64\n"
                     ",,,T4,1,,r1,r1-a,0.35,0.14\n"
                     ",,,V100,1,,r1,r1-a,2.48,1.0\n";
  SkyPilotImportStats stats;
  Catalog cat = ImportOk("gcp", text, &stats);
  // n1-standard-8: CPU-only, +T4 x1, +V100 x1 (12 vCPUs max); n1-standard-64: CPU-only only
  // (T4 x1 allows 48 vCPUs, V100 x1 12). Combinations are named as in data/instances/gcp.csv.
  EXPECT_EQ(stats.gpu_rows_attached, 2);
  ASSERT_EQ(cat.instances.size(), 4u);
  if (cat.FindAccelerator("T4") != nullptr) {
    const InstanceType* t4 = Find(cat, "n1-standard-8+1xnvidia-tesla-t4", "r1");
    ASSERT_NE(t4, nullptr);
    EXPECT_EQ(t4->accelerator, "T4");
    EXPECT_EQ(t4->vcpus, 8);
    EXPECT_DOUBLE_EQ(*t4->price_on_demand, 0.38 + 0.35);
    EXPECT_DOUBLE_EQ(*t4->price_spot, 0.08 + 0.14);
  }
  EXPECT_NE(Find(cat, "n1-standard-8+1xnvidia-tesla-v100", "r1"), nullptr);
  const InstanceType* cpu = Find(cat, "n1-standard-8", "r1");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->is_cpu_only());
  for (const auto& i : cat.instances) {
    if (i.instance_type == "n1-standard-64") {
      EXPECT_TRUE(i.is_cpu_only());
    }
  }
}

TEST(SkyPilotInline, EmptyInstanceTypeOnlyForGcpAccelerators) {
  Catalog cat = AcceleratorsOnly();
  std::string text = std::string(kGcpHeader) + "\n,,,,,,r1,r1-a,1.0,\n";
  Status s = ImportSkyPilotVms(cat, "gcp", "inline.csv", text);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().field.find("inline.csv:2:1"), std::string::npos) << s.error().field;
}

TEST(SkyPilotInline, LoadTableDelegatesAndAppends) {
  Catalog cat = AcceleratorsOnly();
  InstanceType existing;
  existing.cloud = "mine";
  existing.instance_type = "zzz";
  cat.instances.push_back(existing);
  std::string text = std::string(kLambdaHeader) + "\nb,,,4,16,0.2,r1,,\na,,,4,16,0.2,r1,,\n";
  ASSERT_TRUE(LoadTable(cat, TableKind::kSkyPilotVms, "x.csv", text, "lambda").ok());
  ASSERT_EQ(cat.instances.size(), 3u);
  EXPECT_EQ(cat.instances[0].instance_type, "zzz");  // existing rows untouched
  EXPECT_EQ(cat.instances[1].instance_type, "a");
  EXPECT_EQ(cat.instances[2].instance_type, "b");
  auto kind = DetectTableKind("x.csv", text);
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, TableKind::kSkyPilotVms);
}

// ---- Dates, suspect rows and merging into the built-in specs (issue 12) ----------------------

TEST(SkyPilotDate, CallerDateIsUsedWhenTheFileHasNone) {
  Catalog cat = AcceleratorsOnly();
  const std::string text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
      "x.large,,,4,16,0.5,r-1,0.2\n";
  ASSERT_TRUE(ImportSkyPilotVms(cat, "testcloud", "inline.csv", text, nullptr, "2026-05-04").ok());
  ASSERT_EQ(cat.instances.size(), 1u);
  EXPECT_EQ(cat.instances[0].as_of, "2026-05-04");
  EXPECT_EQ(cat.instances[0].notes.find("undated"), std::string::npos);
}

TEST(SkyPilotDate, DateColumnWinsOverTheCallerDate) {
  Catalog cat = AcceleratorsOnly();
  const std::string text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,Date\n"
      "x.large,,,4,16,0.5,r-1,2026-03-01T07:00:00Z\n"
      "x.large,,,4,16,0.5,r-2,\n";
  ASSERT_TRUE(ImportSkyPilotVms(cat, "testcloud", "inline.csv", text, nullptr, "2026-05-04").ok());
  const InstanceType* r1 = Find(cat, "x.large", "r-1");
  const InstanceType* r2 = Find(cat, "x.large", "r-2");
  ASSERT_NE(r1, nullptr);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r1->as_of, "2026-03-01");
  EXPECT_EQ(r2->as_of, "2026-05-04");  // an empty date cell falls back to the file's date
}

TEST(SkyPilotDate, BadDateCellNamesLineAndColumn) {
  Catalog cat = AcceleratorsOnly();
  const std::string text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,as_of\n"
      "x.large,,,4,16,0.5,r-1,yesterday\n";
  Status s = ImportSkyPilotVms(cat, "testcloud", "inline.csv", text);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kParse);
  EXPECT_EQ(s.error().field, "inline.csv:2:8 (as_of)");
  EXPECT_NE(s.error().message.find("yesterday"), std::string::npos);
}

TEST(SkyPilotSuspect, SpotAboveOnDemandIsSuspectOnImport) {
  Catalog cat = ImportOk("testcloud",
                         "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,"
                         "Region,SpotPrice\n"
                         "odd.large,,,4,16,1.0,r-1,1.5\n"
                         "fine.large,,,4,16,1.0,r-1,0.3\n");
  const InstanceType* odd = Find(cat, "odd.large", "r-1");
  const InstanceType* fine = Find(cat, "fine.large", "r-1");
  ASSERT_NE(odd, nullptr);
  ASSERT_NE(fine, nullptr);
  EXPECT_NE(odd->suspect_reason.find("spot price above on-demand"), std::string::npos);
  EXPECT_EQ(fine->suspect_reason, "");
}

// Vast.ai's rows are hosts' offers: an import of its vms.csv flags every row "marketplace" (a
// flag that describes the offer, not a suspect price), and no other cloud's rows.
TEST(SkyPilotSuspect, VastRowsAreMarketplaceListings) {
  const std::string text =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n"
      "1x-RTX_4090-32-65536,RTX4090,1,32,64,0.4,Germany,0\n";
  Catalog vast = ImportOk("vast", text);
  Catalog other = ImportOk("testcloud", text);
  const InstanceType* v = Find(vast, "1x-RTX_4090-32-65536", "Germany");
  const InstanceType* o = Find(other, "1x-RTX_4090-32-65536", "Germany");
  ASSERT_NE(v, nullptr);
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(IsMarketplace(*v));
  EXPECT_EQ(v->suspect_reason, "");
  EXPECT_FALSE(IsMarketplace(*o));
  // SpotPrice 0.00 is SkyPilot's "no interruptible price", not a free spot instance.
  EXPECT_FALSE(v->price_spot.has_value());
  EXPECT_NE(v->notes.find("SpotPrice 0.00 read as no spot price"), std::string::npos) << v->notes;
  ASSERT_TRUE(v->price_on_demand.has_value());
  EXPECT_DOUBLE_EQ(*v->price_on_demand, 0.4);
}

// The shared AWS excerpt lists p5.48xlarge; SkyPilot records neither its local NVMe nor its EFA
// bandwidth, which data/instances/aws.csv has (8 x 3840 GB, 3200 Gbps, AWS P5 page).
TEST(SkyPilotMerge, AwsFixtureKeepsBuiltinSpecsAndTakesTheFileDate) {
  const auto path = FixturePath("aws");
  if (!std::filesystem::is_regular_file(path)) GTEST_SKIP() << "no fixture " << path;
  Catalog cat = Builtin();
  const InstanceType* before = Find(cat, "p5.48xlarge", "us-east-1");
  ASSERT_NE(before, nullptr);
  ASSERT_TRUE(before->local_nvme_known);
  const double nvme = before->local_nvme.value();
  const double net = before->network.value();
  ASSERT_TRUE(before->inter_node_bw.has_value());
  const double fabric_bw = before->inter_node_bw->value();
  std::size_t c7i_before = 0;
  for (const auto& i : cat.instances) c7i_before += i.instance_type == "c7i.xlarge" ? 1 : 0;

  Status s = ApplyCatalogOverride(cat, "aws=" + path.string());
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  const std::string file_date = FileDate(path.string());
  ASSERT_EQ(file_date.size(), 10u);

  int p5 = 0;
  for (const auto& i : cat.instances) {
    if (i.cloud != "aws" || i.instance_type != "p5.48xlarge") continue;
    ++p5;
    SCOPED_TRACE(i.region);
    EXPECT_NE(i.source.find("SkyPilot"), std::string::npos);  // prices from the file
    EXPECT_EQ(i.as_of, file_date);                            // dated by the file
    EXPECT_TRUE(i.local_nvme_known);
    EXPECT_DOUBLE_EQ(i.local_nvme.value(), nvme);  // kept from the built-in row
    EXPECT_DOUBLE_EQ(i.network.value(), net);
    EXPECT_EQ(i.inter_node_fabric, InterNodeFabric::kEfa);
    ASSERT_TRUE(i.inter_node_bw.has_value());
    EXPECT_DOUBLE_EQ(i.inter_node_bw->value(), fabric_bw);
    EXPECT_EQ(i.intra_node_link, IntraNodeLink::kNvswitch);
    EXPECT_NE(i.notes.find("from the built-in row"), std::string::npos);
    EXPECT_EQ(i.notes.find("network and local NVMe not in SkyPilot catalog"), std::string::npos);
  }
  EXPECT_GT(p5, 0);
  // Built-in shapes the excerpt does not list stay (the excerpt holds GPU shapes only).
  std::size_t c7i_after = 0;
  for (const auto& i : cat.instances) c7i_after += i.instance_type == "c7i.xlarge" ? 1 : 0;
  EXPECT_EQ(c7i_after, c7i_before);
}

TEST(SkyPilotMerge, InlineImportReplacesListedShapesOnly) {
  Catalog cat = AcceleratorsOnly();
  InstanceType known;
  known.cloud = "testcloud";
  known.instance_type = "gpu.8x";
  known.region = "old-region";
  known.accelerator = "H100-SXM5-80GB";
  known.accelerator_count = 8;
  known.vcpus = 192;
  known.ram = GiB(2048);
  known.local_nvme = GB(30720);
  known.local_nvme_known = true;
  known.network = Gbps(3200);
  known.intra_node_link = IntraNodeLink::kNvswitch;
  known.inter_node_fabric = InterNodeFabric::kInfiniband;
  known.inter_node_bw = Gbps(3200);
  known.price_on_demand = 99.0;
  known.flags = {"suspect-price"};
  known.source = "https://example.com/specs";
  known.as_of = "2026-01-01";
  InstanceType other = known;
  other.instance_type = "cpu.small";
  other.accelerator.clear();
  other.accelerator_count = 0;
  cat.instances = {known, other};

  std::vector<InstanceType> imported(1);
  imported[0].cloud = "testcloud";
  imported[0].instance_type = "gpu.8x";
  imported[0].region = "new-region";
  imported[0].accelerator = "H100-SXM5-80GB";
  imported[0].accelerator_count = 8;
  imported[0].vcpus = 192;
  imported[0].ram = GiB(2048);
  imported[0].intra_node_link = IntraNodeLink::kNvlink;
  imported[0].price_on_demand = 40.0;
  imported[0].source = "SkyPilot catalog (x)";
  imported[0].as_of = "2026-06-01";
  EXPECT_EQ(MergeImportedInstances(cat, "testcloud", imported), 1);

  ASSERT_EQ(cat.instances.size(), 2u);  // cpu.small kept, gpu.8x replaced by the import's row
  const InstanceType* g = Find(cat, "gpu.8x", "new-region");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(Find(cat, "gpu.8x", "old-region"), nullptr);  // availability comes from the file
  EXPECT_DOUBLE_EQ(*g->price_on_demand, 40.0);
  EXPECT_EQ(g->as_of, "2026-06-01");
  EXPECT_TRUE(g->local_nvme_known);
  EXPECT_DOUBLE_EQ(g->local_nvme.value(), 30720e9);
  EXPECT_EQ(g->inter_node_fabric, InterNodeFabric::kInfiniband);
  EXPECT_EQ(g->intra_node_link, IntraNodeLink::kNvswitch);
  EXPECT_TRUE(g->flags.empty());  // the built-in row's price flags do not travel to new prices
  EXPECT_EQ(g->suspect_reason, "");
  EXPECT_NE(Find(cat, "cpu.small", "old-region"), nullptr);
}

// Rows an import leaves out (unknown accelerators, TPUs) show in the coverage of their cloud.
TEST(SkyPilotMerge, ImportSkipsShowInCoverage) {
  const auto path = FixturePath("gcp");
  auto text = ReadFile(path);
  if (!text) GTEST_SKIP() << "no fixture " << path;
  SkyPilotImportStats stats;
  {
    Catalog direct = AcceleratorsOnly();
    ASSERT_TRUE(ImportSkyPilotVms(direct, "gcp", "gcp/vms.csv", *text, &stats).ok());
  }
  ASSERT_GT(stats.tpu_rows_skipped + stats.skipped_unknown_accelerator, 0);
  Catalog cat = Builtin();
  Status s = ApplyCatalogOverride(cat, "gcp=" + path.string());
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  auto cov = CatalogCoverage(cat);
  auto gcp = std::find_if(cov.begin(), cov.end(), [](const auto& c) { return c.cloud == "gcp"; });
  ASSERT_NE(gcp, cov.end());
  int tpu = 0, unknown = 0;
  for (const auto& [reason, n] : gcp->skipped) {
    if (reason.find("TPU") != std::string::npos) tpu = n;
    if (reason.find("unknown accelerator") != std::string::npos) unknown = n;
  }
  EXPECT_EQ(tpu, stats.tpu_rows_skipped);
  EXPECT_EQ(unknown, stats.skipped_unknown_accelerator);
  // A second import of the same cloud replaces the counts rather than adding to them.
  ASSERT_TRUE(ApplyCatalogOverride(cat, "gcp=" + path.string()).ok());
  int entries = 0;
  for (const auto& k : cat.import_skips) entries += k.cloud == "gcp" ? 1 : 0;
  EXPECT_EQ(entries, 2);
}

// The same quote keeps its review: an import of the same on-demand price in the same region keeps
// the built-in row's flags (still suspect) and reserved prices; another price starts clean.
TEST(SkyPilotMerge, SamePriceKeepsFlagsAndReservedPrices) {
  Catalog cat = AcceleratorsOnly();
  InstanceType known;
  known.cloud = "testcloud";
  known.instance_type = "gpu.8x";
  known.region = "r-1";
  known.accelerator = "H100-SXM5-80GB";
  known.accelerator_count = 8;
  known.vcpus = 192;
  known.ram = GiB(2048);
  known.price_on_demand = 40.0;
  known.price_reserved_1y = 30.0;
  known.price_reserved_3y = 20.0;
  known.reserved_source = "https://example.com/cud";
  known.flags = {"suspect-price"};
  known.source = "https://example.com/specs";
  known.as_of = "2026-01-01";
  InstanceType known2 = known;
  known2.region = "r-2";
  cat.instances = {known, known2};

  std::vector<InstanceType> imported(2, InstanceType{});
  for (auto& i : imported) {
    i.cloud = "testcloud";
    i.instance_type = "gpu.8x";
    i.accelerator = "H100-SXM5-80GB";
    i.accelerator_count = 8;
    i.vcpus = 192;
    i.ram = GiB(2048);
    i.source = "SkyPilot catalog (x)";
  }
  imported[0].region = "r-1";
  imported[0].price_on_demand = 40.2;  // within 1%: the same quote
  imported[1].region = "r-2";
  imported[1].price_on_demand = 50.0;  // a new price
  MergeImportedInstances(cat, "testcloud", imported);
  const InstanceType* same = Find(cat, "gpu.8x", "r-1");
  const InstanceType* other = Find(cat, "gpu.8x", "r-2");
  ASSERT_NE(same, nullptr);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(same->flags, std::vector<std::string>{"suspect-price"});
  EXPECT_FALSE(same->suspect_reason.empty());
  ASSERT_TRUE(same->price_reserved_1y.has_value());
  EXPECT_DOUBLE_EQ(*same->price_reserved_1y, 30.0);
  EXPECT_EQ(same->reserved_source, "https://example.com/cud");
  EXPECT_TRUE(other->flags.empty());
  EXPECT_EQ(other->suspect_reason, "");
  EXPECT_FALSE(other->price_reserved_1y.has_value());
}

}  // namespace
}  // namespace gpuplan
