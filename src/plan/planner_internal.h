// Private to src/plan: the pieces of the training planner that live in their own files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuplan/planner.h"
#include "gpuplan/serve_planner.h"

namespace gpuplan {

// The job's framework capabilities (ApplyFramework) and, for a job naming a run-to-target
// benchmark that runs its reference implementation (the framework BenchmarkReferenceFramework
// gives it), what that implementation does differently (ApplyBenchmarkImplementation).
void ApplyJobFramework(const TrainJobSpec& job, Calibration& cal, LayoutConstraints& fixed);

// Whether `a` ranks above `b` under the objective (cost, time or Pareto: cost then time).
bool Better(const TrainPlan& a, const TrainPlan& b, Objective obj);

// True when `x` is in `v`.
inline bool Contains(const std::vector<std::string>& v, const std::string& x) {
  for (const auto& s : v) {
    if (s == x) return true;
  }
  return false;
}

// PlanTraining without the nearest-miss search; `with_guide` adds the guide comparison (the
// comparison itself re-plans with it off).
Result<TrainPlanResult> PlanTrainingImpl(const TrainJobSpec& job, const Catalog& catalog,
                                         const Calibration& cal, std::optional<double> rate,
                                         bool with_guide);
// The guides' own answer for the job (A2's branches, A1's figure, B3's claims) re-planned
// beside gpuplan's, with a verdict (guide_compare.cc).
void AddGuideComparison(const TrainJobSpec& job, const Catalog& catalog, const Calibration& cal,
                        std::optional<double> rate, TrainPlanResult& out);
// Prices `p` (its instance, nodes, layout, evaluation and hours are set): on-demand, reserved,
// spot with interruptions and checkpoint writes; sizes its host under the job's policy and sets
// its findings from the guides' pitfalls (TrainingPitfalls) (plan_checks.cc).
void PriceAndCheck(const TrainJobSpec& job, const Catalog& cat, const Calibration& cal,
                   std::optional<double> rate, TrainPlan& p);
// A host rule (CPU cores, RAM) that no plan's instance meets is the policy's: it is waived on
// every plan (finding removed, HostFinding marked `waived`) and said once in `notes`.
void WaiveUnmeetableHostRules(const TrainJobSpec& job, std::vector<TrainPlan>& plans,
                              std::vector<std::string>& notes);
// A3 over the candidate plans: `forced_by[k]` is SmallCardForcedBy of plans[k]; such a plan
// gets the A3 finding when another plan on a larger-memory GPU is enough cheaper.
void FlagSmallCards(const TrainJobSpec& job, const Catalog& cat,
                    const std::vector<std::string>& forced_by, std::vector<TrainPlan>& plans);
// PlanServing without the B1 warnings and the guide comparison (serve_planner.cc).
// `warnings` = false leaves the kept plans' warnings (and runtime) unformatted.
Result<ServePlanResult> PlanServingImpl(const ServeJobSpec& job, const Catalog& catalog,
                                        const Calibration& cal, std::optional<double> rate,
                                        bool warnings = true);
// B1 on `out.plans`: a training-class plan (IsTrainingClass) whose price per hour is at least
// kServingCostRatio x the cheapest deployment of the load on its cloud (PlanServingImpl on any
// GPU there) gets TrainingInstanceServingRule's message as a warning (plan_checks.cc).
void AddTrainingClassWarnings(const ServeJobSpec& job, const Catalog& catalog,
                              const Calibration& cal, std::optional<double> rate,
                              ServePlanResult& out);
// The catalog filter both planners share: a row the job's constraints drop because of what the
// row's source says of it (a suspect price unless include_suspect, a marketplace listing when
// marketplace is false); counts the drop in `suspect` or `marketplace`.
bool SkipOffer(const InstanceType& i, bool include_suspect, bool marketplace, int& suspect,
               int& marketplace_rows);
// The notes on those drops and on the ranked plans' instances (`ranked`, best first): rows
// skipped, and which plans are marketplace listings with the first provider's own row.
void AddOfferNotes(const std::vector<const InstanceType*>& ranked, int suspect,
                   int marketplace_rows, std::vector<std::string>& notes);
// When nothing fits: re-plans with one constraint relaxed at a time and says how far each
// nearest plan misses (nearest_miss.cc).
void AddNearestMisses(const TrainJobSpec& job, const Catalog& catalog, const Calibration& cal,
                      std::optional<double> rate, TrainPlanResult& out);

}  // namespace gpuplan
