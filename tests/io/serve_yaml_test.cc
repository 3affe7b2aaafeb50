// Serving job files: every example parses, bad snippets name the YAML path and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuplan/job_checks.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

TEST(ServeYaml, ExamplesParse) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(GPUPLAN_SOURCE_DIR) / "examples/serve")) {
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    auto f = ParseServeJobYaml(ss.str(), e.path().string());
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    EXPECT_FALSE(f->model.empty());
    EXPECT_TRUE(f->qps.has_value()) << e.path();
    ++n;
  }
  EXPECT_GE(n, 3);
}

TEST(ServeYaml, Fields) {
  auto f = ParseServeJobYaml(
      "model: llama-2-7b\nserve:\n  qps: 5\n  input_len: 512\n  output_len: 128\n  quant: awq\n"
      "slo:\n  tpot_p99_ms: 50\nconstraints:\n  clouds: [aws, gcp]\n  cpu: true\n  "
      "include_suspect: true\n  marketplace: false\ntop: 3\n",
      "job.yaml");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f->model, "llama-2-7b");
  EXPECT_DOUBLE_EQ(*f->qps, 5);
  EXPECT_EQ(*f->input_len, 512);
  EXPECT_EQ(*f->output_len, 128);
  EXPECT_EQ(f->quant, "awq");
  EXPECT_DOUBLE_EQ(*f->tpot_p99_ms, 50);
  EXPECT_EQ(f->clouds.size(), 2u);
  EXPECT_TRUE(*f->cpu);
  ASSERT_TRUE(f->include_suspect.has_value());
  EXPECT_TRUE(*f->include_suspect);
  ASSERT_TRUE(f->marketplace.has_value());
  EXPECT_FALSE(*f->marketplace);
  EXPECT_EQ(*f->top, 3);
}

TEST(ServeYaml, Benchmark) {
  auto f = ParseServeJobYaml(
      "model: llama-2-70b\nserve:\n  qps: 2\n  benchmark: mlperf/llama2-70b-99\n", "job.yaml");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f->benchmark, "mlperf/llama2-70b-99");
  EXPECT_FALSE(f->input_len);
  // A benchmark stands in for the model (its reference model is served, ServeModelRef).
  f = ParseServeJobYaml("serve:\n  qps: 2\n  benchmark: mlperf/bert-99\n", "job.yaml");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_TRUE(f->model.empty());
  ServeRequest r;
  r.model_given = false;
  MergeServeJobFile(r, *f);
  EXPECT_EQ(ServeModelRef(r), "BERT-large-uncased");
  r.model = "bert-base";
  r.model_given = true;
  EXPECT_EQ(ServeModelRef(r), "bert-base");
  // An empty benchmark does not stand in for the model (it would plan the default model).
  f = ParseServeJobYaml("serve:\n  qps: 2\n  benchmark: \"\"\n", "job.yaml");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "job.yaml:3:serve.benchmark");
}

struct Bad {
  const char* name;
  const char* yaml;
  const char* field_part;
};

TEST(ServeYaml, BadInputNamesTheField) {
  const Bad rows[] = {
      {"unknown top key", "model: x\nserv:\n  qps: 1\n", "serv"},
      {"unknown serve key", "model: x\nserve:\n  qpz: 1\n", "serve.qpz"},
      {"negative qps", "model: x\nserve:\n  qps: -3\n", "serve.qps"},
      {"qps not a number", "model: x\nserve:\n  qps: lots\n", "serve.qps"},
      {"zero SLO", "model: x\nslo:\n  ttft_p99_ms: 0\n", "slo.ttft_p99_ms"},
      {"cpu not bool", "model: x\nconstraints:\n  cpu: maybe\n", "constraints.cpu"},
      {"missing model", "serve:\n  qps: 1\n", "model"},
      {"malformed yaml", "model: [x\n", "job.yaml"},
  };
  for (const auto& r : rows) {
    auto f = ParseServeJobYaml(r.yaml, "job.yaml");
    ASSERT_FALSE(f.ok()) << r.name;
    EXPECT_NE(f.error().field.find(r.field_part), std::string::npos)
        << r.name << ": " << f.error().ToString();
  }
  EXPECT_FALSE(ParseServeJobYaml("", "job.yaml").ok());
}

// A value the file gave and the job's checks reject is named by the file's line and key, and the
// hint speaks of keys (before: "--engine: unknown engine", "drop --gpus, or use --cpu").
TEST(ServeYaml, JobChecksNameTheFileKeyOfAValueFromTheFile) {
  auto f = ParseServeJobYaml(
      "model: llama-2-7b\nserve:\n  qps: 1\n  engine: zzz\nconstraints:\n  gpus: [L4]\n  "
      "cpu_only: true\n",
      "job.yaml");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_EQ(f->where.at("serve.engine"), "job.yaml:4:serve.engine");
  ServeRequest r;
  MergeServeJobFile(r, *f);
  auto job = BuildServeJob(r, "USD");
  ASSERT_FALSE(job.ok());
  // --gpus with --cpu-only is checked first.
  EXPECT_EQ(job.error().field, "job.yaml:6:constraints.gpus");
  EXPECT_NE(job.error().message.find("constraints.cpu_only"), std::string::npos)
      << job.error().ToString();
  EXPECT_EQ(job.error().hint.find("--"), std::string::npos) << job.error().ToString();
  r.cpu_only = false;
  job = BuildServeJob(r, "USD");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "job.yaml:4:serve.engine");
  // A flag given beside the file keeps its name; "--clouds[1]" keeps its item.
  ServeRequest flags;
  flags.engine = "zzz";
  MergeServeJobFile(flags, *f, [](const char* flag) { return std::string(flag) != "--engine"; });
  flags.cpu_only = false;
  job = BuildServeJob(flags, "USD");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.error().field, "--engine");
  r.from_file["--clouds"] = "job.yaml:9:constraints.clouds";
  EXPECT_EQ(NameFileField(Error{ErrorCode::kNotFound, "--clouds[1]", "unknown cloud", ""}, r).field,
            "job.yaml:9:constraints.clouds[1]");
}

// The shared YamlReader's rules (issue 10): a key given twice is an error (before, the first
// value silently won), a list item must be a name, and errors name the key's line.
TEST(ServeYaml, SharedReaderRules) {
  const Bad rows[] = {
      {"duplicate key", "model: x\nserve:\n  qps: 1\n  qps: 2\n", "job.yaml:4:serve.qps"},
      {"list item a map", "model: x\nconstraints:\n  clouds: [aws, {a: 1}]\n",
       "constraints.clouds[1]"},
      {"text field a list", "model: x\nserve:\n  quant: [awq]\n", "job.yaml:3:serve.quant"},
      {"section a scalar", "model: x\nserve: 3\n", "job.yaml:2:serve"},
      {"empty model", "model:\nserve:\n  qps: 1\n", "job.yaml:1:model"},
  };
  for (const auto& r : rows) {
    auto f = ParseServeJobYaml(r.yaml, "job.yaml");
    ASSERT_FALSE(f.ok()) << r.name;
    EXPECT_NE(f.error().field.find(r.field_part), std::string::npos)
        << r.name << ": " << f.error().ToString();
  }
  // An empty text value means "not set", as an absent key (the web page sends engine: "").
  auto f = ParseServeJobYaml("model: x\nserve:\n  engine: ''\nconstraints:\n  cpu: y\n", "j");
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  EXPECT_TRUE(f->engine.empty());
  EXPECT_TRUE(*f->cpu);
}

}  // namespace
}  // namespace gpuplan
