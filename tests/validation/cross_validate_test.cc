// Leave-one-source-out cross-validation (issue #14): source keys, folds that never see their
// own cases, and cases that read no fitted constant predicted the same in and out of sample.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpuplan/catalog.h"
#include "gpuplan/validate.h"
#include "testing/test_util.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

// Two sources of the same dense decoder served on the same GPU: the single-source fold must
// refit without the other source's case, so a case whose only sibling is in its own source
// is predicted with the shipped constants' neighbourhood, not with its own measurement.
TEST(CrossValidation, FoldsDoNotSeeTheirOwnSource) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  // Source A measured 3x what source B measured for the same setup. Fitted on both, the
  // constants land between; held out, A is predicted from B alone (too low) and B from A alone
  // (too high): the held-out errors must be worse than the refit ones on both sides.
  std::string text = test::ServeCaseJsonl("a1", "github.com/org/alpha file.md", 20000) +
                     test::ServeCaseJsonl("b1", "github.com/org/beta file.md", 2000);
  auto cv = CrossValidateBySource({{"synthetic.jsonl", text}}, *cat);
  ASSERT_TRUE(cv.ok()) << cv.error().ToString();
  ASSERT_EQ(cv->sources.size(), 2u);
  ASSERT_EQ(cv->held_out.cases.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(cv->held_out.cases[i].error && cv->refit.cases[i].error);
  }
  EXPECT_LT(*cv->held_out.cases[0].error, *cv->refit.cases[0].error);  // a1 from b1: lower
  EXPECT_GT(*cv->held_out.cases[1].error, *cv->refit.cases[1].error);  // b1 from a1: higher
  EXPECT_FALSE(cv->constants.empty());
}

TEST(CrossValidation, CasesThatReadNoConstantAreUnchanged) {
  if (!fs::is_directory(fs::path(GPUPLAN_SHARED_DIR) / "validation")) {
    GTEST_SKIP() << "../shared/validation is not beside the repository";
  }
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  const fs::path f = fs::path(GPUPLAN_SHARED_DIR) / "validation" / "dev_memory.jsonl";
  auto cv = CrossValidateBySource({{f.filename().string(), test::Slurp(f)}}, *cat);
  ASSERT_TRUE(cv.ok()) << cv.error().ToString();
  ASSERT_EQ(cv->shipped.cases.size(), cv->held_out.cases.size());
  for (size_t i = 0; i < cv->shipped.cases.size(); ++i) {
    const auto& s = cv->shipped.cases[i];
    const auto& h = cv->held_out.cases[i];
    EXPECT_EQ(s.id, h.id);
    EXPECT_EQ(s.ok, h.ok) << s.id;
    if (s.predicted && h.predicted) {
      EXPECT_DOUBLE_EQ(*s.predicted, *h.predicted) << s.id;
    }
  }
  // Memory estimates read no performance constant: nothing to fit.
  EXPECT_TRUE(cv->constants.empty());
}

TEST(CrossValidation, SourceKeys) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok());
  auto one = [&](const std::string& source) {
    std::string c = test::ServeCaseJsonl("x", source, 1000);
    auto r = RunValidation(c, "k.jsonl", *cat);
    EXPECT_TRUE(r.ok());
    return r.ok() && !r->cases.empty() ? r->cases[0].source : std::string("?");
  };
  EXPECT_EQ(one("github.com/mlcommons/training_results_v4.0 : NVIDIA/results/x/y/result_0.txt"),
            "mlcommons/training_results");
  EXPECT_EQ(one("github.com/NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md"),
            "nvidia/tensorrt-llm");
  EXPECT_EQ(one("Narayanan et al., \\\"Efficient Large-Scale ...\\\" Table 1"), "narayanan");
  EXPECT_EQ(one("pytorch/ao torchao/optim/README.md (commit 072500ab)"), "pytorch/ao");
  EXPECT_EQ(one(""), "(no source)");
}

}  // namespace
}  // namespace gpuplan
