// gpuplan plan train: ranked training plans over the catalog (issue #4).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <memory>
#include <optional>
#include <tuple>
#include <sstream>
#include <tuple>

#include "commands.h"
#include "gpuplan/input.h"
#include "gpuplan/job_checks.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/job.h"
#include "gpuplan/plan_document.h"
#include "gpuplan/planner.h"

namespace gpuplan::cli {

namespace {

// A packed benchmark's step (MLPerf BERT) runs sequences of several samples: the header says
// so beside the batch, which counts sequences (SamplesPerSequence).
std::string PackedBatchNote(const TrainJobSpec& job) {
  const int factor = SamplesPerSequence(job);
  if (factor <= 1) return "";
  return fmt::format(" sequences ({} samples packed {} per sequence)", job.global_batch * factor,
                     factor);
}

using nlohmann::json;

struct PlanTrainArgs {
  std::string file;
  std::string model, method, precision, optimizer, framework;
  bool model_given = false;
  std::string tokens, samples, dataset_size, deadline, budget, checkpoint_every;
  // Flags are optional values: unset is nullopt, never a 0/NaN sentinel.
  std::optional<double> epochs;
  std::optional<int> seq_len, global_batch, lora_rank, max_nodes, top;
  std::optional<int> num_gpus, nodes;  // a fixed cluster (issue 11)
  std::vector<std::string> clouds, regions, gpus;
  bool spot = false;
  bool include_suspect = false, by_region = false, no_marketplace = false;
  std::string objective, host_policy, currency;
  std::optional<double> headroom;
  bool explain = false;
  bool bom = false;
  std::optional<double> spot_rate;
};

Result<TrainJobSpec> BuildJob(const PlanTrainArgs& a) {
  TrainJobSpec job;
  if (!a.file.empty()) {
    auto text = ReadInputFile(a.file, "-f", kMaxYamlFileBytes);
    if (!text) return text.error();
    auto parsed = ParseTrainJobYaml(*text, a.file);
    if (!parsed) return parsed.error();
    job = std::move(*parsed);
  } else {
    if (a.model_given && a.model.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "--model", "is empty",
                       "give a preset name (see `gpuplan models`) or a path to config.json");
    }
    auto m = ResolveModel(a.model.empty() ? "Llama-2-13B" : a.model, "--model");
    if (!m) return m.error();
    job.model = *m;
    job.model_arg = a.model;
  }
  if (!a.model.empty() && !a.file.empty()) {
    auto m = ResolveModel(a.model, "--model");
    if (!m) return m.error();
    job.model = *m;
  }
  if (!a.method.empty()) {
    auto v = ParseTrainMethod(a.method);
    if (!v)
      return MakeError(ErrorCode::kInvalidArgument, "--method",
                       "unknown method \"" + a.method + "\"",
                       ChoiceHint(a.method, TrainMethodNames()));
    job.method = *v;
  }
  if (!a.precision.empty()) {
    auto v = ParseTrainPrecision(a.precision);
    if (!v) {
      return MakeError(ErrorCode::kInvalidArgument, "--precision",
                       "unknown training precision \"" + a.precision + "\"",
                       ChoiceHint(a.precision, TrainPrecisionNames()));
    }
    job.precision = v->precision;
    job.fp4_gemms = v->fp4_gemms;
  }
  if (!a.framework.empty()) {
    auto v = ParseTrainFramework(a.framework);
    if (!v)
      return MakeError(ErrorCode::kInvalidArgument, "--framework",
                       "unknown framework \"" + a.framework + "\"",
                       ChoiceHint(a.framework, TrainFrameworkNames()));
    job.framework = *v;
  }
  if (!a.optimizer.empty()) {
    auto v = ParseOptimizer(a.optimizer);
    if (!v)
      return MakeError(ErrorCode::kInvalidArgument, "--optimizer",
                       "unknown optimizer \"" + a.optimizer + "\"",
                       ChoiceHint(a.optimizer, OptimizerNames()));
    job.optimizer = *v;
    job.paged_optimizer = PagedOptimizerName(a.optimizer);
  }
  if (!a.tokens.empty() && !a.samples.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "--samples", "cannot be combined with --tokens",
                     "give --tokens (LLMs) or --samples (with --seq-len), not both");
  }
  if (a.lora_rank && job.method != TrainMethod::kLora && job.method != TrainMethod::kQlora) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--lora-rank",
        std::string("needs --method lora or qlora, got ") + TrainMethodName(job.method),
        "drop --lora-rank, or add --method lora");
  }
  if (auto st = CheckRange(a.epochs, "--epochs", 0, kMaxEpochs, true); !st) return st.error();
  if (auto st = CheckRange(a.headroom, "--headroom", 0, 1, true); !st) return st.error();
  for (const auto& [v, flag, hi] : {std::tuple{a.seq_len, "--seq-len", kMaxSeqLen},
                                    {a.global_batch, "--global-batch", kMaxGlobalBatch},
                                    {a.lora_rank, "--lora-rank", kMaxLoraRank},
                                    {a.max_nodes, "--max-nodes", kMaxNodes},
                                    {a.top, "--top", kMaxTop}}) {
    if (v && (*v < 1 || *v > hi)) {
      return MakeError(ErrorCode::kInvalidArgument, flag,
                       fmt::format("must be in [1, {}], got {}", hi, *v));
    }
  }
  if (!a.tokens.empty()) {
    auto v = ParseCount(a.tokens, "--tokens");
    if (!v) return v.error();
    job.tokens = *v;
  }
  if (!a.samples.empty()) {
    auto v = ParseCount(a.samples, "--samples");
    if (!v) return v.error();
    job.samples = *v;
  }
  if (a.epochs) job.epochs = *a.epochs;
  if (!a.dataset_size.empty()) {
    auto v = ParseSize(a.dataset_size, "--dataset-size");
    if (!v) return v.error();
    job.dataset = *v;
  }
  if (!a.deadline.empty()) {
    auto v = ParseHours(a.deadline, "--deadline");
    if (!v) return v.error();
    job.deadline_hours = *v;
  }
  if (!a.checkpoint_every.empty()) {
    auto v = ParseHours(a.checkpoint_every, "--checkpoint-every");
    if (!v) return v.error();
    job.checkpoint_interval_hours = *v;
  }
  if (!a.currency.empty()) {
    auto c = ParseCurrency(a.currency);
    if (!c)
      return MakeError(ErrorCode::kInvalidArgument, "--currency",
                       "unknown currency \"" + a.currency + "\"", "use USD or CNY");
    job.currency = *c;
  }
  if (!a.budget.empty()) {
    auto v = ParseCount(a.budget, "--budget");
    if (!v) return v.error();
    if (*v <= 0)
      return MakeError(ErrorCode::kInvalidArgument, "--budget", "must be > 0, got " + a.budget);
    job.budget = *v;
  }
  for (const auto& [v, flag] : {std::pair{a.num_gpus, "--num-gpus"}, {a.nodes, "--nodes"}}) {
    if (v && (*v < 1 || *v > 1000000)) {
      return MakeError(ErrorCode::kInvalidArgument, flag,
                       fmt::format("must be in [1, 1000000], got {}", *v),
                       "give the cluster's size, or leave it out to search node counts");
    }
  }
  if (a.num_gpus) job.num_gpus = *a.num_gpus;
  if (a.nodes) job.nodes = *a.nodes;
  if (a.seq_len) job.seq_len = *a.seq_len;
  if (a.global_batch) job.global_batch = *a.global_batch;
  if (a.lora_rank) job.lora_rank = *a.lora_rank;
  if (a.max_nodes) job.max_nodes = *a.max_nodes;
  if (a.top) job.top = *a.top;
  if (!a.clouds.empty()) job.clouds = a.clouds;
  if (!a.regions.empty()) job.regions = a.regions;
  if (!a.gpus.empty()) job.gpus = a.gpus;
  if (a.spot) job.spot_allowed = true;
  if (a.include_suspect) job.include_suspect = true;
  if (a.no_marketplace) job.marketplace = false;
  if (a.by_region) job.by_region = true;
  if (!a.objective.empty()) {
    auto o = ParseObjective(a.objective);
    if (!o)
      return MakeError(ErrorCode::kInvalidArgument, "--objective",
                       "unknown objective \"" + a.objective + "\"", "use cost, time or pareto");
    job.objective = *o;
  }
  if (!a.host_policy.empty()) {
    auto p = ParseSizingPolicy(a.host_policy);
    if (!p)
      return MakeError(ErrorCode::kInvalidArgument, "--host-policy",
                       "unknown policy \"" + a.host_policy + "\"",
                       "use guide-a, guide-b or default");
    job.host_policy = *p;
  }
  if (a.headroom) job.headroom = *a.headroom;
  // The checks and defaults every front end runs (gpuplan/job_checks.h); flags name the flag.
  if (auto st =
          FinalizeTrainJob(job, a.file.empty() ? InputSource::kFlags : InputSource::kYaml, a.file);
      !st) {
    return st.error();
  }
  return job;
}

std::string StepSplit(const StepTime& s) {
  const double t = s.total.value();
  auto pct = [&](Seconds x) { return 100.0 * x.value() / t; };
  return fmt::format(
      "compute {:.0f}% | TP/CP comm {:.0f}% | DP comm {:.0f}% | PP {:.0f}% | bubble {:.0f}% | EP "
      "{:.0f}% | optimizer {:.0f}%{}",
      pct(s.compute), pct(s.tp_comm), pct(s.dp_comm), pct(s.pp_comm), pct(s.bubble), pct(s.ep_comm),
      pct(s.optimizer),
      s.offload.value() > 0 ? fmt::format(" | offload {:.0f}%", pct(s.offload)) : "");
}

Result<Output> RunPlanTrain(const GlobalOptions& g, const PlanTrainArgs& a) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto job = BuildJob(a);
  if (!job) return job.error();
  for (const auto& gpu : a.gpus) {  // name the flag, not the YAML path the planner would
    auto acc = cat->ResolveAccelerator(gpu, "--gpus");
    if (!acc) return acc.error();
  }
  if (a.currency.empty() && g.currency != "USD") {
    auto c = DisplayCurrency(g);
    if (!c) return c.error();
    job->currency = *c;
  }
  Calibration cal = DefaultCalibration();
  if (a.spot_rate && !job->spot_allowed) {
    return MakeError(ErrorCode::kInvalidArgument, "--spot-rate",
                     "sets the spot interruption rate, but this job rents on-demand only",
                     "add --spot (or constraints.spot: true in the job file), or drop --spot-rate");
  }
  if (a.spot_rate) {
    auto c = WithSpotRate(std::move(cal), *a.spot_rate, "--spot-rate");
    if (!c) return c.error();
    cal = std::move(*c);
  }
  auto res = PlanTraining(*job, *cat, cal, g.cny_per_usd);
  if (!res) {
    // Name the flag the user typed, not the job file's path, when the value came from a flag.
    Error e = res.error();
    for (const auto& [prefix, flag, given] :
         {std::tuple{"constraints.clouds", "--clouds", !a.clouds.empty()},
          std::tuple{"constraints.regions", "--regions", !a.regions.empty()},
          std::tuple{"constraints.gpus", "--gpus", !a.gpus.empty()}}) {
      if (given && e.field.rfind(prefix, 0) == 0)
        e.field = flag + e.field.substr(std::string(prefix).size());
    }
    // A value from the job file: its file and line ("job.yaml:7:constraints.clouds[1]").
    return FieldAt(std::move(e), job->file_keys);
  }
  const Currency cur = job->currency;
  Output out;
  out.exit_code = res->plans.empty() ? kExitNothingFits : kExitOk;
  ParamCounts pc = CountParams(job->model);
  if (g.json) {
    json j = TrainPlanDocument(*job, *res, *cat, cal, a.explain);
    out.text = DumpJson(j) + "\n";
    return out;
  }
  std::string s = fmt::format(
      "gpuplan plan train: {} ({} params), {}, {}, {} ({}{}), global batch {}\n"
      "objective {}{}{}{}; prices as of {} in {}; searched {} shapes x node counts, {} "
      "layouts{}\n\n",
      job->model.name, Params(static_cast<double>(pc.total)), TrainMethodName(job->method),
      TrainPrecisionName(job->precision, job->fp4_gemms),
      job->model.is_transformer() && job->model.arch != ModelArch::kVit
          ? Params(job->TotalTokens()) + " tokens"
          : Params(job->samples * job->epochs) + " samples" +
                (job->benchmark.empty() ? "" : " to the " + job->benchmark + " target"),
      job->epochs > 1 ? fmt::format("{:.4g} epochs", job->epochs) : "1 epoch",
      // A sequence length is a transformer's; an image model's sample is its input.
      job->model.is_transformer() ? fmt::format(" x seq {}", job->seq_len)
      : job->model.sample.empty() ? std::string()
                                  : "; a sample is one " + job->model.sample,
      job->global_batch > 0 ? fmt::format("{}", job->global_batch) + PackedBatchNote(*job)
      : res->plans.empty() || DefaultGlobalBatch(*job, 0) == DefaultGlobalBatch(*job, 1 << 20)
          ? fmt::format("{} (default)",
                        res->plans.empty() ? DefaultGlobalBatch(*job) : res->plans[0].global_batch)
          : fmt::format("{} (default at the top plan's {} GPUs; it grows with the cluster)",
                        res->plans[0].global_batch, res->plans[0].par.gpus()),
      ObjectiveName(job->objective),
      job->deadline_hours ? fmt::format(", deadline {:.0f} h", *job->deadline_hours) : "",
      job->budget ? fmt::format(", budget {:.0f} {}", *job->budget, CurrencyCode(cur)) : "",
      job->spot_allowed ? ", spot allowed" : "", res->prices_as_of, CurrencyCode(cur), res->shapes,
      res->evaluated, res->exhaustive ? "" : " (bounded: see notes)");
  if (res->plans.empty()) {
    s += "No plan fits the constraints.\n";
    for (const auto& n : res->notes) s += "  - " + n + "\n";
    if (!res->nearest_misses.empty()) {
      s += "Nearest misses:\n";
      for (const auto& n : res->nearest_misses) s += "  - " + n + "\n";
    }
    out.text = s;
    return out;
  }
  // Units that match the workload: tokens for language models, images for vision, samples
  // otherwise.
  const bool token_model = job->model.is_transformer() && job->model.arch != ModelArch::kVit &&
                           job->model.layers > 0 && job->model.vocab > 0;
  const bool image_model = job->model.arch == ModelArch::kCnn || job->model.arch == ModelArch::kVit;
  const std::string rate_unit = token_model   ? "tok/s/GPU"
                                : image_model ? "img/s/GPU"
                                              : "samples/s/GPU";
  auto rate = [&](const TrainPlan& p) {
    return token_model ? p.eval.step.tokens_per_s_per_gpu
                       : p.eval.step.samples_per_s / p.par.gpus();
  };
  Table t({"#", "cloud", "instance", "region", "GPUs", "layout", "mem/GPU", rate_unit, "MFU",
           "hours", "on-demand", "spot", "warn"});
  int rank = 1;
  for (const auto& p : res->plans) {
    const auto& i = *p.instance;
    t.Row(
        {std::to_string(rank++), i.cloud, i.instance_type,
         p.also_regions.empty() ? i.region : fmt::format("{} +{}", i.region, p.also_regions.size()),
         fmt::format("{}x{}{}", p.nodes, i.accelerator_count, " " + i.accelerator),
         fmt::format(
             "tp{} pp{} dp{}{}{} z{}{} mb{} rc:{} {}", p.par.tp, p.par.pp, p.par.dp,
             p.par.cp > 1 ? fmt::format(" cp{}", p.par.cp) : "",
             p.par.ep > 1 ? fmt::format(" ep{}", p.par.ep) : "", p.par.zero_stage,
             p.opt.optimizer_offload ? (p.opt.param_offload ? " off:opt+param" : " off:opt") : "",
             p.opt.micro_batch, RecomputeLabel(p.opt.recompute, p.opt.recompute_layers),
             TrainFrameworkName(p.framework)),
         Gib(p.eval.memory.Total().value()), fmt::format("{:.0f}", rate(p)),
         fmt::format("{:.0f}%", 100 * p.eval.step.mfu), fmt::format("{:.1f}", p.hours),
         Price(p.cost_on_demand, cur),
         p.cost_spot ? fmt::format("{} ({:.1f} h)", Price(p.cost_spot, cur), p.spot.hours) : "-",
         std::to_string(p.warnings.size())});
  }
  s += t.Render();
  const TrainPlan& top = res->plans.front();
  s += fmt::format(
      "\nTop plan: {} {} x {} in {}{} ({} GPUs of {})\n", top.instance->cloud,
      top.instance->instance_type, top.nodes, top.instance->region,
      top.also_regions.empty() ? "" : fmt::format(" (also {})", fmt::join(top.also_regions, ", ")),
      top.nodes * top.instance->accelerator_count, top.instance->accelerator);
  s += fmt::format("  framework: {}\n", TrainFrameworkName(top.framework));
  if (job->model.layers > 0 && top.par.pp > 1 && job->model.layers % top.par.pp != 0) {
    const int L = job->model.layers, P = top.par.pp, hi = (L + P - 1) / P;
    const int n_hi = L - (hi - 1) * P;  // stages holding hi layers; the rest hold hi - 1
    s += fmt::format(
        "  uneven pipeline stages: {} of {} layers and {} of {} (the step is timed on the {}-layer "
        "stage)\n",
        n_hi, hi, P - n_hi, hi - 1, hi);
  }
  s += fmt::format(
      "  layout: tp {} x pp {} (vpp {}) x dp {}{}{}, ZeRO {}{}, sequence parallel {}, micro-batch "
      "{} x {} micro-batches, recompute {}\n",
      top.par.tp, top.par.pp, top.par.vpp, top.par.dp,
      top.par.cp > 1 ? fmt::format(" x cp {} (context parallel)", top.par.cp) : "",
      top.par.ep > 1 ? fmt::format(" (ep {} within dp)", top.par.ep) : "", top.par.zero_stage,
      top.opt.optimizer_offload
          ? (top.opt.param_offload ? ", optimizer and parameters offloaded to host RAM"
                                   : ", optimizer offloaded to host RAM")
          : "",
      top.par.sequence_parallel ? "on" : "off", top.opt.micro_batch, top.eval.step.num_microbatches,
      top.opt.recompute_layers > 0
          ? fmt::format("full on {} of {} layers per stage (block)", top.opt.recompute_layers,
                        (job->model.layers + top.par.pp - 1) / top.par.pp)
          : std::string(RecomputeName(top.opt.recompute)));
  const auto& m = top.eval.memory;
  s += fmt::format(
      "  memory/GPU {} = weights {} + master {} + grads {} + optimizer {} + adapter {} + "
      "activations {} + logits {} + runtime {}\n",
      Gib(m.Total().value()), Gib(m.weights.value()), Gib(m.master_weights.value()),
      Gib(m.gradients.value()), Gib(m.optimizer.value()), Gib(m.adapter.value()),
      Gib(m.activations.value()), Gib(m.logits.value()),
      Gib((m.cuda_context + m.nccl_buffers + m.allocator_slack).value()));
  if (top.eval.memory.host_offload.value() > 0) {
    s += fmt::format("  host RAM per GPU for offloaded states: {}\n",
                     Gib(top.eval.memory.host_offload.value()));
  }
  s += fmt::format(
      "  step {:.3f} s (global batch {}): {}\n  {:.0f} {}, MFU {:.0f}%, job {:.1f} h on-demand "
      "(incl. {:.2f} h start-up){}\n",
      top.eval.step.total.value(), top.global_batch, StepSplit(top.eval.step), rate(top),
      token_model   ? "tokens/s/GPU"
      : image_model ? "images/s/GPU"
                    : "samples/s/GPU",
      100 * top.eval.step.mfu, top.hours, top.setup_hours,
      top.cost_spot
          ? fmt::format(
                ", {:.1f} h on spot ({:.1f} interruptions, {:.1f} h lost, {:.1f} h checkpointing)",
                top.spot.hours, top.spot.interruptions, top.spot.lost_hours,
                top.spot.checkpoint_hours)
          : "");
  s += fmt::format(
      "  cost: on-demand {} ({}/h){}{}\n", Price(top.cost_on_demand, cur),
      Price(top.price_per_hour, cur), top.cost_spot ? ", spot " + Price(top.cost_spot, cur) : "",
      top.cost_reserved_1y || top.cost_reserved_3y
          ? (top.cost_reserved_1y ? ", 1y reserved " + Price(top.cost_reserved_1y, cur)
                                  : std::string()) +
                (top.cost_reserved_3y ? ", 3y reserved " + Price(top.cost_reserved_3y, cur)
                                      : std::string())
          : ", reserved: no public price in the catalog");
  s += fmt::format("  host ({}):\n", SizingPolicyName(top.host.policy));
  for (const auto& r : top.host.rationale) s += "    " + r + "\n";
  for (const auto& f : top.host_findings) {
    s += fmt::format("    [{}] {}{}\n",
                     f.waived ? "--"
                     : f.ok   ? "ok"
                              : "!!",
                     f.text, f.waived ? " (a rule no candidate meets: see the notes)" : "");
  }
  if (a.bom) {
    if (const Accelerator* acc = cat->FindAccelerator(top.instance->accelerator)) {
      BillOfMaterials b = BuildBom(top.host, *acc, top.instance->accelerator_count);
      s += "  bill of materials for an equivalent custom node (bare metal):\n";
      for (const auto& l : b.lines) s += "    " + l + "\n";
    }
  }
  if (!top.warnings.empty()) {
    s += "  warnings:\n";
    for (const auto& w : top.warnings) s += "    - " + w + "\n";
  }
  if (!res->guide_rule.empty()) {
    s += "\nGuide's rule of thumb: " + res->guide_rule + "\n";
    if (!res->guide_plans.empty()) {
      const TrainPlan& gp = res->guide_plans.front();
      s += fmt::format("  best plan following it: {} {} x {} in {} ({} GPUs), {:.1f} h, {}\n",
                       gp.instance->cloud, gp.instance->instance_type, gp.nodes,
                       gp.instance->region, gp.nodes * gp.instance->accelerator_count,
                       gp.RankHours(), Price(gp.RankCost(), cur));
    }
    if (!res->guide_comparison.empty()) s += "  " + res->guide_comparison + "\n";
  }
  if (res->guide_rule.empty() && !res->guide_notes.empty()) s += "\nGuide claims:\n";
  for (const auto& n : res->guide_notes) s += "  " + n + "\n";
  if (res->pareto.size() > 1) {
    s += "\nCost/time Pareto front:\n";
    Table pt({"cloud", "instance", "nodes", "hours", "cost"});
    for (const auto& p : res->pareto) {
      pt.Row({p.instance->cloud, p.instance->instance_type + " " + p.instance->region,
              std::to_string(p.nodes), fmt::format("{:.1f}", p.RankHours()),
              Price(p.RankCost(), cur)});
    }
    s += pt.Render("  ");
  }
  if (a.explain) {
    s += "\nExplain (top plan):\n";
    Trace tr = ExplainTrainPlan(*job, top, *cat, cal);
    for (const auto& term : tr.terms) {
      s += fmt::format("  {:<34} = {:<12.6g} {:<8} [{}]\n", term.name, term.value, term.unit,
                       term.formula);
    }
  }
  if (!res->notes.empty()) {
    s += "\nNotes:\n";
    for (const auto& n : res->notes) s += "  - " + n + "\n";
  }
  out.text = s;
  return out;
}

}  // namespace

void RegisterPlanCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto* plan =
      app.add_subcommand("plan", "Plan a training (or serving) deployment over the catalog");
  plan->require_subcommand(1);
  auto a = std::make_shared<PlanTrainArgs>();
  auto* t =
      plan->add_subcommand("train", "Rank training plans: instance, nodes, layout, time, cost");
  t->add_option("-f,--file", a->file, "YAML job file (docs/job-yaml.md)");
  t->add_option("--model,-m", a->model, "Preset, HF id, config.json or .safetensors");
  t->add_option("--method", a->method, "pretrain | full | lora | qlora");
  t->add_option("--precision", a->precision,
                "bf16 | fp16 | fp8 | fp4 (NVFP4 GEMMs, Blackwell) | fp32");
  t->add_option("--optimizer", a->optimizer, fmt::format("{}", fmt::join(OptimizerNames(), " | ")));
  t->add_option("--framework", a->framework,
                "generic | megatron | megatron-core (nemo) | deepspeed | fsdp | ddp | torchtune | "
                "torchtitan: what "
                "it overlaps, shards and holds in memory");
  t->add_option("--tokens", a->tokens, "Tokens per epoch, e.g. 2B");
  t->add_option("--samples", a->samples, "Samples per epoch (with --seq-len)");
  t->add_option("--epochs", a->epochs, "Epochs");
  t->add_option("--seq-len", a->seq_len, "Sequence length");
  t->add_option("--global-batch", a->global_batch, "Sequences per step");
  t->add_option("--dataset-size", a->dataset_size, "Dataset size on disk, e.g. 800GB");
  t->add_option("--deadline", a->deadline, "e.g. 48h, 3d");
  t->add_option("--budget", a->budget, "Whole-job budget in the job currency");
  t->add_option("--currency", a->currency, "USD | CNY");
  t->add_option("--clouds", a->clouds, "Allowed clouds")->delimiter(',');
  t->add_option("--regions", a->regions, "Allowed regions")->delimiter(',');
  t->add_option("--gpus", a->gpus, "Allowed accelerators (ids or aliases)")->delimiter(',');
  t->add_flag("--spot", a->spot, "Allow spot/preemptible instances");
  t->add_flag("--include-suspect", a->include_suspect,
              "Also rank catalog rows whose source marks the price suspect or anomalous");
  t->add_flag("--no-marketplace", a->no_marketplace,
              "Rank the providers' own rows only, not marketplace listings (vast.ai hosts)");
  t->add_flag("--by-region", a->by_region, "List each region of an instance as its own plan");
  t->add_option("--checkpoint-every", a->checkpoint_every,
                "Checkpoint interval, e.g. 1h (0 = none)");
  t->add_option("--objective", a->objective, "cost | time | pareto");
  t->add_option("--host-policy", a->host_policy, "guide-a | guide-b | default");
  t->add_option("--headroom", a->headroom, "Usable fraction of GPU memory (B5: 0.8)");
  t->add_option("--lora-rank", a->lora_rank, "LoRA rank");
  t->add_option("--max-nodes", a->max_nodes, "Largest node count to consider");
  t->add_option("--num-gpus", a->num_gpus,
                "Plan for a fixed cluster of exactly this many GPUs (any node count)");
  t->add_option("--nodes", a->nodes, "Plan for a fixed number of nodes");
  t->add_option("--top", a->top, "Plans to print");
  t->add_flag("--explain", a->explain, "Print each formula of the top plan with its numbers");
  t->add_flag("--bom", a->bom,
              "Print a bill of materials for a custom (bare-metal) build of the top plan's node");
  t->add_option("--spot-rate", a->spot_rate,
                "Spot interruptions per node-hour (default: data/calibration.csv)");
  t->callback([&g, &run, a, t] {
    a->model_given = t->get_option("--model")->count() > 0;
    run = [&g, a] { return RunPlanTrain(g, *a); };
  });
}

Result<Output> RunPlanTrainFile(const GlobalOptions& g, const std::string& file) {
  PlanTrainArgs a;
  a.file = file;
  return RunPlanTrain(g, a);
}

Result<Output> RunPlanTrainDefault(const GlobalOptions& g) {
  // Guide B16 (NLP): a 13B-class Llama, full fine-tuning in bf16; the guide rents 8 x H100.
  // The job size is gpuplan's assumption (the guide gives none): 2B tokens, 2 epochs.
  PlanTrainArgs a;
  a.model = "Llama-2-13B";
  a.method = "full";
  a.precision = "bf16";
  a.tokens = "2B";
  a.epochs = 2;
  a.top = 5;
  return RunPlanTrain(g, a);
}

}  // namespace gpuplan::cli
