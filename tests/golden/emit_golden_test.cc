// Emit goldens: fixed plan JSON files (tests/golden/emit/*.plan.json, frozen inputs so catalog
// changes do not move them) and the files every target writes for them
// (tests/golden/emit/<plan>/<target>/<file>; k8s-keda = k8s with --autoscaler keda, k8s-pytorchjob
// = --k8s-training pytorchjob). The same files are what the schema checks in CTest read
// (tools/schema-check, emit_checks_test). A change is a reviewed diff: regenerate with
// GPUPLAN_UPDATE_GOLDEN=1 ./emit_golden_test and review `git diff`.
#include <gtest/gtest.h>

#include "testing/test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuplan/catalog.h"
#include "gpuplan/emit.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

using gpuplan::test::Slurp;

TEST(EmitGolden, FilesUnchanged) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok());
  const bool update = std::getenv("GPUPLAN_UPDATE_GOLDEN") &&
                      std::string(std::getenv("GPUPLAN_UPDATE_GOLDEN")) == "1";
  const fs::path dir = fs::path(GPUPLAN_SOURCE_DIR) / "tests/golden/emit";
  int compared = 0;
  std::vector<fs::path> plans;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() > 10 && n.substr(n.size() - 10) == ".plan.json") plans.push_back(e.path());
  }
  std::sort(plans.begin(), plans.end());
  ASSERT_GE(plans.size(), 2u);
  for (const auto& plan : plans) {
    const std::string stem =
        plan.filename().string().substr(0, plan.filename().string().size() - 10);
    const std::string json = Slurp(plan);
    std::vector<std::pair<std::string, EmitOptions>> variants;
    for (const auto& target : EmitTargets()) variants.push_back({target, EmitOptions{}});
    EmitOptions keda;
    keda.autoscaler = "keda";
    variants.push_back({"k8s-keda", keda});
    if (json.find("\"qps\":") == std::string::npos) {  // training: the Kubeflow PyTorchJob variant
      EmitOptions pj;
      pj.k8s_training = "pytorchjob";
      variants.push_back({"k8s-pytorchjob", pj});
    }
    for (const auto& [variant, opt] : variants) {
      const std::string target = variant.rfind("k8s-", 0) == 0 ? "k8s" : variant;
      auto files = Emit(json, target, opt, *cat);
      if (!files) continue;  // a target for the other plan kind: its error is tested elsewhere
      for (const auto& f : *files) {
        const fs::path want = dir / stem / variant / f.name;
        if (update) {
          fs::create_directories(want.parent_path());
          std::ofstream(want, std::ios::binary) << f.contents;
          continue;
        }
        ASSERT_TRUE(fs::exists(want))
            << want << " missing: regenerate with GPUPLAN_UPDATE_GOLDEN=1";
        EXPECT_EQ(Slurp(want), f.contents)
            << want << " changed (review, then GPUPLAN_UPDATE_GOLDEN=1)";
        ++compared;
      }
    }
  }
  if (!update) {
    EXPECT_GE(compared, 10);
  }
}

}  // namespace
}  // namespace gpuplan
