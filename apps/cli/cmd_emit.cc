// gpuplan emit: deployment files from a plan's JSON (docs/emit.md). Files are written through
// SafeWriteFiles (gpuplan/safe_write.h): exclusive temporaries in the target directory, then
// renamed; never over an existing file without --force, never through a symbolic link.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

#include "commands.h"
#include "gpuplan/emit.h"
#include "gpuplan/input.h"
#include "gpuplan/safe_write.h"

namespace gpuplan::cli {

namespace {

namespace fs = std::filesystem;

struct EmitArgs {
  std::string target;
  std::string plan;
  std::string job;  // a job file: plan it first (training or serving YAML)
  std::string out_dir;
  std::string autoscaler = "hpa";
  std::string image;
  std::string k8s_training = "job";
  int rank = 1;
  bool force = false;
  int min_replicas = 0;
  double off_peak_qps = 0, peak_qps = 0;
  bool has_off_peak = false, has_peak = false;
};

Result<Output> WriteFiles(const std::vector<EmittedFile>& files, const EmitArgs& a) {
  std::vector<FileToWrite> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back({f.name, f.contents});
  auto written = SafeWriteFiles(a.out_dir, out, a.force, "-o");
  if (!written) return written.error();
  Output o;
  for (const auto& w : *written) o.text += "wrote " + w + "\n";
  return o;
}

Result<Output> RunEmit(const GlobalOptions& g, const EmitArgs& a) {
  if (a.plan.empty() == a.job.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "--plan",
                     "give exactly one of --plan plan.json or --job job.yaml",
                     "`gpuplan --json plan train|infer ... > plan.json`, or a job file");
  }
  std::stringstream ss;
  if (!a.job.empty()) {
    // Plan the job file first (a serving file has `serve:`; otherwise training), as JSON.
    auto read = ReadInputFile(a.job, "--job", kMaxYamlFileBytes);
    if (!read) return read.error();
    const std::string& text = *read;
    const bool serving = text.rfind("serve:", 0) == 0 || text.find("\nserve:") != std::string::npos;
    GlobalOptions gj = g;
    gj.json = true;
    auto planned = serving ? RunPlanInferFile(gj, a.job) : RunPlanTrainFile(gj, a.job);
    if (!planned) return planned.error();
    if (planned->exit_code != kExitOk) {
      return MakeError(
          ErrorCode::kInvalidArgument, "--job", "the job has no feasible plan",
          "run `gpuplan plan " + std::string(serving ? "infer" : "train") + " -f FILE` to see why");
    }
    ss << planned->text;
  } else {
    auto read = ReadInputFile(a.plan, "--plan", kMaxJsonFileBytes);
    if (!read) return read.error();
    ss << *read;
  }
  auto cat = LoadBuiltinCatalog();
  if (!cat) return cat.error();
  EmitOptions opt;
  opt.rank = a.rank;
  opt.autoscaler = a.autoscaler;
  opt.image = a.image;
  opt.min_replicas = a.min_replicas;
  opt.k8s_training = a.k8s_training;
  if (a.has_off_peak) opt.off_peak_qps = a.off_peak_qps;
  if (a.has_peak) opt.peak_qps = a.peak_qps;
  auto files = Emit(ss.str(), a.target, opt, *cat);
  if (!files) return files.error();
  if (!a.out_dir.empty()) return WriteFiles(*files, a);
  Output o;
  if (files->size() == 1) {
    o.text = files->front().contents;
  } else {
    for (const auto& f : *files) o.text += "==> " + f.name + " <==\n" + f.contents;
  }
  return o;
}

}  // namespace

void RegisterEmitCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto a = std::make_shared<EmitArgs>();
  auto* c = app.add_subcommand(
      "emit",
      "Write deployment files for a plan: k8s, skypilot, slurm, vllm, hf, deepspeed, monitoring");
  c->add_option("target", a->target, "k8s | skypilot | slurm | vllm | hf | deepspeed | monitoring")
      ->required();
  c->add_option("--plan", a->plan, "JSON of `gpuplan --json plan train|infer ...`");
  c->add_option("--job", a->job,
                "A training or serving job file: plan it, then emit (instead of --plan)");
  c->add_option("--rank", a->rank, "Which plan of the list (1 = top)")->capture_default_str();
  c->add_option("-o,--out-dir", a->out_dir, "Directory to write into (default: stdout)");
  c->add_flag("--force", a->force, "Overwrite existing files");
  c->add_option("--autoscaler", a->autoscaler, "k8s serving autoscaler: hpa | keda")
      ->capture_default_str();
  c->add_option("--image", a->image, "Container image (k8s)");
  c->add_option("--k8s-training", a->k8s_training,
                "k8s training workload: job | pytorchjob (Kubeflow)")
      ->capture_default_str();
  c->add_option("--min-replicas", a->min_replicas,
                "Serving autoscaler floor (default: from --off-peak-qps, else 1)");
  auto* off =
      c->add_option("--off-peak-qps", a->off_peak_qps,
                    "Off-peak load, requests/s: minReplicas = ceil(load / per-replica capacity)");
  auto* peak = c->add_option("--peak-qps", a->peak_qps,
                             "Peak load, requests/s (default: the plan's load): maxReplicas");
  c->callback([&g, &run, a, off, peak] {
    a->has_off_peak = off->count() > 0;
    a->has_peak = peak->count() > 0;
    run = [&g, a] { return RunEmit(g, *a); };
  });
}

}  // namespace gpuplan::cli
