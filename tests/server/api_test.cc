// The HTTP API's routes called directly (apps/server/api.h): every POST route answers a good body
// with its document and a bad one with 400 naming the field; the same job gives the same plan
// document from the CLI's --json and from the API.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "api.h"
#include "gpuplan/catalog.h"

namespace gpuplan::server {
namespace {

using nlohmann::json;

const ApiContext& Ctx() {
  static const ApiContext* ctx = [] {
    auto* c = new ApiContext;
    auto cat = LoadBuiltinCatalog();
    if (!cat) std::abort();
    c->catalog = std::move(*cat);
    return c;
  }();
  return *ctx;
}

json Call(const std::string& route, const json& body, int want_status,
          const std::string& query = "") {
  ApiResponse r = HandleApi(Ctx(), route, query, body.dump());
  EXPECT_EQ(r.status, want_status) << route << " " << body.dump() << "\n" << r.body;
  return json::parse(r.body);
}

std::string RunCli(const std::string& args) {
  std::string cmd = std::string(GPUPLAN_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

const json kTrainJob = {
    {"model", "Llama-2-7B"},
    {"train", {{"method", "lora"}, {"data", {{"tokens", "200M"}, {"epochs", 1}}}}},
    {"constraints", {{"clouds", {"aws", "gcp"}}}},
    {"top", 3}};
const json kServeJob = {{"model", "Llama-2-7B"},
                        {"serve", {{"qps", 4}, {"input_len", 512}, {"output_len", 128}}},
                        {"slo", {{"ttft_p99_ms", 2000}, {"tpot_p99_ms", 100}}},
                        {"top", 3}};

TEST(ApiTest, PlanTrainAndInferReturnPlanDocuments) {
  json t = Call("/v1/plan/train", kTrainJob, 200);
  EXPECT_EQ(t["schema_version"], "1");
  ASSERT_FALSE(t["plans"].empty());
  EXPECT_GT(t["plans"][0]["job_hours"].get<double>(), 0);
  json e = Call("/v1/plan/train", kTrainJob, 200, "explain=1");
  EXPECT_TRUE(e.contains("explain"));
  json i = Call("/v1/plan/infer", kServeJob, 200);
  ASSERT_FALSE(i["plans"].empty());
  EXPECT_GT(i["plans"][0]["replicas"].get<int>(), 0);
}

TEST(ApiTest, SameJobSamePlanFromCliAndApi) {
  // The job file is the request body itself (JSON is YAML).
  const std::string train_file = ::testing::TempDir() + "api_same_train.yaml";
  const std::string serve_file = ::testing::TempDir() + "api_same_serve.yaml";
  std::ofstream(train_file) << kTrainJob.dump(2);
  std::ofstream(serve_file) << kServeJob.dump(2);
  json cli_train = json::parse(RunCli("--json plan train -f " + train_file));
  json api_train = Call("/v1/plan/train", kTrainJob, 200);
  EXPECT_EQ(cli_train, api_train);
  json cli_serve = json::parse(RunCli("--json plan infer -f " + serve_file));
  json api_serve = Call("/v1/plan/infer", kServeJob, 200);
  EXPECT_EQ(cli_serve, api_serve);
}

TEST(ApiTest, TcoMemoryCheckValidateSimulateEmit) {
  json tco_body = {{"model", "bert-base-uncased"}, {"serve", {{"qps", 50}}}, {"years", 2}};
  json tco = Call("/v1/tco", tco_body, 200);
  EXPECT_EQ(tco["years"], 2);
  EXPECT_TRUE(tco.contains("break_even_qps"));
  // Same as the CLI.
  json cli_tco = json::parse(RunCli("--json tco --model bert-base-uncased --qps 50 --years 2"));
  EXPECT_EQ(cli_tco, tco);

  json mem =
      Call("/v1/memory", {{"model", "Llama-2-13B"}, {"train", true}, {"method", "lora"}}, 200);
  ASSERT_TRUE(mem.contains("train"));
  EXPECT_FALSE(mem["train"]["fits"].empty());
  json cli_mem = json::parse(RunCli("--json memory --model Llama-2-13B --train --method lora"));
  EXPECT_EQ(cli_mem, mem);

  json setup = {{"hardware", {{"instance", "p5.48xlarge"}, {"storage", "nvme"}}},
                {"nodes", 2},
                {"train",
                 {{"model", "llama-2-7b"},
                  {"method", "full"},
                  {"micro_batch", 1},
                  {"seq_len", 4096},
                  {"global_batch", 512},
                  {"zero", 3}}}};
  json chk = Call("/v1/check", setup, 200);
  EXPECT_TRUE(chk.contains("findings"));
  EXPECT_EQ(chk["file"], "request");

  // Validation cases (the shared development set's first line), as the CLI computes them.
  std::ifstream dev(std::string(GPUPLAN_SHARED_DIR) + "/validation/dev.jsonl");
  std::string line;
  if (dev && std::getline(dev, line)) {
    json val = Call("/v1/validate", {{"cases", json::array({json::parse(line)})}}, 200);
    const std::string f = ::testing::TempDir() + "api_case.jsonl";
    std::ofstream(f) << line << "\n";
    EXPECT_EQ(json::parse(RunCli("--json validate " + f)), val);
  }

  json sim = kServeJob;
  sim["serve"].erase("qps");
  sim["synthetic"] = {{"days", 1}, {"peak_rps", 6}};
  sim["policies"] = {"hpa", "static"};
  json s = Call("/v1/simulate", sim, 200);
  ASSERT_EQ(s["policies"].size(), 2u);
  EXPECT_EQ(s["policies"][0]["timeline_hourly"].size(), 24u);

  json plan = Call("/v1/plan/infer", kServeJob, 200);
  json em = Call("/v1/emit", {{"target", "vllm"}, {"plan", plan}}, 200);
  ASSERT_FALSE(em["files"].empty());
  EXPECT_NE(em["files"][0]["contents"].get<std::string>().find("vllm"), std::string::npos);
}

struct BadCase {
  std::string route;
  std::string body;   // raw text
  std::string field;  // expected error field (substring)
};

TEST(ApiTest, BadBodiesAre400NamingTheField) {
  const BadCase cases[] = {
      {"/v1/plan/train", "{not json", "body"},
      {"/v1/plan/train", "[1, 2]", "body"},
      {"/v1/plan/train",
       R"({"model": "Llama-2-7B", "train": {"method": "lorax", "data": {"tokens": "1B"}}})",
       "train.method"},
      {"/v1/plan/train", R"({"model": "Llama-2-7B", "train": {"data": {"tokens": "-5"}}})",
       "train.data.tokens"},
      {"/v1/plan/train", R"({"model": "/etc/passwd", "train": {"data": {"tokens": "1B"}}})",
       "model"},
      {"/v1/plan/train", R"({"model": "Llama-2-7B", "trian": {}})", "trian"},
      {"/v1/plan/infer", R"({"model": "Llama-2-7B", "serve": {"qps": -1}})", "serve.qps"},
      {"/v1/plan/infer", R"({"model": "Llama-2-7B", "serve": {"qps": 1, "engine": "vllmx"}})",
       "serve.engine"},
      {"/v1/plan/infer", R"({"model": "../../config.json", "serve": {"qps": 1}})", "model"},
      {"/v1/plan/infer", R"({"model_config": 5, "serve": {"qps": 1}})", "model_config"},
      {"/v1/tco", R"({"model": "bert-base-uncased", "serve": {"qps": 1}, "years": 20})", "years"},
      {"/v1/tco", R"({"model": "bert-base-uncased", "serve": {"qps": 1}, "profile": [1, 2]})",
       "profile"},
      {"/v1/memory", R"({"model": "Llama-2-7B", "tp": "two"})", "tp"},
      {"/v1/memory", R"({"model": "Llama-2-7B", "zero": 7})", "zero"},
      {"/v1/memory", R"({"model": "Llama-2-7B", "tpp": 2})", "tpp"},
      {"/v1/check", R"({"train": {"model": "/tmp/x/config.json"}})", "train.model"},
      {"/v1/emit", R"({"plan": {}})", "target"},
      {"/v1/emit", R"({"target": "vllm", "plan": 3})", "plan"},
      {"/v1/validate", R"({"cases": 3})", "cases"},
      {"/v1/simulate", R"({"model": "Llama-2-7B", "policies": ["hpa", "magic"]})", "policies"},
      {"/v1/simulate", R"({"model": "Llama-2-7B", "synthetic": {"days": "one"}})",
       "synthetic.days"},
      {"/v1/simulate", R"({"model": "Llama-2-7B", "synthetic": {"days": 1, "peak_hour": 30}})",
       "synthetic.peak_hour"},
      {"/v1/memory", R"({"model": "Llama-2-7B", "infer": true, "seq_len": 8192})", "seq_len"},
      {"/v1/simulate", R"({"model": "Llama-2-7B", "synthetic": {"days": 1, "peak_rps": 500000}})",
       "synthetic.peak_rps"},
      {"/v1/memory", R"({"model": "Llama-2-7B", "train": true, "concurrency": 8})", "concurrency"},
      {"/v1/plan/infer", R"({"model": "Whisper-large-v3", "serve": {"qps": 1, "input_len": 64}})",
       "serve.input_len"},
      {"/v1/emit", R"({"target": "k8s", "plan": {}, "image": "x; rm -rf /"})", "image"},
  };
  for (const auto& c : cases) {
    ApiResponse r = HandleApi(Ctx(), c.route, "", c.body);
    EXPECT_EQ(r.status, 400) << c.route << " " << c.body << "\n" << r.body;
    json e = json::parse(r.body);
    EXPECT_NE(e["field"].get<std::string>().find(c.field), std::string::npos)
        << c.route << " " << c.body << " -> " << r.body;
    EXPECT_FALSE(e["message"].get<std::string>().empty());
    EXPECT_TRUE(e.contains("code") && e.contains("hint"));
  }
  EXPECT_EQ(HandleApi(Ctx(), "/v1/nope", "", "{}").status, 404);
}

TEST(ApiTest, PastedConfigJsonPlansServing) {
  // A config.json pasted into the request (no file is read): Llama-2-7B's published config.
  json cfg = {{"architectures", {"LlamaForCausalLM"}},
              {"model_type", "llama"},
              {"hidden_size", 4096},
              {"intermediate_size", 11008},
              {"num_attention_heads", 32},
              {"num_hidden_layers", 32},
              {"num_key_value_heads", 32},
              {"vocab_size", 32000},
              {"max_position_embeddings", 4096},
              {"torch_dtype", "float16"},
              {"tie_word_embeddings", false},
              {"hidden_act", "silu"}};
  json body = kServeJob;
  body.erase("model");
  body["model_config"] = cfg;
  json pasted = Call("/v1/plan/infer", body, 200);
  json preset = Call("/v1/plan/infer", kServeJob, 200);
  ASSERT_FALSE(pasted["plans"].empty());
  // The same architecture gives the same deployment as the preset.
  EXPECT_EQ(pasted["plans"][0]["instance_type"], preset["plans"][0]["instance_type"]);
  EXPECT_EQ(pasted["plans"][0]["replicas"], preset["plans"][0]["replicas"]);
}

}  // namespace
}  // namespace gpuplan::server
