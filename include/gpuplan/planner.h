// The training planner: searches instance type x node count x parallel layout over the
// catalog, keeps plans that fit memory (with the headroom rule) and meet the deadline and the
// budget, prices them (on-demand, spot with preemptions, reserved), sizes the host, and ranks
// them by the objective with a cost/time Pareto front.
#pragma once

#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/job.h"
#include "gpuplan/perf.h"
#include "gpuplan/pitfalls.h"
#include "gpuplan/plan.h"
#include "gpuplan/sizing.h"

namespace gpuplan {

struct SpotEstimate {
  double interruptions = 0;     // expected over the job
  double lost_hours = 0;        // half a checkpoint interval + restart, per interruption
  double checkpoint_hours = 0;  // time spent writing checkpoints over the job
  double hours = 0;             // wall-clock on spot
};

struct TrainPlan {
  const InstanceType* instance = nullptr;
  int nodes = 1;
  Parallelism par;
  TrainMemoryOptions opt;
  TrainEval eval;
  TrainFramework framework = TrainFramework::kGeneric;  // the framework that runs the layout
  int global_batch = 0;  // the batch the layout runs (the job's, or rounded down)
  double hours = 0;      // on-demand wall clock for the whole job, start-up included
  // Billed before the first step: provisioning, container image pull, staging the weights and
  // NCCL/framework initialisation (calibration `job_setup_hours`, docs/model.md). Part of
  // `hours`; it is what keeps a 12-minute job off an 8-GPU box.
  double setup_hours = 0;
  // Costs of the whole job in the job's currency (empty = no price in the catalog).
  std::optional<double> cost_on_demand, cost_spot, cost_reserved_1y, cost_reserved_3y;
  std::optional<double> price_per_hour;  // whole setup, on-demand
  SpotEstimate spot;
  HostNeeds host;
  std::vector<HostFinding> host_findings;
  // The guides' pitfalls that apply to this plan (pitfalls.h: TrainingPitfalls, and A3 against
  // the other plans), and their messages, in the same order (what --json and the table show).
  std::vector<Finding> findings;
  std::vector<std::string> warnings;
  // Other regions offering the same instance at a cost no better than this plan's (rows that
  // differ only by region are shown once unless the job asks for `by_region`).
  std::vector<std::string> also_regions;
  // The cost the objective ranks by: spot when allowed and cheaper, else on-demand.
  double RankCost() const;
  double RankHours() const;
  // Host checks that fail for CPU cores or RAM (disks and storage can be attached): such
  // plans rank after every plan whose host is adequate.
  bool HostInadequate() const;
};

struct TrainPlanResult {
  std::vector<TrainPlan> plans;   // ranked by the objective, at most job.top
  std::vector<TrainPlan> pareto;  // cost/time Pareto front, by cost
  long shapes = 0;                // distinct hardware shapes x node counts searched
  long evaluated = 0;             // layouts evaluated
  long instances_considered = 0;
  bool exhaustive = true;
  std::string prices_as_of;
  std::vector<std::string> notes;  // why candidates were dropped (deadline, budget, memory)
  // The guides' rule of thumb for this job (A2 decision tree) and the best plan that follows
  // it, shown beside gpuplan's own answer.
  std::string guide_rule;
  std::vector<TrainPlan> guide_plans;  // at most one
  std::string guide_comparison;        // why gpuplan agrees or disagrees
  // When nothing fits: the nearest misses (the cheapest plan that meets the deadline and how far
  // over budget it is; the fastest within budget and how far past the deadline; the knob that
  // closes a memory shortfall), one sentence each.
  std::vector<std::string> nearest_misses;
  // Other guide claims that bear on this job, each with gpuplan's verdict in one line (A1's
  // TFLOPS figures for the chosen GPU; B3's ResNet-152 and ViT-Large claims on the RTX 4090).
  std::vector<std::string> guide_notes;
};

// Plans a training job over `catalog`. Errors only for inputs that cannot be planned at all
// (no instance matches the filters); "nothing fits" is an empty result with notes.
Result<TrainPlanResult> PlanTraining(const TrainJobSpec& job, const Catalog& catalog,
                                     const Calibration& cal,
                                     std::optional<double> cny_per_usd = std::nullopt);

// Re-evaluates one plan with a trace (for --explain).
Trace ExplainTrainPlan(const TrainJobSpec& job, const TrainPlan& plan, const Catalog& catalog,
                       const Calibration& cal);

}  // namespace gpuplan
