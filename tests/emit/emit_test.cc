// Tests for `gpuplan emit` (docs/emit.md): plans come from the real planners through the CLI
// (`gpuplan --json plan train|infer ...`); every emitted file must parse (yaml-cpp,
// nlohmann-json) and carry the plan's values; the vLLM flags must imply the planner's KV
// capacity within 1 %; bad input exits 2 and leaves no files.
#include "gpuplan/emit.h"
#include "gpuplan/serve.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "testing/test_util.h"
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
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

#include "emit/emit_internal.h"
#include "gpuplan/catalog.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;

using gpuplan::test::Has;
using gpuplan::test::RunCli;
using gpuplan::test::RunResult;
using gpuplan::test::Slurp;
using gpuplan::test::TempDir;

// One planned scenario: the CLI arguments after `--json plan`, and whether it is training.
struct Scenario {
  std::string name;
  std::vector<std::string> args;
  bool train;
};

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> kScenarios = {
      {"serve_llama3_8b", {"infer", "--model", "Llama-3-8B", "--qps", "5"}, false},
      {"serve_llama3_8b_fp8",
       {"infer", "--model", "Llama-3-8B", "--qps", "20", "--quant", "fp8"},
       false},
      {"serve_llama2_70b", {"infer", "--model", "Llama-2-70B", "--qps", "2"}, false},
      {"serve_llama2_13b_awq",
       {"infer", "--model", "Llama-2-13B", "--qps", "3", "--quant", "awq"},
       false},
      {"train_llama2_7b", {"train", "--model", "Llama-2-7B", "--tokens", "1B"}, true},
      {"train_llama2_70b_spot",
       {"train", "--model", "Llama-2-70B", "--tokens", "10B", "--max-nodes", "4", "--spot"},
       true},
      {"train_llama2_13b",
       {"train", "--model", "Llama-2-13B", "--tokens", "2B", "--max-nodes", "2"},
       true},
  };
  return kScenarios;
}

// Serving scenarios of models whose checkpoint declares its quantization (gpt-oss's MXFP4
// experts: no --quantization flag) or that have sliding-window layers (Gemma-3).
const std::vector<Scenario>& ModelScenarios() {
  static const std::vector<Scenario> kScenarios = {
      {"serve_gptoss_20b", {"infer", "--model", "gpt-oss-20b", "--qps", "5"}, false},
      {"serve_gemma3_27b_long",
       {"infer", "--model", "gemma-3-27b", "--qps", "1", "--input-len", "16000", "--output-len",
        "500"},
       false},
      // Gemma-2 is older than the image, but beyond its 4096-token window the plan counts the
      // window only where vLLM >= 0.10 does.
      {"serve_gemma2_9b_long",
       {"infer", "--model", "gemma-2-9b", "--qps", "1", "--input-len", "6000", "--output-len",
        "500"},
       false},
  };
  return kScenarios;
}

// Plan JSON text per scenario, computed once.
const std::string& PlanText(const Scenario& s) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(s.name);
  if (it != cache.end()) return it->second;
  std::vector<std::string> args = {"--json", "plan"};
  args.insert(args.end(), s.args.begin(), s.args.end());
  RunResult r = RunCli(args);
  EXPECT_EQ(r.exit_code, 0) << s.name << "\n" << r.Describe();
  return cache[s.name] = r.out;
}

const gpuplan::Catalog& Cat() {
  static const gpuplan::Catalog cat = *gpuplan::LoadBuiltinCatalog();
  return cat;
}

std::vector<YAML::Node> ParseYaml(const std::string& text) {
  std::vector<YAML::Node> docs;
  for (const auto& d : YAML::LoadAll(text)) {
    if (d && !d.IsNull()) docs.push_back(d);
  }
  return docs;
}

// Every file of every applicable target parses as its extension says.
void ParseAll(const std::vector<gpuplan::EmittedFile>& files, const std::string& ctx) {
  ASSERT_FALSE(files.empty()) << ctx;
  for (const auto& f : files) {
    const std::string ext = fs::path(f.name).extension().string();
    if (ext == ".yaml") {
      EXPECT_NO_THROW({ EXPECT_FALSE(ParseYaml(f.contents).empty()) << ctx << " " << f.name; })
          << ctx << " " << f.name;
    } else if (ext == ".json") {
      EXPECT_TRUE(json::accept(f.contents)) << ctx << " " << f.name;
    } else {
      EXPECT_FALSE(f.contents.empty()) << ctx << " " << f.name;
    }
  }
}

const gpuplan::EmittedFile* Find(const std::vector<gpuplan::EmittedFile>& files,
                                 const std::string& name) {
  for (const auto& f : files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Value of `--flag value` in a command line.
std::string Flag(const std::string& cmd, const std::string& flag) {
  std::smatch m;
  const std::regex re(flag + R"(\s+(\S+))");
  return std::regex_search(cmd, m, re) ? m[1].str() : "";
}

// The `vllm serve` flags of an emitted command, for plan `p` of plan document `doc`.
gpuplan::VllmFlags FlagsOf(const std::string& cmd, const nlohmann::json& doc,
                           const nlohmann::json& p) {
  gpuplan::VllmFlags f;
  f.model = doc["job"]["model"].get<std::string>();
  f.accelerator = p["accelerator"].get<std::string>();
  f.tensor_parallel_size = std::stoi(Flag(cmd, "--tensor-parallel-size"));
  f.pipeline_parallel_size = std::stoi(Flag(cmd, "--pipeline-parallel-size"));
  f.gpu_memory_utilization = std::stod(Flag(cmd, "--gpu-memory-utilization"));
  f.max_model_len = std::stoi(Flag(cmd, "--max-model-len"));
  f.max_num_seqs = std::stoi(Flag(cmd, "--max-num-seqs"));
  f.max_num_batched_tokens = std::stoi(Flag(cmd, "--max-num-batched-tokens"));
  f.quantization = Flag(cmd, "--quantization");
  f.kv_cache_dtype = Flag(cmd, "--kv-cache-dtype");
  return f;
}

// The launch runs the framework the planner chose for the layout: Megatron-LM's pretrain_gpt.py
// (its distributed optimizer is the plan's ZeRO-1), the HF Trainer with PyTorch FSDP when the
// planner chose FSDP (FULL_SHARD for ZeRO-3, SHARD_GRAD_OP for ZeRO-2, CPU offload as planned),
// or with DeepSpeed when ZeRO > 0 otherwise.
void ExpectLaunchMatchesPlan(const std::string& launch, const nlohmann::json& p,
                             const std::string& ctx) {
  const std::string fw = p["layout"].value("framework", std::string());
  const int zero = p["layout"]["zero_stage"].get<int>();
  if (fw.rfind("megatron", 0) == 0) {
    EXPECT_NE(launch.find("pretrain_gpt.py"), std::string::npos) << ctx;
    EXPECT_EQ(launch.find("--use-distributed-optimizer") != std::string::npos, zero > 0) << ctx;
  } else if (fw == "fsdp" && zero >= 2) {
    EXPECT_EQ(launch.find("--deepspeed"), std::string::npos) << ctx;
    const std::string mode = zero >= 3 ? "full_shard" : "shard_grad_op";
    EXPECT_NE(launch.find("--fsdp "), std::string::npos) << ctx;
    EXPECT_NE(launch.find(mode + " "), std::string::npos) << ctx;
    EXPECT_EQ(launch.find(" offload ") != std::string::npos,
              p["layout"].value("optimizer_offload", false))
        << ctx;
  } else {
    EXPECT_EQ(launch.find("--deepspeed") != std::string::npos, zero > 0) << ctx;
  }
}

TEST(Emit, EveryTargetParsesAndCarriesThePlan) {
  for (const auto& s : Scenarios()) {
    const std::string& text = PlanText(s);
    const json doc = json::parse(text);
    for (std::size_t rank = 1; rank <= std::min<std::size_t>(2, doc["plans"].size()); ++rank) {
      const json& p = doc["plans"][rank - 1];
      const std::string ctx = s.name + " rank " + std::to_string(rank);
      gpuplan::EmitOptions opt;
      opt.rank = static_cast<int>(rank);
      for (const auto& target : gpuplan::EmitTargets()) {
        const bool train_only = target == "slurm" || target == "hf" || target == "deepspeed";
        auto r = gpuplan::Emit(text, target, opt, Cat());
        if ((train_only && !s.train) || (target == "vllm" && s.train)) {
          ASSERT_FALSE(r) << ctx << " " << target;
          EXPECT_EQ(r.error().field, "target");
          continue;
        }
        ASSERT_TRUE(r) << ctx << " " << target << ": " << r.error().ToString();
        ParseAll(*r, ctx + " " + target);
      }
      // k8s: GPUs, replicas, autoscaler (B12).
      auto k8s = gpuplan::Emit(text, "k8s", opt, Cat());
      ASSERT_TRUE(k8s);
      auto docs = ParseYaml(k8s->front().contents);
      auto kind = [&](const std::vector<YAML::Node>& ds, const std::string& k) {
        for (const auto& d : ds) {
          if (d["kind"].as<std::string>() == k) return d;
        }
        ADD_FAILURE() << ctx << ": no " << k;
        return YAML::Node();
      };
      if (!s.train) {
        // PVC (model cache) + Deployment + Service + autoscaler (issue #13).
        ASSERT_EQ(docs.size(), 4u) << ctx;
        const auto dep = kind(docs, "Deployment");
        const auto c = dep["spec"]["template"]["spec"]["containers"][0];
        EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"].as<int>(),
                  p["gpus_per_replica"].get<int>())
            << ctx;
        EXPECT_EQ(dep["spec"]["template"]["spec"]["tolerations"][0]["key"].as<std::string>(),
                  "nvidia.com/gpu");
        // Placement: the instance type on a hyperscaler, else the GPU as GPU Feature Discovery
        // labels it (the NVML name with dashes: "NVIDIA-L40S", "Tesla-T4").
        const auto sel = dep["spec"]["template"]["spec"]["nodeSelector"];
        const std::string cloud = p["cloud"].get<std::string>();
        if (cloud == "aws" || cloud == "gcp" || cloud == "azure" || cloud == "oci") {
          EXPECT_EQ(sel["node.kubernetes.io/instance-type"].as<std::string>(),
                    p["instance_type"].get<std::string>())
              << ctx;
        } else if (!p["accelerator"].get<std::string>().empty()) {
          const std::string product = sel["nvidia.com/gpu.product"].as<std::string>();
          EXPECT_TRUE(product.rfind("NVIDIA-", 0) == 0 || product.rfind("Tesla-", 0) == 0)
              << ctx << ": " << product;
          EXPECT_EQ(product.find(' '), std::string::npos) << ctx;
        }
        EXPECT_EQ(kind(docs, "PersistentVolumeClaim")["spec"]["accessModes"][0].as<std::string>(),
                  "ReadWriteMany");
        kind(docs, "Service");
        const auto hpa = kind(docs, "HorizontalPodAutoscaler");
        EXPECT_EQ(hpa["apiVersion"].as<std::string>(), "autoscaling/v2");
        // Bounds and target from the plan (EmitAutoscaling in emit_checks_test derives them).
        EXPECT_EQ(hpa["spec"]["minReplicas"].as<int>(), 1) << ctx;
        EXPECT_EQ(hpa["spec"]["maxReplicas"].as<int>(), p["replicas"].get<int>()) << ctx;
        EXPECT_EQ(dep["spec"]["replicas"].as<int>(), 1) << ctx;
        EXPECT_EQ(hpa["spec"]["metrics"].size(), 1u);
        EXPECT_EQ(
            hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"].as<std::string>(),
            fmt::format("{}m", std::llround(p["capacity_qps_per_replica"].get<double>() * 1000)))
            << ctx;
        const auto down = hpa["spec"]["behavior"]["scaleDown"];
        EXPECT_EQ(down["stabilizationWindowSeconds"].as<int>(), 300);
        EXPECT_EQ(down["policies"][0]["type"].as<std::string>(), "Percent");
        EXPECT_EQ(down["policies"][0]["value"].as<int>(), 20);
        EXPECT_EQ(down["policies"][0]["periodSeconds"].as<int>(), 60);
        const auto up = hpa["spec"]["behavior"]["scaleUp"];
        EXPECT_EQ(up["stabilizationWindowSeconds"].as<int>(), 0);
        EXPECT_EQ(up["policies"][0]["value"].as<int>(), 100);
        EXPECT_EQ(up["policies"][0]["periodSeconds"].as<int>(), 15);
        // KEDA variant: a Prometheus trigger on vLLM's request counter at the same target.
        gpuplan::EmitOptions kopt = opt;
        kopt.autoscaler = "keda";
        auto keda = gpuplan::Emit(text, "k8s", kopt, Cat());
        ASSERT_TRUE(keda);
        auto kd = ParseYaml(keda->front().contents);
        ASSERT_EQ(kd.size(), 4u);
        const auto so = kind(kd, "ScaledObject");
        EXPECT_EQ(so["spec"]["minReplicaCount"].as<int>(), 1);
        EXPECT_EQ(so["spec"]["maxReplicaCount"].as<int>(), p["replicas"].get<int>());
        EXPECT_EQ(so["spec"]["triggers"][0]["type"].as<std::string>(), "prometheus");
        EXPECT_NE(so["spec"]["triggers"][0]["metadata"]["query"].as<std::string>().find(
                      "vllm:request_success_total"),
                  std::string::npos);
        EXPECT_EQ(so["spec"]["triggers"][0]["metadata"]["threshold"].as<std::string>(),
                  fmt::format("{:.3f}", p["capacity_qps_per_replica"].get<double>()));
      } else {
        // ConfigMap (the launch's config files) + indexed Job + headless Service.
        ASSERT_EQ(docs.size(), 3u) << ctx;
        const auto job = kind(docs, "Job");
        EXPECT_EQ(job["spec"]["completions"].as<int>(), p["nodes"].get<int>());
        EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
                     ["nvidia.com/gpu"]
                         .as<int>(),
                  p["gpus_per_node"].get<int>());
        const std::string cmd =
            job["spec"]["template"]["spec"]["containers"][0]["command"][2].as<std::string>();
        EXPECT_NE(cmd.find("torchrun"), std::string::npos);
        ExpectLaunchMatchesPlan(cmd, p, ctx);
      }
      // SkyPilot: the instance type (its GPUs in the cloud's own names; accelerators "ACC:COUNT"
      // only where GCP attaches them), nodes, spot, infra.
      auto sky = gpuplan::Emit(text, "skypilot", opt, Cat());
      ASSERT_TRUE(sky);
      auto t = ParseYaml(sky->front().contents).at(0);
      EXPECT_EQ(t["resources"]["instance_type"].as<std::string>(),
                p["instance_type"].get<std::string>());
      if (p["cloud"].get<std::string>() == "gcp") {
        const std::string acc = t["resources"]["accelerators"].as<std::string>();
        const int count =
            s.train ? p["gpus_per_node"].get<int>() : p["gpus_per_replica"].get<int>();
        EXPECT_EQ(acc.substr(acc.find(':') + 1), std::to_string(count)) << ctx;
      } else {
        EXPECT_FALSE(t["resources"]["accelerators"]) << ctx;
      }
      EXPECT_EQ(t["resources"]["infra"].as<std::string>().rfind(p["cloud"].get<std::string>(), 0),
                0u);
      EXPECT_TRUE(t["run"].IsScalar());
      if (s.train) {
        EXPECT_EQ(t["num_nodes"].as<int>(), p["nodes"].get<int>());
        EXPECT_EQ(t["resources"]["use_spot"].as<bool>(),
                  doc["job"]["spot_allowed"].get<bool>() && !p["cost_spot"].is_null());
        EXPECT_NE(t["run"].as<std::string>().find("torchrun"), std::string::npos);
      } else {
        EXPECT_NE(t["run"].as<std::string>().find("vllm serve"), std::string::npos);
      }
      // Monitoring: B13 panels and rules.
      auto mon = gpuplan::Emit(text, "monitoring", opt, Cat());
      ASSERT_TRUE(mon);
      const json dash = json::parse(Find(*mon, "grafana-dashboard.json")->contents);
      std::string titles;
      for (const auto& panel : dash["panels"]) titles += panel["title"].get<std::string>() + "|";
      for (const char* want : {"GPU utilisation", "GPU memory used", "Cost per hour"}) {
        EXPECT_NE(titles.find(want), std::string::npos) << ctx << " " << titles;
      }
      if (!s.train) {
        for (const char* want : {"p99 latency", "Throughput", "Error rate", "Cost per request"}) {
          EXPECT_NE(titles.find(want), std::string::npos) << ctx << " " << titles;
        }
      }
      auto rules = ParseYaml(Find(*mon, "prometheus-rules.yaml")->contents).at(0);
      ASSERT_EQ(rules["groups"].size(), 2u);
      bool cost = false;
      for (const auto& rule : rules["groups"][0]["rules"]) {
        if (rule["record"].as<std::string>() == "gpuplan:cost_per_hour") {
          cost = true;
          // `p` is const: look keys up with contains() (operator[] on a missing key is UB).
          const char* key = s.train ? "price_per_hour" : "cost_per_hour";
          if (p.contains(key) && !p[key].is_null()) {
            const double price = p[key].get<double>();
            EXPECT_EQ(rule["expr"].as<std::string>(), "vector(" + fmt::format("{}", price) + ")");
          }
        }
      }
      EXPECT_TRUE(cost);
      if (!s.train) continue;
      // Slurm, DeepSpeed, HF.
      auto sl = gpuplan::Emit(text, "slurm", opt, Cat());
      ASSERT_TRUE(sl);
      const std::string& sb = sl->front().contents;
      ExpectLaunchMatchesPlan(sb, p, ctx);
      EXPECT_NE(sb.find("#SBATCH --nodes=" + std::to_string(p["nodes"].get<int>()) + "\n"),
                std::string::npos)
          << sb;
      EXPECT_NE(sb.find("#SBATCH --gpus-per-node=" + std::to_string(p["gpus_per_node"].get<int>()) +
                        "\n"),
                std::string::npos);
      EXPECT_NE(sb.find("#SBATCH --cpus-per-task=" +
                        std::to_string(p["host"]["cpu_cores"].get<int>()) + "\n"),
                std::string::npos);
      auto ds = gpuplan::Emit(text, "deepspeed", opt, Cat());
      ASSERT_TRUE(ds);
      const json d = json::parse(ds->front().contents);
      const json& l = p["layout"];
      EXPECT_EQ(d["zero_optimization"]["stage"], l["zero_stage"]);
      EXPECT_EQ(d["train_micro_batch_size_per_gpu"], l["micro_batch"]);
      EXPECT_EQ(d["gradient_accumulation_steps"], l["num_microbatches"]);
      EXPECT_EQ(d["train_batch_size"].get<int>(), doc["job"]["global_batch"].get<int>()) << ctx;
      EXPECT_TRUE(d["bf16"]["enabled"].get<bool>());
      if (l["zero_stage"].get<int>() > 0) {
        // The plan's offload, as its memory was sized.
        EXPECT_EQ(d["zero_optimization"]["offload_optimizer"]["device"],
                  l.value("optimizer_offload", false) ? "cpu" : "none");
      }
      auto hf = gpuplan::Emit(text, "hf", opt, Cat());
      ASSERT_TRUE(hf);
      const json a = json::parse(Find(*hf, "training_args.json")->contents);
      EXPECT_EQ(a["save_steps"].get<int>(), std::lround(3600.0 / p["step_time_s"].get<double>()))
          << ctx;
      EXPECT_EQ(a["save_total_limit"], 3);
      EXPECT_EQ(a["save_safetensors"], true);
      EXPECT_EQ(a["save_strategy"], "steps");
      EXPECT_EQ(a["output_dir"].get<std::string>().rfind("/nvme/", 0), 0u);
      EXPECT_EQ(a["per_device_train_batch_size"], l["micro_batch"]);
      EXPECT_EQ(a["gradient_accumulation_steps"], l["num_microbatches"]);
      EXPECT_EQ(a["gradient_checkpointing"].get<bool>(), l["recompute"] != "none");
      const bool fsdp = l.value("framework", std::string()) == "fsdp" && l["zero_stage"] >= 2;
      EXPECT_EQ(a.contains("deepspeed"), l["zero_stage"].get<int>() > 0 && !fsdp);
      EXPECT_EQ(a.contains("fsdp"), fsdp);
      EXPECT_EQ(Find(*hf, "ds_config.json") != nullptr, a.contains("deepspeed"));
      const std::string& py = Find(*hf, "training_args.py")->contents;
      EXPECT_NE(py.find("save_steps=" + std::to_string(a["save_steps"].get<int>()) + ","),
                std::string::npos);
      EXPECT_NE(py.find("save_safetensors=True"), std::string::npos);
    }
  }
}

// SkyPilot provisions on neither Tencent nor Alibaba nor Scaleway: a task naming one would not
// launch, so emit refuses it and names the plan's cloud (the other targets still write).
TEST(Emit, SkypilotRefusesCloudsItDoesNotProvision) {
  json doc = json::parse(PlanText(Scenarios()[0]));
  doc["plans"][0]["cloud"] = "tencent";
  gpuplan::EmitOptions opt;
  auto sky = gpuplan::Emit(doc.dump(), "skypilot", opt, Cat());
  ASSERT_FALSE(sky);
  EXPECT_EQ(sky.error().field, "plans[0].cloud");
  EXPECT_NE(sky.error().message.find("SkyPilot does not provision on tencent"), std::string::npos);
  EXPECT_TRUE(gpuplan::Emit(doc.dump(), "k8s", opt, Cat()));
}

// GCP attaches GPUs to N1 hosts, so its tasks name them, in SkyPilot's words: "T4" (not AWS's
// "T4g" alias), "H100" for H100-SXM5-80GB.
TEST(Emit, SkypilotNamesAttachedGpusAsSkypilotDoes) {
  const auto train =
      std::find_if(Scenarios().begin(), Scenarios().end(), [](const auto& s) { return s.train; });
  ASSERT_NE(train, Scenarios().end());
  json doc = json::parse(PlanText(*train));
  json& p = doc["plans"][0];
  p["cloud"] = "gcp";
  p["region"] = "us-central1";
  for (const auto& [acc, want] :
       {std::pair<std::string, std::string>{"T4", "T4"}, {"H100-SXM5-80GB", "H100"}}) {
    p["accelerator"] = acc;
    gpuplan::EmitOptions opt;
    auto sky = gpuplan::Emit(doc.dump(), "skypilot", opt, Cat());
    ASSERT_TRUE(sky) << sky.error().ToString();
    const std::string got =
        ParseYaml(sky->front().contents).at(0)["resources"]["accelerators"].as<std::string>();
    EXPECT_EQ(got.substr(0, got.find(':')), want) << acc;
  }
}

TEST(Emit, VllmFlagsImplyThePlannersKvCapacity) {
  int checked = 0;
  for (const auto& s : Scenarios()) {
    if (s.train) continue;
    const std::string& text = PlanText(s);
    const json doc = json::parse(text);
    for (std::size_t rank = 1; rank <= doc["plans"].size(); ++rank) {
      const json& p = doc["plans"][rank - 1];
      if (p["accelerator"].is_null()) continue;
      gpuplan::EmitOptions opt;
      opt.rank = static_cast<int>(rank);
      auto r = gpuplan::Emit(text, "vllm", opt, Cat());
      ASSERT_TRUE(r) << s.name << " rank " << rank << ": " << r.error().ToString();
      const std::string& script = r->front().contents;
      ASSERT_NE(script.find("\nexec vllm serve "), std::string::npos) << script;
      const std::string cmd = script.substr(script.find("\nexec vllm serve "));
      const gpuplan::VllmFlags f = FlagsOf(cmd, doc, p);
      EXPECT_EQ(f.tensor_parallel_size, p["gpus_per_replica"].get<int>());
      EXPECT_EQ(f.max_model_len,
                doc["job"]["input_len"].get<int>() + doc["job"]["output_len"].get<int>());
      auto kv = gpuplan::VllmKvCapacityTokens(f, Cat());
      ASSERT_TRUE(kv) << kv.error().ToString();
      const double planner = p["kv_tokens_per_replica"].get<double>();
      EXPECT_NEAR(static_cast<double>(*kv), planner, 0.01 * planner)
          << s.name << " rank " << rank << "\n"
          << cmd;
      EXPECT_NE(script.find(fmt::format("planner: {} tokens", static_cast<std::int64_t>(planner))),
                std::string::npos);
      if (s.name.find("fp8") != std::string::npos) {
        EXPECT_EQ(f.quantization, "fp8");
        EXPECT_EQ(f.kv_cache_dtype, "fp8");
      }
      if (s.name.find("awq") != std::string::npos) {
        EXPECT_EQ(f.quantization, "awq");
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 8);
}

// The pinned vLLM release (v0.27.0) knows gpt-oss, Gemma-3 and Gemma-2's interleaved windows:
// their files are written, and the flags in them reproduce the plan's KV capacity (the
// checkpoint's own MXFP4 experts with no --quantization flag; the sliding-window layers holding
// their window, as vLLM does from 0.10). An architecture newer than the image is "not yet",
// naming the image and both dates.
TEST(Emit, NewArchitecturesLaunchOnThePinnedVllm) {
  for (const auto& s : ModelScenarios()) {
    const std::string& text = PlanText(s);
    const json doc = json::parse(text);
    ASSERT_FALSE(doc["plans"].empty()) << s.name;
    const json& p = doc["plans"][0];
    ASSERT_FALSE(p["accelerator"].is_null()) << s.name;
    for (const char* target : {"k8s", "skypilot"}) {
      auto r = gpuplan::Emit(text, target, {}, Cat());
      EXPECT_TRUE(r) << s.name << " " << target << ": " << (r ? "" : r.error().ToString());
    }
    auto r = gpuplan::Emit(text, "vllm", {}, Cat());
    ASSERT_TRUE(r) << s.name << ": " << r.error().ToString();
    const std::string& script = r->front().contents;
    const std::string cmd = script.substr(script.find("\nexec vllm serve "));
    EXPECT_EQ(Flag(cmd, "--quantization"), "") << s.name;
    const gpuplan::VllmFlags f = FlagsOf(cmd, doc, p);
    auto kv = gpuplan::VllmKvCapacityTokens(f, Cat());
    ASSERT_TRUE(kv) << kv.error().ToString();
    const double planner = p["kv_tokens_per_replica"].get<double>();
    EXPECT_NEAR(static_cast<double>(*kv), planner, 0.01 * planner) << s.name;
  }
  gpuplan::ModelSpec later = *gpuplan::FindPreset("gpt-oss-20b");
  later.architecture_released = "2026-11-01";
  auto known = gpuplan::emit::ImageKnowsModel(later, gpuplan::emit::kVllmImage,
                                              gpuplan::emit::kVllmImageReleased);
  ASSERT_FALSE(known);
  EXPECT_EQ(known.error().code, gpuplan::ErrorCode::kUnsupported);
  EXPECT_EQ(known.error().field, "job.model");
  EXPECT_TRUE(Has(known.error().message, "not yet")) << known.error().ToString();
  EXPECT_TRUE(Has(known.error().message, gpuplan::emit::kVllmImage)) << known.error().ToString();
  EXPECT_TRUE(Has(known.error().message, "2026-11-01")) << known.error().ToString();
  EXPECT_TRUE(gpuplan::emit::ImageKnowsModel(*gpuplan::FindPreset("gpt-oss-20b"),
                                             gpuplan::emit::kVllmImage,
                                             gpuplan::emit::kVllmImageReleased));
}

// The pinned TGI (3.3.7) has its own model code for Gemma-3 and Llama-4, so their TGI plans
// write their files; Qwen3 and gpt-oss have none there (TGI would fall back to its transformers
// backend), so theirs are "not yet", naming the model_type, and point to vLLM.
TEST(Emit, TgiLaunchesTheModelTypesItHasCodeFor) {
  const Scenario gemma{"serve_gemma3_27b_tgi",
                       {"infer", "--model", "gemma-3-27b", "--qps", "2", "--engine", "tgi"},
                       false};
  auto k8s = gpuplan::Emit(PlanText(gemma), "k8s", {}, Cat());
  ASSERT_TRUE(k8s) << k8s.error().ToString();
  EXPECT_NE(k8s->front().contents.find(gpuplan::emit::kTgiImage), std::string::npos);
  const Scenario qwen{"serve_qwen3_8b_tgi",
                      {"infer", "--model", "qwen3-8b", "--qps", "2", "--engine", "tgi"},
                      false};
  for (const char* target : {"k8s", "skypilot"}) {
    auto r = gpuplan::Emit(PlanText(qwen), target, {}, Cat());
    ASSERT_FALSE(r) << target;
    EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kUnsupported);
    EXPECT_EQ(r.error().field, "job.model");
    EXPECT_TRUE(Has(r.error().message, "not yet")) << r.error().ToString();
    EXPECT_TRUE(Has(r.error().message, "\"qwen3\"")) << r.error().ToString();
    EXPECT_TRUE(Has(r.error().message, gpuplan::emit::kTgiImage)) << r.error().ToString();
    EXPECT_TRUE(Has(r.error().hint, "--engine vllm")) << r.error().ToString();
  }
  // A model from a config.json carries its model_type; a spec built by hand has none and passes.
  EXPECT_EQ(gpuplan::FindPreset("gpt-oss-20b")->model_type, "gpt_oss");
  gpuplan::ModelSpec bare = *gpuplan::FindPreset("gpt-oss-20b");
  EXPECT_FALSE(gpuplan::emit::TgiKnowsModel(bare));
  bare.model_type.clear();
  EXPECT_TRUE(gpuplan::emit::TgiKnowsModel(bare));
}

// Within its window Gemma-2 holds the same KV on every vLLM: the pinned image serves it.
TEST(Emit, SlidingWindowModelWithinItsWindowLaunches) {
  const Scenario s{
      "serve_gemma2_9b_short", {"infer", "--model", "gemma-2-9b", "--qps", "2"}, false};
  auto r = gpuplan::Emit(PlanText(s), "vllm", {}, Cat());
  ASSERT_TRUE(r) << r.error().ToString();
}

// Meta's FP8 checkpoint (--quant fbgemm-fp8: FP8 feed-forward layers only) launches with vLLM's
// fbgemm_fp8 method.
TEST(Emit, MetaFp8PlanLaunchesVllmFbgemm) {
  const Scenario s{"serve_llama31_405b_fbgemm",
                   {"infer", "--model", "Llama-3.1-405B", "--qps", "1", "--quant", "fbgemm-fp8"},
                   false};
  const std::string& text = PlanText(s);
  const json doc = json::parse(text);
  ASSERT_FALSE(doc["plans"].empty());
  ASSERT_FALSE(doc["plans"][0]["accelerator"].is_null());
  auto r = gpuplan::Emit(text, "vllm", {}, Cat());
  ASSERT_TRUE(r) << r.error().ToString();
  const std::string& script = r->front().contents;
  const std::string cmd = script.substr(script.find("\nexec vllm serve "));
  EXPECT_EQ(Flag(cmd, "--quantization"), "fbgemm_fp8");
  // fbgemm_fp8 is deprecated in the pinned release: refused without this switch.
  EXPECT_NE(cmd.find("--allow-deprecated-quantization"), std::string::npos) << cmd;
}

// The autoscaling target is the capacity at the plan's planned utilisation: the job's target, or
// lower where the planner ran more replicas to meet a latency SLO (docs/emit.md). Plans written
// before the field existed fall back to the job's target.
TEST(Emit, AutoscalerCommentSaysThePlannedUtilisation) {
  const Scenario* serve = nullptr;
  for (const auto& s : Scenarios()) {
    if (!s.train && serve == nullptr) serve = &s;
  }
  ASSERT_NE(serve, nullptr);
  json doc = json::parse(PlanText(*serve));
  ASSERT_TRUE(doc["plans"][0].contains("planned_utilization"));
  doc["plans"][0]["planned_utilization"] = 0.25;
  auto r = gpuplan::Emit(doc.dump(), "k8s", {}, Cat());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_NE(r->front().contents.find("at its 25% planned utilisation"), std::string::npos);
  doc["plans"][0].erase("planned_utilization");
  doc["job"]["target_utilization"] = 0.5;
  r = gpuplan::Emit(doc.dump(), "k8s", {}, Cat());
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_NE(r->front().contents.find("at its 50% planned utilisation"), std::string::npos);
}

// A CPU replica is a whole instance (the planner's throughput uses all its cores): the pod
// requests the node's allocatable CPU and memory, not 4 cores of a 96-vCPU machine; an instance
// the catalog does not know keeps the small default.
TEST(Emit, CpuReplicaRequestsTheWholeNode) {
  RunResult r = RunCli({"--json", "plan", "infer", "--model", "bert-large", "--qps", "50",
                        "--input-len", "384", "--e2e-ms", "130", "--cpu-only", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  json doc = json::parse(r.out);
  const json& p = doc["plans"][0];
  const gpuplan::InstanceType* inst = nullptr;
  for (const auto& i : Cat().instances) {
    if (i.cloud == p["cloud"] && i.instance_type == p["instance_type"]) inst = &i;
  }
  ASSERT_NE(inst, nullptr);
  ASSERT_GT(inst->vcpus, 16);
  auto files = gpuplan::Emit(doc.dump(), "k8s", {}, Cat());
  ASSERT_TRUE(files) << files.error().ToString();
  YAML::Node requests;
  for (const auto& d : ParseYaml(files->front().contents)) {
    if (d["kind"].as<std::string>() == "Deployment") {
      requests = d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"];
    }
  }
  ASSERT_TRUE(requests);
  EXPECT_EQ(requests["cpu"].as<std::string>(), std::to_string(inst->vcpus - 2));
  const double gib = 1073741824.0;
  EXPECT_EQ(requests["memory"].as<std::string>(),
            fmt::format("{}Gi",
                        static_cast<long long>(std::floor((0.9 * inst->ram.value() - gib) / gib))));
  // Not in the catalog: the default.
  doc["plans"][0]["instance_type"] = "custom-cpu-box";
  files = gpuplan::Emit(doc.dump(), "k8s", {}, Cat());
  ASSERT_TRUE(files) << files.error().ToString();
  EXPECT_NE(files->front().contents.find("cpu: \"4\"\n              memory: 16Gi"),
            std::string::npos);
}

TEST(Emit, LibraryErrors) {
  const std::string& train = PlanText(Scenarios().back());
  gpuplan::EmitOptions opt;
  auto r = gpuplan::Emit("{not json", "k8s", opt, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kParse);
  r = gpuplan::Emit(train, "nomad", opt, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kNotFound);
  EXPECT_EQ(r.error().field, "target");
  opt.rank = 0;
  r = gpuplan::Emit(train, "slurm", opt, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "--rank");
  opt.rank = 1;
  json broken = json::parse(train);
  broken["plans"][0]["layout"].erase("zero_stage");
  r = gpuplan::Emit(broken.dump(), "deepspeed", opt, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kParse);
  EXPECT_EQ(r.error().field, "plans[0].layout.zero_stage");
  broken = json::parse(train);
  broken["plans"][0]["nodes"] = "two";
  r = gpuplan::Emit(broken.dump(), "slurm", opt, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "plans[0].nodes");
  opt.autoscaler = "cron";
  r = gpuplan::Emit(train, "k8s", opt, Cat());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().field, "--autoscaler");
}

// Issue 10: optional plan fields of the wrong type are errors naming them (the emit reader used
// to read them as absent: a numeric region became "", a string vpp became 1).
TEST(Emit, OptionalFieldOfWrongTypeIsAnError) {
  const std::string& train = PlanText(Scenarios().back());
  gpuplan::EmitOptions opt;
  struct Row {
    const char* pointer;
    json value;
    const char* field;
  };
  const Row rows[] = {
      {"/plans/0/region", 5, "plans[0].region"},
      {"/plans/0/layout/vpp", "2", "plans[0].layout.vpp"},
      {"/plans/0/layout/sequence_parallel", "yes", "plans[0].layout.sequence_parallel"},
      {"/job/framework", json::array(), "job.framework"},
      {"/plans/0/host", "big", "plans[0].host"},
  };
  for (const Row& row : rows) {
    json broken = json::parse(train);
    broken[json::json_pointer(row.pointer)] = row.value;
    auto r = gpuplan::Emit(broken.dump(), "slurm", opt, Cat());
    ASSERT_FALSE(r) << row.pointer;
    EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kParse) << r.error().ToString();
    EXPECT_EQ(r.error().field, row.field) << r.error().ToString();
  }
}

// Fuzz finding (fuzz_emit, 2026-12-03): a 1e89-byte data disk reached an int cast in the
// SkyPilot disk_size (UBSan float-cast-overflow). Every figure that becomes a count, size or time
// in an emitted file is bounded when the plan is read, on every target.
TEST(Emit, OutOfRangeFiguresAreErrorsNamingTheField) {
  const std::string& train = PlanText(Scenarios().back());
  gpuplan::EmitOptions opt;
  struct Row {
    const char* pointer;
    double value;
    const char* field;
  };
  const Row rows[] = {
      {"/plans/0/host/data_disk_bytes", 3.2e89, "plans[0].host.data_disk_bytes"},
      {"/plans/0/host/system_disk_bytes", -1, "plans[0].host.system_disk_bytes"},
      {"/plans/0/host/ram_bytes", 1e300, "plans[0].host.ram_bytes"},
      {"/plans/0/step_time_s", 1e300, "plans[0].step_time_s"},
      {"/plans/0/job_hours", 1e300, "plans[0].job_hours"},
      {"/plans/0/layout/vpp", 1e300, "plans[0].layout.vpp"},
      {"/plans/0/layout/recompute_layers", 2.5, "plans[0].layout.recompute_layers"},
  };
  for (const std::string target : {"skypilot", "slurm", "k8s", "hf", "deepspeed"}) {
    for (const Row& row : rows) {
      json broken = json::parse(train);
      broken[json::json_pointer(row.pointer)] = row.value;
      auto r = gpuplan::Emit(broken.dump(), target, opt, Cat());
      ASSERT_FALSE(r) << target << " " << row.pointer;
      EXPECT_NE(r.error().code, gpuplan::ErrorCode::kInternal) << r.error().ToString();
      EXPECT_EQ(r.error().field, row.field) << r.error().ToString();
    }
  }
}

std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(EmitCli, WritesFilesAtomicallyAndRefusesToOverwrite) {
  TempDir dir;
  const std::string plan = dir.Write("plan.json", PlanText(Scenarios()[4]));
  const fs::path out = dir.path() / "out";
  RunResult r = RunCli({"emit", "hf", "--plan", plan, "-o", out.string()});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  const auto first = Listing(out);
  EXPECT_FALSE(first.empty());
  for (const auto& n : first) EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  const std::string before = Slurp(out / "training_args.json");
  // Again without --force: exit 2 naming the file, nothing changed.
  r = RunCli({"emit", "hf", "--plan", plan, "-o", out.string()});
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
  EXPECT_TRUE(Has(r.err, "exists")) << r.err;
  EXPECT_TRUE(Has(r.err, "--force")) << r.err;
  EXPECT_EQ(Listing(out), first);
  EXPECT_EQ(Slurp(out / "training_args.json"), before);
  // With --force: succeeds, same names, no temporaries.
  r = RunCli({"emit", "hf", "--plan", plan, "-o", out.string(), "--force"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_EQ(Listing(out), first);
  // Without -o: stdout.
  r = RunCli({"emit", "deepspeed", "--plan", plan});
  ASSERT_EQ(r.exit_code, kExitOk) << r.Describe();
  EXPECT_TRUE(json::accept(r.out)) << r.out;
}

// The training scenario's plan with its layout set to pure FSDP (ZeRO-3, no TP/PP).
json FsdpPlan() {
  json doc = json::parse(PlanText(Scenarios()[4]));
  json& l = doc["plans"][0]["layout"];
  l["framework"] = "fsdp";
  l["zero_stage"] = 3;
  l["tp"] = 1;
  l["pp"] = 1;
  l["vpp"] = 1;
  return doc;
}

// An FSDP layout launches the Trainer's FSDP; with tensor parallelism (FSDP2 + TP, which the
// planner may choose) there is no Trainer launch yet: exit 2 naming layout.tp, for every target
// that writes a launch or a framework config.
TEST(Emit, FsdpLayoutsLaunchFsdpAndRefuseTensorParallel) {
  json doc = FsdpPlan();
  json& l = doc["plans"][0]["layout"];
  auto ok = gpuplan::Emit(doc.dump(), "hf", {}, Cat());
  ASSERT_TRUE(ok) << ok.error().ToString();
  const json a = json::parse(Find(*ok, "training_args.json")->contents);
  EXPECT_EQ(a.value("fsdp", std::string()), "full_shard auto_wrap");
  EXPECT_FALSE(a.contains("deepspeed"));
  EXPECT_EQ(Find(*ok, "ds_config.json"), nullptr);
  l["tp"] = 2;
  for (const char* target : {"hf", "slurm", "k8s", "skypilot", "deepspeed"}) {
    auto r = gpuplan::Emit(doc.dump(), target, {}, Cat());
    ASSERT_FALSE(r) << target;
    EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kUnsupported) << target;
    EXPECT_EQ(r.error().field, "plans[0].layout.tp") << target;
    EXPECT_TRUE(Has(r.error().message, "not yet")) << target;
  }
}

// The Trainer launch keeps the plan's optimizer (its states sized the memory): 8-bit AdamW is
// bitsandbytes' `optim`, AdamW the Trainer's default (no key), an optimizer the Trainer lacks a
// comment in the script.
TEST(Emit, TrainerLaunchKeepsThePlansOptimizer) {
  json doc = FsdpPlan();
  auto optim = [&](const char* o) {
    doc["job"]["optimizer"] = o;
    auto r = gpuplan::Emit(doc.dump(), "hf", {}, Cat());
    EXPECT_TRUE(r) << r.error().ToString();
    if (!r) return std::string("?");
    return json::parse(Find(*r, "training_args.json")->contents).value("optim", std::string());
  };
  EXPECT_EQ(optim("adamw-8bit"), "adamw_bnb_8bit");
  EXPECT_EQ(optim("adafactor"), "adafactor");
  EXPECT_EQ(optim("adamw"), "");
  EXPECT_EQ(optim("muon"), "");
  auto r = gpuplan::Emit(doc.dump(), "hf", {}, Cat());
  ASSERT_TRUE(r);
  bool noted = false;
  for (const auto& f : *r) noted = noted || Has(f.contents, "optimizer muon is not a Trainer");
  EXPECT_TRUE(noted);
}

// A torchtune layout was sized with torchtune's memory (pure bf16), a torchtitan one with
// torchtitan's (FSDP2 under its pipeline schedules, operator-level checkpointing): gpuplan writes
// neither's launch yet, and its Trainer/DeepSpeed launches would run something else. Exit 2
// naming the field.
TEST(Emit, TorchtuneAndTorchtitanLayoutsAreNotYetLaunched) {
  for (const char* framework : {"torchtune", "torchtitan"}) {
    json doc = json::parse(PlanText(Scenarios()[4]));
    doc["plans"][0]["layout"]["framework"] = framework;
    for (const char* target : {"hf", "slurm", "k8s", "skypilot", "deepspeed"}) {
      auto r = gpuplan::Emit(doc.dump(), target, {}, Cat());
      ASSERT_FALSE(r) << framework << " " << target;
      EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kUnsupported) << target;
      EXPECT_EQ(r.error().field, "plans[0].layout.framework") << target;
      EXPECT_TRUE(Has(r.error().message, framework)) << r.error().message;
    }
    EXPECT_TRUE(gpuplan::Emit(doc.dump(), "monitoring", {}, Cat())) << framework;
  }
}

// gpuplan's deployment files are CUDA ones (vllm/vllm-openai and nvidia.com/gpu; NVIDIA's
// Megatron-LM, DeepSpeed and Trainer launches): a plan on AMD, AWS Neuron or Gaudi is "not yet",
// naming the accelerator, for every target but monitoring.
TEST(Emit, NonNvidiaPlansAreNotYetDeployed) {
  json serve = json::parse(PlanText(Scenarios()[0]));
  json train = json::parse(PlanText(Scenarios()[4]));
  const json nvidia = serve["plans"][0]["accelerator"];
  for (json* doc : {&serve, &train}) {
    for (const char* acc : {"MI300X", "Inferentia2", "Trainium1", "Gaudi2"}) {
      (*doc)["plans"][0]["accelerator"] = acc;
      for (const char* target : {"k8s", "skypilot", "slurm"}) {
        auto r = gpuplan::Emit(doc->dump(), target, {}, Cat());
        ASSERT_FALSE(r) << acc << " " << target;
        EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kUnsupported) << acc << " " << target;
        EXPECT_EQ(r.error().field, "plans[0].accelerator") << acc << " " << target;
        EXPECT_TRUE(Has(r.error().message, acc)) << r.error().message;
        EXPECT_TRUE(Has(r.error().message, "not yet")) << r.error().message;
      }
    }
  }
  serve["plans"][0]["accelerator"] = nvidia;
  auto ok = gpuplan::Emit(serve.dump(), "k8s", {}, Cat());
  EXPECT_TRUE(ok) << ok.error().ToString();
}

// Interleaving that does not divide the layers evenly (DeepSeek-V3's 61 layers over 16 virtual
// stages; here Llama-2-70B's 80 over 4 x 7 = 28) launches with Megatron-Core's pipeline layout:
// every layer placed once, the embedding first and the loss last, no chunk above
// ceil((80 + 2) / 28) = 3 units. An even split keeps --num-layers-per-virtual-pipeline-stage.
TEST(Emit, UnevenInterleavingLaunchesWithAPipelineLayout) {
  json doc = json::parse(PlanText(Scenarios()[5]));
  json& l = doc["plans"][0]["layout"];
  auto launch_for = [&](int vpp) {
    l["framework"] = "megatron-core";
    l["tp"] = 2;
    l["pp"] = 4;
    l["dp"] = 4;
    l["vpp"] = vpp;
    l["zero_stage"] = 1;
    l["micro_batch"] = 1;
    l["num_microbatches"] = 32;
    auto r = gpuplan::Emit(doc.dump(), "slurm", {}, Cat());
    EXPECT_TRUE(r) << (r ? "" : r.error().ToString());
    std::string launch;
    if (r) {
      for (const auto& f : *r) launch += f.contents;
    }
    return launch;
  };
  const std::string uneven = launch_for(7);
  std::string layout = Flag(uneven, "--pipeline-model-parallel-layout");
  // The launch quotes it for the shell, inside the job's quoted command.
  std::erase_if(layout, [](char c) { return c == '\\' || c == '\''; });
  ASSERT_FALSE(layout.empty()) << uneven;
  EXPECT_EQ(layout.front(), 'E');
  EXPECT_EQ(layout.back(), 'L');
  int chunks = 0, layers = 0, heaviest = 0;
  std::stringstream ss(layout);
  for (std::string c; std::getline(ss, c, '|');) {
    ++chunks;
    int t = 0;
    if (auto star = c.find("t*"); star != std::string::npos) {
      t = std::stoi(c.substr(star + 2));
    } else if (c.find('t') != std::string::npos) {
      t = 1;
    }
    layers += t;
    heaviest = std::max(heaviest, t + (c.front() == 'E' ? 1 : 0) + (c.back() == 'L' ? 1 : 0));
  }
  EXPECT_EQ(chunks, 28);
  EXPECT_EQ(layers, 80);
  EXPECT_LE(heaviest, 3);
  EXPECT_EQ(uneven.find("--num-layers-per-virtual-pipeline-stage"), std::string::npos);
  const std::string even = launch_for(2);
  EXPECT_EQ(Flag(even, "--num-layers-per-virtual-pipeline-stage"), "10");
  EXPECT_EQ(even.find("--pipeline-model-parallel-layout"), std::string::npos);
  // More virtual stages than layers + embedding + loss (an edited plan) launch nothing: exit 2
  // naming the field.
  l["vpp"] = 50;
  for (const char* target : {"slurm", "k8s", "skypilot"}) {
    auto r = gpuplan::Emit(doc.dump(), target, {}, Cat());
    ASSERT_FALSE(r) << target;
    EXPECT_EQ(r.error().code, gpuplan::ErrorCode::kInvalidArgument) << target;
    EXPECT_EQ(r.error().field, "plans[0].layout.vpp") << target;
  }
}

// An NVFP4 ("fp4") plan launches through Megatron-Core's FP4 recipe flags; the Trainer and
// DeepSpeed launches have no FP4 recipe, so another framework's fp4 plan is not yet launched.
TEST(Emit, Fp4PlansLaunchWithMegatronsNvfp4Recipe) {
  json doc = json::parse(PlanText(Scenarios()[5]));
  json& plan = doc["plans"][0];
  doc["job"]["precision"] = "fp4";
  plan["layout"]["framework"] = "megatron-core";
  plan["layout"]["zero_stage"] = 1;
  auto r = gpuplan::Emit(doc.dump(), "slurm", {}, Cat());
  ASSERT_TRUE(r) << r.error().ToString();
  std::string launch;
  for (const auto& f : *r) launch += f.contents;
  EXPECT_EQ(Flag(launch, "--fp4-format"), "e2m1");
  EXPECT_EQ(Flag(launch, "--fp4-recipe"), "nvfp4");
  EXPECT_EQ(launch.find("--fp8-format"), std::string::npos);
  plan["layout"]["framework"] = "fsdp";
  plan["layout"]["zero_stage"] = 3;
  for (const char* k : {"tp", "pp", "vpp", "cp", "ep"}) {
    if (plan["layout"].contains(k)) plan["layout"][k] = 1;  // a layout FSDP runs
  }
  for (const char* target : {"hf", "slurm", "k8s"}) {
    auto bad = gpuplan::Emit(doc.dump(), target, {}, Cat());
    ASSERT_FALSE(bad) << target;
    EXPECT_EQ(bad.error().code, gpuplan::ErrorCode::kUnsupported) << target;
    EXPECT_EQ(bad.error().field, "job.precision") << target;
  }
}

TEST(EmitCli, BadInputExitsTwoAndLeavesNoFiles) {
  TempDir dir;
  const std::string train = dir.Write("train.json", PlanText(Scenarios()[4]));
  const std::string serve = dir.Write("serve.json", PlanText(Scenarios()[0]));
  const std::string bad = dir.Write("bad.json", "{\"plans\": [");
  const std::string blocker = dir.Write("afile", "x");
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string err;  // expected in stderr
  };
  const fs::path out = dir.path() / "out";
  const std::vector<Case> cases = {
      {"malformed json", {"emit", "k8s", "--plan", bad}, "not valid JSON"},
      {"missing plan file",
       {"emit", "k8s", "--plan", (dir.path() / "nope.json").string()},
       "cannot read"},
      {"unknown target", {"emit", "nomad", "--plan", train}, "unknown target"},
      {"rank out of range", {"emit", "slurm", "--plan", train, "--rank", "99"}, "--rank"},
      {"rank zero", {"emit", "slurm", "--plan", train, "--rank", "0"}, "--rank"},
      {"vllm for training", {"emit", "vllm", "--plan", train}, "serving plan"},
      {"slurm for serving", {"emit", "slurm", "--plan", serve}, "training plan"},
      {"hf for serving", {"emit", "hf", "--plan", serve}, "training plan"},
      {"deepspeed for serving", {"emit", "deepspeed", "--plan", serve}, "training plan"},
      {"bad autoscaler", {"emit", "k8s", "--plan", serve, "--autoscaler", "cron"}, "autoscaler"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("-o");
    args.push_back(out.string());
    RunResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, kExitBadInput) << c.name << "\n" << r.Describe();
    EXPECT_TRUE(Has(r.err, c.err)) << c.name << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name;
    EXPECT_TRUE(Listing(out).empty()) << c.name;
  }
  // JSON errors carry field, message and hint.
  RunResult r = RunCli({"--json", "emit", "slurm", "--plan", train, "--rank", "99"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  const json e = json::parse(r.err).at("error");
  EXPECT_EQ(e["field"], "--rank");
  EXPECT_FALSE(e["message"].get<std::string>().empty());
  EXPECT_FALSE(e["hint"].get<std::string>().empty());
  // An output path that is a file, and an unwritable directory.
  r = RunCli({"emit", "monitoring", "--plan", serve, "-o", blocker});
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
  EXPECT_EQ(Slurp(blocker), "x");
  r = RunCli({"emit", "monitoring", "--plan", serve, "-o", (fs::path(blocker) / "sub").string()});
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
  EXPECT_TRUE(Has(r.err, "cannot create")) << r.err;
  if (::geteuid() != 0) {
    const fs::path ro = dir.path() / "ro";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    r = RunCli({"emit", "monitoring", "--plan", serve, "-o", ro.string()});
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.Describe();
    EXPECT_TRUE(Listing(ro).empty());
    fs::permissions(ro, fs::perms::owner_all);
  }
}

}  // namespace
