// gpuplan simulate (issue #16): a serving plan over a real or synthetic day, under Kubernetes
// autoscaling policies, with cost, replicas, latency and SLO violations per interval. The
// simulation lives in the library (gpuplan/simulate.h); this file maps flags and renders.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>
#include <utility>

#include "commands.h"
#include "gpuplan/documents.h"
#include "gpuplan/input.h"
#include "gpuplan/safe_write.h"
#include "gpuplan/simulate.h"
#include "io/json_fields.h"
#include "serve_args.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

struct SimArgs {
  InferArgs serve;
  std::string plan_file;
  std::string trace;
  bool synthetic = false;
  SyntheticTraceOptions syn;
  int seed = 1;
  std::vector<std::string> policies = {"hpa", "kpa", "saturation", "schedule", "static"};
  int min_replicas = 1, max_replicas = 0;
  double tolerance = 0.1;
  int up_window_s = 0, down_window_s = 300;
  std::string up_policies = "Pods:4:15,Percent:100:15", down_policies = "Percent:100:15";
  std::string select_up = "Max", select_down = "Max";
  double keda_activation_rps = 0;
  int keda_cooldown_s = 300;
  double node_provision_s = 120, image_gb = 12;
  std::string csv, svg;
  bool force = false;
};

Result<std::vector<HpaScalingPolicy>> ParsePolicies(const std::string& s, const char* flag) {
  std::vector<HpaScalingPolicy> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::stringstream is(item);
    std::string type, value, period;
    std::getline(is, type, ':');
    std::getline(is, value, ':');
    std::getline(is, period, ':');
    HpaScalingPolicy p;
    if (type == "Pods") {
      p.type = HpaPolicyType::kPods;
    } else if (type == "Percent") {
      p.type = HpaPolicyType::kPercent;
    } else {
      return MakeError(ErrorCode::kInvalidArgument, flag,
                       fmt::format("unknown policy type \"{}\" in \"{}\"", type, item),
                       "write TYPE:VALUE:PERIOD_S with TYPE Pods or Percent, e.g. Percent:20:60");
    }
    try {
      size_t u1 = 0, u2 = 0;
      p.value = std::stoi(value, &u1);
      p.period_s = std::stoi(period, &u2);
      if (u1 != value.size() || u2 != period.size()) throw std::invalid_argument("junk");
    } catch (...) {
      return MakeError(ErrorCode::kInvalidArgument, flag,
                       fmt::format("expected TYPE:VALUE:PERIOD_S, got \"{}\"", item),
                       "e.g. Pods:4:15");
    }
    out.push_back(p);
  }
  return out;
}

Result<HpaSelect> ParseSelect(const std::string& s, const char* flag) {
  if (s == "Max") return HpaSelect::kMax;
  if (s == "Min") return HpaSelect::kMin;
  if (s == "Disabled") return HpaSelect::kDisabled;
  return MakeError(ErrorCode::kInvalidArgument, flag, fmt::format("unknown selectPolicy \"{}\"", s),
                   "use Max, Min or Disabled");
}

// A `plan infer --json` document: the job and the top deployment's hardware become flags.
Status MergePlanDocument(InferArgs& a, const std::string& path) {
  auto text = ReadInputFile(path, "--plan", kMaxJsonFileBytes);
  if (!text) return text.error();
  auto parsed = gpuplan::internal::ParseJson(*text, "--plan");
  const json* plans = nullptr;
  if (parsed) {
    auto pl = gpuplan::internal::GetArray(*parsed, "plans", "");
    if (pl) plans = *pl;
  }
  if (!parsed || !parsed->is_object() || !parsed->contains("job") || plans == nullptr ||
      plans->empty()) {
    return MakeError(ErrorCode::kParse, "--plan",
                     "\"" + path + "\" is not a `plan infer --json` document with a plan",
                     "write one with gpuplan plan infer ... --json > plan.json");
  }
  const json& job = (*parsed)["job"];
  const json& p = (*plans)[0];
  // The shared getters (io/json_fields.h): a member of the wrong type is an error naming it.
  std::string model_ref, model, engine, cloud, region, accelerator;
  for (auto [obj, key, dst, at] :
       {std::tuple{&job, "model_ref", &model_ref, "job"}, std::tuple{&job, "model", &model, "job"},
        std::tuple{&job, "engine", &engine, "job"}, std::tuple{&p, "cloud", &cloud, "plans[0]"},
        std::tuple{&p, "region", &region, "plans[0]"},
        std::tuple{&p, "accelerator", &accelerator, "plans[0]"}}) {
    auto v = gpuplan::internal::GetString(*obj, key, at);
    if (!v) return v.error();
    *dst = v->value_or("");
  }
  if (!model_ref.empty() || !model.empty()) {
    a.model = !model_ref.empty() ? model_ref : model;
    a.model_given = true;
  }
  for (auto [key, dst] :
       {std::pair{"input_len", &a.input_len}, std::pair{"output_len", &a.output_len}}) {
    auto v = gpuplan::internal::GetIntIn(job, key, "job", 0, kMaxSeqLen);
    if (!v) return v.error();
    if (*v) *dst = **v;
  }
  auto util = gpuplan::internal::GetNumber(job, "target_utilization", "job");
  if (!util) return util.error();
  if (*util) a.util = **util;
  if (!engine.empty()) a.engine = engine;
  if (!cloud.empty()) a.clouds = {cloud};
  if (!region.empty()) a.regions = {region};
  if (!accelerator.empty()) a.gpus = {accelerator};
  return {};
}

std::string Pct(double part, double whole) {
  return whole > 0 ? fmt::format("{:.0f}%", 100 * part / whole) : "-";
}

Result<Output> RunSimulate(const GlobalOptions& g, SimArgs a) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  // The load.
  LoadTrace trace;
  if (!a.trace.empty() && a.synthetic) {
    return MakeError(ErrorCode::kInvalidArgument, "--trace",
                     "give either --trace FILE or --synthetic, not both");
  }
  if (!a.trace.empty()) {
    auto t = ReadTraceFile(a.trace);
    if (!t) return t.error();
    trace = std::move(*t);
  } else {
    if (a.seed < 0)
      return MakeError(ErrorCode::kInvalidArgument, "--seed",
                       fmt::format("must be >= 0, got {}", a.seed));
    a.syn.seed = static_cast<std::uint64_t>(a.seed);
    auto t = SyntheticTrace(a.syn);
    if (!t) return t.error();
    trace = std::move(*t);
  }
  // The job: sized at the trace's peak.
  if (!a.plan_file.empty()) {
    if (auto st = MergePlanDocument(a.serve, a.plan_file); !st) return st.error();
  }
  a.serve.qps = trace.PeakRps() > 0 ? trace.PeakRps() : 1;
  auto job = BuildServeJob(a.serve, g);
  if (!job) return job.error();
  // Options.
  SimulationOptions o;
  o.policies.clear();
  for (const auto& p : a.policies) {
    auto k = ParseScalingPolicy(p);
    if (!k) {
      return MakeError(ErrorCode::kInvalidArgument, "--policy",
                       fmt::format("unknown policy \"{}\"", p),
                       "use hpa, kpa, saturation, schedule or static (comma-separated)");
    }
    if (std::find(o.policies.begin(), o.policies.end(), *k) == o.policies.end())
      o.policies.push_back(*k);
  }
  o.min_replicas = a.min_replicas;
  o.max_replicas = a.max_replicas;
  o.tolerance = a.tolerance;
  o.behavior.scale_up.stabilization_window_s = a.up_window_s;
  o.behavior.scale_down.stabilization_window_s = a.down_window_s;
  GPUPLAN_ASSIGN_OR_RETURN(o.behavior.scale_up.policies,
                           ParsePolicies(a.up_policies, "--scale-up-policies"));
  GPUPLAN_ASSIGN_OR_RETURN(o.behavior.scale_down.policies,
                           ParsePolicies(a.down_policies, "--scale-down-policies"));
  GPUPLAN_ASSIGN_OR_RETURN(o.behavior.scale_up.select, ParseSelect(a.select_up, "--select-up"));
  GPUPLAN_ASSIGN_OR_RETURN(o.behavior.scale_down.select,
                           ParseSelect(a.select_down, "--select-down"));
  o.keda_activation_rps = a.keda_activation_rps;
  o.keda_cooldown_s = a.keda_cooldown_s;
  if (!(a.image_gb >= 0))
    return MakeError(ErrorCode::kInvalidArgument, "--image-gb",
                     fmt::format("must be >= 0, got {}", a.image_gb));
  o.cold_start.node_provision_s = a.node_provision_s;
  o.cold_start.image_bytes = a.image_gb * 1e9;
  auto res = Simulate(*job, *cat, DefaultCalibration(), trace, o, g.cny_per_usd);
  if (!res) return NameFileField(res.error(), a.serve);
  const Currency cur = job->currency;
  const PolicyResult* st = nullptr;
  for (const auto& p : res->policies) {
    if (p.policy == ScalingPolicyKind::kStatic) st = &p;
  }
  // Files first (so a write error leaves no partial answer), through SafeWriteFiles: an
  // existing file is refused without --force, a link or directory always (docs/reliability.md).
  struct OutFile {
    std::string dir, name;
    const char* flag;
    std::string text;
  };
  std::vector<OutFile> outs;
  for (const auto& [path, flag] : {std::pair{&a.csv, "--csv"}, std::pair{&a.svg, "--svg"}}) {
    if (path->empty()) continue;
    const std::filesystem::path fp(*path);
    const std::string name = fp.filename().string();
    if (name.empty() || name == "." || name == "..") {
      return MakeError(ErrorCode::kInvalidArgument, flag, "names a directory: " + Excerpt(*path),
                       "give a file path, e.g. out/timeline.csv");
    }
    outs.push_back({fp.has_parent_path() ? fp.parent_path().string() : ".", name, flag,
                    flag == std::string("--csv") ? SimulationCsv(*res) : SimulationSvg(*res)});
  }
  if (outs.size() == 2 && outs[0].dir == outs[1].dir && outs[0].name == outs[1].name) {
    return MakeError(ErrorCode::kInvalidArgument, "--svg", "is the same file as --csv",
                     "give --csv and --svg different paths");
  }
  // Every destination is checked before either file is written (SafeWriteFiles re-checks).
  for (const auto& f : outs) {
    std::error_code ec;
    const auto fs = std::filesystem::symlink_status(std::filesystem::path(f.dir) / f.name, ec);
    const bool exists = !ec && std::filesystem::exists(fs);
    if (exists &&
        (!a.force || std::filesystem::is_symlink(fs) || std::filesystem::is_directory(fs))) {
      auto w = SafeWriteFiles(f.dir, {{f.name, f.text}}, a.force, f.flag);
      if (!w) return w.error();  // its message: exists / is a link / is a directory
    }
  }
  for (const auto& f : outs) {
    auto w = SafeWriteFiles(f.dir, {{f.name, f.text}}, a.force, f.flag);
    if (!w) return w.error();
  }
  const ServePlan& p = res->plan;
  Output out;
  if (g.json) {
    out.text = SimulationDocument(*job, trace, *res).dump(2) + "\n";
    return out;
  }
  std::string s = fmt::format("gpuplan simulate: {} over {}\n", job->model.name, trace.source);
  s += fmt::format(
      "{} intervals of {:g} s ({:.2f} days); load peak {:.3g} req/s, mean {:.3g} req/s; prices as "
      "of {} in {}\n",
      trace.rps.size(), trace.interval_s, res->days, res->peak_rps, res->mean_rps,
      res->prices_as_of, CurrencyCode(cur));
  s += fmt::format(
      "replica: {} x {} on {} {} ({}), concurrency {}, {:.3g} req/s max, {:.3g} req/s at {:.0f}% "
      "{}; static peak fleet {} replica(s)\n",
      p.tp, p.instance->accelerator, p.instance->cloud, p.instance->instance_type,
      p.instance->region, p.batch, p.perf.samples_per_s, p.capacity_qps,
      100 * p.planned_utilization,
      p.planned_utilization < job->target_utilization - 1e-9
          ? fmt::format("utilisation (below the {:.0f}% target to meet the SLO)",
                        100 * job->target_utilization)
          : std::string("target"),
      res->static_replicas);
  s += fmt::format(
      "cold start per replica: {:.0f} s = node {:.0f} s + image pull {:.0f} s + weight load {:.0f} "
      "s "
      "(billed from launch; docs/simulate.md)\n",
      res->cold_start.Total(), res->cold_start.node_s, res->cold_start.image_s,
      res->cold_start.weights_s);
  s += fmt::format("SLOs (p99): TTFT {}, TPOT {}, e2e {}{}\n\n",
                   job->ttft_p99_ms ? fmt::format("{:g} ms", *job->ttft_p99_ms) : "-",
                   job->tpot_p99_ms ? fmt::format("{:g} ms", *job->tpot_p99_ms) : "-",
                   job->e2e_p99_ms ? fmt::format("{:g} ms", *job->e2e_p99_ms) : "-",
                   (job->ttft_p99_ms || job->tpot_p99_ms || job->e2e_p99_ms)
                       ? ""
                       : " (none given: a violation = load over the ready capacity)");
  Table t({"policy", "$/day", "$/month", "per 1k req", "per 1M tok", "GPU rep-h", "CPU rep-h",
           "peak billed", "SLO-miss intervals", "max queue", "vs static"});
  for (const auto& r : res->policies) {
    t.Row({ScalingPolicyName(r.policy), Price(r.cost_per_day, cur), Price(r.cost_per_month, cur),
           Price(r.cost_per_1k_requests, cur), Price(r.cost_per_1m_tokens, cur),
           fmt::format("{:.1f}", r.gpu_replica_hours), fmt::format("{:.1f}", r.cpu_replica_hours),
           fmt::format("{:.0f}", r.peak_billed),
           fmt::format("{} ({})", r.slo_violation_intervals,
                       Pct(r.slo_violation_intervals, static_cast<double>(trace.rps.size()))),
           fmt::format("{:.1f} s", r.max_queue_delay_s),
           r.policy == ScalingPolicyKind::kStatic
               ? "-"
               : fmt::format("{} ({})", Pct(r.saving_vs_static, st->cost_total),
                             r.saving_vs_static >= 0 ? "saved" : "more")});
  }
  s += t.Render();
  s += "\nWhere the difference with static peak provisioning comes from (per day):\n";
  const double days = std::max(res->days, 1e-9);
  for (const auto& r : res->policies) {
    if (r.policy == ScalingPolicyKind::kStatic) continue;
    s += fmt::format(
        "  {:<10} saves {}/day = demand below the peak {} - ready replicas beyond the need {} "
        "(negative: below the need, or cheaper CPU replicas) - cold starts {}; "
        "{} interval(s) missed the SLOs ({:.0f} requests; {} while replicas were still starting), "
        "{} scale-up(s)\n",
        ScalingPolicyName(r.policy), Price(r.saving_vs_static / days, cur),
        Price(r.saving_scale_down / days, cur), Price(r.overshoot_cost / days, cur),
        Price(r.cold_start_overhead / days, cur), r.slo_violation_intervals,
        r.slo_violation_requests, r.slo_violation_while_starting, r.scale_ups);
    if (r.policy == ScalingPolicyKind::kSchedule) {
      if (r.cpu_hours.empty()) {
        // gpuplan plans no LLM serving on CPUs (llama.cpp-class speeds): say so, not "never
        // cheaper".
        s += job->model.generates_tokens()
                 ? "             no hour ran on CPU (token-by-token serving on CPUs is not "
                   "planned: llama.cpp-class speeds)\n"
                 : "             no hour ran on CPU (a CPU deployment is never cheaper or cannot "
                   "meet the SLOs)\n";
      } else {
        std::string hrs;
        for (int h : r.cpu_hours) hrs += (hrs.empty() ? "" : ",") + std::to_string(h);
        s += fmt::format(
            "             hours on CPU: {} ({} on {}); CPU saved {}/day against the same schedule "
            "on GPUs\n",
            hrs, res->cpu_plan ? res->cpu_plan->instance->instance_type : "-",
            res->cpu_plan ? res->cpu_plan->instance->cloud : "-", Price(r.cpu_saving_per_day, cur));
      }
    }
  }
  s += "\nThe guides' claims: B12 says autoscaling saves 40-60%";
  for (const auto& r : res->policies) {
    if (r.policy == ScalingPolicyKind::kHpa || r.policy == ScalingPolicyKind::kKpa) {
      s += fmt::format("; {} saves {} here", ScalingPolicyName(r.policy),
                       Pct(r.saving_vs_static, st->cost_total));
    }
  }
  s += ". B14 says CPUs at night saved 48 USD/day (17,520 USD/year)";
  for (const auto& r : res->policies) {
    if (r.policy == ScalingPolicyKind::kSchedule) {
      s += fmt::format("; here the CPU hours save {}/day ({}/year)",
                       Price(r.cpu_saving_per_day, cur), Price(r.cpu_saving_per_day * 365, cur));
    }
  }
  s += ".\n";
  for (const auto& n : res->notes) s += "note: " + n + "\n";
  if (!a.csv.empty()) s += "timeline CSV: " + a.csv + "\n";
  if (!a.svg.empty()) s += "chart SVG: " + a.svg + "\n";
  out.text = s;
  return out;
}

}  // namespace

void RegisterSimulateCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto a = std::make_shared<SimArgs>();
  auto* c = app.add_subcommand(
      "simulate", "Replay a load trace through a serving plan under autoscaling policies");
  AddServeOptions(c, a->serve);
  c->add_option("--plan", a->plan_file,
                "A `plan infer --json` document: its job and top deployment's hardware");
  c->add_option("--trace", a->trace,
                "Load trace: per-minute CSV, Azure LLM trace CSV or Mooncake JSONL");
  c->add_flag("--synthetic", a->synthetic,
              "Use the seeded synthetic diurnal trace (the default without --trace)");
  c->add_option("--days", a->syn.days, "Synthetic: days")->capture_default_str();
  c->add_option("--peak-rps", a->syn.peak_rps, "Synthetic: peak requests/s")->capture_default_str();
  c->add_option("--trough", a->syn.trough_fraction,
                "Synthetic: night load as a fraction of the peak")
      ->capture_default_str();
  c->add_option("--peak-hour", a->syn.peak_hour, "Synthetic: hour of the daily peak")
      ->capture_default_str();
  c->add_option("--weekend-factor", a->syn.weekend_factor, "Synthetic: weekend load factor")
      ->capture_default_str();
  c->add_option("--noise", a->syn.noise, "Synthetic: +- noise fraction")->capture_default_str();
  c->add_option("--bursts", a->syn.bursts_per_day, "Synthetic: bursts per day")
      ->capture_default_str();
  c->add_option("--burst-factor", a->syn.burst_factor, "Synthetic: burst load multiplier")
      ->capture_default_str();
  c->add_option("--burst-minutes", a->syn.burst_minutes, "Synthetic: burst length")
      ->capture_default_str();
  c->add_option("--seed", a->seed, "Synthetic: seed")->capture_default_str();
  c->add_option("--policy", a->policies, "hpa,kpa,saturation,schedule,static")->delimiter(',');
  c->add_option("--min-replicas", a->min_replicas,
                "Minimum replicas (0 = KEDA activation in front of the HPA)")
      ->capture_default_str();
  c->add_option("--max-replicas", a->max_replicas,
                "Maximum replicas (0 = twice the static peak fleet)");
  c->add_option("--tolerance", a->tolerance, "HPA tolerance")->capture_default_str();
  c->add_option("--scale-up-window-s", a->up_window_s, "HPA scale-up stabilization window")
      ->capture_default_str();
  c->add_option("--scale-down-window-s", a->down_window_s, "HPA scale-down stabilization window")
      ->capture_default_str();
  c->add_option("--scale-up-policies", a->up_policies,
                "HPA scale-up policies TYPE:VALUE:PERIOD_S,...")
      ->capture_default_str();
  c->add_option("--scale-down-policies", a->down_policies, "HPA scale-down policies")
      ->capture_default_str();
  c->add_option("--select-up", a->select_up, "HPA scale-up selectPolicy: Max | Min | Disabled")
      ->capture_default_str();
  c->add_option("--select-down", a->select_down, "HPA scale-down selectPolicy")
      ->capture_default_str();
  c->add_option("--keda-activation-rps", a->keda_activation_rps,
                "KEDA activation threshold (with --min-replicas 0)");
  c->add_option("--keda-cooldown-s", a->keda_cooldown_s, "KEDA cooldownPeriod")
      ->capture_default_str();
  c->add_option("--node-provision-s", a->node_provision_s, "Cold start: node provisioning time")
      ->capture_default_str();
  c->add_option("--image-gb", a->image_gb, "Cold start: container image size, GB")
      ->capture_default_str();
  c->add_option("--csv", a->csv, "Write the per-interval timeline as CSV");
  c->add_option("--svg", a->svg, "Write a chart of load and replicas as SVG");
  c->add_flag("--force", a->force, "Overwrite an existing --csv/--svg file");
  c->callback([&g, &run, a, c] {
    Status st = MergeFile(a->serve, c);
    run = [&g, a, st] {
      if (!st) return Result<Output>(st.error());
      return RunSimulate(g, *a);
    };
  });
}

}  // namespace gpuplan::cli
