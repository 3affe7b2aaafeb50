// The planners' per-plan checks (private to src/plan, declared in planner_internal.h). Training:
// price one plan (on-demand, reserved, spot with interruptions and checkpoint writes), size its
// host, and turn the guides' pitfalls (pitfalls.h) into its findings; then, over all candidate
// plans, waive host rules no instance meets and flag small cards that a larger one beats (A3).
// Serving: the B1 rule on training-class plans.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "gpuplan/pitfalls.h"
#include "gpuplan/serve_planner.h"
#include "plan/planner_internal.h"

namespace gpuplan {

void PriceAndCheck(const TrainJobSpec& job, const Catalog& cat, const Calibration& cal,
                   std::optional<double> rate, TrainPlan& p) {
  const InstanceType& i = *p.instance;
  auto conv = [&](std::optional<double> v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return cat.Convert(*v, i.currency, job.currency, rate) * p.nodes;
  };
  p.price_per_hour = conv(i.price_on_demand);
  if (p.price_per_hour) p.cost_on_demand = *p.price_per_hour * p.hours;
  if (auto r = conv(i.price_reserved_1y)) p.cost_reserved_1y = *r * p.hours;
  if (auto r = conv(i.price_reserved_3y)) p.cost_reserved_3y = *r * p.hours;
  // Spot: expected interruptions over the run, each losing half a checkpoint interval plus
  // a restart; checkpoints cost their write time.
  const double ckpt_gb = ToGB(TrainingCheckpointBytes(job));
  const double write_h = ckpt_gb / (cal.Get("checkpoint_write_gbps", 2.0) * p.nodes) / 3600.0;
  const double interval = job.checkpoint_interval_hours;
  const double rate_h = cal.Get("spot_interruptions_per_node_hour", 0.02) * p.nodes;
  const double restart = cal.Get("spot_restart_hours", 0.25);
  SpotEstimate& s = p.spot;
  s.checkpoint_hours = interval > 0 ? p.hours / interval * write_h : 0;
  double base = p.hours + s.checkpoint_hours;
  // Without checkpoints an interruption loses everything done so far (on average half).
  double loss = interval > 0 ? interval / 2 + restart : base / 2 + restart;
  s.interruptions = base * rate_h;
  s.lost_hours = s.interruptions * loss;
  s.hours = base + s.lost_hours;
  if (job.spot_allowed) {
    if (auto sp = conv(i.price_spot)) p.cost_spot = *sp * s.hours;
  }
  // Host sizing, then the guides' pitfalls on the plan's numbers (pitfalls.h).
  const Accelerator& acc = *cat.FindAccelerator(i.accelerator);  // the shape's accelerator
  p.host = SizeHost(job.host_policy, TrainingSizingInput(job, i, acc, p.nodes, p.par, p.eval));
  p.host_findings = CheckHost(p.host, i);
  TrainFacts f;
  f.model = &job.model;
  f.method = job.method;
  f.instance = &i;
  f.accelerator = &acc;
  f.nodes = p.nodes;
  f.par = p.par;
  f.opt = p.opt;
  f.eval = &p.eval;
  f.headroom = job.headroom;
  f.spot = job.spot_allowed && p.cost_spot.has_value();
  f.checkpoint_interval_hours = job.checkpoint_interval_hours;
  f.dataset = job.dataset;
  f.host = p.host_findings;
  p.findings = TrainingPitfalls(f, cal);
}

// A host rule (CPU cores, RAM) that no candidate instance meets is the policy's, not the
// plan's: it is said once in the notes and neither warns on nor demotes every plan.
void WaiveUnmeetableHostRules(const TrainJobSpec& job, std::vector<TrainPlan>& plans,
                              std::vector<std::string>& notes) {
  if (plans.empty()) return;
  for (const char* item : {"cpu", "ram"}) {
    double least = 1e300, most = 0, most_has = 0;
    std::string unit;
    bool all_fail = true;
    for (const TrainPlan& p : plans) {
      for (const HostFinding& f : p.host_findings) {
        if (f.item != item) continue;
        if (f.ok) all_fail = false;
        least = std::min(least, f.needed);
        most = std::max(most, f.needed);
        most_has = std::max(most_has, f.has);
        unit = f.unit;
      }
      if (!all_fail) break;
    }
    if (!all_fail) continue;
    for (TrainPlan& p : plans) {
      for (HostFinding& f : p.host_findings) {
        if (f.item != item || f.ok) continue;
        std::erase_if(p.findings, [&](const Finding& x) {
          return x.rule == HostRuleId(f.item) && x.message == f.text;
        });
        f.ok = true;
        f.waived = true;
      }
    }
    notes.push_back(fmt::format(
        "the {} host policy asks for {} {} of {} per node for these GPUs; none of the {} candidate "
        "plans' instances has that much for its GPUs (most offered: {:.0f} {}): plans are ranked "
        "without this rule",
        SizingPolicyName(job.host_policy),
        least == most ? fmt::format("{:.0f}", least) : fmt::format("{:.0f}-{:.0f}", least, most),
        unit, item == std::string("cpu") ? "CPU" : "RAM", plans.size(), most_has, unit));
  }
}

// A3 on the planner's own answer: a plan whose small card is forced into recompute or
// accumulation (`forced_by`, per plan) is warned when another plan of the job, on a GPU with
// kLargerCardMemoryRatio x the memory and no more GPUs in all, costs kLargerCardMinSaving less.
void FlagSmallCards(const TrainJobSpec& job, const Catalog& cat,
                    const std::vector<std::string>& forced_by, std::vector<TrainPlan>& plans) {
  if (std::all_of(forced_by.begin(), forced_by.end(),
                  [](const std::string& f) { return f.empty(); })) {
    return;
  }
  // Adequate plans by cost: the first one that qualifies for a plan is its cheapest alternative.
  std::vector<std::pair<const TrainPlan*, const Accelerator*>> by_cost;
  for (const TrainPlan& q : plans) {
    const Accelerator* a = cat.FindAccelerator(q.instance->accelerator);
    if (!q.HostInadequate() && a != nullptr) by_cost.emplace_back(&q, a);
  }
  std::stable_sort(by_cost.begin(), by_cost.end(), [](const auto& x, const auto& y) {
    return x.first->RankCost() < y.first->RankCost();
  });
  for (size_t k = 0; k < plans.size(); ++k) {
    if (forced_by[k].empty()) continue;
    TrainPlan& p = plans[k];
    const Accelerator& acc = *cat.FindAccelerator(p.instance->accelerator);
    const TrainPlan* best = nullptr;
    const Accelerator* best_acc = nullptr;
    for (const auto& [q, a] : by_cost) {
      if (q->RankCost() > (1 - kLargerCardMinSaving) * p.RankCost()) break;  // none cheap enough
      if (q->par.gpus() > p.par.gpus()) continue;
      if (a->memory.value() < kLargerCardMemoryRatio * acc.memory.value()) continue;
      best = q;
      best_acc = a;
      break;
    }
    if (best == nullptr) continue;
    LargerCard larger;
    larger.memory = best_acc->memory;
    larger.cost = best->RankCost();
    larger.own_cost = p.RankCost();
    larger.cost_unit = fmt::format("{} for the job", CurrencyCode(job.currency));
    larger.description =
        fmt::format("{} {} ({} x {} x {}, {:.0f} GiB each, micro-batch {}, recompute {})",
                    best->instance->cloud, best->instance->instance_type, best->nodes,
                    best->instance->accelerator_count, best_acc->id, ToGiB(best_acc->memory),
                    best->opt.micro_batch, RecomputeName(best->opt.recompute));
    TrainFacts f;
    f.model = &job.model;
    f.instance = p.instance;
    f.accelerator = &acc;
    f.nodes = p.nodes;
    f.par = p.par;
    f.opt = p.opt;
    f.eval = &p.eval;
    f.headroom = job.headroom;
    if (auto a3 = SmallCardRule(f, forced_by[k], larger)) p.findings.push_back(std::move(*a3));
  }
}

// B1 (pitfalls.h, the rule `gpuplan check` runs): a training-class plan against the cheapest
// deployment of the load on the same cloud, on any GPU (re-planned once per cloud).
void AddTrainingClassWarnings(const ServeJobSpec& job, const Catalog& catalog,
                              const Calibration& cal, std::optional<double> rate,
                              ServePlanResult& out) {
  std::map<std::string, std::optional<CheaperServing>> cheapest;  // per cloud
  for (ServePlan& p : out.plans) {
    if (!p.cost_per_hour || !IsTrainingClass(*p.instance)) continue;
    auto it = cheapest.find(p.instance->cloud);
    if (it == cheapest.end()) {
      ServeJobSpec any = job;
      any.clouds = {p.instance->cloud};
      any.gpus.clear();
      any.regions.clear();
      any.top = 1;
      auto r = PlanServingImpl(any, catalog, cal, rate, /*warnings=*/false);
      std::optional<CheaperServing> c;
      if (r && !r->plans.empty() && r->plans.front().cost_per_hour) {
        const ServePlan& q = r->plans.front();
        c = CheaperServing{fmt::format("{} x {} ({} x {} GPU(s))", q.instances,
                                       q.instance->instance_type, q.replicas, q.tp),
                           *q.cost_per_hour};
      }
      it = cheapest.emplace(p.instance->cloud, c).first;
    }
    if (auto b1 = TrainingInstanceServingRule(
            *p.instance, fmt::format("{} x {}", p.instances, p.instance->instance_type),
            *p.cost_per_hour,
            fmt::format("{} replica(s) at {:.0f}% utilisation", p.replicas, 100 * p.utilization),
            it->second, CurrencyCode(job.currency))) {
      p.warnings.push_back(b1->message);
    }
  }
}

}  // namespace gpuplan
