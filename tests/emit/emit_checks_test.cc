// Emitted files checked against the tools that read them (issue #13): every golden scenario's
// `vllm serve` flags, TrainingArguments and DeepSpeed keys against fixtures from the tools'
// pinned sources (tool_checks.h), shell syntax with bash -n; a deliberately broken copy fails
// each check. Also: autoscaling bounds derived from the plan, one training launch on every
// target, the serving image per engine, config.json and gated models, and quoting of values.
// (Kubernetes and SkyPilot schemas: tools/schema-check, CTest emit_schema_*.)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "emit/emit_internal.h"
#include "emit/tool_checks.h"
#include "gpuplan/catalog.h"
#include "gpuplan/emit.h"
#include "testing/test_util.h"

namespace {

namespace fs = std::filesystem;
using gpuplan::EmitOptions;
using gpuplan::EmittedFile;
using gpuplan::test::ArgList;
using gpuplan::test::ShellWords;
using gpuplan::test::Slurp;
using gpuplan::test::TempDir;
using nlohmann::json;

const fs::path kGolden = fs::path(GPUPLAN_SOURCE_DIR) / "tests/golden/emit";
const fs::path kFixtures = fs::path(GPUPLAN_SOURCE_DIR) / "tests/emit/fixtures";

const gpuplan::Catalog& Cat() {
  static const gpuplan::Catalog cat = *gpuplan::LoadBuiltinCatalog();
  return cat;
}
const ArgList& Vllm() {
  static const ArgList a = gpuplan::test::LoadArgList((kFixtures / "vllm_args.txt").string());
  return a;
}
const ArgList& Hf() {
  static const ArgList a =
      gpuplan::test::LoadArgList((kFixtures / "hf_training_args.txt").string());
  return a;
}
const ArgList& Ds() {
  static const ArgList a = gpuplan::test::LoadArgList((kFixtures / "deepspeed_keys.txt").string());
  return a;
}

struct GoldenPlan {
  std::string name;
  std::string text;
  json doc;
  bool train;
};
const std::vector<GoldenPlan>& Goldens() {
  static const std::vector<GoldenPlan> plans = [] {
    std::vector<GoldenPlan> v;
    for (const auto& e : fs::directory_iterator(kGolden)) {
      const std::string n = e.path().filename().string();
      if (n.size() <= 10 || n.substr(n.size() - 10) != ".plan.json") continue;
      GoldenPlan g{n.substr(0, n.size() - 10), Slurp(e.path()), json(), false};
      g.doc = json::parse(g.text);
      g.train = !g.doc["job"].contains("qps");
      v.push_back(std::move(g));
    }
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return v;
  }();
  return plans;
}

std::vector<EmittedFile> MustEmit(const std::string& text, const std::string& target,
                                  const EmitOptions& opt = {}) {
  auto r = gpuplan::Emit(text, target, opt, Cat());
  EXPECT_TRUE(r) << target << ": " << (r ? "" : r.error().ToString());
  return r ? *r : std::vector<EmittedFile>{};
}
const EmittedFile* Find(const std::vector<EmittedFile>& files, const std::string& name) {
  for (const auto& f : files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}
std::vector<YAML::Node> Docs(const std::string& text) {
  std::vector<YAML::Node> docs;
  for (const auto& d : YAML::LoadAll(text)) {
    if (d && !d.IsNull()) docs.push_back(d);
  }
  return docs;
}
YAML::Node DocOfKind(const std::string& text, const std::string& kind) {
  for (const auto& d : Docs(text)) {
    if (d["kind"] && d["kind"].as<std::string>() == kind) return d;
  }
  ADD_FAILURE() << "no " << kind;
  return YAML::Node();
}
std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// The words after `vllm serve MODEL` in a command text.
std::vector<std::string> VllmArgvIn(const std::string& text) {
  auto w = ShellWords(text);
  for (std::size_t i = 0; i + 2 < w.size(); ++i) {
    if (w[i] == "vllm" && w[i + 1] == "serve")
      return std::vector<std::string>(w.begin() + static_cast<long>(i) + 3, w.end());
  }
  ADD_FAILURE() << "no vllm serve in:\n" << text;
  return {};
}
// The `--flags` after train.py in a launch command.
std::vector<std::string> TrainFlagsIn(const std::string& text) {
  auto w = ShellWords(text);
  auto it = std::find(w.begin(), w.end(), "train.py");
  if (it == w.end()) return {};
  return std::vector<std::string>(it + 1, w.end());
}
// The torchrun command: from "torchrun" to the end of the text (the launch is the last thing).
std::string TorchrunIn(const std::string& text) {
  const auto pos = text.find("torchrun ");
  if (pos == std::string::npos) return "";
  std::string s = text.substr(pos);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\'')) s.pop_back();
  return s;
}

// The script srun runs on every node: the word after `bash -c` on the srun line.
std::string SrunScript(const std::string& sbatch) {
  const auto words = ShellWords(sbatch.substr(sbatch.find("\nsrun ")));
  auto it = std::find(words.begin(), words.end(), "-c");
  EXPECT_NE(it, words.end());
  return it != words.end() && it + 1 != words.end() ? *(it + 1) : "";
}

bool BashSyntaxOk(const std::string& script, std::string* why) {
  TempDir d;
  const std::string f = d.Write("s.sh", script);
  const std::string out = (d.path() / "err").string();
  const int rc = std::system(("bash -n '" + f + "' 2>'" + out + "'").c_str());
  if (why) *why = Slurp(out);
  return rc == 0;
}

TEST(ToolChecks, FixturesLoad) {
  // The pinned vLLM release's list holds every flag gpuplan writes (not the whole list).
  for (const char* flag :
       {"--tensor-parallel-size", "--pipeline-parallel-size", "--gpu-memory-utilization",
        "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--kv-cache-dtype",
        "--quantization", "--allow-deprecated-quantization", "--host", "--port"}) {
    EXPECT_TRUE(Vllm().types.count(flag)) << flag;
  }
  EXPECT_TRUE(Vllm().choices.count("--kv-cache-dtype"));
  EXPECT_TRUE(Vllm().sections.at("deprecated --quantization").count("fbgemm_fp8"));
  EXPECT_GE(Hf().types.size(), 100u);
  EXPECT_GE(Ds().sections.at("top").size(), 50u);
  EXPECT_TRUE(
      Ds().sections.at("zero_optimization").count("stage3_gather_16bit_weights_on_model_save"));
}

TEST(ToolChecks, EveryGoldenScenarioPassesTheToolLists) {
  int vllm = 0, hf = 0, ds = 0, shell = 0;
  for (const auto& g : Goldens()) {
    const std::string ctx = g.name;
    if (!g.train) {
      EmitOptions keda;
      keda.autoscaler = "keda";
      for (const auto& opt : {EmitOptions{}, keda}) {
        auto k8s = MustEmit(g.text, "k8s", opt);
        if (k8s.empty()) continue;
        auto dep = DocOfKind(k8s.front().contents, "Deployment");
        auto c = dep["spec"]["template"]["spec"]["containers"][0];
        if (c["command"][0].as<std::string>() == "vllm") {
          std::vector<std::string> argv;
          for (std::size_t i = 2; i < c["args"].size(); ++i)
            argv.push_back(c["args"][i].as<std::string>());
          EXPECT_EQ(Joined(gpuplan::test::CheckVllmArgs(argv, Vllm())), "") << ctx;
          ++vllm;
        }
      }
      auto sky = MustEmit(g.text, "skypilot");
      const std::string run = YAML::Load(sky.front().contents)["run"].as<std::string>();
      std::string why;
      EXPECT_TRUE(BashSyntaxOk(run, &why)) << ctx << ": " << why;
      ++shell;
      if (run.find("vllm serve") != std::string::npos) {
        EXPECT_EQ(Joined(gpuplan::test::CheckVllmArgs(VllmArgvIn(run), Vllm())), "") << ctx;
        ++vllm;
      }
      for (const auto& f : sky) {
        if (f.name == "build-engine.sh") {
          EXPECT_TRUE(BashSyntaxOk(f.contents, &why)) << ctx << ": " << why;
          ++shell;
        }
      }
      auto v = gpuplan::Emit(g.text, "vllm", {}, Cat());
      if (v) {
        const std::string& script = v->front().contents;
        EXPECT_TRUE(BashSyntaxOk(script, &why)) << ctx << ": " << why;
        EXPECT_EQ(Joined(gpuplan::test::CheckVllmArgs(
                      VllmArgvIn(script.substr(script.find("exec vllm"))), Vllm())),
                  "")
            << ctx;
        ++vllm;
        ++shell;
      }
      continue;
    }
    auto hf_files = MustEmit(g.text, "hf");
    if (std::system("command -v python3 >/dev/null 2>&1") ==
        0) {  // Python syntax of training_args.py
      TempDir d;
      const std::string f =
          d.Write("training_args.py", Find(hf_files, "training_args.py")->contents);
      EXPECT_EQ(std::system(
                    ("python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read())' '" + f + "'")
                        .c_str()),
                0)
          << ctx;
    }
    EXPECT_EQ(Joined(gpuplan::test::CheckHfArgsJson(
                  json::parse(Find(hf_files, "training_args.json")->contents), Hf())),
              "")
        << ctx;
    ++hf;
    if (const auto* d = Find(hf_files, "ds_config.json")) {
      EXPECT_EQ(Joined(gpuplan::test::CheckDeepSpeed(json::parse(d->contents), Ds())), "") << ctx;
      ++ds;
    }
    auto dsf = MustEmit(g.text, "deepspeed");
    EXPECT_EQ(Joined(gpuplan::test::CheckDeepSpeed(json::parse(dsf.front().contents), Ds())), "")
        << ctx;
    ++ds;
    auto slurm = MustEmit(g.text, "slurm");
    std::string why;
    EXPECT_TRUE(BashSyntaxOk(slurm.front().contents, &why)) << ctx << ": " << why;
    // The per-node script srun runs (bash -c '...') must parse too.
    const std::string per_node = SrunScript(slurm.front().contents);
    EXPECT_TRUE(BashSyntaxOk(per_node, &why)) << ctx << ": " << why;
    shell += 2;
    const std::string launch = TorchrunIn(per_node);
    if (launch.find("train.py") != std::string::npos) {
      EXPECT_EQ(Joined(gpuplan::test::CheckHfFlags(TrainFlagsIn(launch), Hf())), "") << ctx;
      ++hf;
    }
  }
  EXPECT_GE(vllm, 4);
  EXPECT_GE(hf, 6);
  EXPECT_GE(ds, 4);
  EXPECT_GE(shell, 10);
}

TEST(ToolChecks, BrokenFilesFailEachCheck) {
  // vLLM: a misspelt flag, a value outside the choices, a value of the wrong type.
  EXPECT_NE(Joined(gpuplan::test::CheckVllmArgs({"--max-num-seq", "256"}, Vllm())), "");
  EXPECT_NE(Joined(gpuplan::test::CheckVllmArgs({"--kv-cache-dtype", "fp16"}, Vllm())), "");
  EXPECT_NE(Joined(gpuplan::test::CheckVllmArgs({"--max-num-seqs", "4k"}, Vllm())), "");
  // A deprecated method without its switch, and with it.
  EXPECT_NE(Joined(gpuplan::test::CheckVllmArgs({"--quantization", "fbgemm_fp8"}, Vllm())), "");
  EXPECT_EQ(Joined(gpuplan::test::CheckVllmArgs(
                {"--quantization", "fbgemm_fp8", "--allow-deprecated-quantization"}, Vllm())),
            "");
  EXPECT_NE(Joined(gpuplan::test::CheckVllmArgs({"--quantization", "int8"}, Vllm())), "");
  EXPECT_EQ(
      Joined(gpuplan::test::CheckVllmArgs({"--max-num-seqs", "256", "--enforce-eager"}, Vllm())),
      "");
  // TrainingArguments: a misspelt key, a wrong type, a save strategy HF does not have.
  EXPECT_NE(Joined(gpuplan::test::CheckHfArgsJson(json{{"save_step", 10}}, Hf())), "");
  EXPECT_NE(Joined(gpuplan::test::CheckHfArgsJson(json{{"bf16", "yes"}}, Hf())), "");
  EXPECT_NE(Joined(gpuplan::test::CheckHfArgsJson(json{{"save_strategy", "hourly"}}, Hf())), "");
  EXPECT_NE(Joined(gpuplan::test::CheckHfFlags({"--save_stepz", "3"}, Hf())), "");
  EXPECT_NE(Joined(gpuplan::test::CheckHfFlags({"--bf16", "yes"}, Hf())), "");
  EXPECT_EQ(Joined(gpuplan::test::CheckHfFlags({"--save_steps", "3", "--bf16", "True"}, Hf())), "");
  // DeepSpeed: a misspelt section, a ZeRO key that does not exist, an offload key typo.
  EXPECT_NE(
      Joined(gpuplan::test::CheckDeepSpeed(json{{"zero_optimisation", {{"stage", 2}}}}, Ds())), "");
  EXPECT_NE(
      Joined(gpuplan::test::CheckDeepSpeed(
          json{{"zero_optimization", {{"stage3_gather_16bit_weights_on_save", true}}}}, Ds())),
      "");
  EXPECT_NE(Joined(gpuplan::test::CheckDeepSpeed(
                json{{"zero_optimization", {{"offload_param", {{"devce", "none"}}}}}}, Ds())),
            "");
  EXPECT_NE(
      Joined(gpuplan::test::CheckDeepSpeed(json{{"zero_optimization", {{"stage", 4}}}}, Ds())), "");
  // A golden file broken on purpose fails as a whole.
  const GoldenPlan* gp = &Goldens().front();
  for (const auto& x : Goldens()) {
    if (x.name == "infer-llama-3.1-8b") gp = &x;
  }
  const auto& g = *gp;
  auto files = MustEmit(g.text, g.train ? "deepspeed" : "vllm");
  std::string broken = files.front().contents;
  if (g.train) {
    broken.replace(broken.find("\"train_batch_size\""), 18, "\"train_batchsize\"");
    EXPECT_NE(Joined(gpuplan::test::CheckDeepSpeed(json::parse(broken), Ds())), "");
  } else {
    broken.replace(broken.find("--max-num-seqs"), 14, "--max-num-seq");
    EXPECT_NE(Joined(gpuplan::test::CheckVllmArgs(
                  VllmArgvIn(broken.substr(broken.find("exec vllm"))), Vllm())),
              "");
  }
  std::string why;
  EXPECT_FALSE(BashSyntaxOk("vllm serve 'unterminated \\\n", &why));
}

int CeilDiv(double a, double b) { return static_cast<int>(std::ceil(a / b - 1e-9)); }

TEST(EmitAutoscaling, TargetsDeriveFromThePlan) {
  int checked = 0;
  for (const auto& g : Goldens()) {
    if (g.train) continue;
    const json& p = g.doc["plans"][0];
    const double cap = p["capacity_qps_per_replica"].get<double>();
    const double qps = g.doc["job"]["qps"].get<double>();
    const int replicas = p["replicas"].get<int>();
    EmitOptions opt;
    opt.off_peak_qps = qps / 4;
    auto hpa = DocOfKind(MustEmit(g.text, "k8s", opt).front().contents, "HorizontalPodAutoscaler");
    const std::string av =
        hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"].as<std::string>();
    ASSERT_EQ(av.back(), 'm') << av;
    EXPECT_NEAR(std::stod(av.substr(0, av.size() - 1)) / 1000.0, cap, 0.0005 + 1e-9) << g.name;
    EXPECT_EQ(hpa["spec"]["maxReplicas"].as<int>(), std::max(replicas, CeilDiv(qps, cap)))
        << g.name;
    EXPECT_EQ(hpa["spec"]["minReplicas"].as<int>(), std::max(1, CeilDiv(qps / 4, cap))) << g.name;
    EXPECT_LE(hpa["spec"]["minReplicas"].as<int>(), hpa["spec"]["maxReplicas"].as<int>());
    EXPECT_EQ(hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"].as<int>(), 300);
    EXPECT_EQ(hpa["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"].as<int>(), 0);
    // KEDA: the same bounds, the threshold is the per-replica capacity, a real engine metric.
    opt.autoscaler = "keda";
    auto so = DocOfKind(MustEmit(g.text, "k8s", opt).front().contents, "ScaledObject");
    EXPECT_NEAR(std::stod(so["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>()),
                cap, 0.0005 + 1e-9);
    EXPECT_EQ(so["spec"]["maxReplicaCount"].as<int>(), hpa["spec"]["maxReplicas"].as<int>());
    EXPECT_EQ(so["spec"]["minReplicaCount"].as<int>(), hpa["spec"]["minReplicas"].as<int>());
    const std::string query = so["spec"]["triggers"][0]["metadata"]["query"].as<std::string>();
    EXPECT_TRUE(query.find("vllm:request_success_total") != std::string::npos ||
                query.find("nv_inference_request_success") != std::string::npos ||
                query.find("ovms_requests_success") != std::string::npos)
        << query;
    // SkyPilot: the same target and bounds.
    auto sky = YAML::Load(MustEmit(g.text, "skypilot", opt).front().contents);
    EXPECT_NEAR(sky["service"]["replica_policy"]["target_qps_per_replica"].as<double>(), cap,
                0.0005 + 1e-9);
    EXPECT_EQ(sky["service"]["replica_policy"]["min_replicas"].as<int>(),
              hpa["spec"]["minReplicas"].as<int>());
    // A user floor and a higher peak.
    EmitOptions floor;
    floor.min_replicas = 2;
    floor.peak_qps = 3 * qps;
    auto h2 = DocOfKind(MustEmit(g.text, "k8s", floor).front().contents, "HorizontalPodAutoscaler");
    EXPECT_EQ(h2["spec"]["maxReplicas"].as<int>(), std::max({2, replicas, CeilDiv(3 * qps, cap)}));
    EXPECT_EQ(h2["spec"]["minReplicas"].as<int>(), 2);
    // A floor above the plan's peak fleet is kept (never silently lowered), and max rises to it.
    floor.min_replicas = 50;
    const std::string high = MustEmit(g.text, "k8s", floor).front().contents;
    auto h3 = DocOfKind(high, "HorizontalPodAutoscaler");
    EXPECT_EQ(h3["spec"]["minReplicas"].as<int>(), 50);
    EXPECT_EQ(h3["spec"]["maxReplicas"].as<int>(), 50);
    EXPECT_NE(high.find("raised to the user's floor"), std::string::npos);
    // An off-peak load above the plan's peak (and no --peak-qps) is an error, not clamped.
    EmitOptions above;
    above.off_peak_qps = 2 * qps;
    auto ra = gpuplan::Emit(g.text, "k8s", above, Cat());
    ASSERT_FALSE(ra) << g.name;
    EXPECT_EQ(ra.error().field, "--off-peak-qps");
    // No off-peak load and no floor: one replica, and the file says why.
    auto text = MustEmit(g.text, "k8s").front().contents;
    EXPECT_EQ(DocOfKind(text, "HorizontalPodAutoscaler")["spec"]["minReplicas"].as<int>(), 1);
    EXPECT_NE(text.find("no off-peak load given"), std::string::npos);
    ++checked;
  }
  EXPECT_GE(checked, 3);
  // Bad options are exit-2 errors naming the flag.
  const auto& any = Goldens().front();
  EmitOptions bad;
  bad.off_peak_qps = -1;
  auto r = gpuplan::Emit(any.text, "k8s", bad, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "--off-peak-qps");
  bad = EmitOptions{};
  bad.k8s_training = "tfjob";
  r = gpuplan::Emit(any.text, "k8s", bad, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "--k8s-training");
  bad = EmitOptions{};
  bad.min_replicas = -2;
  r = gpuplan::Emit(any.text, "k8s", bad, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "--min-replicas");
  for (const char* image : {"evil;rm -rf /", "a b", "-x", "img:", "a//b", "\"q\""}) {
    bad = EmitOptions{};
    bad.image = image;
    r = gpuplan::Emit(any.text, "k8s", bad, Cat());
    ASSERT_FALSE(r) << image;
    EXPECT_EQ(r.error().field, "--image");
  }
  for (const char* image : {"nvcr.io/nvidia/pytorch:24.07-py3", "localhost:5000/a/b@sha256:0f"}) {
    EmitOptions ok;
    ok.image = image;
    EXPECT_TRUE(gpuplan::Emit(any.text, "k8s", ok, Cat())) << image;
  }
}

TEST(EmitTraining, SameLaunchAndConfigEverywhere) {
  int checked = 0;
  for (const auto& g : Goldens()) {
    if (!g.train) continue;
    const json& p = g.doc["plans"][0];
    const json& l = p["layout"];
    auto k8s = MustEmit(g.text, "k8s");
    auto job = DocOfKind(k8s.front().contents, "Job");
    const std::string k8s_launch = TorchrunIn(
        job["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>());
    auto sky = MustEmit(g.text, "skypilot");
    auto task = YAML::Load(sky.front().contents);
    const std::string sky_launch = TorchrunIn(task["run"].as<std::string>());
    auto slurm = MustEmit(g.text, "slurm");
    const std::string slurm_launch = TorchrunIn(SrunScript(slurm.front().contents));
    EmitOptions pj;
    pj.k8s_training = "pytorchjob";
    auto pjob = DocOfKind(MustEmit(g.text, "k8s", pj).front().contents, "PyTorchJob");
    const auto master = pjob["spec"]["pytorchReplicaSpecs"]["Master"];
    const std::string pj_launch =
        TorchrunIn(master["template"]["spec"]["containers"][0]["command"][2].as<std::string>());
    EXPECT_EQ(master["template"]["spec"]["containers"][0]["name"].as<std::string>(), "pytorch");
    EXPECT_EQ(pjob["spec"]["nprocPerNode"].as<std::string>(),
              std::to_string(p["gpus_per_node"].get<int>()));
    const int workers = pjob["spec"]["pytorchReplicaSpecs"]["Worker"]
                            ? pjob["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"].as<int>()
                            : 0;
    EXPECT_EQ(1 + workers, p["nodes"].get<int>());
    ASSERT_FALSE(k8s_launch.empty()) << g.name;
    EXPECT_EQ(k8s_launch, pj_launch) << g.name;
    EXPECT_EQ(k8s_launch, sky_launch) << g.name;
    EXPECT_EQ(k8s_launch, slurm_launch) << g.name;
    const bool megatron = g.doc["job"].value("framework", "") == "megatron-core";
    const int zero = l["zero_stage"].get<int>();
    if (megatron) {
      EXPECT_NE(k8s_launch.find("pretrain_gpt.py"), std::string::npos);
      EXPECT_NE(k8s_launch.find(fmt::format("--tensor-model-parallel-size {}", l["tp"].get<int>())),
                std::string::npos);
    } else {
      EXPECT_NE(k8s_launch.find("train.py"), std::string::npos);
      EXPECT_EQ(
          k8s_launch.find("--deepspeed \"$GPUPLAN_CONFIG/ds_config.json\"") != std::string::npos,
          zero > 0)
          << g.name;
    }
    // Checkpoint interval from the job (2 h in B16, 4 h in B15), never the 1 h default.
    const double interval = g.doc["job"].value("checkpoint_interval_hours", 1.0);
    const long steps = std::lround(interval * 3600 / p["step_time_s"].get<double>());
    const std::string save =
        megatron ? fmt::format("--save-interval {}", steps) : fmt::format("--save_steps {}", steps);
    EXPECT_NE(k8s_launch.find(save), std::string::npos) << g.name << "\n" << k8s_launch;
    EXPECT_NE(k8s_launch.find("/nvme/ckpt/"), std::string::npos);
    // The same config files: the ConfigMap (k8s), the SkyPilot file_mounts sources, Slurm's files.
    auto cm = DocOfKind(k8s.front().contents, "ConfigMap");
    for (const auto& f : slurm) {
      if (f.name == "train.sbatch") continue;
      EXPECT_EQ(cm["data"][f.name].as<std::string>(), f.contents) << g.name << " " << f.name;
      ASSERT_NE(Find(sky, f.name), nullptr) << g.name << " " << f.name;
      EXPECT_EQ(Find(sky, f.name)->contents, f.contents);
      EXPECT_EQ(task["file_mounts"]["/gpuplan/" + f.name].as<std::string>(), "./" + f.name);
    }
    EXPECT_EQ(Find(slurm, "ds_config.json") != nullptr, !megatron && zero > 0) << g.name;
    EXPECT_EQ(task["workdir"].as<std::string>(), ".");
    EXPECT_EQ(task["num_nodes"].as<int>(), p["nodes"].get<int>());
    EXPECT_TRUE(task["setup"].IsScalar());
    if (g.name.find("b16") != std::string::npos) {
      EXPECT_EQ(interval, 2.0);
      EXPECT_EQ(zero, 3);
      const auto a = json::parse(Find(MustEmit(g.text, "hf"), "training_args.json")->contents);
      EXPECT_EQ(a["save_steps"].get<long>(), steps);
      EXPECT_EQ(Find(MustEmit(g.text, "hf"), "training_args.py")->contents.find("planner default"),
                std::string::npos);
    }
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

TEST(EmitServing, ImageAndPrecisionPerEngine) {
  std::map<std::string, std::string> image;
  for (const auto& g : Goldens()) {
    if (g.train) continue;
    auto k8s = MustEmit(g.text, "k8s");
    auto dep = DocOfKind(k8s.front().contents, "Deployment");
    image[g.name] = dep["spec"]["template"]["spec"]["containers"][0]["image"].as<std::string>();
  }
  EXPECT_EQ(image.at("infer-llama-3.1-8b"), gpuplan::emit::kVllmImage);
  EXPECT_EQ(image.at("infer-resnet50-int8-t4"), gpuplan::emit::kTritonImage);
  EXPECT_EQ(image.at("infer-bert-base-cpu"), gpuplan::emit::kOpenVinoImage);
  // The CNN plan is INT8: the TensorRT engine is built with --int8, batch range up to the plan's.
  const auto* g = &Goldens().front();
  for (const auto& x : Goldens()) {
    if (x.name == "infer-resnet50-int8-t4") g = &x;
  }
  auto k8s = MustEmit(g->text, "k8s");
  auto cm = DocOfKind(k8s.front().contents, "ConfigMap");
  const std::string build = cm["data"]["build-engine.sh"].as<std::string>();
  EXPECT_NE(build.find("--int8"), std::string::npos);
  EXPECT_NE(build.find(fmt::format("--maxShapes=\"$INPUT_NAME\":{}x",
                                   g->doc["plans"][0]["batch"].get<int>())),
            std::string::npos);
  EXPECT_NE(cm["data"]["config.pbtxt"].as<std::string>().find("platform: \"tensorrt_plan\""),
            std::string::npos);
  auto dep = DocOfKind(k8s.front().contents, "Deployment");
  EXPECT_EQ(dep["spec"]["template"]["spec"]["initContainers"][0]["image"].as<std::string>(),
            gpuplan::emit::kTensorRtImage);
}

TEST(EmitServing, TgiPlanRunsTgiWithItsMetric) {
  auto plan = gpuplan::test::RunCli(
      {"--json", "plan", "infer", "--model", "Llama-3.1-8B", "--qps", "10", "--engine", "tgi"});
  ASSERT_EQ(plan.exit_code, 0) << plan.Describe();
  const json doc = json::parse(plan.out);
  EmitOptions keda;
  keda.autoscaler = "keda";
  const std::string k8s = MustEmit(plan.out, "k8s", keda).front().contents;
  auto c = DocOfKind(k8s, "Deployment")["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), gpuplan::emit::kTgiImage);
  EXPECT_EQ(c["command"][0].as<std::string>(), "text-generation-launcher");
  auto so = DocOfKind(k8s, "ScaledObject");
  EXPECT_NE(
      so["spec"]["triggers"][0]["metadata"]["query"].as<std::string>().find("tgi_request_success"),
      std::string::npos);
  auto sky = YAML::Load(MustEmit(plan.out, "skypilot").front().contents);
  std::string why;
  EXPECT_TRUE(BashSyntaxOk(sky["run"].as<std::string>(), &why)) << why;
  EXPECT_NE(sky["run"].as<std::string>().find(gpuplan::emit::kTgiImage), std::string::npos);
  // vllm is for vLLM plans only.
  auto v = gpuplan::Emit(plan.out, "vllm", {}, Cat());
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().field, "job.engine");
}

// A Llama-style config.json (Llama-2-7B's shape), planned from its path.
constexpr const char* kLlamaConfig = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
  "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
  "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "torch_dtype": "float16"})";

TEST(EmitModels, ConfigJsonPathPlansAndEmits) {
  TempDir d;
  const std::string cfg = d.Write("my-model/config.json", kLlamaConfig);
  auto plan = gpuplan::test::RunCli({"--json", "plan", "infer", "--model", cfg, "--qps", "2"});
  ASSERT_EQ(plan.exit_code, 0) << plan.Describe();
  const std::string plan_file = d.Write("plan.json", plan.out);
  EXPECT_EQ(json::parse(plan.out)["job"]["model_ref"].get<std::string>(),
            fs::absolute(cfg).lexically_normal().string());
  auto v = gpuplan::test::RunCli({"emit", "vllm", "--plan", plan_file});
  ASSERT_EQ(v.exit_code, 0) << v.Describe();
  const auto words = ShellWords(v.out.substr(v.out.find("exec vllm serve")));
  EXPECT_EQ(words.at(3), (d.path() / "my-model").lexically_normal().string());
  EXPECT_EQ(v.out.find("HF_TOKEN:?"), std::string::npos);  // a local model needs no token
  auto k = gpuplan::test::RunCli({"emit", "k8s", "--plan", plan_file});
  ASSERT_EQ(k.exit_code, 0) << k.Describe();
  auto dep = DocOfKind(k.out, "Deployment");
  EXPECT_EQ(dep["spec"]["template"]["spec"]["containers"][0]["args"][1].as<std::string>(),
            "/models/local/my-model");
  EXPECT_NE(k.out.find("copy its directory"), std::string::npos);
  auto s = gpuplan::test::RunCli({"emit", "skypilot", "--plan", plan_file});
  EXPECT_EQ(s.exit_code, 0) << s.Describe();
}

// A DeepSpeed plan with tensor parallelism runs it as AutoTP training: the config carries
// tensor_parallel.autotp_size (a key of the pinned DeepSpeed's TPTrainingConfig) beside ZeRO <= 2.
TEST(EmitTraining, DeepSpeedTensorParallelIsAutoTp) {
  const GoldenPlan* base = nullptr;
  for (const auto& g : Goldens()) {
    if (g.train) base = &g;
  }
  ASSERT_NE(base, nullptr);
  json doc = base->doc;
  json& l = doc["plans"][0]["layout"];
  l["tp"] = 2;
  l["dp"] = 4;
  l["pp"] = 1;
  l["zero_stage"] = 2;
  l["framework"] = "deepspeed";
  auto files = MustEmit(doc.dump(), "deepspeed");
  ASSERT_FALSE(files.empty());
  const json ds = json::parse(files.front().contents);
  EXPECT_EQ(ds["tensor_parallel"]["autotp_size"], 2) << ds.dump();
  EXPECT_EQ(Joined(gpuplan::test::CheckDeepSpeed(ds, Ds())), "");
  json z3 = ds;
  z3["zero_optimization"]["stage"] = 3;
  EXPECT_NE(Joined(gpuplan::test::CheckDeepSpeed(z3, Ds())), "");
}

// A Megatron-Core MoE plan launches the model that was planned: experts, routing, expert and
// context parallelism (before, the launch trained a dense model of the same shape).
TEST(EmitTraining, MegatronMoeLaunchCarriesExpertsAndLayout) {
  TempDir d;
  auto plan = gpuplan::test::RunCli({"--json", "plan", "train", "--model", "Mixtral-8x7B-v0.1",
                                     "--method", "pretrain", "--tokens", "1e11", "--framework",
                                     "megatron-core", "--top", "1"});
  ASSERT_EQ(plan.exit_code, 0) << plan.Describe();
  const json doc = json::parse(plan.out);
  const json& l = doc["plans"][0]["layout"];
  ASSERT_GT(l["ep"].get<int>(), 1) << l.dump();
  const std::string plan_file = d.Write("plan.json", plan.out);
  auto s = gpuplan::test::RunCli({"emit", "slurm", "--plan", plan_file});
  ASSERT_EQ(s.exit_code, 0) << s.Describe();
  const std::string launch = TorchrunIn(SrunScript(s.out));
  for (const std::string& want :
       {std::string("--num-experts 8"), std::string("--moe-router-topk 2"),
        std::string("--moe-ffn-hidden-size 14336"),
        fmt::format("--expert-model-parallel-size {}", l["ep"].get<int>()),
        std::string("--expert-tensor-parallel-size 1")}) {
    EXPECT_NE(launch.find(want), std::string::npos) << want << "\n" << launch;
  }
  EXPECT_EQ(launch.find("--context-parallel-size") != std::string::npos, l["cp"].get<int>() > 1);
}

TEST(EmitModels, GatedPresetWiresTheToken) {
  const GoldenPlan* llama = nullptr;
  for (const auto& g : Goldens()) {
    if (g.name == "infer-llama-3.1-8b") llama = &g;
  }
  ASSERT_NE(llama, nullptr);
  auto dep = DocOfKind(MustEmit(llama->text, "k8s").front().contents, "Deployment");
  auto c = dep["spec"]["template"]["spec"]["containers"][0];
  bool token = false, cache = false;
  for (const auto& e : c["env"]) {
    if (e["name"].as<std::string>() == "HF_TOKEN") {
      token = true;
      EXPECT_EQ(e["valueFrom"]["secretKeyRef"]["name"].as<std::string>(), "hf-token");
      EXPECT_FALSE(e["valueFrom"]["secretKeyRef"]["optional"].as<bool>());  // gated: required
    }
    if (e["name"].as<std::string>() == "HF_HOME") cache = e["value"].as<std::string>() == "/models";
  }
  EXPECT_TRUE(token);
  EXPECT_TRUE(cache);
  bool pvc = false;
  for (const auto& v : dep["spec"]["template"]["spec"]["volumes"]) {
    if (v["persistentVolumeClaim"]) pvc = true;
  }
  EXPECT_TRUE(pvc);
  auto sky = YAML::Load(MustEmit(llama->text, "skypilot").front().contents);
  EXPECT_TRUE(sky["secrets"]["HF_TOKEN"].IsNull());
  const std::string script = MustEmit(llama->text, "vllm").front().contents;
  EXPECT_NE(script.find("${HF_TOKEN:?"), std::string::npos);
  // A public model: the Secret is optional.
  auto open =
      gpuplan::test::RunCli({"--json", "plan", "infer", "--model", "Qwen2.5-7B", "--qps", "2"});
  ASSERT_EQ(open.exit_code, 0) << open.Describe();
  auto od = DocOfKind(MustEmit(open.out, "k8s").front().contents, "Deployment");
  for (const auto& e : od["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (e["name"].as<std::string>() == "HF_TOKEN") {
      EXPECT_TRUE(e["valueFrom"]["secretKeyRef"]["optional"].as<bool>());
    }
  }
}

TEST(EmitQuoting, InjectedValuesStayInert) {
  const std::vector<std::string> nasty = {"plain",
                                          "a b",
                                          "it's",
                                          "$(touch /tmp/pwned)",
                                          "`id`",
                                          "x; rm -rf /",
                                          "line1\nrm -rf /",
                                          "\"quoted\"",
                                          "",
                                          "--flag=1",
                                          "back\\slash"};
  for (const auto& s : nasty) {
    TempDir d;
    const std::string out = (d.path() / "out").string();
    const std::string cmd = "printf '%s' " + gpuplan::emit::ShellQuote(s) + " > '" + out + "'";
    ASSERT_EQ(std::system(("bash -c " + gpuplan::emit::ShellQuote(cmd)).c_str()), 0) << s;
    EXPECT_EQ(Slurp(out), s);  // one word, exactly the value: nothing ran
  }
  for (const auto& s : nasty) {
    gpuplan::emit::ojson j = {{"key", s}, {"list", gpuplan::emit::ojson::array({s})}};
    auto n = YAML::Load(gpuplan::emit::Yaml(j));
    EXPECT_EQ(n["key"].as<std::string>(), s);
    EXPECT_EQ(n["list"][0].as<std::string>(), s);
    EXPECT_EQ(n.size(), 2u);
  }
  for (const char* s : {"yes", "on", "1e3", "0x10", "null", "8000", "true"}) {
    auto n = YAML::Load(gpuplan::emit::Yaml(gpuplan::emit::ojson{{"v", s}}));
    EXPECT_EQ(n["v"].Tag(), "!") << s;  // quoted: a string for every YAML reader
  }
  // A plan whose model name carries a newline and a command: every comment stays a comment.
  for (const auto& g : Goldens()) {
    json doc = g.doc;
    doc["job"]["model"] = "Evil\nrm -rf / #";
    for (const auto& target : gpuplan::EmitTargets()) {
      auto r = gpuplan::Emit(doc.dump(), target, {}, Cat());
      if (!r) continue;
      for (const auto& f : *r) {
        for (std::size_t pos = 0; (pos = f.contents.find("\nrm -rf", pos)) != std::string::npos;
             ++pos) {
          ADD_FAILURE() << g.name << " " << target << " " << f.name << ": injected line";
        }
        const std::string ext = fs::path(f.name).extension().string();
        if (ext == ".sh" || ext == ".sbatch") {
          std::string why;
          EXPECT_TRUE(BashSyntaxOk(f.contents, &why)) << why;
        }
        if (ext == ".yaml") {
          EXPECT_NO_THROW(Docs(f.contents)) << g.name << " " << f.name;
        }
      }
    }
  }
}

}  // namespace
