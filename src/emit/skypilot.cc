// SkyPilot task YAML: training (workdir, file_mounts of the config files, num_nodes, setup, the
// shared launch as run) and serving (SkyServe service with the plan's replica policy).
// Checked in CTest against SkyPilot's task schema (tests/emit/fixtures/skypilot_task_schema.json).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"

namespace gpuplan::emit {

namespace {

std::string SkyAccelerator(const Plan& p, const Catalog& catalog) {
  // SkyPilot names GPUs by their short name: an id without dashes as it is ("T4", "L4", "L40S";
  // T4's first short alias is AWS's "T4g"), else the first alias without spaces ("H100",
  // "A100-80GB").
  if (p.accelerator.find_first_of("- ") == std::string::npos) return p.accelerator;
  if (const Accelerator* a = catalog.FindAccelerator(p.accelerator)) {
    for (const auto& al : a->aliases) {
      if (!al.empty() && al.find(' ') == std::string::npos) return al;
    }
  }
  return p.accelerator;
}

// Whether the task names its GPUs. An instance type names them already, in the cloud's own
// catalog words (vast calls an A100 80GB PCIe "A100", Lambda "A100-80GB"); SkyPilot rejects an
// `accelerators` field that differs from them ("Infeasible resource demands found ... To fix:
// either only specify instance_type, or change the accelerators field to be consistent"), so
// it is left out there. GCP attaches GPUs to its N1 hosts: the field stays.
bool NamesAccelerators(const Plan& p) {
  return !p.accelerator.empty() && (p.instance_type.empty() || p.cloud == "gcp");
}

}  // namespace

Result<std::vector<EmittedFile>> EmitSkypilot(const Plan& p, const EmitOptions& opt,
                                              const Catalog& catalog) {
  // The catalog's clouds SkyPilot provisions (its `sky check` clouds; skypilot-catalog has a
  // vms.csv for each but Azure, whose catalog it fetches). Alibaba, Tencent and Scaleway are not
  // among them: an `infra: tencent/...` task would not launch.
  static constexpr std::string_view kSkyClouds[] = {
      "aws", "gcp", "azure", "oci", "lambda", "runpod", "vast", "nebius", "shadeform"};
  if (!p.cloud.empty() &&
      std::find(std::begin(kSkyClouds), std::end(kSkyClouds), p.cloud) == std::end(kSkyClouds)) {
    return MakeError(ErrorCode::kUnsupported, p.path + ".cloud",
                     "SkyPilot does not provision on " + p.cloud +
                         ", so a SkyPilot task for this plan would not launch",
                     "emit slurm, k8s, hf or deepspeed for machines you already have there, or "
                     "pick a plan on a SkyPilot cloud with --rank (or re-plan with --clouds)");
  }
  ojson res;
  res["infra"] = p.region.empty() ? p.cloud : p.cloud + "/" + p.region;
  res["instance_type"] = p.instance_type;
  ojson task;
  task["name"] = Slug(p.model) + (p.kind == Kind::kTrain ? "-train" : "-serve");
  std::vector<EmittedFile> out;
  std::string header;
  if (p.kind == Kind::kTrain) {
    const TrainLaunch launch = MakeTrainLaunch(p);
    task["workdir"] = ".";
    task["num_nodes"] = p.nodes;
    if (NamesAccelerators(p))
      res["accelerators"] = fmt::format("{}:{}", SkyAccelerator(p, catalog), p.gpus_per_node);
    res["use_spot"] = p.spot;
    res["disk_size"] = std::max(256, static_cast<int>(std::ceil(p.disk_bytes / 1e9)));
    if (p.spot) res["job_recovery"] = {{"strategy", "FAILOVER"}, {"max_restarts_on_errors", 3}};
    task["resources"] = res;
    ojson mounts = ojson::object();
    for (const auto& f : launch.config_files)
      mounts[std::string(kConfigDir) + "/" + f.name] = "./" + f.name;
    if (!mounts.empty()) task["file_mounts"] = mounts;
    task["envs"] = {{"GPUPLAN_CONFIG", kConfigDir},
                    {"MASTER_PORT", "29500"},
                    {"HF_HOME", std::string(kNvmeDir) + "/hf-cache"}};
    if (launch.framework_note.find("Megatron") != std::string::npos &&
        launch.framework_note.find("needs") == std::string::npos) {
      task["envs"]["DATA_PATH"] = nullptr;  // sky launch --env DATA_PATH=... --env LR=...
      task["envs"]["LR"] = nullptr;
    }
    task["secrets"] = {{"HF_TOKEN", nullptr}};
    task["setup"] = launch.setup;
    task["run"] =
        "export NNODES=\"$SKYPILOT_NUM_NODES\"\n"
        "export NODE_RANK=\"$SKYPILOT_NODE_RANK\"\n"
        "export MASTER_ADDR=\"$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\"\n"
        "sudo mkdir -p " +
        std::string(kNvmeDir) + " && sudo chown \"$(id -u)\" " + kNvmeDir + "\n" + launch.command +
        "\n";
    header = Header(p, "SkyPilot task") +
             fmt::format(
                 "# {}. Launch from the directory with train.py and the emitted config files:\n"
                 "#   sky launch -c {} sky.yaml --secret HF_TOKEN\n",
                 launch.framework_note, Slug(p.model) + "-train");
    for (const auto& f : launch.config_files) out.push_back(f);
  } else {
    auto rtr = ResolveServeRuntime(p, catalog);
    if (!rtr) return rtr.error();
    const ServeRuntime& rt = *rtr;
    const Scaling sc = ScalingFor(p, opt);
    task["num_nodes"] = 1;
    if (NamesAccelerators(p)) {
      res["accelerators"] = fmt::format("{}:{}", SkyAccelerator(p, catalog), p.gpus_per_replica);
    }
    res["use_spot"] = false;
    res["disk_size"] = 256;
    res["ports"] = kServePort;
    task["resources"] = res;
    task["envs"] = {{"HF_HOME", kModelCacheDir}};
    const bool hub = !LocalModel(p.model_ref) && (rt.engine == "vllm" || rt.engine == "tgi");
    if (hub) task["secrets"] = {{"HF_TOKEN", nullptr}};
    std::string setup = "sudo mkdir -p " + std::string(kModelCacheDir) +
                        " && sudo chown \"$(id -u)\" " + kModelCacheDir + "\n";
    std::string run;
    if (rt.engine == "vllm") {
      setup += rt.prepare;
      run = ShellArgv(rt.command, " \\\n  ") + "\n";
    } else {
      // The other engines run from their pinned container images on the VM.
      const std::string gpus = rt.gpu ? " --gpus all" : "";
      const std::string mount = std::string(" -v ") + kModelCacheDir + ":" + kModelCacheDir;
      setup += "docker pull " + rt.image + "\n";
      if (!rt.files.empty()) {
        ojson mounts = ojson::object();
        for (const auto& f : rt.files)
          mounts[std::string(kConfigDir) + "/" + f.name] = "./" + f.name;
        task["file_mounts"] = mounts;
        setup += "docker pull " + std::string(kTensorRtImage) + "\n";
        run += "docker run --rm" + gpus + mount + " -v " + kConfigDir + ":" + kConfigDir +
               " --entrypoint /bin/sh " + kTensorRtImage + " " + kConfigDir + "/build-engine.sh\n";
        for (const auto& f : rt.files) out.push_back(f);
      }
      std::vector<std::string> words = {"docker run --rm" + gpus + " --ipc=host -p " +
                                        std::to_string(kServePort) + ":" +
                                        std::to_string(kServePort)};
      if (rt.metrics_port != kServePort) {
        words.back() +=
            " -p " + std::to_string(rt.metrics_port) + ":" + std::to_string(rt.metrics_port);
      }
      words.back() += " -e HF_HOME" + std::string(hub ? " -e HF_TOKEN" : "") + mount;
      words.push_back("--entrypoint " + ShellQuote(rt.command.front()) + " " + rt.image);
      run +=
          ShellJoin(words, " \\\n  ") + " \\\n  " +
          ShellArgv(std::vector<std::string>(rt.command.begin() + 1, rt.command.end()), " \\\n  ") +
          "\n";
    }
    task["setup"] = setup;
    task["run"] = run;
    task["service"] = {
        {"readiness_probe", rt.health_path},
        {"replica_policy",
         {{"min_replicas", sc.min_replicas},
          {"max_replicas", sc.max_replicas},
          {"target_qps_per_replica", std::round(sc.target_per_replica * 1000) / 1000},
          {"upscale_delay_seconds", 0},
          {"downscale_delay_seconds", 300}}}};
    header =
        Header(p, "SkyPilot service (SkyServe)") +
        fmt::format("# Engine {} ({}); replicas {}..{} at {:.3f} req/s each: min = {}, max = {}.\n",
                    rt.engine, rt.image, sc.min_replicas, sc.max_replicas, sc.target_per_replica,
                    sc.min_reason, sc.max_reason);
    for (const auto& n : rt.notes) header += "# " + n + "\n";
    header += fmt::format("#   sky serve up -n {} sky.yaml{}\n", Slug(p.model),
                          hub ? " --secret HF_TOKEN" : "");
  }
  out.insert(out.begin(), EmittedFile{"sky.yaml", header + Yaml(task)});
  return out;
}

}  // namespace gpuplan::emit
