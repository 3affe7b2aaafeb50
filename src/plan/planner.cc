// Training planner: resolve -> enumerate -> prune -> evaluate -> rank (STYLE.md section 6).
// Instances are grouped into hardware shapes (same accelerator, count, links and fabric
// bandwidth): a shape x node count is evaluated once and priced for every instance of it.
// Shapes are visited in order of a lower bound on the job's cost (compute at full GEMM
// efficiency, no communication); a shape whose bound cannot enter the top plans is skipped.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <tuple>

#include "gpuplan/input.h"
#include "gpuplan/planner.h"
#include "plan/planner_internal.h"
#include "io/csv.h"

namespace gpuplan {

void ApplyJobFramework(const TrainJobSpec& job, Calibration& cal, LayoutConstraints& fixed) {
  ApplyFramework(job.framework, cal, fixed);
  if (RunsBenchmarkImplementation(job))
    ApplyBenchmarkImplementation(*FindTrainBenchmark(job.benchmark), cal, fixed);
}

double TrainPlan::RankCost() const {
  double best = 1e300;
  if (cost_on_demand) best = *cost_on_demand;
  if (cost_spot && *cost_spot < best) best = *cost_spot;
  return best;
}

double TrainPlan::RankHours() const {
  if (cost_spot && (!cost_on_demand || *cost_spot < *cost_on_demand)) return spot.hours;
  return hours;
}

bool TrainPlan::HostInadequate() const {
  for (const auto& f : host_findings) {
    if (!f.ok && (f.item == "cpu" || f.item == "ram")) return true;
  }
  return false;
}

namespace {

struct ShapeKey {
  std::string acc;
  int count;
  IntraNodeLink intra;
  InterNodeFabric inter;
  double inter_bw;
  double network;
  bool operator<(const ShapeKey& o) const {
    return std::tie(acc, count, intra, inter, inter_bw, network) <
           std::tie(o.acc, o.count, o.intra, o.inter, o.inter_bw, o.network);
  }
};

// Keeps the best-ranked of the plans that differ only by region (same cloud, instance type,
// node count); the others' regions are listed on it. `plans` is sorted best first.
void CollapseRegions(std::vector<TrainPlan>& plans) {
  std::vector<TrainPlan> kept;
  std::map<std::tuple<std::string, std::string, int>, std::size_t> index;
  for (auto& p : plans) {
    auto key = std::make_tuple(p.instance->cloud, p.instance->instance_type, p.nodes);
    auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, kept.size());
      kept.push_back(std::move(p));
    } else if (!p.instance->region.empty() &&
               !Contains(kept[it->second].also_regions, p.instance->region) &&
               p.instance->region != kept[it->second].instance->region) {
      kept[it->second].also_regions.push_back(p.instance->region);
    }
  }
  plans = std::move(kept);
}

bool Dominates(const TrainPlan& a, const TrainPlan& b) {
  return a.RankCost() <= b.RankCost() && a.RankHours() <= b.RankHours() &&
         (a.RankCost() < b.RankCost() || a.RankHours() < b.RankHours());
}

}  // namespace

bool Better(const TrainPlan& a, const TrainPlan& b, Objective obj) {
  auto key = [&](const TrainPlan& p) {
    return obj == Objective::kTime ? std::make_tuple(p.RankHours(), p.RankCost())
                                   : std::make_tuple(p.RankCost(), p.RankHours());
  };
  if (a.HostInadequate() != b.HostInadequate()) return !a.HostInadequate();
  auto ka = key(a), kb = key(b);
  if (ka != kb) return ka < kb;
  if (a.instance->cloud != b.instance->cloud) return a.instance->cloud < b.instance->cloud;
  if (a.instance->instance_type != b.instance->instance_type) {
    return a.instance->instance_type < b.instance->instance_type;
  }
  if (a.instance->region != b.instance->region) return a.instance->region < b.instance->region;
  return a.nodes < b.nodes;
}

Result<TrainPlanResult> PlanTraining(const TrainJobSpec& job, const Catalog& catalog,
                                     const Calibration& cal, std::optional<double> rate) {
  auto res = PlanTrainingImpl(job, catalog, cal, rate, /*with_guide=*/true);
  if (res) AddNearestMisses(job, catalog, cal, rate, *res);
  return res;
}

Result<TrainPlanResult> PlanTrainingImpl(const TrainJobSpec& job, const Catalog& catalog,
                                         const Calibration& cal, std::optional<double> rate,
                                         bool with_guide) {
  TrainPlanResult out;
  out.prices_as_of = catalog.PricesAsOf();
  if (job.fp4_gemms && job.framework != TrainFramework::kGeneric &&
      job.framework != TrainFramework::kMegatronCore) {
    // FrameworkSupports' rule, said once instead of "no layout" for every shape.
    return MakeError(ErrorCode::kInvalidArgument, "train.framework",
                     fmt::format("NVFP4 training (precision fp4) runs under Megatron-Core's "
                                 "Transformer Engine recipe; {} has none",
                                 TrainFrameworkName(job.framework)),
                     "use --framework megatron-core (or leave it unset), or --precision fp8");
  }
  const double setup_hours = cal.Get("job_setup_hours", 0.15);
  // The framework's capabilities (what it overlaps, which ZeRO stages and pipelines it offers).
  Calibration fw_cal = cal;
  LayoutConstraints fw_fixed;
  ApplyJobFramework(job, fw_cal, fw_fixed);
  // ---- resolve filters ---------------------------------------------------------------------
  std::vector<std::string> gpu_ids;
  for (size_t k = 0; k < job.gpus.size(); ++k) {
    auto a = catalog.ResolveAccelerator(job.gpus[k], fmt::format("constraints.gpus[{}]", k));
    if (!a) return a.error();
    gpu_ids.push_back((*a)->id);
  }
  for (size_t k = 0; k < job.clouds.size(); ++k) {
    if (auto st = catalog.CheckCloud(job.clouds[k], fmt::format("constraints.clouds[{}]", k)); !st)
      return st.error();
  }
  auto resolved = catalog.ResolveRegions(job.regions, "constraints.regions", job.clouds);
  if (!resolved) return resolved.error();
  const std::vector<std::string>& regions = *resolved;  // the catalog's spelling of each
  // ---- group instances into shapes ---------------------------------------------------------
  std::map<ShapeKey, std::vector<const InstanceType*>> shapes;
  int skipped_suspect = 0, skipped_marketplace = 0;
  for (const auto& i : catalog.instances) {
    if (i.is_cpu_only()) continue;
    if (!job.clouds.empty() && !Contains(job.clouds, i.cloud)) continue;
    if (!regions.empty() && !Contains(regions, i.region)) continue;
    if (!gpu_ids.empty() && !Contains(gpu_ids, i.accelerator)) continue;
    if (!i.price_on_demand && !(job.spot_allowed && i.price_spot)) continue;
    if (SkipOffer(i, job.include_suspect, job.marketplace, skipped_suspect, skipped_marketplace))
      continue;
    ++out.instances_considered;
    ShapeKey k{i.accelerator,
               i.accelerator_count,
               i.intra_node_link,
               i.inter_node_fabric,
               i.inter_node_bw ? i.inter_node_bw->value() : 0,
               i.network.value()};
    shapes[k].push_back(&i);
  }
  if (shapes.empty()) {
    return MakeError(
        ErrorCode::kNotFound, "constraints",
        "no priced GPU instance matches the clouds/regions/gpus filters",
        skipped_suspect > 0
            ? fmt::format("{} matching row(s) have a price their source marks suspect: "
                          "--include-suspect ranks them",
                          skipped_suspect)
        : skipped_marketplace > 0
            ? fmt::format("{} matching row(s) are marketplace listings: drop --no-marketplace "
                          "(or constraints.marketplace: false) to rank them",
                          skipped_marketplace)
            : "widen the filters (`gpuplan instances` lists what the catalog has)");
  }
  // ---- per shape and node count: the fastest layout that fits, then price every instance ----
  const TrainMemoryOptions base = TrainOptionsFor(job);
  // The job's batch, or the default for a cluster of `gpus` (it grows with the cluster).
  auto batch_for = [&job](int gpus) {
    return job.global_batch > 0 ? job.global_batch : DefaultGlobalBatch(job, gpus);
  };
  TrainJob tj;
  tj.global_batch = batch_for(0);
  tj.tokens = job.TotalTokens();
  tj.samples = job.samples * job.epochs;
  const double total_flops = TrainingFlopsPerToken(job.model, std::max(1, base.seq_len), job.method,
                                                   Recompute::kNone, false)
                                 .value() *
                             tj.tokens;
  std::vector<TrainPlan> all;
  std::vector<std::string> forced_by;  // per plan in `all`: SmallCardForcedBy (A3)
  int dropped_memory = 0, dropped_deadline = 0, dropped_budget = 0, skipped_bound = 0;
  int dropped_host_offload = 0;
  int skipped_fixed = 0, rounded_batch = 0;
  // Accelerators the job cannot run on (TrainingUnsupported), with why.
  std::vector<std::pair<std::string, std::string>> cannot_run;
  // What accelerators' own training stacks allow (ApplyAcceleratorLimits), by accelerator id;
  // said once each when a listed plan runs there.
  std::vector<std::pair<std::string, std::string>> stack_limits;
  LayoutSearchStats why;  // summed over shapes: why layouts were rejected
  // Visit shapes cheapest-bound first so the bound prunes well.
  struct Visit {
    double bound;
    const ShapeKey* key;
    const std::vector<const InstanceType*>* insts;
    int nodes;
  };
  std::vector<Visit> visits;
  for (const auto& [k, insts] : shapes) {
    const Accelerator* acc = catalog.FindAccelerator(k.acc);
    if (!acc || acc->InferenceOnly()) continue;
    // The step model runs fp32 jobs on the TF32 tensor path: bound with the same peak.
    if (auto no = TrainingUnsupported(*acc, job.precision, job.fp4_gemms, job.method)) {
      if (std::none_of(cannot_run.begin(), cannot_run.end(),
                       [&](const auto& x) { return x.first == acc->id; }))
        cannot_run.emplace_back(acc->id, no->why + "; " + no->instead + " there");
      continue;
    }
    auto peak = TrainGemmPeak(*acc, job.precision, job.fp4_gemms);
    double min_price = 1e300;
    for (const auto* i : insts) {
      if (i->price_on_demand)
        min_price = std::min(min_price,
                             catalog.Convert(*i->price_on_demand, i->currency, job.currency, rate));
      if (job.spot_allowed && i->price_spot)
        min_price =
            std::min(min_price, catalog.Convert(*i->price_spot, i->currency, job.currency, rate));
    }
    // Node counts: powers of two up to max_nodes, or the fixed cluster (a GPU count that the
    // instance's GPUs divide, or a node count).
    std::vector<int> node_counts;
    if (job.num_gpus > 0 || job.nodes > 0) {
      int n = job.nodes;
      if (job.num_gpus > 0) {
        if (job.num_gpus % k.count != 0 || (job.nodes > 0 && job.nodes * k.count != job.num_gpus)) {
          ++skipped_fixed;
          continue;
        }
        n = job.num_gpus / k.count;
      }
      node_counts.push_back(n);
    } else {
      // 64-bit doubling: n *= 2 in int wraps to 0 (an endless loop) past 2^30.
      for (long long nn = 1; nn <= job.max_nodes && nn <= kMaxNodes; nn *= 2)
        node_counts.push_back(static_cast<int>(nn));
    }
    for (int n : node_counts) {
      double gpus = static_cast<double>(k.count) * n;
      if (job.min_gpus > 0 && gpus < job.min_gpus) continue;
      if (job.max_gpus > 0 && gpus > job.max_gpus) break;
      double hours_lb = total_flops / (gpus * peak->value() * cal.GemmEfficiency(*acc)) / 3600.0;
      visits.push_back({min_price * n * hours_lb, &k, &insts, n});
    }
  }
  std::sort(visits.begin(), visits.end(), [](const Visit& a, const Visit& b) {
    if (a.bound != b.bound) return a.bound < b.bound;
    if (a.key->acc != b.key->acc) return a.key->acc < b.key->acc;
    return a.nodes < b.nodes;
  });
  const size_t keep = static_cast<size_t>(std::max(1, job.top)) * 4;
  std::vector<double> best_costs;  // sorted costs of feasible plans (for the bound)
  for (const Visit& v : visits) {
    if (job.objective == Objective::kCost && best_costs.size() >= keep && total_flops > 0 &&
        v.bound > best_costs[keep - 1]) {
      ++skipped_bound;
      continue;
    }
    const InstanceType& proto = *v.insts->front();
    const Accelerator& acc = *catalog.FindAccelerator(proto.accelerator);
    HardwareView hw = HardwareFromInstance(proto, acc, v.nodes);
    ++out.shapes;
    tj.global_batch = batch_for(hw.gpus());
    // The job's batch when some layout runs it; else the largest batch below it that the
    // cluster's data-parallel sizes can run (reported).
    LayoutSearchStats stats;
    TrainMemoryOptions shape_base = base;
    // A framework that must run the plan and calls the flash-attn package stores the scores
    // on GPUs it does not support (Volta).
    if (!FusedAttentionOn(acc, job.framework)) shape_base.flash_attention = false;
    LayoutConstraints shape_fixed = fw_fixed;
    // A batch the job does not state is the planner's default (DefaultGlobalBatch), not a
    // requirement: each data-parallel size runs it rounded down to whole steps, as the
    // validation adapter does for a case that states none (16 sequences on 3 GPUs: 15 by data
    // parallelism, rather than a pipeline over 3 nodes because 3 does not divide 16).
    if (job.global_batch <= 0) shape_fixed.round_global_batch = true;
    // The largest RAM per GPU among the shape's machines bounds the offloaded states; a machine
    // whose RAM the catalog does not give (an imported row) leaves them unbounded.
    double ram_per_gpu = 0;
    bool ram_known = true;
    for (const InstanceType* inst : *v.insts) {
      ram_known = ram_known && inst->ram.value() > 0;
      ram_per_gpu = std::max(ram_per_gpu, inst->ram.value() / std::max(1, inst->accelerator_count));
    }
    if (ram_known && ram_per_gpu > 0) shape_fixed.host_ram_per_gpu_bytes = ram_per_gpu;
    if (std::string limits = ApplyAcceleratorLimits(acc, shape_fixed); !limits.empty())
      stack_limits.emplace_back(acc.id, std::move(limits));
    auto choice =
        BestTrainLayout(job.model, shape_base, tj, hw, fw_cal, job.headroom, shape_fixed, &stats);
    if (!choice && stats.batch_unrunnable > 0 && stats.fits == 0) {
      LayoutConstraints rounding = shape_fixed;
      rounding.round_global_batch = true;
      stats = LayoutSearchStats{};
      choice =
          BestTrainLayout(job.model, shape_base, tj, hw, fw_cal, job.headroom, rounding, &stats);
      if (choice) ++rounded_batch;
    }
    why.evaluated += stats.evaluated;
    why.over_memory += stats.over_memory;
    why.invalid += stats.invalid;
    why.batch_unrunnable += stats.batch_unrunnable;
    why.pruned += stats.pruned;
    if (why.first_invalid.empty()) why.first_invalid = stats.first_invalid;
    out.evaluated += stats.evaluated;
    if (!choice) {
      ++dropped_memory;
      continue;
    }
    const double hours = choice->eval.job_seconds / 3600.0;
    if (hours <= 0) continue;
    std::string small_card;  // what the shape's small card is forced into (A3), if anything
    {
      TrainFacts f;
      f.model = &job.model;
      f.instance = &proto;
      f.accelerator = &acc;
      f.nodes = v.nodes;
      f.par = choice->par;
      f.opt = choice->opt;
      f.eval = &choice->eval;
      f.headroom = job.headroom;
      TrainJob cj = tj;
      cj.global_batch = choice->global_batch;
      small_card = SmallCardForcedBy(f, cj, fw_cal);
    }
    for (const InstanceType* inst : *v.insts) {
      TrainPlan p;
      p.instance = inst;
      p.nodes = v.nodes;
      p.par = choice->par;
      p.opt = choice->opt;
      p.eval = choice->eval;
      p.framework = choice->framework;
      p.global_batch = choice->global_batch;
      p.setup_hours = setup_hours;
      p.hours = hours + setup_hours;
      // Offloaded states (optimizer, parameters, gradients, paged optimizer states) must live
      // in the machine's RAM: a machine that cannot hold them cannot run the layout, however
      // its other host rules are waived.
      // (A machine whose RAM the catalog does not give is not judged here.)
      if (inst->ram.value() > 0 &&
          p.eval.memory.host_offload.value() * inst->accelerator_count > inst->ram.value()) {
        ++dropped_host_offload;
        continue;
      }
      PriceAndCheck(job, catalog, cal, rate, p);
      // Spot stretches the run (interruptions, lost work): an option that misses the deadline
      // is dropped, the on-demand option may still meet it.
      if (job.deadline_hours && p.cost_spot && p.spot.hours > *job.deadline_hours)
        p.cost_spot.reset();
      if (!p.cost_on_demand && !p.cost_spot) continue;
      if (job.deadline_hours && p.RankHours() > *job.deadline_hours) {
        ++dropped_deadline;
        continue;
      }
      if (job.budget && p.RankCost() > *job.budget) {
        ++dropped_budget;
        continue;
      }
      if (!p.HostInadequate()) {
        best_costs.insert(std::upper_bound(best_costs.begin(), best_costs.end(), p.RankCost()),
                          p.RankCost());
      }
      all.push_back(std::move(p));
      forced_by.push_back(small_card);
    }
  }
  // ---- rank, top-k, Pareto front -----------------------------------------------------------
  WaiveUnmeetableHostRules(job, all, out.notes);
  FlagSmallCards(job, catalog, forced_by, all);
  for (TrainPlan& p : all) {
    p.warnings.clear();
    for (const Finding& f : p.findings) p.warnings.push_back(f.message);
  }
  std::sort(all.begin(), all.end(),
            [&](const TrainPlan& a, const TrainPlan& b) { return Better(a, b, job.objective); });
  if (!job.by_region) CollapseRegions(all);
  const bool any_adequate =
      std::any_of(all.begin(), all.end(), [](const TrainPlan& p) { return !p.HostInadequate(); });
  for (const auto& p : all) {
    if (any_adequate && p.HostInadequate()) continue;  // the front is over adequate hosts
    bool dominated = false;
    for (const auto& q : out.pareto) {
      if (Dominates(q, p) || (q.RankCost() == p.RankCost() && q.RankHours() == p.RankHours())) {
        dominated = true;
        break;
      }
    }
    if (!dominated) {
      std::erase_if(out.pareto, [&](const TrainPlan& q) { return Dominates(p, q); });
      out.pareto.push_back(p);
    }
  }
  std::sort(out.pareto.begin(), out.pareto.end(),
            [](const TrainPlan& a, const TrainPlan& b) { return Better(a, b, Objective::kCost); });
  if (job.objective == Objective::kPareto) {
    out.plans = out.pareto;
  } else {
    out.plans.assign(all.begin(),
                     all.begin() + static_cast<long>(std::min(
                                       all.size(), static_cast<size_t>(std::max(1, job.top)))));
  }
  if (static_cast<int>(out.plans.size()) > std::max(1, job.top))
    out.plans.resize(static_cast<size_t>(job.top));
  out.exhaustive = skipped_bound == 0;
  if (dropped_memory) {
    // Name the real reason: no runnable batch, no valid layout, or memory.
    if (why.evaluated == 0 && why.over_memory == 0 && why.batch_unrunnable > 0) {
      out.notes.push_back(fmt::format(
          "{} shape x node-count combinations have no layout that runs the global batch {}: no "
          "data-parallel size of theirs divides it and each is larger than it (give a larger "
          "--global-batch or fewer GPUs)",
          dropped_memory,
          job.global_batch > 0 ? fmt::format("{}", job.global_batch) : std::string("(default)")));
    } else if (why.evaluated == 0 && why.over_memory == 0 && why.invalid > 0) {
      out.notes.push_back(
          fmt::format("{} shape x node-count combinations have no valid layout for {} (e.g. {})",
                      dropped_memory, job.model.name, why.first_invalid));
    } else {
      out.notes.push_back(fmt::format(
          "{} shape x node-count combinations cannot hold the job in {:.0f}% of GPU memory "
          "({} layouts over memory{})",
          dropped_memory, job.headroom * 100, why.over_memory,
          why.batch_unrunnable > 0
              ? fmt::format(", {} tp x pp x dp that cannot divide the batch", why.batch_unrunnable)
              : ""));
    }
  }
  for (const auto& g : GroupByWhy(cannot_run)) {
    out.notes.push_back(fmt::format("{}: not planned ({})", fmt::join(g.ids, ", "), g.why));
  }
  std::vector<std::string> said;
  for (const auto& [id, limits] : stack_limits) {
    const bool listed =
        std::any_of(out.plans.begin(), out.plans.end(),
                    [&, &i = id](const TrainPlan& p) { return p.instance->accelerator == i; });
    if (listed && std::find(said.begin(), said.end(), limits) == said.end()) {
      out.notes.push_back(limits);
      said.push_back(limits);
    }
  }
  if (skipped_fixed)
    out.notes.push_back(
        fmt::format("{} instance shapes skipped: their GPUs per node do not divide the fixed "
                    "cluster of {} GPUs",
                    skipped_fixed, job.num_gpus));
  if (rounded_batch) {
    for (const auto& p : out.plans) {
      if (p.global_batch != batch_for(p.par.gpus())) {
        out.notes.push_back(fmt::format(
            "global batch {} is not runnable on {} GPUs (no data-parallel size divides it): "
            "rounded down to {} = micro-batch {} x dp {} x {} micro-batches",
            batch_for(p.par.gpus()), p.par.gpus(), p.global_batch, p.opt.micro_batch, p.par.dp,
            p.eval.step.num_microbatches));
        break;
      }
    }
  }
  if (why.pruned)
    out.notes.push_back(
        fmt::format("{} tp x pp x dp x ep layouts skipped by the step-time lower bound (they "
                    "cannot come within 1% of the fastest)",
                    why.pruned));
  if (dropped_host_offload)
    out.notes.push_back(fmt::format(
        "{} plans dropped: their offloaded states need more host RAM than the machine has",
        dropped_host_offload));
  if (dropped_deadline)
    out.notes.push_back(
        fmt::format("{} plans miss the {:.1f} h deadline", dropped_deadline, *job.deadline_hours));
  if (dropped_budget)
    out.notes.push_back(fmt::format("{} plans exceed the budget of {:.0f} {}", dropped_budget,
                                    *job.budget, CurrencyCode(job.currency)));
  {
    std::vector<const InstanceType*> ranked;
    for (const auto& p : out.plans) ranked.push_back(p.instance);
    AddOfferNotes(ranked, skipped_suspect, skipped_marketplace, out.notes);
  }
  if (skipped_bound)
    out.notes.push_back(
        fmt::format("{} shape x node-count combinations skipped: their lower-bound cost cannot "
                    "reach the top {}",
                    skipped_bound, keep));
  if (with_guide) AddGuideComparison(job, catalog, cal, rate, out);
  return out;
}

Trace ExplainTrainPlan(const TrainJobSpec& job, const TrainPlan& plan, const Catalog& catalog,
                       const Calibration& cal) {
  Trace t;
  const Accelerator* acc = catalog.FindAccelerator(plan.instance->accelerator);
  if (!acc) return t;
  HardwareView hw = HardwareFromInstance(*plan.instance, *acc, plan.nodes);
  TrainJob tj;
  tj.global_batch = plan.global_batch > 0  ? plan.global_batch
                    : job.global_batch > 0 ? job.global_batch
                                           : DefaultGlobalBatch(job, hw.gpus());
  tj.tokens = job.TotalTokens();
  tj.samples = job.samples * job.epochs;
  t.Add(
      "accelerator peak",
      fmt::format("dense {} peak of {}", TrainPrecisionName(job.precision, job.fp4_gemms), acc->id),
      (job.fp4_gemms ? acc->fp4 : acc->PeakFor(job.precision)).value_or(FlopPerSec(0)).value() /
          1e12,
      "TFLOP/s");
  t.Add("GEMM efficiency", "calibration gemm_efficiency for " + acc->arch, cal.GemmEfficiency(*acc),
        "");
  t.Add("intra-node bandwidth per GPU",
        std::string(IntraNodeLinkName(hw.intra)) + ", per direction", hw.intra_bw.value() / 1e9,
        "GB/s");
  t.Add("inter-node bandwidth per GPU",
        std::string(InterNodeFabricName(hw.inter)) + " / GPUs per node", hw.inter_bw.value() / 1e9,
        "GB/s");
  t.Add("tokens per step", "global batch x seq_len",
        static_cast<double>(tj.global_batch) * plan.opt.seq_len, "tokens");
  t.Add("training FLOPs per token",
        "3 x forward (6N + attention 12 L s h); LoRA: 2 x forward for frozen weights",
        TrainingFlopsPerToken(job.model, plan.opt.seq_len, job.method, Recompute::kNone, false)
            .value(),
        "FLOP");
  TrainMemoryOptions o = plan.opt;
  o.notes = true;
  Calibration fw_cal = cal;
  LayoutConstraints unused;
  ApplyJobFramework(job, fw_cal, unused);
  EvaluateTraining(job.model, plan.par, o, tj, hw, fw_cal, job.headroom, &t);
  t.Add("job hours", "total tokens / (tokens/s/GPU x GPUs) / 3600", plan.hours, "h");
  if (plan.price_per_hour)
    t.Add("price per hour", "instance on-demand x nodes", *plan.price_per_hour,
          CurrencyCode(job.currency));
  if (plan.cost_on_demand)
    t.Add("cost on-demand", "hours x price", *plan.cost_on_demand, CurrencyCode(job.currency));
  if (plan.cost_spot) {
    t.Add("spot interruptions", "hours x rate per node-hour x nodes", plan.spot.interruptions, "");
    t.Add("spot lost hours", "interruptions x (checkpoint interval / 2 + restart)",
          plan.spot.lost_hours, "h");
    t.Add("checkpoint write hours", "checkpoints x size / NVMe write bandwidth",
          plan.spot.checkpoint_hours, "h");
    t.Add("cost spot", "spot hours x spot price", *plan.cost_spot, CurrencyCode(job.currency));
  }
  return t;
}

bool SkipOffer(const InstanceType& i, bool include_suspect, bool marketplace, int& suspect,
               int& marketplace_rows) {
  if (!i.suspect_reason.empty() && !include_suspect) {
    ++suspect;
    return true;
  }
  if (!marketplace && IsMarketplace(i)) {
    ++marketplace_rows;
    return true;
  }
  return false;
}

void AddOfferNotes(const std::vector<const InstanceType*>& ranked, int suspect,
                   int marketplace_rows, std::vector<std::string>& notes) {
  if (suspect) {
    notes.push_back(fmt::format(
        "{} catalog row(s) skipped: their source marks the price as suspect or anomalous "
        "(--include-suspect ranks them)",
        suspect));
  }
  if (marketplace_rows) {
    notes.push_back(fmt::format(
        "{} marketplace listing(s) skipped (--no-marketplace, constraints.marketplace: false)",
        marketplace_rows));
  }
  std::vector<std::string> listed, clouds;
  int first_provider = 0;
  for (size_t k = 0; k < ranked.size(); ++k) {
    if (!IsMarketplace(*ranked[k])) {
      if (first_provider == 0) first_provider = static_cast<int>(k) + 1;
      continue;
    }
    listed.push_back(std::to_string(k + 1));
    if (!Contains(clouds, ranked[k]->cloud)) clouds.push_back(ranked[k]->cloud);
  }
  if (listed.empty()) return;
  std::string provider = first_provider > 0
                             ? fmt::format("the first plan on a provider's own row is #{} ({} {})",
                                           first_provider, ranked[first_provider - 1]->cloud,
                                           ranked[first_provider - 1]->instance_type)
                             : std::string("none of the plans shown is on a provider's own row");
  notes.push_back(fmt::format(
      "plan(s) {} are marketplace listings ({}): hosts' own offers at the catalog's snapshot, "
      "priced by the host, with that host's capacity and no provider SLA (see each plan's "
      "warning); {}; --no-marketplace ranks the providers' rows only",
      fmt::join(listed, ", "), fmt::join(clouds, ", "), provider));
}

}  // namespace gpuplan
