// Training planner: resolve -> enumerate -> prune -> evaluate -> rank (STYLE.md section 6).
// Instances are grouped into hardware shapes (same accelerator, count, links and fabric
// bandwidth): a shape x node count is evaluated once and priced for every instance of it.
// Shapes are visited in order of a lower bound on the job's cost (compute at full GEMM
// efficiency, no communication); a shape whose bound cannot enter the top plans is skipped.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "gpuplan/input.h"
#include "gpuplan/planner.h"

namespace gpuplan {

struct TrainPlanResult;
Result<TrainPlanResult> PlanTrainingImpl(const TrainJobSpec& job, const Catalog& catalog,
                                         const Calibration& cal, std::optional<double> rate,
                                         bool with_guide);
void AddGuideComparison(const TrainJobSpec& job, const Catalog& catalog, const Calibration& cal,
                        std::optional<double> rate, TrainPlanResult& out);

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

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  for (const auto& s : v) {
    if (s == x) return true;
  }
  return false;
}

TrainMemoryOptions BaseOptions(const TrainJobSpec& job) {
  TrainMemoryOptions o;
  o.method = job.method;
  o.precision = job.precision;
  o.optimizer = job.optimizer;
  o.lora_rank = job.lora_rank;
  o.seq_len = EffectiveSeqLen(job);
  if (job.method == TrainMethod::kQlora) o.base_bits = 4;
  o.dropout = DefaultDropout(job.model);
  o.notes = false;
  return o;
}

// Checkpoint size: weights + optimizer states (full training) or the adapter (LoRA).
Bytes CheckpointBytes(const TrainJobSpec& job) {
  ParamCounts pc = CountParams(job.model);
  if (job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora) {
    return Bytes(static_cast<double>(LoraParams(job.model, job.lora_rank, LoraTargets::kAllLinear)) * 16);
  }
  return Bytes(static_cast<double>(pc.total) * 16.0);  // bf16 weights + fp32 master + m + v + grads-free
}

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
  const double ckpt_gb = ToGB(CheckpointBytes(job));
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
  // Host sizing and checks.
  SizingInput in;
  in.training = true;
  in.gpus_per_node = i.accelerator_count;
  in.nodes = p.nodes;
  if (const Accelerator* a = cat.FindAccelerator(i.accelerator)) in.gpu_memory = a->memory;
  in.model_files = Bytes(static_cast<double>(CountParams(job.model).total) * 2.0);
  in.checkpoint = CheckpointBytes(job);
  in.dataset = job.dataset;
  // Input rate: bytes per sample (or token) of the dataset on disk times the plan's rate.
  if (job.dataset.value() > 0 && p.eval.step.valid) {
    if (job.tokens > 0) {
      in.data_feed = BytesPerSec(job.dataset.value() / job.tokens *
                                 p.eval.step.tokens_per_s_per_gpu * p.par.gpus() / p.nodes);
    } else if (job.samples > 0) {
      in.data_feed = BytesPerSec(job.dataset.value() / job.samples * p.eval.step.samples_per_s / p.nodes);
    }
  }
  p.host = SizeHost(job.host_policy, in);
  p.host_findings = CheckHost(p.host, i);
  // Warnings (guides A3, A12, A13, A15, B5, B6, B8).
  const int gpn = i.accelerator_count;
  if (gpn > 1 && i.intra_node_link == IntraNodeLink::kPcie && (p.par.tp > 1 || p.par.dp > 1)) {
    p.warnings.push_back(fmt::format(
        "multi-GPU training over PCIe only: exposed communication is {:.0f}% of the step; NVLink "
        "machines cut it (guide A12, B8)",
        100 * (p.eval.step.tp_comm + p.eval.step.dp_comm).value() / p.eval.step.total.value()));
  }
  if (p.nodes > 1 && i.inter_node_fabric == InterNodeFabric::kNone) {
    p.warnings.push_back(fmt::format(
        "{} nodes without RDMA (EFA/InfiniBand/RoCE): gradients cross {:.0f} Gbit/s TCP (guide "
        "A13, B8); keep the nodes in one zone",
        p.nodes, i.network.value() / 1e9));
  }
  if (p.nodes > 1) {
    p.warnings.push_back("multi-node: place all nodes in one availability zone / placement group "
                         "(guide A13: latency under 5 us)");
  }
  const double mem_frac = p.eval.memory.Total().value() / (cat.FindAccelerator(i.accelerator)->memory.value());
  if (mem_frac > job.headroom * 0.95) {
    p.warnings.push_back(fmt::format("memory at {:.0f}% of the GPU, close to the {:.0f}% headroom "
                                     "rule (B5)", 100 * mem_frac, 100 * job.headroom));
  }
  for (const auto& f : p.host_findings) {
    if (!f.ok) p.warnings.push_back(f.text);
  }
  if (job.dataset.value() > 0 && job.dataset.value() * 1.5 > i.ram.value() * p.nodes) {
    p.warnings.push_back(fmt::format(
        "dataset {:.0f} GB is larger than RAM x 1/1.5 ({:.0f} GB): stream it from local NVMe, "
        "not from memory (guide B6)",
        ToGB(job.dataset), ToGB(i.ram) * p.nodes / 1.5));
  }
  if (job.spot_allowed && p.cost_spot && job.checkpoint_interval_hours <= 0) {
    p.warnings.push_back("spot without checkpoints: an interruption loses the run so far (guide A15)");
  }
  const double comm = (p.eval.step.tp_comm + p.eval.step.dp_comm + p.eval.step.pp_comm +
                       p.eval.step.ep_comm).value();
  if (comm > 0.3 * p.eval.step.total.value()) {
    p.warnings.push_back(fmt::format("exposed communication is {:.0f}% of each step",
                                     100 * comm / p.eval.step.total.value()));
  }
  if (p.opt.micro_batch == 1 && p.opt.recompute == Recompute::kFull && gpn * p.nodes == 1 &&
      job.method != TrainMethod::kLora && job.method != TrainMethod::kQlora) {
    p.warnings.push_back("micro-batch 1 with full recompute on one GPU: a larger-memory card may "
                         "be cheaper per result (guide A3)");
  }
}

bool Dominates(const TrainPlan& a, const TrainPlan& b) {
  return a.RankCost() <= b.RankCost() && a.RankHours() <= b.RankHours() &&
         (a.RankCost() < b.RankCost() || a.RankHours() < b.RankHours());
}

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

}  // namespace

namespace {

// The guides' decision tree (A2) for training: what they would rent for this job.
struct GuideRule {
  std::string text;
  std::vector<std::string> gpus;
  int min_gpus = 0, max_gpus = 0;
};

std::optional<GuideRule> GuideRuleFor(const TrainJobSpec& job) {
  const double b = static_cast<double>(CountParams(job.model).total) / 1e9;
  const bool peft = job.method == TrainMethod::kLora || job.method == TrainMethod::kQlora;
  if (peft && b >= 5 && b <= 15) {
    return GuideRule{"guide A2: LoRA on a 7B-13B model -> 1 x L40S or 1 x A100",
                     {"L40S", "A100-SXM4-80GB", "A100-PCIe-80GB", "A100-SXM4-40GB", "A100-PCIe-40GB"}, 1, 1};
  }
  if (!peft && b > 70) {
    return GuideRule{"guide A2: training a >70B model -> 8 x H100 with NVLink (per node)",
                     {"H100-SXM5-80GB"}, 8, 0};
  }
  if (!peft && b >= 7 && b <= 70) {
    return GuideRule{"guide A2: training a 7B-70B model -> 4-8 x A100 or 2-4 x H100",
                     {"A100-SXM4-80GB", "A100-SXM4-40GB", "H100-SXM5-80GB"}, 2, 8};
  }
  return std::nullopt;
}

}  // namespace

void AddGuideComparison(const TrainJobSpec& job, const Catalog& catalog, const Calibration& cal,
                        std::optional<double> rate, TrainPlanResult& out) {
  auto rule = GuideRuleFor(job);
  if (!rule) return;
  out.guide_rule = rule->text;
  TrainJobSpec g = job;
  g.gpus = rule->gpus;
  g.min_gpus = rule->min_gpus;
  g.max_gpus = rule->max_gpus;
  g.top = 1;
  g.objective = job.objective == Objective::kPareto ? Objective::kCost : job.objective;
  g.deadline_hours.reset();
  g.budget.reset();
  auto filtered = [&] {
    // Keep the user's cloud/region filters; drop accelerators the catalog lacks.
    std::vector<std::string> ids;
    for (const auto& id : g.gpus) {
      if (catalog.FindAccelerator(id)) ids.push_back(id);
    }
    g.gpus = ids;
    return !ids.empty();
  }();
  if (!filtered) return;
  auto res = PlanTrainingImpl(g, catalog, cal, rate, /*with_guide=*/false);
  if (!res || res->plans.empty()) {
    out.guide_comparison = "no plan following the guide's rule fits this job in the catalog "
                           "(memory, filters or prices)";
    return;
  }
  const TrainPlan& gp = res->plans.front();
  out.guide_plans.push_back(gp);
  if (out.plans.empty()) return;
  const TrainPlan& top = out.plans.front();
  const double dc = gp.RankCost() / top.RankCost() - 1, dh = gp.RankHours() / top.RankHours() - 1;
  if (gp.instance == top.instance && gp.nodes == top.nodes) {
    out.guide_comparison = "gpuplan's best plan follows the guide";
  } else {
    out.guide_comparison = fmt::format(
        "the guide's choice {} x {} ({} {}) costs {:+.0f}% and takes {:+.0f}% time vs gpuplan's "
        "best; gpuplan ranks by modelled cost per job at {} TFLOP/s-class speed and current "
        "catalog prices, which the rule of thumb predates",
        gp.nodes * gp.instance->accelerator_count, gp.instance->accelerator, gp.instance->cloud,
        gp.instance->instance_type, 100 * dc, 100 * dh,
        static_cast<int>(catalog.FindAccelerator(top.instance->accelerator)->PeakFor(job.precision).value_or(FlopPerSec(0)).value() / 1e12));
  }
}

Result<TrainPlanResult> PlanTraining(const TrainJobSpec& job, const Catalog& catalog,
                                     const Calibration& cal, std::optional<double> rate) {
  return PlanTrainingImpl(job, catalog, cal, rate, /*with_guide=*/true);
}

Result<TrainPlanResult> PlanTrainingImpl(const TrainJobSpec& job, const Catalog& catalog,
                                         const Calibration& cal, std::optional<double> rate,
                                         bool with_guide) {
  TrainPlanResult out;
  out.prices_as_of = catalog.PricesAsOf();
  // The framework's capabilities (what it overlaps, which ZeRO stages and pipelines it offers).
  Calibration fw_cal = cal;
  LayoutConstraints fw_fixed;
  ApplyFramework(job.framework, fw_cal, fw_fixed);
  // ---- resolve filters ---------------------------------------------------------------------
  std::vector<std::string> gpu_ids;
  for (size_t k = 0; k < job.gpus.size(); ++k) {
    auto a = catalog.ResolveAccelerator(job.gpus[k], fmt::format("constraints.gpus[{}]", k));
    if (!a) return a.error();
    gpu_ids.push_back((*a)->id);
  }
  std::vector<std::string> clouds;
  for (const auto& i : catalog.instances) {
    if (!Contains(clouds, i.cloud)) clouds.push_back(i.cloud);
  }
  for (size_t k = 0; k < job.clouds.size(); ++k) {
    if (!Contains(clouds, job.clouds[k])) {
      std::string best = ClosestMatch(job.clouds[k], clouds);
      return MakeError(ErrorCode::kNotFound, fmt::format("constraints.clouds[{}]", k),
                       "unknown cloud \"" + job.clouds[k] + "\"",
                       best.empty() ? "known: " + fmt::format("{}", fmt::join(clouds, ", "))
                                    : "did you mean \"" + best + "\"?");
    }
  }
  // ---- group instances into shapes ---------------------------------------------------------
  std::map<ShapeKey, std::vector<const InstanceType*>> shapes;
  for (const auto& i : catalog.instances) {
    if (i.is_cpu_only()) continue;
    // Inferentia is an inference chip (AWS directs training to Trainium).
    if (i.accelerator.rfind("Inferentia", 0) == 0) continue;
    if (!job.clouds.empty() && !Contains(job.clouds, i.cloud)) continue;
    if (!job.regions.empty() && !Contains(job.regions, i.region)) continue;
    if (!gpu_ids.empty() && !Contains(gpu_ids, i.accelerator)) continue;
    if (!i.price_on_demand && !(job.spot_allowed && i.price_spot)) continue;
    ++out.instances_considered;
    ShapeKey k{i.accelerator, i.accelerator_count, i.intra_node_link, i.inter_node_fabric,
               i.inter_node_bw ? i.inter_node_bw->value() : 0, i.network.value()};
    shapes[k].push_back(&i);
  }
  if (shapes.empty()) {
    return MakeError(ErrorCode::kNotFound, "constraints",
                     "no priced GPU instance matches the clouds/regions/gpus filters",
                     "widen the filters (`gpuplan instances` lists what the catalog has)");
  }
  // ---- per shape and node count: the fastest layout that fits, then price every instance ----
  const TrainMemoryOptions base = BaseOptions(job);
  TrainJob tj;
  tj.global_batch = job.global_batch > 0 ? job.global_batch : DefaultGlobalBatch(job);
  tj.tokens = job.TotalTokens();
  tj.samples = job.samples * job.epochs;
  const double total_flops =
      TrainingFlopsPerToken(job.model, std::max(1, base.seq_len), job.method, Recompute::kNone, false)
          .value() * tj.tokens;
  std::vector<TrainPlan> all;
  int dropped_memory = 0, dropped_deadline = 0, dropped_budget = 0, skipped_bound = 0;
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
    if (!acc) continue;
    // The step model runs fp32 jobs on the TF32 tensor path: bound with the same peak.
    auto peak = acc->PeakFor(job.precision == Precision::kFp32 ? Precision::kTf32 : job.precision);
    if (!peak) continue;
    double min_price = 1e300;
    for (const auto* i : insts) {
      if (i->price_on_demand) min_price = std::min(min_price, catalog.Convert(*i->price_on_demand, i->currency, job.currency, rate));
      if (job.spot_allowed && i->price_spot) min_price = std::min(min_price, catalog.Convert(*i->price_spot, i->currency, job.currency, rate));
    }
    // 64-bit doubling: n *= 2 in int wraps to 0 (an endless loop) past 2^30.
    for (long long nn = 1; nn <= job.max_nodes && nn <= kMaxNodes; nn *= 2) {
      const int n = static_cast<int>(nn);
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
    auto choice = BestTrainLayout(job.model, base, tj, hw, fw_cal, job.headroom, fw_fixed);
    if (!choice) {
      ++dropped_memory;
      continue;
    }
    out.evaluated += choice->evaluated;
    const double hours = choice->eval.job_seconds / 3600.0;
    if (hours <= 0) continue;
    for (const InstanceType* inst : *v.insts) {
      TrainPlan p;
      p.instance = inst;
      p.nodes = v.nodes;
      p.par = choice->par;
      p.opt = choice->opt;
      p.eval = choice->eval;
      p.hours = hours;
      PriceAndCheck(job, catalog, cal, rate, p);
      // Spot stretches the run (interruptions, lost work): an option that misses the deadline
      // is dropped, the on-demand option may still meet it.
      if (job.deadline_hours && p.cost_spot && p.spot.hours > *job.deadline_hours) p.cost_spot.reset();
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
    }
  }
  // ---- rank, top-k, Pareto front -----------------------------------------------------------
  std::sort(all.begin(), all.end(),
            [&](const TrainPlan& a, const TrainPlan& b) { return Better(a, b, job.objective); });
  const bool any_adequate = std::any_of(all.begin(), all.end(),
                                        [](const TrainPlan& p) { return !p.HostInadequate(); });
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
    out.plans.assign(all.begin(), all.begin() + static_cast<long>(std::min(all.size(), static_cast<size_t>(std::max(1, job.top)))));
  }
  if (static_cast<int>(out.plans.size()) > std::max(1, job.top)) out.plans.resize(static_cast<size_t>(job.top));
  out.exhaustive = skipped_bound == 0;
  if (dropped_memory) out.notes.push_back(fmt::format("{} shape x node-count combinations cannot hold the job in {:.0f}% of GPU memory", dropped_memory, job.headroom * 100));
  if (dropped_deadline) out.notes.push_back(fmt::format("{} plans miss the {:.1f} h deadline", dropped_deadline, *job.deadline_hours));
  if (dropped_budget) out.notes.push_back(fmt::format("{} plans exceed the budget of {:.0f} {}", dropped_budget, *job.budget, CurrencyCode(job.currency)));
  if (skipped_bound) out.notes.push_back(fmt::format("{} shape x node-count combinations skipped: their lower-bound cost cannot reach the top {}", skipped_bound, keep));
  if (with_guide) AddGuideComparison(job, catalog, cal, rate, out);
  return out;
}

Trace ExplainTrainPlan(const TrainJobSpec& job, const TrainPlan& plan, const Catalog& catalog,
                       const Calibration& cal) {
  Trace t;
  const Accelerator* acc = catalog.FindAccelerator(plan.instance->accelerator);
  if (!acc) return t;
  TrainJob tj;
  tj.global_batch = job.global_batch > 0 ? job.global_batch : DefaultGlobalBatch(job);
  tj.tokens = job.TotalTokens();
  tj.samples = job.samples * job.epochs;
  HardwareView hw = HardwareFromInstance(*plan.instance, *acc, plan.nodes);
  t.Add("accelerator peak", fmt::format("dense {} peak of {}", PrecisionName(job.precision), acc->id),
        acc->PeakFor(job.precision).value_or(FlopPerSec(0)).value() / 1e12, "TFLOP/s");
  t.Add("GEMM efficiency", "calibration gemm_efficiency for " + acc->arch, cal.GemmEfficiency(*acc), "");
  t.Add("intra-node bandwidth per GPU", std::string(IntraNodeLinkName(hw.intra)) + ", per direction",
        hw.intra_bw.value() / 1e9, "GB/s");
  t.Add("inter-node bandwidth per GPU", std::string(InterNodeFabricName(hw.inter)) + " / GPUs per node",
        hw.inter_bw.value() / 1e9, "GB/s");
  t.Add("tokens per step", "global batch x seq_len", static_cast<double>(tj.global_batch) * plan.opt.seq_len, "tokens");
  t.Add("training FLOPs per token", "3 x forward (6N + attention 12 L s h); LoRA: 2 x forward for frozen weights",
        TrainingFlopsPerToken(job.model, plan.opt.seq_len, job.method, Recompute::kNone, false).value(), "FLOP");
  TrainMemoryOptions o = plan.opt;
  o.notes = true;
  Calibration fw_cal = cal;
  LayoutConstraints unused;
  ApplyFramework(job.framework, fw_cal, unused);
  EvaluateTraining(job.model, plan.par, o, tj, hw, fw_cal, job.headroom, &t);
  t.Add("job hours", "total tokens / (tokens/s/GPU x GPUs) / 3600", plan.hours, "h");
  if (plan.price_per_hour) t.Add("price per hour", "instance on-demand x nodes", *plan.price_per_hour, CurrencyCode(job.currency));
  if (plan.cost_on_demand) t.Add("cost on-demand", "hours x price", *plan.cost_on_demand, CurrencyCode(job.currency));
  if (plan.cost_spot) {
    t.Add("spot interruptions", "hours x rate per node-hour x nodes", plan.spot.interruptions, "");
    t.Add("spot lost hours", "interruptions x (checkpoint interval / 2 + restart)", plan.spot.lost_hours, "h");
    t.Add("checkpoint write hours", "checkpoints x size / NVMe write bandwidth", plan.spot.checkpoint_hours, "h");
    t.Add("cost spot", "spot hours x spot price", *plan.cost_spot, CurrencyCode(job.currency));
  }
  return t;
}

}  // namespace gpuplan
