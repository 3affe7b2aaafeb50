// Slurm batch script: the shared training launch (train_launch.cc) under srun, one task per
// node, config files from the submit directory.
#include <fmt/format.h>

#include <cmath>

#include "emit/emit_internal.h"

namespace gpuplan::emit {

namespace {

std::string SlurmTime(double hours) {
  // Job time plus 10 % and one hour of slack, as D-HH:MM:SS.
  const long long total_min = static_cast<long long>(std::ceil((hours * 1.1 + 1.0) * 60));
  return fmt::format("{}-{:02d}:{:02d}:00", total_min / 1440, (total_min % 1440) / 60,
                     total_min % 60);
}

}  // namespace

std::vector<EmittedFile> EmitSlurm(const Plan& p) {
  const TrainLaunch launch = MakeTrainLaunch(p);
  std::string s = "#!/bin/bash\n" + Header(p, "Slurm batch script");
  s += fmt::format(
      "#SBATCH --job-name={}\n"
      "#SBATCH --nodes={}\n"
      "#SBATCH --ntasks-per-node=1\n"
      "#SBATCH --gpus-per-node={}\n"
      "#SBATCH --cpus-per-task={}\n"
      "#SBATCH --mem=0\n"
      "#SBATCH --exclusive\n"
      "#SBATCH --time={}\n"
      "#SBATCH --output=%x-%j.out\n"
      "#SBATCH --signal=USR1@300\n"
      "#SBATCH --requeue\n\n"
      "# Planned layout: tp {} x pp {} x dp {}{}, ZeRO {}, micro-batch {} x {} accumulation "
      "steps;\n"
      "# {:.2f} s per step, {:.1f} h for the job; {}.\n"
      "# Submit from the directory that holds the training script and the emitted config files.\n"
      "set -euo pipefail\n"
      "export NNODES=\"$SLURM_NNODES\"\n"
      "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n"
      "export MASTER_PORT=29500\n"
      "export GPUPLAN_CONFIG=\"$SLURM_SUBMIT_DIR\"\n"
      "export NCCL_DEBUG=WARN\n",
      Slug(p.model), p.nodes, p.gpus_per_node, p.cpu_cores, SlurmTime(p.job_hours), p.tp, p.pp,
      p.dp, p.cp > 1 ? fmt::format(" x cp {}", p.cp) : "", p.zero_stage, p.micro_batch,
      p.grad_accum, p.step_time_s, p.job_hours, launch.framework_note);
  const std::string per_node = "export NODE_RANK=\"$SLURM_NODEID\"\n" + launch.command + "\n";
  s += "srun --kill-on-bad-exit=1 bash -c " + ShellQuote(per_node) + "\n";
  std::vector<EmittedFile> out = {{"train.sbatch", s}};
  for (const auto& f : launch.config_files) out.push_back(f);
  return out;
}

}  // namespace gpuplan::emit
