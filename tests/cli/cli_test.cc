// End-to-end tests of the `gpuplan` CLI binary: bad input exits 2 with nothing on stdout and an
// error on stderr that names the field (`error: FIELD: MESSAGE (HINT)`, or a JSON object with
// --json); good input exits 0 (1 when nothing fits) and prints its answer. The exit-code contract
// is apps/cli/main.cc / report.h: 0 answer, 1 nothing fits, 2 bad input, 70 internal error.
#include <gtest/gtest.h>

#include "testing/test_util.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

constexpr int kExitOk = 0;
constexpr int kExitNothingFits = 1;
constexpr int kExitBadInput = 2;

using gpuplan::test::Has;
using gpuplan::test::RunCli;
using gpuplan::test::RunResult;
using gpuplan::test::ServeCaseJsonl;
using gpuplan::test::Slurp;
using gpuplan::test::TempDir;

std::string Join(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Rows of a 21-column instance table (data/README.md columns).
const char kInstanceHeader[] =
    "cloud,instance_type,region,accelerator,accelerator_count,cpu,vcpus,ram_gib,local_nvme_gb,"
    "network_gbps,intra_node_link,inter_node_fabric,inter_node_gbps,price_on_demand,price_spot,"
    "price_reserved_1y,price_reserved_3y,currency,source,as_of,notes";
std::string InstanceRow(const std::string& cloud, const std::string& type,
                        const std::string& price) {
  return cloud + "," + type + ",r-1,H100-SXM5-80GB,8,,192,2048,30720,3200,nvswitch,efa,3200," +
         price + ",,,,USD,https://example.com,2026-01-15,";
}

// A Llama-2-7B-shaped config.json (meta-llama/Llama-2-7b-hf) with one field replaced.
std::string LlamaConfig(const std::string& layers) {
  return R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": )" + layers +
         R"(, "num_attention_heads": 32, "num_key_value_heads": 32, "intermediate_size": 11008,
  "vocab_size": 32000, "max_position_embeddings": 4096, "torch_dtype": "float16"})";
}

// A .safetensors file whose 8-byte little-endian header length (1000) exceeds the file.
std::string TruncatedSafetensors() {
  std::string s(8, '\0');
  std::uint64_t n = 1000;
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return s + R"({"a":)";
}

// ---------------------------------------------------------------------------------------------
// Bad input: exit 2, empty stdout, stderr "error: FIELD: ..." naming the field.

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> stderr_has;  // the field first, then other parts of the message
};

TEST(CliBadInput, ExitTwoNothingOnStdoutFieldOnStderr) {
  TempDir dir;
  const std::string bad_json = dir.Write("bad/config.json", R"({"hidden_size": 4096,)");
  const std::string neg_layers = dir.Write("neg/config.json", LlamaConfig("-4"));
  const std::string trunc = dir.Write("trunc/model.safetensors", TruncatedSafetensors());
  const std::string bad_csv = dir.Write(
      "prices.csv", std::string(kInstanceHeader) + "\n" + InstanceRow("testcloud", "t.1", "55.04") +
                        "\n" + InstanceRow("testcloud", "t.2", "abc") + "\n");
  const std::string no_config_dir = (dir.path() / "empty").string();
  fs::create_directories(no_config_dir);
  const std::string not_a_model = dir.Write("model.txt", "hello");
  const std::string empty_cases = dir.Write("cases.jsonl", "");

  const BadCase cases[] = {
      {"unknown model", {"memory", "--model", "llama-9000b"}, {"--model", "did you mean"}},
      {"empty model", {"memory", "--model", ""}, {"--model"}},
      {"malformed config.json", {"memory", "--model", bad_json}, {bad_json, "malformed JSON"}},
      {"negative num_hidden_layers",
       {"memory", "--model", neg_layers},
       {"num_hidden_layers", "-4"}},
      {"truncated safetensors", {"memory", "--model", trunc}, {trunc, "truncated"}},
      {"directory without config.json",
       {"memory", "--model", no_config_dir},
       {"--model", "config.json"}},
      {"not a model file", {"memory", "--model", not_a_model}, {"--model"}},
      {"zero GPUs", {"memory", "--gpus", "0"}, {"--gpus", "got 0"}},
      {"negative GPUs", {"memory", "--gpus", "-2"}, {"--gpus"}},
      {"GPUs not a multiple of tp",
       {"memory", "--train", "--gpus", "3", "--tp", "2"},
       {"--gpus", "tp 2"}},
      {"negative batch", {"memory", "--batch", "-3"}, {"--batch", "-3"}},
      {"zero tp", {"memory", "--tp", "0"}, {"--tp", "got 0"}},
      {"zero pp", {"memory", "--pp", "0"}, {"--pp"}},
      {"headroom above 1", {"memory", "--headroom", "1.5"}, {"--headroom", "1.5"}},
      {"headroom 0", {"memory", "--headroom", "0"}, {"--headroom"}},
      {"ZeRO stage 5", {"memory", "--zero", "5"}, {"--zero"}},
      {"unknown method", {"memory", "--method", "dpo"}, {"--method", "dpo"}},
      {"unknown engine", {"memory", "--infer", "--engine", "foo"}, {"--engine", "foo"}},
      {"zero context", {"memory", "--infer", "--context", "0"}, {"--context"}},
      // "H100-SXM" is an alias in data/gpus.csv; a typo of it is unknown.
      {"unknown GPU for memory", {"memory", "--gpu", "H100-SXM6"}, {"--gpu", "did you mean"}},
      {"unknown GPU for instances", {"instances", "--gpu", "NOPE"}, {"--gpu", "NOPE"}},
      {"unknown cloud", {"instances", "--cloud", "awz"}, {"--cloud", "did you mean \"aws\""}},
      {"region with a typo",
       {"instances", "--region", "us-east-l"},
       {"--region", "us-east-l", "did you mean \"us-east-1\""}},
      {"plan region with a typo",
       {"plan", "infer", "-m", "llama-3-8b", "--qps", "1", "--regions", "us-east-l"},
       {"--regions[0]", "did you mean \"us-east-1\""}},
      {"region of a cloud not allowed",
       {"plan", "infer", "-m", "llama-3-8b", "--qps", "1", "--clouds", "aws", "--regions",
        "us-central1"},
       {"--regions[0]", "no aws instance"}},
      {"training region no catalog row has",
       {"plan", "train", "-m", "llama-2-7b", "--tokens", "1B", "--regions", "us-east-1,zz"},
       {"--regions[1]", "\"zz\"", "the catalog has"}},
      {"region of another cloud",
       {"instances", "--cloud", "aws", "--region", "us-central1"},
       {"--region", "no aws instance", "us-east-1"}},
      {"negative min GPU memory", {"instances", "--min-gpu-memory", "-1"}, {"--min-gpu-memory"}},
      {"missing catalog file",
       {"--catalog", "/nonexistent.csv", "gpus"},
       {"--catalog", "/nonexistent.csv"}},
      {"malformed catalog file",
       {"--catalog", bad_csv, "instances"},
       {bad_csv + ":3:14 (price_on_demand)", "abc"}},
      {"unknown currency", {"--currency", "EUR", "gpus"}, {"--currency", "EUR"}},
      {"zero exchange rate", {"--usd-per-cny", "0", "gpus"}, {"--usd-per-cny"}},
      {"unknown cross-validation split",
       {"validate", "--cv", "case", empty_cases},
       {"--cv", "case", "--cv source"}},
      // A value CLI11 cannot convert: the flag, the value, what it takes and its default.
      {"exponent for a whole number",
       {"memory", "--infer", "--context", "1e9"},
       {"--context: expected a whole number", "\"1e9\"", "--context 4096"}},
      {"overflowing whole number",
       {"memory", "--infer", "--context", "99999999999999999999"},
       {"--context", "within range", "99999999999999999999"}},
      {"fraction for a GPU count",
       {"memory", "--gpus", "1.5"},
       {"--gpus: expected a whole number", "\"1.5\""}},
      {"word for a number", {"plan", "infer", "--qps", "abc"}, {"--qps: expected a number", "abc"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name + ": gpuplan " + Join(c.args));
    RunResult r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
    EXPECT_TRUE(r.out.empty()) << "partial output on stdout:\n" << r.Describe();
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.Describe();
    // The field comes right after "error: ".
    ASSERT_FALSE(c.stderr_has.empty());
    for (const auto& part : c.stderr_has) {
      EXPECT_TRUE(Has(r.err, part)) << "stderr lacks \"" << part << "\":\n" << r.Describe();
    }
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line expected:\n" << r.Describe();
  }
}

// CLI11's own parse errors (unknown subcommand or flag, a value of the wrong type).
TEST(CliBadInput, ParseErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"bogus"},
      {"gpus", "--bogus"},
      {"memory", "--gpus", "abc"},
      {"memory", "--headroom", "lots"},
      {"memory", "--model"},  // missing value
      {"--json", "bogus"},
  };
  for (const auto& args : cases) {
    SCOPED_TRACE("gpuplan " + Join(args));
    RunResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
    EXPECT_TRUE(r.out.empty()) << r.Describe();
    EXPECT_FALSE(r.err.empty()) << r.Describe();
  }
}

// Mistyped subcommands and flags get a did-you-mean; a bad flag value is named by its flag.
TEST(CliBadInput, DidYouMeanAndFlagNames) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"memroy"}, "did you mean \"memory\""},
      {{"plan", "trian"}, "did you mean \"train\""},
      {{"plan", "train", "--methd", "full"}, "did you mean \"--method\""},
      {{"plan", "train", "--tokens", "1B", "--clouds", "awz"}, "--clouds"},
  };
  for (const auto& [args, part] : cases) {
    SCOPED_TRACE("gpuplan " + Join(args));
    RunResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
    EXPECT_TRUE(Has(r.err, part)) << r.Describe();
    EXPECT_FALSE(Has(r.err, "constraints.clouds")) << r.Describe();
  }
}

TEST(CliBadInput, JsonErrorOnStderr) {
  struct Case {
    std::vector<std::string> args;
    const char* code;
    const char* field;
  };
  const Case cases[] = {
      {{"--json", "memory", "--model", "nope"}, "not_found", "--model"},
      {{"--json", "memory", "--gpus", "0"}, "invalid_argument", "--gpus"},
      {{"--json", "instances", "--cloud", "awz"}, "not_found", "--cloud"},
      {{"--json", "--catalog", "/nonexistent.csv", "gpus"}, "io_error", "--catalog"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("gpuplan " + Join(c.args));
    RunResult r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
    EXPECT_TRUE(r.out.empty()) << r.Describe();
    nlohmann::json j = nlohmann::json::parse(r.err, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded()) << "stderr is not JSON:\n" << r.Describe();
    ASSERT_TRUE(j.is_object());
    ASSERT_TRUE(j.contains("error")) << j.dump();
    const auto& e = j["error"];
    ASSERT_TRUE(e.is_object());
    for (const char* k : {"code", "field", "message", "hint"}) {
      ASSERT_TRUE(e.contains(k) && e[k].is_string()) << k << " in " << j.dump();
    }
    EXPECT_EQ(e["code"], c.code);
    EXPECT_EQ(e["field"], c.field);
    EXPECT_FALSE(e["message"].get<std::string>().empty());
  }
}

// ---------------------------------------------------------------------------------------------
// Good input.

TEST(CliGood, Gpus) {
  RunResult r = RunCli({"gpus"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  EXPECT_TRUE(Has(r.out, "H100-SXM5-80GB")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "MI300X"));
}

// An MLPerf BERT job's batch counts samples, two per 512-token sequence: the header gives the
// sequences a step runs and the samples they carry. A plain ResNet config (no gpuplan block)
// plans as the CNN its stages describe.
TEST(CliGood, PackedBenchmarkAndResNetConfigJobs) {
  TempDir dir;
  const std::string bert = dir.Write(
      "bert.yaml",
      "model: bert-large-uncased\ntrain:\n  seq_len: 512\n  data: {benchmark: mlperf/bert}\n");
  RunResult r = RunCli({"plan", "train", "-f", bert, "--top", "1"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out, "global batch 1536 sequences (3072 samples packed 2 per sequence)"))
      << r.Describe();
  RunResult j = RunCli({"--json", "plan", "train", "-f", bert, "--top", "1"});
  ASSERT_EQ(j.exit_code, kExitOk) << j.Describe();
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["job"]["global_batch"], 1536);
  EXPECT_EQ(doc["job"]["benchmark"], "mlperf/bert");
  EXPECT_EQ(doc["job"]["samples_per_sequence"], 2);
  const std::string resnet =
      dir.Write("resnet101/config.json",
                R"({"model_type":"resnet","embedding_size":64,"hidden_sizes":[256,512,1024,2048],)"
                R"("depths":[3,4,23,3],"layer_type":"bottleneck","num_labels":1000})");
  RunResult m = RunCli({"memory", "--model", resnet, "--train"});
  ASSERT_EQ(m.exit_code, kExitOk) << m.Describe();
  EXPECT_TRUE(Has(m.out, "44.5M params")) << m.Describe();
  EXPECT_TRUE(Has(m.out, "224x224 image")) << m.Describe();
}

// A model without a KV cache (a CNN) is served one forward pass per request: `memory --infer`
// shows its weights and who holds them, not an LLM engine's sequences and token budget.
TEST(CliGood, MemoryInferOfACnnHasNoKvCache) {
  RunResult r = RunCli({"memory", "--model", "resnet-50", "--infer"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out, "no KV cache: each request is one forward pass (one 224x224 image)"))
      << r.Describe();
  EXPECT_FALSE(Has(r.out, "sequences x")) << r.Describe();
  EXPECT_FALSE(Has(r.out, "KV budget")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "0.05 GiB")) << r.Describe();
  // An LLM keeps the KV view.
  RunResult llm = RunCli({"memory", "--model", "llama-3.1-8b", "--infer"});
  ASSERT_EQ(llm.exit_code, kExitOk) << llm.Describe();
  EXPECT_TRUE(Has(llm.out, "KV budget")) << llm.Describe();
}

// Sequences longer than the model's context are refused with the flag, the limit and the fix
// (every engine refuses such a max_model_len); left to its default, --context takes a shorter
// model's own context (GPT-2: 1024) instead of 4096.
TEST(CliBad, SequencesBeyondTheModelsContext) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"memory", "--model", "gpt-2-xl", "--infer", "--context", "2048"},
        std::vector<std::string>{"memory", "--model", "llama-2-7b", "--seq-len", "8192"},
        std::vector<std::string>{"plan", "infer", "--model", "llama-2-7b", "--qps", "1",
                                 "--input-len", "8000"},
        std::vector<std::string>{"plan", "train", "--model", "llama-2-7b", "--seq-len", "8192",
                                 "--tokens", "1B"}}) {
    RunResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
    EXPECT_TRUE(Has(r.err, "context of")) << r.Describe();
    EXPECT_TRUE(Has(r.err, "keep --")) << r.Describe();
  }
  RunResult def = RunCli({"memory", "--model", "gpt-2-xl", "--infer"});
  ASSERT_EQ(def.exit_code, kExitOk) << def.Describe();
  EXPECT_TRUE(Has(def.out, "16 sequences x 1024 tokens")) << def.Describe();
}

// Training a CNN: the layout line counts samples of the network's input, and names its frozen
// batch norms where it has them; a sequence length and an attention kernel are a transformer's.
TEST(CliGood, MemoryTrainOfACnnCountsSamplesNotTokens) {
  RunResult r = RunCli({"memory", "--model", "retinanet", "--batch", "32"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out,
                  "micro-batch 32, 800x800 image (264 OpenImages classes), frozen batch "
                  "norms"))
      << r.Describe();
  EXPECT_FALSE(Has(r.out, "flash attention")) << r.Describe();
  EXPECT_FALSE(Has(r.out, "seq 2048")) << r.Describe();
  // One kept tensor per trained feature map: (252.5 - 84.5)M x 32 x 2 B = 10.01 GiB.
  EXPECT_TRUE(Has(r.out, "10.01 GiB")) << r.Describe();
  // The plan's header likewise: the benchmark's epochs of images, no sequence length.
  RunResult plan = RunCli({"plan", "train", "--model", "retinanet", "--samples", "1.17M",
                           "--epochs", "4", "--gpus", "H100", "--top", "1"});
  ASSERT_EQ(plan.exit_code, kExitOk) << plan.Describe();
  EXPECT_TRUE(Has(plan.out, "(4 epochs; a sample is one 800x800 image")) << plan.Describe();
  EXPECT_FALSE(Has(plan.out, "x seq")) << plan.Describe();
  RunResult llm = RunCli({"memory", "--model", "llama-3.1-8b", "--batch", "2"});
  ASSERT_EQ(llm.exit_code, kExitOk) << llm.Describe();
  EXPECT_TRUE(Has(llm.out, "seq ")) << llm.Describe();
  EXPECT_TRUE(Has(llm.out, "flash attention on")) << llm.Describe();
}

// Each training plan's warnings come with their rule ids (pitfalls.h), one finding per warning,
// in the shape `check --json` writes them.
TEST(CliGood, PlanTrainJsonFindingsCarryRuleIds) {
  RunResult r = RunCli({"--json", "plan", "train", "--model", "Llama-2-70b", "--method", "full",
                        "--tokens", "1e9", "--top", "3"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.Describe();
  int with_findings = 0;
  for (const auto& p : j["plans"]) {
    const auto& findings = p["findings"];
    ASSERT_TRUE(findings.is_array());
    ASSERT_EQ(findings.size(), p["warnings"].size());
    for (std::size_t i = 0; i < findings.size(); ++i) {
      EXPECT_EQ(findings[i]["message"], p["warnings"][i]);
      EXPECT_FALSE(findings[i]["rule"].get<std::string>().empty());
      EXPECT_TRUE(findings[i].contains("fix"));
      EXPECT_TRUE(findings[i].contains("severity"));
    }
    with_findings += findings.empty() ? 0 : 1;
  }
  EXPECT_GT(with_findings, 0) << "no plan had a warning to check";
}

// --json is a global flag: it goes before the subcommand (main.cc registers it on the app, and
// subcommands do not fall through to it).
TEST(CliGood, GpusJson) {
  RunResult r = RunCli({"--json", "gpus"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.Describe();
  EXPECT_EQ(j["schema_version"], "1");
  ASSERT_TRUE(j["catalog_as_of"].is_string());
  EXPECT_EQ(j["catalog_as_of"].get<std::string>().size(), 10u);  // YYYY-MM-DD
  EXPECT_EQ(j["currency"], "USD");
  ASSERT_TRUE(j["accelerators"].is_array());
  EXPECT_GE(j["accelerators"].size(), 30u);
  bool found = false;
  for (const auto& a : j["accelerators"]) {
    if (a["id"] != "H100-SXM5-80GB") continue;
    found = true;
    // NVIDIA H100 datasheet (gpu_specs.csv): 80 GB, 3350 GB/s, 989.4 dense BF16.
    EXPECT_NEAR(a["memory_gib"].get<double>(), 80, 1e-9);
    EXPECT_NEAR(a["memory_bw_gbps"].get<double>(), 3350, 1e-6);
    EXPECT_NEAR(a["bf16_tflops"].get<double>(), 989.4, 0.5);
  }
  EXPECT_TRUE(found);
}

// `validate --cv source` lists each case's in-sample and held-out error: two sources that
// measured the same setup 10x apart each come out further off when their own case is held out.
TEST(CliGood, CrossValidationListsEachCase) {
  TempDir dir;
  const std::string f =
      dir.Write("cases.jsonl", ServeCaseJsonl("a1", "github.com/org/alpha x", 20000) +
                                   ServeCaseJsonl("b1", "github.com/org/beta x", 2000));
  RunResult r = RunCli({"--json", "validate", "--cv", "source", f});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.Describe();
  ASSERT_TRUE(j["cases"].is_array());
  ASSERT_EQ(j["cases"].size(), 2u) << r.Describe();
  for (const auto& c : j["cases"]) {
    ASSERT_TRUE(c["in_sample_error"].is_number()) << c.dump();
    ASSERT_TRUE(c["held_out_error"].is_number()) << c.dump();
    EXPECT_GT(std::abs(c["held_out_error"].get<double>()),
              std::abs(c["in_sample_error"].get<double>()))
        << c.dump();
  }
  RunResult t = RunCli({"validate", "--cv", "source", f});
  ASSERT_EQ(t.exit_code, kExitOk) << t.Describe();
  EXPECT_TRUE(Has(t.out, "held out")) << t.Describe();
  EXPECT_TRUE(Has(t.out, "a1")) << t.Describe();
}

// `memory --infer` lists no accelerator vLLM has no kernels for the weight format on, and says
// which and why: AWQ on V100s (Volta, compute capability 7.0 < 7.5).
TEST(CliGood, MemoryInferLeavesOutGpusWithoutKernelsForTheFormat) {
  RunResult r =
      RunCli({"--json", "memory", "--model", "llama-3.1-8b", "--infer", "--quant", "awq"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.Describe();
  for (const auto& f : j["infer"]["fits"]) {
    EXPECT_EQ(f["accelerator"].get<std::string>().find("V100"), std::string::npos) << f.dump();
  }
  bool v100 = false;
  for (const auto& n : j["infer"]["no_kernels"]) {
    if (n["accelerator"] == "V100-SXM2-32GB") {
      v100 = true;
      EXPECT_TRUE(Has(n["why"].get<std::string>(), "7.5")) << n.dump();
    }
  }
  EXPECT_TRUE(v100) << r.out;
  RunResult t = RunCli({"memory", "--model", "llama-3.1-8b", "--infer", "--quant", "awq"});
  ASSERT_EQ(t.exit_code, kExitOk) << t.Describe();
  EXPECT_TRUE(Has(t.out, "not listed: V100-SXM2-16GB, V100-SXM2-32GB")) << t.out;
  // Pinned to a V100: nothing listed, and the reason is the kernels, not memory (no "try ...").
  RunResult p = RunCli({"memory", "--model", "llama-3.1-8b", "--infer", "--quant", "awq", "--gpu",
                        "V100-SXM2-32GB"});
  ASSERT_EQ(p.exit_code, kExitNothingFits) << p.Describe();
  EXPECT_TRUE(Has(p.out, "not listed: V100-SXM2-32GB")) << p.out;
  EXPECT_FALSE(Has(p.out, "none: try")) << p.out;
}

// `memory --train` lists no accelerator the job cannot run on, with why: FP8 training on A100s
// (no FP8 tensor cores), as the training planner skips them.
TEST(CliGood, MemoryTrainLeavesOutGpusThatCannotRunTheJob) {
  RunResult r =
      RunCli({"--json", "memory", "--model", "llama-2-7b", "--train", "--precision", "fp8"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.Describe();
  bool h100 = false;
  for (const auto& f : j["train"]["fits"]) {
    EXPECT_EQ(f["accelerator"].get<std::string>().find("A100"), std::string::npos) << f.dump();
    h100 = h100 || f["accelerator"] == "H100-SXM5-80GB";
  }
  EXPECT_TRUE(h100) << r.out;
  bool a100 = false;
  for (const auto& n : j["train"]["no_kernels"]) {
    if (n["accelerator"] != "A100-SXM4-80GB") continue;
    a100 = true;
    EXPECT_TRUE(Has(n["why"].get<std::string>(), "no FP8 tensor cores")) << n.dump();
  }
  EXPECT_TRUE(a100) << r.out;
}

TEST(CliGood, InstancesH100Aws) {
  RunResult r = RunCli({"instances", "--gpu", "H100", "--cloud", "aws"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  EXPECT_TRUE(Has(r.out, "p5.48xlarge")) << r.Describe();  // data/instances/aws.csv

  RunResult j = RunCli({"--json", "instances", "--gpu", "H100", "--cloud", "aws"});
  ASSERT_EQ(j.exit_code, kExitOk) << j.Describe();
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.Describe();
  EXPECT_EQ(doc["schema_version"], "1");
  ASSERT_TRUE(doc["instances"].is_array());
  EXPECT_FALSE(doc["instances"].empty());
  for (const auto& i : doc["instances"]) {
    EXPECT_EQ(i["cloud"], "aws");
    EXPECT_EQ(i["accelerator"], "H100-SXM5-80GB");
  }
}

TEST(CliGood, InstancesInCny) {
  RunResult r =
      RunCli({"--currency", "CNY", "instances", "--cloud", "alibaba", "--gpu", "A100-SXM4-40GB"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out, "in CNY")) << r.Describe();
  // data/instances/alibaba.csv ecs.gn7-c12g1.3xlarge: 16.438356 CNY/h.
  EXPECT_TRUE(Has(r.out,
                  "\xC2\xA5"
                  "16.44"))
      << r.Describe();
}

TEST(CliGood, CatalogOverride) {
  TempDir dir;
  const std::string csv =
      dir.Write("prices.csv", std::string(kInstanceHeader) + "\n" +
                                  InstanceRow("testcloud", "t.1", "55.04") + "\n");
  RunResult r = RunCli({"--catalog", csv, "instances", "--cloud", "testcloud"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out, "t.1")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "$55.04")) << r.Describe();
}

TEST(CliGood, Models) {
  RunResult r = RunCli({"models"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  EXPECT_TRUE(Has(r.out, "Llama-2-7B")) << r.Describe();
  RunResult j = RunCli({"--json", "models"});
  ASSERT_EQ(j.exit_code, kExitOk) << j.Describe();
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  bool found = false;
  for (const auto& m : doc["models"]) {
    if (m["name"] != "Llama-2-7B") continue;
    found = true;
    // Llama-2-7B config: 6,738,415,616 parameters (STYLE.md 9).
    EXPECT_EQ(m["params"].get<std::int64_t>(), 6738415616);
  }
  EXPECT_TRUE(found);
}

TEST(CliGood, MemoryLoraOnOneA100) {
  RunResult r = RunCli({"memory", "--model", "llama-2-7b", "--train", "--gpus", "1", "--gpu",
                        "A100-80GB", "--method", "lora"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  EXPECT_TRUE(Has(r.out, "Llama-2-7B")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "lora")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "A100-SXM4-80GB")) << r.Describe();
}

TEST(CliGood, MemoryFromConfigFile) {
  TempDir dir;
  const std::string cfg = dir.Write("llama/config.json", LlamaConfig("32"));
  RunResult r = RunCli(
      {"memory", "--model", cfg, "--train", "--method", "lora", "--gpus", "1", "--gpu", "H100"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out, "6.74B")) << r.Describe();  // same shape as Llama-2-7B
}

TEST(CliGood, NothingFitsExitsOne) {
  RunResult r = RunCli(
      {"memory", "--model", "llama-2-70b", "--infer", "--gpu", "T4", "--gpus", "1", "--tp", "1"});
  EXPECT_EQ(r.exit_code, kExitNothingFits) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  // The report still shows the breakdown and says what to try.
  EXPECT_TRUE(Has(r.out, "Llama-2-70B")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "none")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "--quant")) << r.Describe();
}

// Nothing fits: the suggestion never repeats a knob the user already turned (issue 12).
TEST(CliGood, NothingFitsSuggestsOnlyNewKnobs) {
  RunResult r = RunCli({"memory", "--model", "llama-3.1-405b", "--infer", "--gpu", "T4", "--gpus",
                        "1", "--tp", "1", "--quant", "awq"});
  EXPECT_EQ(r.exit_code, kExitNothingFits) << r.Describe();
  EXPECT_FALSE(Has(r.out, "--quant awq")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "--kv-precision fp8")) << r.Describe();
}

TEST(CliGood, DefaultScenario) {
  RunResult r = RunCli({});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  EXPECT_TRUE(Has(r.out, "Llama-2-13B")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "plan train")) << r.Describe();  // the training planner (issue #4)
  EXPECT_TRUE(Has(r.out, "Top plan")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "plan infer")) << r.Describe();  // the serving planner (issue #5)

  RunResult j = RunCli({"--json"});
  ASSERT_EQ(j.exit_code, kExitOk) << j.Describe();
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.Describe();
  EXPECT_EQ(doc["schema_version"], "1");
  EXPECT_TRUE(doc.contains("train"));
  EXPECT_TRUE(doc.contains("infer"));
}

TEST(CliGood, GuideB4SaysWhatItLeavesOut) {
  RunResult r = RunCli({"memory", "--model", "llama-2-7b", "--train", "--guide-b4", "--gpus", "1"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(Has(r.out, "master")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "leaves out")) << r.Describe();
}

TEST(CliGood, VersionAndHelp) {
  RunResult v = RunCli({"--version"});
  EXPECT_EQ(v.exit_code, kExitOk) << v.Describe();
  EXPECT_TRUE(Has(v.out, "gpuplan")) << v.Describe();
  RunResult h = RunCli({"--help"});
  EXPECT_EQ(h.exit_code, kExitOk) << h.Describe();
  EXPECT_TRUE(Has(h.out, "memory")) << h.Describe();
}

}  // namespace

namespace gpuplan {
namespace {

std::string Src(const std::string& rel) { return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel; }

TEST(CliJobFiles, ServingJobFilePlansAndFlagsOverride) {
  RunResult r = RunCli({"plan", "infer", "-f", Src("examples/serve/b16-llama-13b-serving.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(Has(r.out, "Llama-2-13B at 8 req/s")) << r.Describe();
  // A flag overrides the file.
  RunResult o = RunCli(
      {"plan", "infer", "-f", Src("examples/serve/b16-llama-13b-serving.yaml"), "--qps", "3"});
  ASSERT_EQ(o.exit_code, 0) << o.Describe();
  EXPECT_TRUE(Has(o.out, "at 3 req/s")) << o.Describe();
}

TEST(CliJobFiles, LoadAsTokensPerSecond) {
  RunResult r = RunCli({"plan", "infer", "--model", "llama-2-7b", "--tokens-per-s", "2560",
                        "--output-len", "256", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(Has(r.out, "at 10 req/s")) << r.Describe();  // 2560 tokens/s / 256 per request
}

// --benchmark fills the lengths and SLOs a public benchmark fixes (data/inference_benchmarks.csv):
// Llama-2-70B on OpenOrca generates 294.45 tokens per sample (round 294) under TTFT/TPOT p99
// 2000/200 ms in FP8 (the closed division's format) unless a precision is stated; GPT-J's mean
// prompt length is not published, so --input-len is required there; BERT-99 on
// GPUs (TensorRT, padding-free) processes 0.46 x 384 = 177 real tokens; an unknown name lists
// the known ones.
TEST(CliJobFiles, PlanInferBenchmark) {
  RunResult l = RunCli({"plan", "infer", "--model", "llama-2-70b", "--benchmark",
                        "mlperf/llama2-70b-99", "--input-len", "200", "--qps", "1", "--top", "1"});
  ASSERT_EQ(l.exit_code, 0) << l.Describe();
  EXPECT_TRUE(Has(l.out, "200 in / 294 out tokens, fp8 weights")) << l.Describe();
  EXPECT_TRUE(Has(l.out, "TTFT 2000 ms, TPOT 200 ms")) << l.Describe();
  // A stated SLO wins over the benchmark's.
  RunResult s = RunCli({"plan", "infer", "--model", "llama-2-70b", "--benchmark", "llama2-70b-99.9",
                        "--input-len", "200", "--tpot-ms", "100", "--qps", "1", "--top", "1"});
  ASSERT_EQ(s.exit_code, 0) << s.Describe();
  EXPECT_TRUE(Has(s.out, "TTFT 2000 ms, TPOT 100 ms")) << s.Describe();
  RunResult stated = RunCli({"plan", "infer", "--model", "llama-2-70b", "--benchmark",
                             "llama2-70b-99", "--precision", "bf16", "--qps", "1", "--top", "1"});
  ASSERT_EQ(stated.exit_code, 0) << stated.Describe();
  EXPECT_TRUE(Has(stated.out, "222 in / 294 out tokens, bf16 weights")) << stated.Describe();

  // GPT-J: the proxy mean prompt (docs/model.md 12.6), 4 beams, loadgen's 69 output tokens.
  RunResult proxy =
      RunCli({"plan", "infer", "--model", "llama-2-7b", "--benchmark", "gptj-99", "--qps", "1"});
  ASSERT_EQ(proxy.exit_code, 0) << proxy.Describe();
  EXPECT_TRUE(Has(proxy.out, "866 in / 69 out tokens (4 beams)")) << proxy.Describe();
  // MLPerf Llama-3.1-8B: outputs run to the 128-token limit; a stated length wins.
  RunResult capped =
      RunCli({"plan", "infer", "--benchmark", "llama3.1-8b", "--qps", "1", "--top", "1"});
  ASSERT_EQ(capped.exit_code, 0) << capped.Describe();
  EXPECT_TRUE(Has(capped.out, "871 in / 128 out tokens")) << capped.Describe();
  RunResult given = RunCli({"plan", "infer", "--benchmark", "llama3.1-8b", "--output-len", "100",
                            "--qps", "1", "--top", "1"});
  ASSERT_EQ(given.exit_code, 0) << given.Describe();
  EXPECT_TRUE(Has(given.out, "871 in / 100 out tokens")) << given.Describe();
  EXPECT_TRUE(Has(given.out, "TTFT 2000 ms, TPOT 100 ms")) << given.Describe();

  RunResult bert = RunCli({"plan", "infer", "--model", "bert-large-uncased", "--benchmark",
                           "mlperf/bert-99", "--qps", "100", "--top", "1"});
  ASSERT_EQ(bert.exit_code, 0) << bert.Describe();
  EXPECT_TRUE(Has(bert.out, "177 tokens in")) << bert.Describe();
  EXPECT_TRUE(Has(bert.out, "e2e 130 ms")) << bert.Describe();

  // GPT-J: 69 output tokens (loadgen's per-sample constant), 20 s e2e bound, 4 beams modelled.
  RunResult gptj = RunCli({"plan", "infer", "--model", "llama-2-7b", "--benchmark", "gptj-99",
                           "--input-len", "800", "--qps", "1", "--top", "1"});
  ASSERT_EQ(gptj.exit_code, 0) << gptj.Describe();
  EXPECT_TRUE(Has(gptj.out, "800 in / 69 out tokens (4 beams)")) << gptj.Describe();
  EXPECT_TRUE(Has(gptj.out, "e2e 20000 ms")) << gptj.Describe();

  // Without --model the benchmark's reference model is served (the default model was served
  // before: Llama-2-13B at BERT-99's lengths), in the plan document too; GPT-J has no preset.
  RunResult ref = RunCli({"plan", "infer", "--benchmark", "mlperf/bert-99", "--qps", "100", "--top",
                          "1", "--cpu-only"});
  ASSERT_EQ(ref.exit_code, 0) << ref.Describe();
  EXPECT_TRUE(Has(ref.out, "BERT-large-uncased at 100 req/s, 177 tokens in")) << ref.Describe();
  RunResult ref_json = RunCli(
      {"--json", "plan", "infer", "--benchmark", "mixtral-8x7b", "--qps", "1", "--top", "1"});
  ASSERT_EQ(ref_json.exit_code, 0) << ref_json.Describe();
  EXPECT_TRUE(Has(ref_json.out, "\"model_ref\": \"Mixtral-8x7B-v0.1\"")) << ref_json.Describe();
  RunResult no_preset = RunCli({"plan", "infer", "--benchmark", "gptj-99", "--qps", "1"});
  EXPECT_EQ(no_preset.exit_code, 2) << no_preset.Describe();
  EXPECT_TRUE(Has(no_preset.err, "--model")) << no_preset.Describe();
  EXPECT_TRUE(Has(no_preset.err, "no built-in preset")) << no_preset.Describe();

  RunResult unknown = RunCli(
      {"plan", "infer", "--model", "llama-2-70b", "--benchmark", "mlperf/nope", "--qps", "1"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.Describe();
  EXPECT_TRUE(Has(unknown.err, "mlperf/llama2-70b-99")) << unknown.Describe();
}

TEST(CliJobFiles, EmitFromAJobFile) {
  RunResult r = RunCli({"emit", "deepspeed", "--job", Src("examples/llama-7b-lora.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.Describe();
  EXPECT_TRUE(doc.contains("zero_optimization"));
  RunResult both = RunCli({"emit", "k8s"});
  EXPECT_EQ(both.exit_code, 2) << both.Describe();
  EXPECT_TRUE(both.out.empty());
  EXPECT_TRUE(Has(both.err, "--plan")) << both.Describe();
}

}  // namespace
}  // namespace gpuplan
