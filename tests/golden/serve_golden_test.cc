// Golden serving scenarios: tests/golden/serve/*.yaml hold a serving job under `job:` (keys
// mirror ServeJobSpec and the CLI's `plan infer` flags) and the expected best plan under
// `expect:`. A change of the best plan is a reviewed diff: regenerate with
// GPUPLAN_UPDATE_GOLDEN=1 ./serve_golden_test and review `git diff`. An optional `check:` block
// states the guide's answer independently of the exact plan (max_tp, min_tp, cpu,
// accelerator_in, max_replicas, min_replicas); an optional `reference:` block holds the guide's own
// figures, printed beside ours (never asserted).
//
// job keys: model (preset/HF id/path), qps, input_len, output_len, ttft_ms, tpot_ms, e2e_ms,
// precision, quant (awq | gptq | nf4 | a precision), kv_precision, engine, util, clouds,
// regions, gpus, allow_cpu, allow_gpu, reserved, currency. Defaults follow `gpuplan plan
// infer` (apps/cli/cmd_infer.cc): weights in the checkpoint's dtype (fp32 -> fp16), KV in fp8
// when the weights are fp8, else bf16; LLM 512 in / 256 out, encoders 128, others 1.
#include <gtest/gtest.h>

#include "testing/test_util.h"
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

using gpuplan::test::Slurp;

fs::path Dir() { return fs::path(GPUPLAN_SOURCE_DIR) / "tests/golden/serve"; }

std::vector<fs::path> Scenarios() {
  std::vector<fs::path> v;
  if (!fs::is_directory(Dir())) return v;
  for (const auto& e : fs::directory_iterator(Dir())) {
    if (e.path().extension() == ".yaml") v.push_back(e.path());
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> Strings(const YAML::Node& n) {
  std::vector<std::string> v;
  if (!n) return v;
  if (n.IsSequence()) {
    for (const auto& x : n) v.push_back(x.as<std::string>());
  } else {
    v.push_back(n.as<std::string>());
  }
  return v;
}

// Builds a ServeJobSpec from `job:` with the CLI's defaults (see the header comment).
Result<ServeJobSpec> BuildJob(const YAML::Node& y, const std::string& label) {
  auto bad = [&](const std::string& key, const std::string& msg) {
    return MakeError(ErrorCode::kInvalidArgument, label + ": job." + key, msg);
  };
  if (!y || !y.IsMap()) return bad("", "missing job: block");
  ServeJobSpec job;
  if (!y["model"]) return bad("model", "required");
  auto m = ResolveModel(y["model"].as<std::string>(), "job.model");
  if (!m) return m.error();
  job.model = *m;
  const bool llm = m->is_decoder_llm();
  job.weight_precision = m->dtype == Precision::kFp32 ? Precision::kFp16 : m->dtype;
  job.quant = m->quant;
  if (y["precision"]) {
    auto p = ParsePrecision(y["precision"].as<std::string>());
    if (!p) return bad("precision", "unknown precision " + y["precision"].as<std::string>());
    job.weight_precision = *p;
  }
  if (y["quant"]) {
    const std::string q = y["quant"].as<std::string>();
    if (q == "awq" || q == "gptq") {
      job.quant = QuantSpec{q, 4, 128, true, false, 16};
    } else if (q == "nf4") {
      job.quant = QuantSpec{"bnb-nf4", 4, 64, false, true, 32};
    } else if (auto p = ParsePrecision(q)) {
      job.weight_precision = *p;
    } else {
      return bad("quant", "unknown quantization " + q);
    }
  }
  job.kv_precision = job.weight_precision == Precision::kFp8 ? Precision::kFp8 : Precision::kBf16;
  if (y["kv_precision"]) {
    auto p = ParsePrecision(y["kv_precision"].as<std::string>());
    if (!p) return bad("kv_precision", "unknown precision");
    job.kv_precision = *p;
  }
  if (y["engine"]) {
    auto e = ParseEngine(y["engine"].as<std::string>());
    if (!e) return bad("engine", "unknown engine " + y["engine"].as<std::string>());
    job.engine = *e;
  }
  if (!y["qps"]) return bad("qps", "required");
  job.qps = y["qps"].as<double>();
  job.input_len = y["input_len"] ? y["input_len"].as<int>()
                                 : (llm ? 512 : (m->arch == ModelArch::kEncoder ? 128 : 1));
  job.output_len = y["output_len"] ? y["output_len"].as<int>() : (llm ? 256 : 0);
  if (y["ttft_ms"]) job.ttft_p99_ms = y["ttft_ms"].as<double>();
  if (y["tpot_ms"]) job.tpot_p99_ms = y["tpot_ms"].as<double>();
  if (y["e2e_ms"]) job.e2e_p99_ms = y["e2e_ms"].as<double>();
  if (y["util"]) job.target_utilization = y["util"].as<double>();
  job.clouds = Strings(y["clouds"]);
  job.regions = Strings(y["regions"]);
  job.gpus = Strings(y["gpus"]);
  if (y["allow_cpu"]) job.allow_cpu = y["allow_cpu"].as<bool>();
  if (y["allow_gpu"]) job.allow_gpu = y["allow_gpu"].as<bool>();
  if (y["reserved"]) job.reserved = y["reserved"].as<bool>();
  if (y["include_suspect"]) job.include_suspect = y["include_suspect"].as<bool>();
  if (y["currency"]) {
    auto c = ParseCurrency(y["currency"].as<std::string>());
    if (!c) return bad("currency", "unknown currency " + y["currency"].as<std::string>());
    job.currency = *c;
  }
  job.top = 5;
  return job;
}

YAML::Node Actual(const ServePlan& p) {
  YAML::Node n;
  const auto& i = *p.instance;
  n["cloud"] = i.cloud;
  n["instance_type"] = i.instance_type;
  n["region"] = i.region;
  if (i.is_cpu_only()) {
    n["cpu"] = i.cpu;
  } else {
    n["accelerator"] = i.accelerator;
  }
  n["tp"] = p.tp;
  n["replicas"] = p.replicas;
  n["instances"] = p.instances;
  n["batch"] = p.batch;
  return n;
}

TEST(ServeGolden, AtLeastTenScenarios) { EXPECT_GE(Scenarios().size(), 10u); }

TEST(ServeGolden, BestPlanUnchanged) {
  auto cat = LoadBuiltinCatalog();
  ASSERT_TRUE(cat.ok()) << cat.error().ToString();
  const bool update = std::getenv("GPUPLAN_UPDATE_GOLDEN") &&
                      std::string(std::getenv("GPUPLAN_UPDATE_GOLDEN")) == "1";
  for (const auto& path : Scenarios()) {
    SCOPED_TRACE(path.filename().string());
    YAML::Node doc = YAML::Load(Slurp(path));
    EXPECT_TRUE(doc["title"]) << "no title";
    EXPECT_TRUE(doc["source"]) << "no source";
    auto job = BuildJob(doc["job"], path.filename().string());
    ASSERT_TRUE(job.ok()) << job.error().ToString();
    auto res = PlanServing(*job, *cat, DefaultCalibration());
    ASSERT_TRUE(res.ok()) << res.error().ToString();
    ASSERT_FALSE(res->plans.empty()) << "no plan";
    const ServePlan& top = res->plans.front();
    // Issue 12: never a suspect row first, never a host that cannot stage the weights.
    EXPECT_FALSE(job->include_suspect) << "a golden scenario ranks suspect rows";
    EXPECT_EQ(top.instance->suspect_reason, "") << top.instance->instance_type;
    EXPECT_FALSE(top.host_inadequate) << top.instance->instance_type;
    const std::string cur = CurrencyCode(job->currency);
    fmt::print(
        "[{}] {} {} {} {} tp {} x{} on {}, batch {}: {:.3f} {}/h, {:.4f} {}/1k req, "
        "{:.3f} {}/1M out tok, TTFT {:.0f} ms, TPOT {:.1f} ms, e2e {:.0f} ms\n",
        path.stem().string(), top.instance->cloud, top.instance->instance_type,
        top.instance->region,
        top.instance->is_cpu_only() ? "CPU " + top.instance->cpu : top.instance->accelerator,
        top.tp, top.replicas, top.instances, top.batch, top.cost_per_hour.value_or(-1), cur,
        top.cost_per_1k_requests, cur, top.cost_per_1m_output_tokens, cur, top.ttft_p99_ms,
        top.tpot_p99_ms, top.e2e_p99_ms);
    if (doc["reference"]) {
      for (auto it = doc["reference"].begin(); it != doc["reference"].end(); ++it) {
        fmt::print("    guide {}: {}\n", it->first.as<std::string>(), it->second.as<std::string>());
      }
    }
    YAML::Node actual = Actual(top);
    if (update) {
      doc["expect"] = actual;
      YAML::Emitter e;
      e << doc;
      std::ofstream(path) << "# " << doc["title"].as<std::string>("") << "\n" << e.c_str() << "\n";
      continue;
    }
    ASSERT_TRUE(doc["expect"]) << "no expect: block; run with GPUPLAN_UPDATE_GOLDEN=1";
    YAML::Node exp = doc["expect"];
    for (auto it = exp.begin(); it != exp.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      ASSERT_TRUE(actual[key]) << "the best plan has no " << key;
      EXPECT_EQ(it->second.as<std::string>(), actual[key].as<std::string>())
          << "best plan changed in " << key << " (review, then GPUPLAN_UPDATE_GOLDEN=1)";
    }
    for (auto it = actual.begin(); it != actual.end(); ++it) {
      EXPECT_TRUE(exp[it->first.as<std::string>()])
          << "expect: lacks " << it->first.as<std::string>() << " (GPUPLAN_UPDATE_GOLDEN=1)";
    }
    // Checks the scenario states about the guide's answer (independent of the exact plan).
    if (doc["check"]) {
      const YAML::Node& chk = doc["check"];
      if (chk["max_tp"]) {
        EXPECT_LE(top.tp, chk["max_tp"].as<int>());
      }
      if (chk["min_tp"]) {
        EXPECT_GE(top.tp, chk["min_tp"].as<int>());
      }
      if (chk["max_replicas"]) {
        EXPECT_LE(top.replicas, chk["max_replicas"].as<int>());
      }
      if (chk["min_replicas"]) {
        EXPECT_GE(top.replicas, chk["min_replicas"].as<int>());
      }
      if (chk["cpu"]) {
        EXPECT_EQ(top.instance->is_cpu_only(), chk["cpu"].as<bool>())
            << "top plan on " << top.instance->instance_type;
      }
      if (chk["accelerator_in"]) {
        const auto ids = Strings(chk["accelerator_in"]);
        EXPECT_NE(std::find(ids.begin(), ids.end(), top.instance->accelerator), ids.end())
            << "top accelerator " << top.instance->accelerator;
      }
      if (chk["ttft_within_slo"] && job->ttft_p99_ms) {
        EXPECT_LE(top.ttft_p99_ms, *job->ttft_p99_ms);
      }
      if (chk["cpu_in_top"]) {
        // A CPU deployment ranks within the first N plans.
        const int n = chk["cpu_in_top"].as<int>();
        bool found = false;
        for (size_t k = 0; k < res->plans.size() && static_cast<int>(k) < n; ++k) {
          found = found || res->plans[k].instance->is_cpu_only();
        }
        EXPECT_TRUE(found) << "no CPU plan in the top " << n;
      }
    }
    // Every plan meets the job's SLOs and carries the load.
    for (const auto& p : res->plans) {
      if (job->ttft_p99_ms) {
        EXPECT_LE(p.ttft_p99_ms, *job->ttft_p99_ms + 1e-9);
      }
      if (job->tpot_p99_ms) {
        EXPECT_LE(p.tpot_p99_ms, *job->tpot_p99_ms + 1e-9);
      }
      if (job->e2e_p99_ms) {
        EXPECT_LE(p.e2e_p99_ms, *job->e2e_p99_ms + 1e-9);
      }
      EXPECT_GE(p.capacity_qps * p.replicas, job->qps * (1 - 1e-9));
    }
  }
}

}  // namespace
}  // namespace gpuplan
