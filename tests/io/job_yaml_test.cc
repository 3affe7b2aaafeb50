// Tests of the job file reader (docs/job-yaml.md) and the count/size/duration parsers:
//  - every example job in examples/ parses, with its key values checked;
//  - a full job with every key, and the defaults of a minimal one;
//  - a table of bad jobs -> error code, field ("label:LINE:yaml.path") and message, covering
//    YAML syntax, unknown and misplaced keys, wrong types, ranges, enums, models and the
//    data rule ("train.data: give tokens or samples");
//  - ParseCount / ParseSize / ParseHours tables (good and bad);
//  - TotalTokens (tokens x epochs, samples x seq_len x epochs) and DefaultGlobalBatch
//    (2^20 tokens per step for pretraining: 256 x 4096; 128 full; 16 LoRA; 256 vision);
//  - a config.json beside the job file, found relative to the job file;
//  - no yaml-cpp exception escapes (deep nesting, junk bytes, tabs).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/benchmark.h"
#include "gpuplan/job.h"

#ifndef GPUPLAN_SOURCE_DIR
#define GPUPLAN_SOURCE_DIR ""
#endif

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

bool Has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------------------------
// Examples.

struct ExampleCase {
  const char* file;
  const char* model_name;  // ModelSpec::name of the resolved preset
  TrainMethod method;
  double total_tokens;  // TotalTokens(); vision: samples x epochs x tokens per sample
  int global_batch;     // explicit or DefaultGlobalBatch
};

// Expected values per example, so a changed example or a changed default is noticed.
const ExampleCase kExamples[] = {
    // 52K samples x 2048 x 3 epochs.
    {"llama-7b-lora.yaml", "Llama-2-7B", TrainMethod::kLora, 52e3 * 2048 * 3, 16},
    {"llama-2-13b-full-8gpu.yaml", "Llama-2-13B", TrainMethod::kFull, 4e9, 128},
    // 2^20 / 4096 = 256 sequences per step.
    {"llama-2-70b-pretrain-deadline.yaml", "Llama-2-70B", TrainMethod::kPretrain, 200e9, 256},
    {"qlora-single-gpu.yaml", "Llama-3.1-8B", TrainMethod::kQlora, 1e4 * 2048 * 2, 16},
    {"spot-with-checkpoints.yaml", "", TrainMethod::kFull, 1.5e9, 128},
    // ResNet: a sample is the unit (1 "token" per image).
    {"resnet50-imagenet.yaml", "ResNet-50", TrainMethod::kFull, 1281167.0 * 90, 1024},
    // ViT-B/16 at 224: 14 x 14 patches + class token = 197 tokens per image.
    {"vit-b16-finetune.yaml", "", TrainMethod::kFull, 1e5 * 197 * 10, 256},
    {"china-cny-budget.yaml", "", TrainMethod::kLora, 1e9, 16},
    // MLPerf ResNet: 35.15 epochs of ImageNet to the target (45,037,948 images) plus evaluation of
    // 50,000 images every 4 epochs at a third of a training step's work.
    {"mlperf-resnet.yaml", "ResNet-50", TrainMethod::kFull,
     45037948.0 * (1 + 50000.0 / 5124668 / 3), 3264},  // RCP mean at 3264: 35.15 epochs
};

fs::path ExamplesDir() { return fs::path(GPUPLAN_SOURCE_DIR) / "examples"; }

TEST(JobExamples, EveryExampleParses) {
  ASSERT_STRNE(GPUPLAN_SOURCE_DIR, "") << "the test build defines GPUPLAN_SOURCE_DIR";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(ExamplesDir())) {
    if (e.path().extension() == ".yaml" || e.path().extension() == ".yml")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_GE(files.size(), 7u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    auto job = ParseTrainJobYaml(ReadText(f), f.string());
    ASSERT_TRUE(job.ok()) << job.error().ToString();
    EXPECT_GT(job->TotalTokens(), 0);
    EXPECT_GT(job->global_batch > 0 ? job->global_batch : DefaultGlobalBatch(*job), 0);
    // Each example is listed in kExamples with its expected values.
    bool listed = false;
    for (const auto& c : kExamples) listed = listed || f.filename() == c.file;
    EXPECT_TRUE(listed) << "add " << f.filename() << " to kExamples";
  }
}

TEST(JobExamples, ExpectedValues) {
  for (const auto& c : kExamples) {
    SCOPED_TRACE(c.file);
    fs::path p = ExamplesDir() / c.file;
    ASSERT_TRUE(fs::exists(p));
    auto job = ParseTrainJobYaml(ReadText(p), p.string());
    ASSERT_TRUE(job.ok()) << job.error().ToString();
    if (*c.model_name != '\0') {
      EXPECT_EQ(job->model.name, c.model_name);
    }
    EXPECT_EQ(job->method, c.method);
    EXPECT_NEAR(job->TotalTokens(), c.total_tokens, c.total_tokens * 1e-12);
    int gb = job->global_batch > 0 ? job->global_batch : DefaultGlobalBatch(*job);
    EXPECT_EQ(gb, c.global_batch);
  }
}

TEST(JobExamples, SpecificKeys) {
  auto load = [](const char* name) {
    fs::path p = ExamplesDir() / name;
    return ParseTrainJobYaml(ReadText(p), p.string());
  };
  auto cny = load("china-cny-budget.yaml");
  ASSERT_TRUE(cny.ok()) << cny.error().ToString();
  EXPECT_EQ(cny->currency, Currency::kCny);
  ASSERT_TRUE(cny->budget.has_value());
  EXPECT_DOUBLE_EQ(*cny->budget, 30000);
  EXPECT_EQ(cny->clouds, (std::vector<std::string>{"alibaba", "tencent"}));
  EXPECT_EQ(cny->regions, (std::vector<std::string>{"cn-hangzhou", "ap-guangzhou"}));
  EXPECT_EQ(cny->lora_rank, 32);

  auto spot = load("spot-with-checkpoints.yaml");
  ASSERT_TRUE(spot.ok()) << spot.error().ToString();
  EXPECT_TRUE(spot->spot_allowed);
  EXPECT_NEAR(spot->checkpoint_interval_hours, 20.0 / 60.0, 1e-12);
  ASSERT_TRUE(spot->deadline_hours.has_value());
  EXPECT_DOUBLE_EQ(*spot->deadline_hours, 72);

  auto b16 = load("llama-2-13b-full-8gpu.yaml");
  ASSERT_TRUE(b16.ok()) << b16.error().ToString();
  EXPECT_EQ(b16->max_nodes, 1);
  EXPECT_EQ(b16->host_policy, SizingPolicy::kGuideB);
  EXPECT_EQ(b16->objective, Objective::kTime);
  EXPECT_EQ(b16->gpus, (std::vector<std::string>{"H100", "H200"}));

  auto pre = load("llama-2-70b-pretrain-deadline.yaml");
  ASSERT_TRUE(pre.ok()) << pre.error().ToString();
  ASSERT_TRUE(pre->deadline_hours.has_value());
  EXPECT_DOUBLE_EQ(*pre->deadline_hours, 21 * 24);
  EXPECT_DOUBLE_EQ(pre->dataset.value(), 800e9);
  EXPECT_EQ(pre->objective, Objective::kPareto);
  EXPECT_EQ(pre->top, 10);

  auto vit = load("vit-b16-finetune.yaml");
  ASSERT_TRUE(vit.ok()) << vit.error().ToString();
  EXPECT_DOUBLE_EQ(vit->dataset.value(), 12.0 * 1073741824.0);
  EXPECT_EQ(vit->precision, Precision::kFp16);

  auto ql = load("qlora-single-gpu.yaml");
  ASSERT_TRUE(ql.ok()) << ql.error().ToString();
  EXPECT_EQ(ql->optimizer, Optimizer::kAdamW8bit);
  EXPECT_EQ(ql->lora_rank, 64);
}

// ---------------------------------------------------------------------------------------------
// A full job and the defaults.

TEST(JobYaml, EveryKey) {
  const char* yaml = R"(model: llama-2-13b
train:
  method: full
  precision: fp16
  optimizer: lion
  seq_len: 2048
  global_batch: 64
  data:
    tokens: 2B
    epochs: 1.5
    dataset_size: 800GB
  checkpoint_every: 90m
constraints:
  deadline: 48h
  budget: 5,000
  currency: usd
  clouds: [AWS, gcp, aws]
  regions: us-east-1
  gpus: [H100, A100-80GB]
  spot: yes
  max_nodes: 16
  headroom: 85%
objective: pareto
host_policy: guide-a
top: 7
)";
  auto job = ParseTrainJobYaml(yaml, "full.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->model_arg, "llama-2-13b");
  EXPECT_EQ(job->model.name, "Llama-2-13B");
  EXPECT_EQ(job->method, TrainMethod::kFull);
  EXPECT_EQ(job->precision, Precision::kFp16);
  EXPECT_EQ(job->optimizer, Optimizer::kLion);
  EXPECT_EQ(job->seq_len, 2048);
  EXPECT_EQ(job->global_batch, 64);
  EXPECT_DOUBLE_EQ(job->tokens, 2e9);
  EXPECT_DOUBLE_EQ(job->samples, 0);
  EXPECT_DOUBLE_EQ(job->epochs, 1.5);
  EXPECT_DOUBLE_EQ(job->TotalTokens(), 3e9);
  EXPECT_DOUBLE_EQ(job->dataset.value(), 8e11);
  EXPECT_DOUBLE_EQ(job->checkpoint_interval_hours, 1.5);
  EXPECT_EQ(job->deadline_hours, 48.0);
  EXPECT_EQ(job->budget, 5000.0);
  EXPECT_EQ(job->currency, Currency::kUsd);
  EXPECT_EQ(job->clouds, (std::vector<std::string>{"aws", "gcp"}));  // lower-cased, deduplicated
  EXPECT_EQ(job->regions, (std::vector<std::string>{"us-east-1"}));  // a scalar is one item
  EXPECT_EQ(job->gpus, (std::vector<std::string>{"H100", "A100-80GB"}));
  EXPECT_TRUE(job->spot_allowed);
  EXPECT_EQ(job->max_nodes, 16);
  EXPECT_DOUBLE_EQ(job->headroom, 0.85);
  EXPECT_EQ(job->objective, Objective::kPareto);
  EXPECT_EQ(job->host_policy, SizingPolicy::kGuideA);
  EXPECT_EQ(job->top, 7);
}

TEST(JobYaml, Defaults) {
  auto job = ParseTrainJobYaml("model: llama-2-7b\ntrain:\n  data:\n    tokens: 1B\n", "min.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  TrainJobSpec d;
  EXPECT_EQ(job->method, TrainMethod::kFull);
  EXPECT_EQ(job->precision, Precision::kBf16);
  EXPECT_EQ(job->optimizer, Optimizer::kAdamW);
  EXPECT_EQ(job->lora_rank, d.lora_rank);
  EXPECT_EQ(job->seq_len, 0);       // family default, resolved by consumers
  EXPECT_EQ(job->global_batch, 0);  // DefaultGlobalBatch
  EXPECT_DOUBLE_EQ(job->epochs, 1);
  EXPECT_DOUBLE_EQ(job->dataset.value(), 0);
  EXPECT_FALSE(job->deadline_hours.has_value());
  EXPECT_FALSE(job->budget.has_value());
  EXPECT_EQ(job->currency, Currency::kUsd);
  EXPECT_TRUE(job->clouds.empty());
  EXPECT_TRUE(job->regions.empty());
  EXPECT_TRUE(job->gpus.empty());
  EXPECT_FALSE(job->spot_allowed);
  EXPECT_DOUBLE_EQ(job->checkpoint_interval_hours, d.checkpoint_interval_hours);
  EXPECT_EQ(job->objective, Objective::kCost);
  EXPECT_EQ(job->host_policy, SizingPolicy::kDefault);
  EXPECT_DOUBLE_EQ(job->headroom, d.headroom);
  EXPECT_EQ(job->max_nodes, d.max_nodes);
  EXPECT_EQ(job->top, d.top);
}

TEST(JobYaml, SmallForms) {
  struct Case {
    const char* name;
    const char* yaml;
    double budget;
    Currency currency;
  };
  const char* base = "model: llama-2-7b\ntrain:\n  data: {tokens: 1B}\n";
  const Case cases[] = {
      {"yen symbol sets CNY", "constraints: {budget: ¥30000}", 30000, Currency::kCny},
      {"fullwidth yen", "constraints: {budget: ￥30000}", 30000, Currency::kCny},
      {"code suffix", "constraints: {budget: 30000 CNY}", 30000, Currency::kCny},
      {"dollar with K", "constraints: {budget: $5K}", 5000, Currency::kUsd},
      {"symbol agrees with currency", "constraints: {budget: ¥100, currency: CNY}", 100,
       Currency::kCny},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto job = ParseTrainJobYaml(std::string(base) + c.yaml + "\n", "s.yaml");
    ASSERT_TRUE(job.ok()) << job.error().ToString();
    EXPECT_EQ(job->budget, c.budget);
    EXPECT_EQ(job->currency, c.currency);
  }
  for (const char* off : {"0", "none", "off", "never"}) {
    SCOPED_TRACE(off);
    auto job = ParseTrainJobYaml(std::string("model: llama-2-7b\ntrain:\n  checkpoint_every: ") +
                                     off + "\n  data: {tokens: 1B}\n",
                                 "s.yaml");
    ASSERT_TRUE(job.ok()) << job.error().ToString();
    EXPECT_DOUBLE_EQ(job->checkpoint_interval_hours, 0);
  }
  // A key with no value (or ~) keeps the default.
  auto job = ParseTrainJobYaml(
      "model: llama-2-7b\ntrain:\n  seq_len: ~\n  data: {tokens: 1B}\n"
      "constraints:\nobjective:\n",
      "s.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->seq_len, 0);
  EXPECT_EQ(job->objective, Objective::kCost);
  // Aliases accepted by the shared enum parsers.
  job = ParseTrainJobYaml(
      "model: llama-2-7b\ntrain:\n  method: SFT\n  precision: bfloat16\n  data: {samples: 1M}\n"
      "objective: fastest\n",
      "s.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->method, TrainMethod::kFull);
  EXPECT_EQ(job->precision, Precision::kBf16);
  EXPECT_EQ(job->objective, Objective::kTime);
}

// ---------------------------------------------------------------------------------------------
// Bad jobs.

struct BadCase {
  const char* name;
  const char* yaml;
  ErrorCode code;
  const char* field;    // exact
  const char* message;  // substring
  const char* hint;     // substring ("" = not checked)
};

// Lines: the snippets start at line 1 of "t.yaml".
const BadCase kBad[] = {
    // --- YAML syntax and document shape
    {"empty file", "", ErrorCode::kInvalidArgument, "t.yaml", "is empty", "model:"},
    {"only a comment", "# nothing\n", ErrorCode::kInvalidArgument, "t.yaml", "is empty", ""},
    {"unclosed flow list", "model: llama-2-7b\ntrain:\n  data: {tokens: [1B\n", ErrorCode::kParse,
     "t.yaml:4", "invalid YAML", "indentation"},
    {"tab indentation", "model: llama-2-7b\ntrain:\n\tdata: 1\n", ErrorCode::kParse, "t.yaml:3",
     "invalid YAML", ""},
    {"bad mapping", "model: llama-2-7b\ntrain: a: b\n", ErrorCode::kParse, "t.yaml:2",
     "invalid YAML", ""},
    {"two documents", "model: llama-2-7b\n---\nmodel: llama-2-13b\n", ErrorCode::kParse, "t.yaml:3",
     "2 YAML documents", "one job per file"},
    {"top is a list", "- model: llama-2-7b\n", ErrorCode::kInvalidArgument, "t.yaml:1",
     "expected a map of keys, got a list", ""},
    {"top is a scalar", "llama-2-7b\n", ErrorCode::kInvalidArgument, "t.yaml:1",
     "expected a map of keys", ""},
    {"complex key", "? [a, b]\n: 1\n", ErrorCode::kInvalidArgument, "t.yaml:1",
     "expected a key name, got a list", ""},
    {"duplicate key", "model: llama-2-7b\nmodel: llama-2-13b\n", ErrorCode::kInvalidArgument,
     "t.yaml:2:model", "duplicate key (first given on line 1)", ""},
    // --- unknown and misplaced keys
    {"unknown top key", "model: llama-2-7b\nobjectve: cost\n", ErrorCode::kInvalidArgument,
     "t.yaml:2:objectve", "unknown key \"objectve\" at the top level",
     "did you mean \"objective\""},
    {"unknown train key", "model: llama-2-7b\ntrain:\n  seqlen: 4096\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seqlen", "unknown key \"seqlen\" in train",
     "did you mean \"seq_len\""},
    {"unknown data key", "model: llama-2-7b\ntrain:\n  data:\n    token: 1B\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.data.token", "unknown key", "\"tokens\""},
    {"unknown constraint key far from any", "model: llama-2-7b\nconstraints:\n  zzzzzzzz: 1\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:constraints.zzzzzzzz", "unknown key",
     "known keys: deadline"},
    {"deadline under train", "model: llama-2-7b\ntrain:\n  deadline: 48h\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.deadline", "unknown key",
     "belongs under constraints:"},
    {"epochs under train", "model: llama-2-7b\ntrain:\n  epochs: 3\n", ErrorCode::kInvalidArgument,
     "t.yaml:3:train.epochs", "unknown key", "belongs under train.data:"},
    {"objective under constraints", "model: llama-2-7b\nconstraints:\n  objective: cost\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:constraints.objective", "unknown key",
     "belongs at the top level"},
    // --- model
    {"missing model", "train:\n  data: {tokens: 1B}\n", ErrorCode::kInvalidArgument,
     "t.yaml:1:model", "is missing", "llama-2-7b"},
    {"empty model", "model:\ntrain:\n  data: {tokens: 1B}\n", ErrorCode::kInvalidArgument,
     "t.yaml:1:model", "is empty", ""},
    {"model is a list", "model: [a, b]\n", ErrorCode::kInvalidArgument, "t.yaml:1:model",
     "expected one value, got a list", "model: 4"},
    {"unknown model", "train:\n  data: {tokens: 1B}\nmodel: llama-2-7bb\n", ErrorCode::kNotFound,
     "t.yaml:3:model", "unknown model \"llama-2-7bb\"", "did you mean"},
    {"missing model file", "model: ./nope/config.json\n", ErrorCode::kNotFound, "t.yaml:1:model",
     "unknown model", ""},
    // --- data rule
    {"no train", "model: llama-2-7b\n", ErrorCode::kInvalidArgument, "t.yaml:1:train.data",
     "give tokens or samples", "tokens: 2B"},
    {"train without data", "model: llama-2-7b\ntrain:\n  method: lora\n",
     ErrorCode::kInvalidArgument, "t.yaml:2:train.data", "give tokens or samples", ""},
    {"data without counts", "model: llama-2-7b\ntrain:\n  data:\n    epochs: 3\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.data", "give tokens or samples", ""},
    {"empty data", "model: llama-2-7b\ntrain:\n  data:\n", ErrorCode::kInvalidArgument,
     "t.yaml:3:train.data", "give tokens or samples", ""},
    {"both tokens and samples",
     "model: llama-2-7b\ntrain:\n  data:\n    tokens: 1B\n"
     "    samples: 1000\n",
     ErrorCode::kInvalidArgument, "t.yaml:5:train.data.samples", "not both", ""},
    {"data is a list", "model: llama-2-7b\ntrain:\n  data: [1B]\n", ErrorCode::kInvalidArgument,
     "t.yaml:3:train.data", "expected a map of keys, got a list", "under `data:`"},
    {"train is a scalar", "model: llama-2-7b\ntrain: lora\n", ErrorCode::kInvalidArgument,
     "t.yaml:2:train", "expected a map of keys, got \"lora\"", ""},
    // --- counts, sizes, durations in context
    {"zero tokens", "model: llama-2-7b\ntrain:\n  data: {tokens: 0}\n", ErrorCode::kInvalidArgument,
     "t.yaml:3:train.data.tokens", "must be > 0, got 0", ""},
    {"negative tokens", "model: llama-2-7b\ntrain:\n  data:\n    tokens: -2B\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.data.tokens", "must be > 0, got -2B", ""},
    {"tokens in bytes", "model: llama-2-7b\ntrain:\n  data:\n    tokens: 800GB\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.data.tokens", "expected a count",
     "size in bytes"},
    {"tokens is a map", "model: llama-2-7b\ntrain:\n  data:\n    tokens: {a: 1}\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.data.tokens", "expected one value, got a map",
     ""},
    {"decimal comma", "model: llama-2-7b\ntrain:\n  data:\n    samples: 1,5M\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.data.samples", "expected a count", ""},
    {"zero epochs", "model: llama-2-7b\ntrain:\n  data: {tokens: 1B, epochs: 0}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.data.epochs", "must be > 0", ""},
    {"epochs text", "model: llama-2-7b\ntrain:\n  data: {tokens: 1B, epochs: three}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.data.epochs", "expected a number, got \"three\"",
     ""},
    {"bad dataset size",
     "model: llama-2-7b\ntrain:\n  data:\n    tokens: 1B\n"
     "    dataset_size: 800 bananas\n",
     ErrorCode::kInvalidArgument, "t.yaml:5:train.data.dataset_size", "expected a size", "GiB"},
    {"zero dataset size", "model: llama-2-7b\ntrain:\n  data: {tokens: 1B, dataset_size: 0GB}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.data.dataset_size", "must be > 0", ""},
    {"bad checkpoint interval",
     "model: llama-2-7b\ntrain:\n  checkpoint_every: hourly\n"
     "  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.checkpoint_every", "expected a duration", ""},
    // --- integers
    {"negative seq_len", "model: llama-2-7b\ntrain:\n  seq_len: -4\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seq_len", "must be >= 1, got -4", ""},
    {"seq_len with K", "model: llama-2-7b\ntrain:\n  seq_len: 4K\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seq_len", "expected a whole number", "4096"},
    {"fractional seq_len", "model: llama-2-7b\ntrain:\n  seq_len: 1024.5\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seq_len", "expected a whole number", ""},
    {"seq_len beyond context", "model: llama-2-7b\ntrain:\n  seq_len: 8192\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seq_len",
     "exceeds Llama-2-7B's context of 4096 tokens", ""},
    {"huge seq_len", "model: llama-2-7b\ntrain:\n  seq_len: 1e12\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seq_len", "must be <= 2147483647", ""},
    {"zero global batch", "model: llama-2-7b\ntrain:\n  global_batch: 0\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.global_batch", "must be >= 1, got 0", ""},
    {"lora_rank without lora", "model: llama-2-7b\ntrain:\n  lora_rank: 64\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.lora_rank", "got method full", "method: lora"},
    {"zero lora_rank",
     "model: llama-2-7b\ntrain:\n  method: lora\n  lora_rank: 0\n"
     "  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.lora_rank", "must be >= 1", ""},
    {"zero max_nodes",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  max_nodes: 0\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.max_nodes", "must be >= 1, got 0", ""},
    {"zero top", "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\ntop: 0\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:top", "must be >= 1, got 0", ""},
    // --- enums
    {"unknown method", "model: llama-2-7b\ntrain:\n  method: lorra\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.method", "unknown method \"lorra\"",
     "did you mean \"lora\""},
    {"unknown precision", "model: llama-2-7b\ntrain:\n  precision: bf17\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.precision", "unknown precision", "bf16"},
    {"int4 precision", "model: llama-2-7b\ntrain:\n  precision: int4\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.precision",
     "must be bf16, fp16, fp8, fp4 or fp32, got \"int4\"", "qlora"},
    {"unknown optimizer", "model: llama-2-7b\ntrain:\n  optimizer: adamx\n  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.optimizer", "unknown optimizer", "adam"},
    {"unknown objective", "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nobjective: cheap\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:objective", "unknown objective \"cheap\"", "cost"},
    {"unknown host policy",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nhost_policy: guide-c\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:host_policy", "unknown host_policy", "guide-"},
    {"unknown currency",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  currency: EUR\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.currency", "unknown currency \"EUR\"",
     "USD or CNY"},
    {"spot not a bool",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  spot: maybe\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.spot", "expected true or false", ""},
    {"marketplace not a bool",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  marketplace: never\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.marketplace", "expected true or false", ""},
    // --- constraints
    {"zero deadline",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  deadline: 0h\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.deadline", "must be > 0", ""},
    {"deadline words",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  deadline: tomorrow\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.deadline", "expected a duration",
     "a bare number is hours"},
    {"negative budget",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  budget: -5\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.budget", "must be > 0, got -5", ""},
    {"budget text",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  budget: lots\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.budget", "expected an amount", "CNY"},
    {"negative deadline",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  deadline: -3d\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.deadline", "must be > 0, got -3d", ""},
    {"negative checkpoint interval",
     "model: llama-2-7b\ntrain:\n  checkpoint_every: -1h\n"
     "  data: {tokens: 1B}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.checkpoint_every", "must be >= 0", ""},
    {"zero budget",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  budget: 0\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.budget", "must be > 0", ""},
    {"budget currency conflict",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  currency: USD\n  budget: ¥100\n",
     ErrorCode::kInvalidArgument, "t.yaml:5:constraints.budget",
     "is in CNY but constraints.currency is USD", "currency: CNY"},
    {"two currencies in budget",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  budget: $100 CNY\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.budget", "names two currencies", ""},
    {"headroom above 1",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  headroom: 1.2\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.headroom", "must be in (0, 1], got 1.2",
     "80%"},
    {"headroom zero",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  headroom: 0\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.headroom", "must be in (0, 1]", ""},
    {"headroom as percent number",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\n"
     "constraints:\n  headroom: 80\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.headroom", "must be in (0, 1], got 80", ""},
    {"clouds is a map",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  clouds: {aws: 1}\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.clouds", "expected a list of names", ""},
    {"nested cloud list",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  clouds:\n    - aws\n    - [gcp]\n",
     ErrorCode::kInvalidArgument, "t.yaml:6:constraints.clouds[1]", "expected a name, got a list",
     ""},
    {"empty region",
     "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n"
     "  regions: [us-east-1, \"\"]\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:constraints.regions[1]", "is empty", ""},
    {"constraints is a list", "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints: [a]\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:constraints", "expected a map of keys", ""},
    // --- vision
    {"vision with tokens", "model: resnet-50\ntrain:\n  data:\n    tokens: 1B\n",
     ErrorCode::kInvalidArgument, "t.yaml:4:train.data.tokens", "trains on samples, not tokens",
     "samples"},
    {"vision with seq_len", "model: vit-b-16\ntrain:\n  seq_len: 197\n  data: {samples: 1M}\n",
     ErrorCode::kInvalidArgument, "t.yaml:3:train.seq_len", "does not apply to vit models", ""},
    {"lora on a CNN", "model: resnet-50\ntrain:\n  method: lora\n  data: {samples: 1M}\n",
     ErrorCode::kUnsupported, "t.yaml:3:train.method", "is a CNN", "method: full"},
};

TEST(JobYaml, BadJobs) {
  for (const auto& c : kBad) {
    SCOPED_TRACE(c.name);
    auto job = ParseTrainJobYaml(c.yaml, "t.yaml");
    ASSERT_FALSE(job.ok()) << "parsed: " << c.yaml;
    const Error& e = job.error();
    EXPECT_EQ(e.code, c.code) << ErrorCodeName(e.code) << ": " << e.ToString();
    EXPECT_EQ(e.field, c.field) << e.ToString();
    EXPECT_TRUE(Has(e.message, c.message)) << e.ToString();
    if (*c.hint != '\0') {
      EXPECT_TRUE(Has(e.hint, c.hint)) << e.ToString();
    }
  }
}

TEST(JobYaml, EmptyLabel) {
  auto job = ParseTrainJobYaml("model: llama-2-7b\ntrain:\n  seq_len: 0\n", "");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "<yaml>:3:train.seq_len");
}

// yaml-cpp throws on these; none of it may escape.
TEST(JobYaml, NoExceptionEscapes) {
  std::vector<std::string> inputs = {
      std::string(20000, '['),
      std::string(20000, '{'),
      "model: &a [*a]\n",
      "model: *undefined\n",
      "model: !!binary 12\n",
      std::string("\xff\xfe\x00\x01model: x", 12),
      "model: \"unterminated\n",
      "%YAML 9.9\n---\nmodel: a\n",
      ":\n",
      "- - - - -\n",
  };
  for (const auto& in : inputs) {
    SCOPED_TRACE(in.substr(0, 40));
    Result<TrainJobSpec> job = TrainJobSpec{};
    EXPECT_NO_THROW(job = ParseTrainJobYaml(in, "x.yaml"));
    EXPECT_FALSE(job.ok());
    if (!job.ok()) {
      EXPECT_NE(job.error().code, ErrorCode::kInternal) << job.error().ToString();
      EXPECT_EQ(job.error().field.rfind("x.yaml", 0), 0u) << job.error().ToString();
    }
  }
}

// constraints.marketplace: false drops marketplace listings; the default ranks them.
TEST(JobYaml, MarketplaceConstraint) {
  auto on = ParseTrainJobYaml("model: llama-2-7b\ntrain: {data: {tokens: 1B}}\n", "t.yaml");
  ASSERT_TRUE(on.ok()) << on.error().ToString();
  EXPECT_TRUE(on->marketplace);
  auto off = ParseTrainJobYaml(
      "model: llama-2-7b\ntrain: {data: {tokens: 1B}}\nconstraints:\n  marketplace: false\n",
      "t.yaml");
  ASSERT_TRUE(off.ok()) << off.error().ToString();
  EXPECT_FALSE(off->marketplace);
}

// A job file beside its config.json names it relative to itself, from any working directory.
TEST(JobYaml, ModelPathRelativeToJobFile) {
  fs::path dir = fs::temp_directory_path() / ("gpuplan_job_yaml_" + std::to_string(::getpid()));
  fs::create_directories(dir / "my-model");
  std::string cfg = ReadText(fs::path(GPUPLAN_SOURCE_DIR) / "data" / "models" / "llama-2-7b.json");
  ASSERT_FALSE(cfg.empty());
  { std::ofstream(dir / "my-model" / "config.json") << cfg; }
  std::string yaml = "model: my-model/config.json\ntrain:\n  method: lora\n  data: {samples: 1K}\n";
  { std::ofstream(dir / "job.yaml") << yaml; }
  auto job = ParseTrainJobYaml(yaml, (dir / "job.yaml").string());
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->model_arg, "my-model/config.json");  // as given
  EXPECT_EQ(job->model.layers, 32);
  EXPECT_EQ(job->model.hidden, 4096);
  // The folder alone works too (ResolveModel finds config.json inside).
  yaml = "model: my-model\ntrain:\n  data: {tokens: 1M}\n";
  job = ParseTrainJobYaml(yaml, (dir / "job.yaml").string());
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->model.layers, 32);
  // A broken config.json reports the config file, not the job file.
  { std::ofstream(dir / "my-model" / "config.json") << "{\"model_type\": "; }
  yaml = "model: my-model/config.json\ntrain:\n  data: {tokens: 1M}\n";
  job = ParseTrainJobYaml(yaml, (dir / "job.yaml").string());
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(Has(job.error().field, "config.json")) << job.error().ToString();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// ---------------------------------------------------------------------------------------------
// Count, size and duration parsers.

struct NumberCase {
  const char* in;
  double want;
};

TEST(ParseCount, Good) {
  const NumberCase cases[] = {
      {"2T", 2e12},       {"500B", 5e11},    {"1.5M", 1.5e6},
      {"50000", 5e4},     {"50,000", 5e4},   {"1,281,167", 1281167},
      {"1_000_000", 1e6}, {"2e12", 2e12},    {"1e9", 1e9},
      {"100k", 1e5},      {"100K", 1e5},     {"3G", 3e9},
      {"7bn", 7e9},       {" 42 ", 42},      {"2 B", 2e9},
      {"0", 0},           {"0.5", 0.5},      {"+12", 12},
      {"$5000", 5000},    {"¥30000", 30000}, {"￥30000", 30000},
      {"US$1.5K", 1500},  {".5M", 5e5},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto v = ParseCount(c.in, "--tokens");
    ASSERT_TRUE(v.ok()) << v.error().ToString();
    EXPECT_DOUBLE_EQ(*v, c.want);
  }
}

TEST(ParseCount, Bad) {
  const char* cases[] = {"",     "abc",    "2X",       "800GB", "1.2TB", "-5",    "-2B",
                         "1,5M", "1,0000", "1234,567", "inf",   "nan",   "1e999", "2B2",
                         "M",    "0x10",   "1__0",     "_1",    "5 000", "$-5"};
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    auto v = ParseCount(c, "--tokens");
    ASSERT_FALSE(v.ok()) << *v;
    EXPECT_EQ(v.error().field, "--tokens");
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument);
    EXPECT_TRUE(Has(v.error().message, "\"")) << v.error().ToString();  // quotes what it got
  }
  auto bytes = ParseCount("800GB", "f");
  ASSERT_FALSE(bytes.ok());
  EXPECT_TRUE(Has(bytes.error().hint, "size in bytes"));
  auto neg = ParseCount("-5", "f");
  ASSERT_FALSE(neg.ok());
  EXPECT_TRUE(Has(neg.error().message, "must be >= 0"));
}

TEST(ParseSize, Good) {
  const NumberCase cases[] = {
      {"800GB", 8e11},
      {"800 GB", 8e11},
      {"1.2TB", 1.2e12},
      {"64GiB", 64.0 * 1073741824.0},
      {"64gib", 64.0 * 1073741824.0},
      {"512MiB", 512.0 * 1048576.0},
      {"2TiB", 2.0 * 1099511627776.0},
      {"1PB", 1e15},
      {"10KB", 1e4},
      {"1KiB", 1024},
      {"100", 100},
      {"100B", 100},
      {"5G", 5e9},
      {"4Gi", 4.0 * 1073741824.0},
      {"1,000GB", 1e12},
      {"0", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto v = ParseSize(c.in, "--dataset-size");
    ASSERT_TRUE(v.ok()) << v.error().ToString();
    EXPECT_DOUBLE_EQ(v->value(), c.want);
  }
}

TEST(ParseSize, Bad) {
  const char* cases[] = {"",     "GB",      "800 bananas", "-1GB",       "1.2.3GB",
                         "12XB", "1e999GB", "GB800",       "10 GB extra"};
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    auto v = ParseSize(c, "--dataset-size");
    ASSERT_FALSE(v.ok()) << v->value();
    EXPECT_EQ(v.error().field, "--dataset-size");
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(ParseHours, Good) {
  const NumberCase cases[] = {
      {"48h", 48},   {"3d", 72},     {"90m", 1.5},    {"1h30m", 1.5},   {"1h 30m", 1.5},
      {"1d12h", 36}, {"2w", 336},    {"3600s", 1},    {"48", 48},       {"0.5", 0.5},
      {"1.5h", 1.5}, {"2 days", 48}, {"45min", 0.75}, {"10 hours", 10}, {"0", 0},
      {"2H", 2},     {"+4h", 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    auto v = ParseHours(c.in, "--deadline");
    ASSERT_TRUE(v.ok()) << v.error().ToString();
    EXPECT_NEAR(*v, c.want, 1e-12);
  }
}

TEST(ParseHours, Bad) {
  const char* cases[] = {"",       "h",   "tomorrow", "-1h",  "48x", "3 fortnights",
                         "1h-30m", "inf", "1e999h",   "1:30", "h48", "1h30"};
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    auto v = ParseHours(c, "--deadline");
    ASSERT_FALSE(v.ok()) << *v;
    EXPECT_EQ(v.error().field, "--deadline");
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument);
  }
}

// ---------------------------------------------------------------------------------------------
// Derived quantities.

TrainJobSpec JobFor(const char* preset, TrainMethod method) {
  const ModelSpec* m = FindPreset(preset);
  EXPECT_NE(m, nullptr) << preset;
  TrainJobSpec j;
  if (m != nullptr) j.model = *m;
  j.model_arg = preset;
  j.method = method;
  return j;
}

TEST(TrainJobSpec, TotalTokens) {
  struct Case {
    const char* name;
    const char* preset;
    double tokens, samples, epochs;
    int seq_len;
    double want;
  };
  const Case cases[] = {
      {"tokens x epochs", "llama-2-7b", 2e9, 0, 3, 0, 6e9},
      {"tokens ignore seq_len", "llama-2-7b", 2e9, 0, 1, 1024, 2e9},
      {"samples x seq_len x epochs", "llama-2-7b", 0, 50000, 3, 2048, 50000.0 * 2048 * 3},
      {"samples x default seq_len (4096)", "llama-2-7b", 0, 1000, 1, 0, 1000.0 * 4096},
      // Llama-3.1-8B's context is 131072; the default stays 4096.
      {"long-context default", "llama-3.1-8b", 0, 1000, 1, 0, 1000.0 * 4096},
      // BERT's context is 512: the default is capped.
      {"default capped by context", "bert-base-uncased", 0, 1000, 2, 0, 1000.0 * 512 * 2},
      {"fractional epochs", "llama-2-7b", 1e9, 0, 0.5, 0, 5e8},
      {"ViT: patches + class token", "vit-b-16", 0, 1000, 1, 0, 1000.0 * 197},
      {"CNN: one per sample", "resnet-50", 0, 1.28e6, 90, 0, 1.28e6 * 90},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TrainJobSpec j = JobFor(c.preset, TrainMethod::kFull);
    j.tokens = c.tokens;
    j.samples = c.samples;
    j.epochs = c.epochs;
    j.seq_len = c.seq_len;
    EXPECT_DOUBLE_EQ(j.TotalTokens(), c.want);
  }
}

TEST(TrainJobSpec, DefaultGlobalBatch) {
  struct Case {
    const char* name;
    const char* preset;
    TrainMethod method;
    int seq_len;
    int want;
  };
  const Case cases[] = {
      // 2^20 tokens per step.
      {"pretrain at 4096", "llama-2-7b", TrainMethod::kPretrain, 4096, 256},
      {"pretrain at default seq_len", "llama-2-70b", TrainMethod::kPretrain, 0, 256},
      {"pretrain at 2048", "llama-2-7b", TrainMethod::kPretrain, 2048, 512},
      {"pretrain at 8192", "llama-3.1-8b", TrainMethod::kPretrain, 8192, 128},
      {"pretrain at 3000 rounds", "llama-2-7b", TrainMethod::kPretrain, 3000, 350},
      {"pretrain never below 1", "llama-3.1-8b", TrainMethod::kPretrain, 4194304, 1},
      {"full fine-tune", "llama-2-13b", TrainMethod::kFull, 4096, 128},
      {"full fine-tune any seq_len", "llama-2-13b", TrainMethod::kFull, 512, 128},
      {"lora", "llama-2-7b", TrainMethod::kLora, 2048, 16},
      {"qlora", "llama-3.1-8b", TrainMethod::kQlora, 0, 16},
      {"vision cnn", "resnet-50", TrainMethod::kFull, 0, 256},
      {"vision vit pretrain", "vit-b-16", TrainMethod::kPretrain, 0, 256},
      {"vision vit lora", "vit-b-16", TrainMethod::kLora, 0, 256},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TrainJobSpec j = JobFor(c.preset, c.method);
    j.seq_len = c.seq_len;
    EXPECT_EQ(DefaultGlobalBatch(j), c.want);
  }
}

// Pretraining batches grow with the cluster: 16,384 tokens per GPU between 1M and 16M tokens per
// step (published recipes: 1M at 64 GPUs, 8M at 512, 16M at 16K); other methods do not scale.
TEST(TrainJobSpec, DefaultGlobalBatchGrowsWithTheCluster) {
  TrainJobSpec j = JobFor("llama-2-7b", TrainMethod::kPretrain);
  j.seq_len = 4096;
  EXPECT_EQ(DefaultGlobalBatch(j, 0), 256);  // cluster not chosen: the 1M floor
  EXPECT_EQ(DefaultGlobalBatch(j, 8), 256);
  EXPECT_EQ(DefaultGlobalBatch(j, 64), 256);
  EXPECT_EQ(DefaultGlobalBatch(j, 256), 1024);   // 4M tokens
  EXPECT_EQ(DefaultGlobalBatch(j, 512), 2048);   // 8M
  EXPECT_EQ(DefaultGlobalBatch(j, 1024), 4096);  // 16M, the cap
  EXPECT_EQ(DefaultGlobalBatch(j, 16384), 4096);
  // ... up to the compute-optimal batch of the run (DeepSeek LLM: 0.292 C^0.3271 tokens):
  // Llama-3.2-1B on 100B tokens, ~2M tokens, on any cluster; 70B on 2T tokens keeps the 16M cap.
  TrainJobSpec small = JobFor("llama-3.2-1b", TrainMethod::kPretrain);
  small.seq_len = 4096;
  small.tokens = 100e9;
  const double n = static_cast<double>(CountParams(small.model).active);
  const double want = 0.2920 * std::pow(6.0 * n * 100e9, 0.3271) / 4096;
  EXPECT_NEAR(DefaultGlobalBatch(small, 1024), want, 1.0);
  EXPECT_EQ(DefaultGlobalBatch(small, 8), 256);  // the 1M floor
  TrainJobSpec big = JobFor("llama-2-70b", TrainMethod::kPretrain);
  big.seq_len = 4096;
  big.tokens = 2e12;
  EXPECT_EQ(DefaultGlobalBatch(big, 1024), 4096);
  TrainJobSpec lora = JobFor("llama-2-7b", TrainMethod::kLora);
  EXPECT_EQ(DefaultGlobalBatch(lora, 1024), 16);
  TrainJobSpec full = JobFor("llama-2-13b", TrainMethod::kFull);
  EXPECT_EQ(DefaultGlobalBatch(full, 1024), 128);
}

TEST(Objective, NamesRoundTrip) {
  for (Objective o : {Objective::kCost, Objective::kTime, Objective::kPareto}) {
    auto p = ParseObjective(ObjectiveName(o));
    ASSERT_TRUE(p.has_value()) << ObjectiveName(o);
    EXPECT_EQ(*p, o);
  }
  EXPECT_EQ(ParseObjective("COST"), Objective::kCost);
  EXPECT_EQ(ParseObjective(" pareto "), Objective::kPareto);
  EXPECT_FALSE(ParseObjective("cheap").has_value());
  EXPECT_FALSE(ParseObjective("").has_value());
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {

// train.data.benchmark: the run-to-target data of data/benchmarks.csv, with evaluation passes
// as training-sample equivalents.
TEST(JobYaml, BenchmarkSetsSamplesToTarget) {
  const TrainBenchmark* b = FindTrainBenchmark("mlperf/resnet");
  ASSERT_NE(b, nullptr);
  auto job = ParseTrainJobYaml(
      "model: resnet-50\ntrain:\n  global_batch: 3264\n  data: {benchmark: mlperf/resnet}\n",
      "b.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->benchmark, "mlperf/resnet");
  const double want = b->samples_to_target * (1 + b->eval_samples / b->eval_every_samples / 3.0);
  EXPECT_DOUBLE_EQ(job->samples, b->samples_per_epoch);
  EXPECT_NEAR(job->samples * job->epochs, want, want * 1e-12);
  // A larger batch needs more samples (batch_exponent > 0).
  auto big = ParseTrainJobYaml(
      "model: resnet-50\ntrain:\n  global_batch: 65536\n  data: {benchmark: resnet}\n", "b.yaml");
  ASSERT_TRUE(big.ok()) << big.error().ToString();
  EXPECT_GT(big->samples * big->epochs, job->samples * job->epochs * 1.2);
  // LoRA evaluates at half a training step's work per sample.
  const TrainBenchmark* l = FindTrainBenchmark("llama2_70b_lora");
  ASSERT_NE(l, nullptr);
  auto lora = ParseTrainJobYaml(
      "model: llama-2-70b\ntrain:\n  method: lora\n  seq_len: 4096\n  global_batch: 8\n"
      "  data: {benchmark: mlperf/llama2_70b_lora}\n",
      "l.yaml");
  ASSERT_TRUE(lora.ok()) << lora.error().ToString();
  EXPECT_NEAR(lora->samples * lora->epochs, l->samples_to_target * (1 + 173.0 / 384.0 * 0.5), 1e-6);
}

// A benchmark job without a batch runs the benchmark's reference batch, the one its samples to
// the target are measured at.
TEST(JobYaml, BenchmarkWithoutBatchRunsItsReferenceBatch) {
  const TrainBenchmark* b = FindTrainBenchmark("mlperf/resnet");
  ASSERT_NE(b, nullptr);
  auto job =
      ParseTrainJobYaml("model: resnet-50\ntrain:\n  data: {benchmark: mlperf/resnet}\n", "b.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->global_batch, b->ref_global_batch);
}

// MLPerf BERT's global batch counts samples, two of which share each 512-token sequence (NVIDIA's
// PACKING_FACTOR 2: 8 packs per GPU on 512 GPUs log a global batch of 8192): the step runs half
// as many sequences, while the samples to the target follow the stated batch. Unpacked
// benchmarks run one sequence per sample.
TEST(JobYaml, PackedBenchmarkStepsRunSequencesOfSamples) {
  const TrainBenchmark* b = FindTrainBenchmark("mlperf/bert");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->SequencesPerStep(8192, 512), 4096);
  EXPECT_EQ(b->SequencesPerStep(768, 512), 384);
  EXPECT_EQ(b->SequencesPerStep(4609, 512), 2305);  // a sample left over takes a sequence
  EXPECT_EQ(b->SequencesPerStep(1, 512), 1);
  EXPECT_EQ(FindTrainBenchmark("mlperf/resnet")->SequencesPerStep(3264, 1), 3264);
  auto job = ParseTrainJobYaml(
      "model: bert-large-uncased\ntrain:\n  seq_len: 512\n  global_batch: 8192\n"
      "  data: {benchmark: mlperf/bert}\n",
      "b.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->global_batch, 4096);
  EXPECT_NEAR(job->samples * job->epochs,
              b->SamplesToTarget(8192) * (1 + b->EvalOverhead(1.0 / 3.0)), 1e-6);
}

// A benchmark job that names no framework runs the benchmark's reference implementation: NeMo on
// Megatron-Core for MLPerf's LLM benchmarks, generic for the others; a named framework is kept.
TEST(JobYaml, BenchmarkRunsItsReferenceFramework) {
  // The LoRA benchmark's job with `extra` lines under train:.
  auto lora_job = [](const std::string& extra) {
    return ParseTrainJobYaml("model: llama-2-70b\ntrain:\n  method: lora\n  seq_len: 4096\n" +
                                 extra + "  data: {benchmark: mlperf/llama2_70b_lora}\n",
                             "l.yaml");
  };
  auto lora = lora_job("");
  ASSERT_TRUE(lora.ok()) << lora.error().ToString();
  EXPECT_EQ(lora->framework, TrainFramework::kMegatronCore);
  auto named = lora_job("  framework: fsdp\n");
  ASSERT_TRUE(named.ok()) << named.error().ToString();
  EXPECT_EQ(named->framework, TrainFramework::kFsdp);
  auto resnet =
      ParseTrainJobYaml("model: resnet-50\ntrain:\n  data: {benchmark: mlperf/resnet}\n", "b.yaml");
  ASSERT_TRUE(resnet.ok()) << resnet.error().ToString();
  EXPECT_EQ(resnet->framework, TrainFramework::kGeneric);
}

TEST(JobYaml, BenchmarkErrorsNameTheFieldAndTheFix) {
  auto unknown =
      ParseTrainJobYaml("model: resnet-50\ntrain:\n  data: {benchmark: mlperf/nope}\n", "u.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().ToString().find("train.data.benchmark"), std::string::npos)
      << unknown.error().ToString();
  EXPECT_NE(unknown.error().ToString().find("mlperf/resnet"), std::string::npos)
      << unknown.error().ToString();
  auto both = ParseTrainJobYaml(
      "model: resnet-50\ntrain:\n  data: {benchmark: mlperf/resnet, samples: 1M}\n", "b.yaml");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().ToString().find("not both"), std::string::npos) << both.error().ToString();
}

}  // namespace gpuplan

namespace gpuplan {

TEST(JobYaml, FrameworkKey) {
  auto job = ParseTrainJobYaml(
      "model: llama-2-7b\ntrain:\n  framework: nemo\n  data: {tokens: 1B}\n", "f.yaml");
  ASSERT_TRUE(job.ok()) << job.error().ToString();
  EXPECT_EQ(job->framework, TrainFramework::kMegatronCore);
  auto d = ParseTrainJobYaml("model: llama-2-7b\ntrain:\n  data: {tokens: 1B}\n", "f.yaml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->framework, TrainFramework::kGeneric);
  auto bad = ParseTrainJobYaml(
      "model: llama-2-7b\ntrain:\n  framework: jax\n  data: {tokens: 1B}\n", "f.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().ToString().find("train.framework"), std::string::npos)
      << bad.error().ToString();
  EXPECT_NE(bad.error().ToString().find("deepspeed"), std::string::npos) << bad.error().ToString();
}

}  // namespace gpuplan
