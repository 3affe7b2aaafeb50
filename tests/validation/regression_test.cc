// Accuracy regression test: runs the validation harness on every case file in
// ../shared/validation (and data/measurements) and fails when coverage drops or the median or
// p90 |error| of any kind gets worse than tests/validation/baseline.json.
// Regenerate the baseline after an improvement: GPUPLAN_UPDATE_BASELINE=1 ./regression_test
#include <gtest/gtest.h>

#include "testing/test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuplan/catalog.h"
#include "gpuplan/validate.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kSlack = 1e-9;  // float noise only: any real regression fails

using gpuplan::test::Slurp;

std::vector<fs::path> CaseFiles() {
  std::vector<fs::path> files;
  const std::vector<fs::path> dirs = {fs::path(GPUPLAN_SHARED_DIR) / "validation",
                                      fs::path(GPUPLAN_SOURCE_DIR) / "data" / "measurements"};
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".jsonl") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ValidationRegression, NoKindGetsWorse) {
  if (!fs::is_directory(fs::path(GPUPLAN_SHARED_DIR) / "validation")) {
    GTEST_SKIP() << "../shared/validation is not beside the repository; skipping the accuracy "
                    "regression test";
  }
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  const fs::path baseline_path = fs::path(GPUPLAN_SOURCE_DIR) / "tests/validation/baseline.json";
  json baseline = json::object();
  if (fs::exists(baseline_path)) baseline = json::parse(Slurp(baseline_path));
  json current = json::object();
  for (const auto& file : CaseFiles()) {
    auto report = RunValidation(Slurp(file), file.filename().string(), *cat);
    ASSERT_TRUE(report.ok()) << report.error().ToString();
    const std::string name = file.filename().string();
    for (const auto& [kind, s] : report->summary) {
      current[name][kind] = {{"cases", s.cases},
                             {"covered", s.covered},
                             {"median_abs_err", s.median_abs_err},
                             {"p90_abs_err", s.p90_abs_err}};
      if (!baseline.contains(name) || !baseline[name].contains(kind)) {
        ADD_FAILURE() << name << " / " << kind << " has no baseline: regenerate with "
                      << "GPUPLAN_UPDATE_BASELINE=1";
        continue;
      }
      const json& b = baseline[name][kind];
      EXPECT_GE(s.covered, b["covered"].get<int>())
          << name << " / " << kind << ": coverage dropped";
      // More covered cases change what the statistics are over; compare errors only on the
      // same coverage (the baseline is regenerated with the new coverage).
      if (s.covered != b["covered"].get<int>()) continue;
      EXPECT_LE(s.median_abs_err, b["median_abs_err"].get<double>() + kSlack)
          << name << " / " << kind << ": median |error| got worse";
      EXPECT_LE(s.p90_abs_err, b["p90_abs_err"].get<double>() + kSlack)
          << name << " / " << kind << ": p90 |error| got worse";
    }
  }
  const char* update = std::getenv("GPUPLAN_UPDATE_BASELINE");
  if (update && std::string(update) == "1") {
    std::ofstream out(baseline_path);
    out << current.dump(2) << "\n";
    std::cout << "wrote " << baseline_path << "\n";
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// Issue 10: a case member of the wrong type is an error naming its path (the validation reader
// used to read it as absent and predict a different case).
TEST(ValidationCaseTypes, WrongTypeIsAnErrorNamingTheField) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  const nlohmann::json good = nlohmann::json::parse(R"({"id": "t", "kind": "memory",
      "metric": "peak_gib", "measured": 10, "model": {"preset": "llama-2-7b", "layers": 32},
      "hardware": {"gpu": "H100-SXM5-80GB", "gpus": 1},
      "workload": {"train": {"method": "full", "tp": 1, "sequence_parallel": false}}})");
  ASSERT_TRUE(RunValidation(good.dump(), "c.jsonl", *cat).ok());
  struct Row {
    const char* pointer;
    nlohmann::json value;
    const char* field;
  };
  const Row rows[] = {
      {"/workload/train/tp", "2", "c.jsonl:1:workload.train.tp"},
      {"/workload/train/sequence_parallel", "yes", "workload.train.sequence_parallel"},
      {"/workload/train/method", 3, "workload.train.method"},
      {"/model/layers", "32", "model.layers"},
      {"/model/moe", 8, "model.moe"},
      {"/hardware/gpus", nlohmann::json::array({1}), "hardware.gpus"},
      {"/workload/infer", "vllm", "workload.infer"},
      {"/source", 7, "source"},
  };
  for (const Row& r : rows) {
    nlohmann::json c = good;
    c[nlohmann::json::json_pointer(r.pointer)] = r.value;
    auto report = RunValidation(c.dump(), "c.jsonl", *cat);
    ASSERT_FALSE(report.ok()) << r.pointer;
    EXPECT_NE(report.error().field.find(r.field), std::string::npos)
        << r.pointer << ": " << report.error().ToString();
    EXPECT_EQ(report.error().code, ErrorCode::kParse) << r.pointer;
  }
}

// A file without a case is an error naming it, not a 0.0% error over nothing; a kind filter that
// leaves nothing of files that hold cases is not (the CLI and the server name --kind / cases).
TEST(ValidationCaseTypes, AFileWithoutACaseIsAnError) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  for (const char* text : {"", "\n", "  \n\t\n\n"}) {
    auto report = RunValidation(text, "c.jsonl", *cat);
    ASSERT_FALSE(report.ok()) << '"' << text << '"';
    EXPECT_EQ(report.error().field, "c.jsonl");
    EXPECT_EQ(report.error().code, ErrorCode::kParse);
  }
  const std::string one = R"({"id": "t", "kind": "memory", "metric": "peak_gib", "measured": 10,
      "model": {"preset": "llama-2-7b"}, "hardware": {"gpu": "H100-SXM5-80GB", "gpus": 1},
      "workload": {"train": {"method": "full"}}})";
  std::string line = one;
  std::erase(line, '\n');
  auto other_kind = RunValidation(line + "\n", "c.jsonl", *cat, "train_time");
  ASSERT_TRUE(other_kind.ok()) << other_kind.error().ToString();
  EXPECT_TRUE(other_kind->cases.empty());
}

// Peer tools' training-time arithmetic: training FLOPs / (GPUs x achieved TFLOP/s). Narayanan
// et al. 2021 (arXiv 2104.04473) Sec. 5.1 with full recompute, 8TP/(nX): GPT-3 175B, 300B
// tokens, 1024 A100s at 140 TFLOP/s -> "about 34 days"; 1T parameters, 450B tokens, 3072 A100s
// at 163 TFLOP/s -> "about 84 days"; one GPT-3 step of 1536 sequences by the paper's eq. 3
// (96BslH^2(1 + s/6h + V/16lh) = 4.51e18 FLOPs) at 140 TFLOP/s on 1024 GPUs: 31.5 s.
TEST(ValidationFormulas, TrainingDaysAtAnAchievedRate) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  const char* cases[] = {
      R"({"id": "gpt3", "kind": "train_time", "metric": "train_days_at_tflops", "measured": 34,
          "model": {"arch": "dense", "params": 175e9, "layers": 96, "hidden": 12288,
                    "heads": 96, "vocab": 51200},
          "hardware": {"gpus": 1024},
          "workload": {"train": {"method": "pretrain", "seq_len": 2048, "recompute": "full",
                                 "tokens": 300e9, "achieved_tflops_per_gpu": 140}}})",
      R"({"id": "1t", "kind": "train_time", "metric": "train_days_at_tflops", "measured": 84,
          "model": {"arch": "dense", "params": 1008e9, "layers": 128, "hidden": 25600,
                    "heads": 160, "vocab": 51200},
          "hardware": {"gpus": 3072},
          "workload": {"train": {"method": "pretrain", "seq_len": 2048, "recompute": "full",
                                 "tokens": 450e9, "achieved_tflops_per_gpu": 163}}})",
      R"({"id": "gpt3-peak-x-eff", "kind": "train_time", "metric": "train_days_at_tflops",
          "measured": 34,
          "model": {"arch": "dense", "params": 175e9, "layers": 96, "hidden": 12288,
                    "heads": 96, "vocab": 51200},
          "hardware": {"gpus": 1024},
          "workload": {"train": {"method": "pretrain", "seq_len": 2048, "recompute": "full",
                                 "tokens": 300e9, "peak_tflops": 312,
                                 "flops_efficiency": 0.4487}}})",
      R"({"id": "gpt3-step", "kind": "train_throughput", "metric": "iteration_s_at_tflops",
          "measured": 31.5,
          "model": {"arch": "dense", "params": 175e9, "layers": 96, "hidden": 12288,
                    "heads": 96, "vocab": 51200},
          "hardware": {"gpus": 1024},
          "workload": {"train": {"method": "pretrain", "seq_len": 2048, "recompute": "full",
                                 "global_batch": 1536, "achieved_tflops_per_gpu": 140}}})",
  };
  std::string text;
  for (const char* c : cases) text += nlohmann::json::parse(c).dump() + "\n";
  auto report = RunValidation(text, "formulas.jsonl", *cat);
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  ASSERT_EQ(report->cases.size(), 4u);
  for (const CaseResult& r : report->cases) {
    ASSERT_TRUE(r.ok) << r.id << ": " << r.reason;
    EXPECT_NEAR(*r.error, 0.0, 0.05) << r.id << " predicted " << *r.predicted;
  }
}

}  // namespace
}  // namespace gpuplan
