// "Nothing fits" with help: the nearest plans with one constraint relaxed at a time.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

#include "gpuplan/input.h"
#include "gpuplan/planner.h"
#include "io/csv.h"
#include "plan/planner_internal.h"

namespace gpuplan {

namespace {

std::string PlanLabel(const TrainPlan& p) {
  return fmt::format("{} x {} {} ({} x {})", p.nodes, p.instance->cloud, p.instance->instance_type,
                     p.nodes * p.instance->accelerator_count, p.instance->accelerator);
}

}  // namespace

// Re-plans `job` with one constraint relaxed at a time and says how far each nearest plan
// misses, so "nothing fits" comes with what would.
void AddNearestMisses(const TrainJobSpec& job, const Catalog& catalog, const Calibration& cal,
                      std::optional<double> rate, TrainPlanResult& out) {
  if (!out.plans.empty()) return;
  const char* cur = CurrencyCode(job.currency);
  auto replan = [&](auto&& edit) -> std::optional<TrainPlan> {
    TrainJobSpec j = job;
    j.top = 1;
    edit(j);
    auto r = PlanTrainingImpl(j, catalog, cal, rate, /*with_guide=*/false);
    if (!r || r->plans.empty()) return std::nullopt;
    return r->plans.front();
  };
  if (job.budget) {
    if (auto p = replan([](TrainJobSpec& j) {
          j.budget.reset();
          j.objective = Objective::kCost;
        })) {
      out.nearest_misses.push_back(fmt::format(
          "cheapest plan{}: {} at {:.0f} {}, {:.0f} {} ({:.0f}%) over the budget of {:.0f} {}",
          job.deadline_hours ? " that meets the deadline" : "", PlanLabel(*p), p->RankCost(), cur,
          p->RankCost() - *job.budget, cur, 100 * (p->RankCost() / *job.budget - 1), *job.budget,
          cur));
    }
  }
  if (job.deadline_hours) {
    if (auto p = replan([](TrainJobSpec& j) {
          j.deadline_hours.reset();
          j.objective = Objective::kTime;
        })) {
      out.nearest_misses.push_back(fmt::format(
          "fastest plan{}: {} in {:.1f} h, {:.1f} h ({:.0f}%) past the {:.1f} h deadline",
          job.budget ? " within the budget" : "", PlanLabel(*p), p->RankHours(),
          p->RankHours() - *job.deadline_hours, 100 * (p->RankHours() / *job.deadline_hours - 1),
          *job.deadline_hours));
    }
  }
  if (out.nearest_misses.empty() && (job.budget || job.deadline_hours)) {
    if (auto p = replan([](TrainJobSpec& j) {
          j.budget.reset();
          j.deadline_hours.reset();
        })) {
      out.nearest_misses.push_back(fmt::format(
          "without the deadline and budget the cheapest plan is {}: {:.1f} h, {:.0f} {}",
          PlanLabel(*p), p->RankHours(), p->RankCost(), cur));
    }
  }
  if (!out.nearest_misses.empty()) return;
  // Memory: what relaxing the memory knobs one at a time would make fit.
  struct Knob {
    const char* text;
    void (*edit)(TrainJobSpec&);
    bool changes_method;  // not offered for pretraining or non-transformers
  };
  const Knob knobs[] = {
      {"--headroom 0.95 (fill GPU memory to 95% instead of the 80% rule, B5)",
       [](TrainJobSpec& j) { j.headroom = std::max(j.headroom, 0.95); }, false},
      {"--max-nodes 4x larger (shard over more GPUs)",
       [](TrainJobSpec& j) {
         j.max_nodes *= 4;
         j.max_gpus = j.max_gpus > 0 ? j.max_gpus * 4 : 0;
       },
       false},
      {"--method lora (train adapters, freeze the base weights)",
       [](TrainJobSpec& j) {
         if (j.method == TrainMethod::kFull) j.method = TrainMethod::kLora;
       },
       true},
      {"--method qlora (4-bit base weights)",
       [](TrainJobSpec& j) {
         if (j.method == TrainMethod::kFull || j.method == TrainMethod::kLora)
           j.method = TrainMethod::kQlora;
       },
       true},
  };
  for (const Knob& k : knobs) {
    if (k.changes_method && (job.method == TrainMethod::kPretrain || !job.model.is_transformer()))
      continue;
    if (auto p = replan([&](TrainJobSpec& j) {
          k.edit(j);
          j.budget.reset();
          j.deadline_hours.reset();
        })) {
      out.nearest_misses.push_back(fmt::format("{} makes it fit: {} in {:.1f} h, {:.0f} {}", k.text,
                                               PlanLabel(*p), p->RankHours(), p->RankCost(), cur));
      break;
    }
  }
}

}  // namespace gpuplan
