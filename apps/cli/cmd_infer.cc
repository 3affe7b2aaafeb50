// gpuplan plan infer and gpuplan tco (issue #5).
#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>
#include <sstream>

#include "commands.h"
#include "gpuplan/documents.h"
#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/plan_document.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/simulate.h"
#include "gpuplan/tco.h"
#include "serve_args.h"

namespace gpuplan::cli {

using nlohmann::json;

// Fills the fields a flag left unset from the YAML job file (flags win).
Status MergeFile(InferArgs& a, const CLI::App* cmd) {
  if (cmd != nullptr) {
    const CLI::Option* m = cmd->get_option_no_throw("--model");
    a.model_given = m != nullptr && m->count() > 0;
    const CLI::Option* think = cmd->get_option_no_throw("--think-s");
    if (think != nullptr && think->count() > 0 && !a.users) {
      return MakeError(ErrorCode::kInvalidArgument, "--think-s",
                       "is the time between one user's requests, but no --users was given",
                       "give the load as --users N --think-s S, or drop --think-s");
    }
  }
  if (a.file.empty()) return {};
  auto text = ReadInputFile(a.file, "-f", kMaxYamlFileBytes);
  if (!text) return text.error();
  auto f = ParseServeJobYaml(*text, a.file);
  if (!f) return f.error();
  MergeServeJobFile(a, *f, [cmd](const char* flag) {
    if (cmd == nullptr) return true;
    const CLI::Option* o = cmd->get_option_no_throw(flag);
    return o == nullptr || o->count() == 0;
  });
  return {};
}

Result<ServeJobSpec> BuildServeJob(const InferArgs& a, const GlobalOptions& g) {
  return gpuplan::BuildServeJob(a, g.currency);
}

namespace {

std::string PlansTable(const std::vector<ServePlan>& plans, Currency cur) {
  Table t({"#", "cloud", "instance", "region", "hardware", "replicas", "batch", "TTFT p99",
           "TPOT p99", "e2e p99", "util", "$/h", "$/month", "per 1k req", "per 1M tok"});
  int k = 1;
  for (const auto& p : plans) {
    const auto& i = *p.instance;
    t.Row(
        {std::to_string(k++), i.cloud, i.instance_type, i.region,
         i.is_cpu_only() ? "CPU " + i.cpu : fmt::format("{} x {} per replica", p.tp, i.accelerator),
         fmt::format("{} on {}", p.replicas, p.instances), std::to_string(p.batch),
         fmt::format("{:.0f} ms", p.ttft_p99_ms),
         p.tpot_p99_ms > 0 ? fmt::format("{:.1f} ms", p.tpot_p99_ms) : "-",
         fmt::format("{:.0f} ms", p.e2e_p99_ms), fmt::format("{:.0f}%", 100 * p.utilization),
         Price(p.cost_per_hour, cur), Price(p.cost_per_month, cur),
         Price(p.cost_per_1k_requests, cur),
         p.cost_per_1m_output_tokens > 0 ? Price(p.cost_per_1m_output_tokens, cur) : "-"});
  }
  return t.Render();
}

// What one request is, for the header: an image (CNNs, ViTs: their preset's sample), the
// denoising loop of a text-to-image UNet, or tokens (in and out for an LLM, in for an encoder).
std::string RequestShapeText(const ServeJobSpec& job) {
  const ModelSpec& m = job.model;
  if (m.arch == ModelArch::kDiffusionUnet) {
    return fmt::format("one image each: {} denoising steps, classifier-free guidance {}",
                       job.diffusion.steps, job.diffusion.guidance ? "on" : "off");
  }
  if (m.arch == ModelArch::kCnn) {
    return m.sample.empty() ? std::string("one image each") : "one " + m.sample + " each";
  }
  if (m.arch == ModelArch::kVit && !m.sample.empty()) {
    return fmt::format("one {} ({} tokens) each", m.sample, job.input_len);
  }
  if (m.is_audio_model()) {
    return fmt::format("{} each / {} out tokens", AudioWindowText(m), job.output_len);
  }
  if (m.arch == ModelArch::kEncoderDecoder) {
    return fmt::format("{} encoder tokens in / {} out tokens", job.input_len, job.output_len);
  }
  if (m.is_decoder_llm())
    return fmt::format("{} in / {} out tokens", job.input_len, job.output_len);
  return fmt::format("{} tokens in", job.input_len);
}

Result<Output> RunPlanInfer(const GlobalOptions& g, const InferArgs& a) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto job = BuildServeJob(a, g);
  if (!job) return job.error();
  auto res = PlanServing(*job, *cat, DefaultCalibration(), g.cny_per_usd);
  if (!res) return NameFileField(res.error(), a);
  Output out;
  out.exit_code = res->plans.empty() ? kExitNothingFits : kExitOk;
  if (g.json) {
    json j = ServePlanDocument(*job, ServeModelRef(a), *res);
    out.text = DumpJson(j) + "\n";
    return out;
  }
  std::string s = fmt::format(
      "gpuplan plan infer: {} at {:g} req/s, {}{}, {} weights, {}, target "
      "utilisation {:.0f}% (B12)\n"
      "SLOs (p99): TTFT {}, TPOT {}, e2e {}; prices as of {} in {}; {} configurations "
      "evaluated\n\n",
      job->model.name, job->qps, RequestShapeText(*job),
      job->beams > 1 ? fmt::format(" ({} beams)", job->beams) : "",
      job->quant ? job->quant->method : PrecisionName(job->weight_precision),
      // Encoders, ViTs and CNNs run each plan's own runtime (TensorRT, OpenVINO), not an LLM
      // engine.
      job->model.is_decoder_llm() ? "engine " + std::string(EngineName(job->engine))
                                  : std::string("runtime per plan"),
      100 * job->target_utilization,
      job->ttft_p99_ms ? fmt::format("{:g} ms", *job->ttft_p99_ms) : "-",
      job->tpot_p99_ms ? fmt::format("{:g} ms", *job->tpot_p99_ms) : "-",
      job->e2e_p99_ms ? fmt::format("{:g} ms", *job->e2e_p99_ms) : "-", res->prices_as_of,
      CurrencyCode(job->currency), res->evaluated);
  if (res->plans.empty()) {
    s += "No deployment meets the constraints.\n";
  } else {
    s += PlansTable(res->plans, job->currency);
    const auto& p = res->plans.front();
    s += fmt::format(
        "\nTop: {} replica(s) of {} on {} x {} {}{}; runtime {}; per replica {:.1f} req/s max "
        "({:.0f} output tok/s), "
        "KV capacity {} tokens\n",
        p.replicas,
        p.instance->is_cpu_only() ? "CPU " + p.instance->cpu
                                  : fmt::format("{} x {}", p.tp, p.instance->accelerator),
        p.instances, p.instance->cloud, p.instance->instance_type,
        p.also_regions.empty() ? "" : fmt::format(" (also in {})", fmt::join(p.also_regions, ", ")),
        p.runtime, p.perf.samples_per_s, p.perf.output_tokens_per_s, p.perf.kv_tokens);
    for (const auto& w : p.warnings) s += "  warning: " + w + "\n";
    if (a.explain) {
      s += "\nExplain (top plan, per replica):\n";
      auto line = [&](const char* name, double v, const char* unit, std::string_view how) {
        s += fmt::format("  {:<30} = {:<12.6g} {:<6} [{}]\n", name, v, unit, how);
      };
      line("prefill of one request", p.perf.prefill.value() * 1e3, "ms",
           "L x GEMMs(input tokens) + causal attention + LM head + TP all-reduces (docs/model.md "
           "10.1)");
      line("decode step", p.perf.decode_step.value() * 1e3, "ms",
           "weights read or batch FLOPs + KV read + per-sequence sampling + TP all-reduces (10.2)");
      line("concurrency", p.batch, "seqs",
           "largest meeting the SLOs, bounded by KV capacity (10.3, 11)");
      line("KV capacity", static_cast<double>(p.perf.kv_tokens), "tokens",
           "engine memory rule (section 4)");
      line("requests/s at that concurrency", p.perf.samples_per_s, "req/s",
           "B / (prefill of B prompts + output x decode step)");
      line(
          "capacity at planned utilisation", p.capacity_qps, "req/s",
          fmt::format("requests/s x {:.0f}% (the target, lowered where queueing misses an SLO, 11)",
                      100 * p.planned_utilization));
      line("replicas", p.replicas, "", "ceil(qps / capacity)");
      line("TTFT p99", p.ttft_p99_ms, "ms", "prefill + M/M/c p99 wait");
    }
  }
  if (!res->guide_rule.empty()) {
    s += "\nGuide's rule of thumb: " + res->guide_rule + "\n";
    if (!res->guide_plans.empty()) {
      const ServePlan& gp = res->guide_plans.front();
      s += fmt::format(
          "  cheapest deployment following it: {} replica(s) of {} x {} on {} {}, {}/month\n",
          gp.replicas, gp.tp, gp.instance->accelerator, gp.instance->cloud,
          gp.instance->instance_type, Price(gp.cost_per_month, job->currency));
    }
    if (!res->guide_comparison.empty()) s += "  " + res->guide_comparison + "\n";
  }
  for (const auto& n : res->notes) s += "note: " + n + "\n";
  out.text = s;
  return out;
}

Result<Output> RunTco(const GlobalOptions& g, const InferArgs& a) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto job = BuildServeJob(a, g);
  if (!job) return job.error();
  if (auto st = CheckTcoYears(a.years, "--years"); !st) return st.error();
  TcoRequest req;
  req.years = a.years;
  if (!a.profile.empty()) {
    auto prof = ParseHourlyProfile(a.profile, "--profile");
    if (!prof) return prof.error();
    req.profile = std::move(*prof);
  }
  auto r = PlanTco(*job, *cat, req, g.cny_per_usd);
  if (!r) return NameFileField(r.error(), a);
  const Currency cur = job->currency;
  const auto& gpu = r->gpu;
  const auto& cpu = r->cpu;
  const auto& break_even = r->break_even_qps;
  Output out;
  const double months = r->months;
  std::string s =
      fmt::format("gpuplan tco: {} at {:g} req/s over {:g} years (prices as of {}, {})\n\n",
                  job->model.name, job->qps, a.years, cat->PricesAsOf(), CurrencyCode(cur));
  std::vector<ServePlan> both;
  if (gpu) both.push_back(*gpu);
  if (cpu) both.push_back(*cpu);
  s += both.empty() ? "neither a GPU nor a CPU deployment meets the SLOs\n" : PlansTable(both, cur);
  if (gpu && cpu) {
    double gt = gpu->cost_per_month * months, ct = cpu->cost_per_month * months;
    s += fmt::format("\n{}-year total: GPU {} vs CPU {}: {} is cheaper by {:.0f}%\n", a.years,
                     Price(gt, cur), Price(ct, cur), ct < gt ? "CPU" : "GPU",
                     100 * std::fabs(gt - ct) / std::max(gt, ct));
  }
  if (break_even) {
    s += fmt::format("break-even: CPU serving is cheaper up to about {:.0f} req/s\n", *break_even);
  } else if (!cpu && !r->cpu_notes.empty()) {
    s += "break-even: none: no CPU deployment was planned (the note below says why)\n";
  } else {
    s += "break-even: CPU serving is not cheaper at any load scanned (or cannot meet the SLOs)\n";
  }
  for (const std::string& n : r->cpu_notes) s += "note (CPU): " + n + "\n";
  if (!r->guide_rule.empty()) s += r->guide_rule + "\n";
  if (r->day_night) {
    const DayNightPlan* dn = &*r->day_night;
    const auto& profile = req.profile;
    const double peak = *std::max_element(profile.begin(), profile.end());
    const double saving_day = dn->static_gpu_per_day - dn->mixed_per_day;
    s += fmt::format(
        "\nhourly profile (peak {:g} req/s): static GPU fleet {}/day; GPU autoscaled by hour "
        "{}/day",
        peak, Price(dn->static_gpu_per_day, cur), Price(dn->autoscaled_gpu_per_day, cur));
    std::vector<int> cpu_hours;
    for (int h = 0; h < 24; ++h) {
      if (dn->hours[static_cast<size_t>(h)].on_cpu) cpu_hours.push_back(h);
    }
    if (dn->cpu_hours > 0) {
      std::string hours;
      for (int h : cpu_hours) hours += (hours.empty() ? "" : ",") + std::to_string(h);
      s += fmt::format(
          "; GPU by day + CPU by night: {}/day, {} hour(s) on CPU (hours {}), CPU saves {}/day, "
          "{}/year (guide B14)\n",
          Price(dn->mixed_per_day, cur), dn->cpu_hours, hours, Price(dn->cpu_saving_per_day, cur),
          Price(dn->cpu_saving_per_day * 365, cur));
    } else {
      s += "; no hour runs on CPU (a CPU deployment is never cheaper or cannot meet the SLOs): the "
           "saving is GPU "
           "autoscaling alone\n";
    }
    s += fmt::format("saving against the static fleet: {}/day, {} per year ({:.0f}%)\n",
                     Price(saving_day, cur), Price(saving_day * 365, cur),
                     dn->static_gpu_per_day > 0 ? 100 * saving_day / dn->static_gpu_per_day : 0);
  }
  out.text = g.json ? DumpJson(TcoDocument(*job, *cat, req, *r)) + "\n" : s;
  return out;
}

}  // namespace

void AddServeOptions(CLI::App* c, InferArgs& a) {
  c->add_option("--model,-m", a.model,
                "Preset, HF id, config.json or .safetensors (with --benchmark: its reference "
                "model)")
      ->capture_default_str();
  c->add_option("-f,--file", a.file,
                "YAML serving job file (docs/serve-yaml.md); flags override it");
  c->add_option("--qps", a.qps, "Peak load, requests per second (or --tokens-per-s / --users)");
  c->add_option("--tokens-per-s", a.tokens_per_s,
                "Peak load as output tokens per second (/ --output-len)");
  c->add_option("--users", a.users,
                "Peak load as concurrent users, each sending a request every --think-s");
  c->add_option("--think-s", a.think_s, "Seconds between a user's requests (with --users)")
      ->capture_default_str();
  c->add_option("--benchmark", a.benchmark,
                "Public benchmark whose dataset fixes the lengths and SLOs left unset "
                "(mlperf/llama2-70b-99, mlperf/bert-99, ...; data/inference_benchmarks.csv)");
  c->add_option("--input-len", a.input_len, "Prompt tokens (LLM) or sequence length (encoders)");
  c->add_option("--output-len", a.output_len, "Output tokens (LLM)");
  c->add_option("--denoise-steps", a.denoise_steps,
                "Denoising steps per image (diffusion UNets; default 50, diffusers' pipelines, or "
                "the --benchmark's)");
  c->add_option("--ttft-ms", a.ttft_ms, "TTFT p99 SLO, ms");
  c->add_option("--tpot-ms", a.tpot_ms, "TPOT p99 SLO, ms");
  c->add_option("--e2e-ms", a.e2e_ms, "End-to-end p99 SLO, ms");
  c->add_option("--precision", a.precision, "Weights: bf16 | fp16 | fp8 | int8 | int4");
  c->add_option("--quant", a.quant, "awq | gptq | nf4 | nvfp4 | mxfp4 | int8 | int4 | fp8");
  c->add_option("--kv-precision", a.kv_precision, "KV cache: bf16 | fp16 | fp8 | int8");
  c->add_option("--engine", a.engine, "vllm | trt-llm | sglang | tgi | transformers")
      ->capture_default_str();
  c->add_option("--util", a.util, "Target utilisation (B12: 0.6)")->capture_default_str();
  c->add_option("--clouds", a.clouds, "Allowed clouds")->delimiter(',');
  c->add_option("--regions", a.regions, "Allowed regions")->delimiter(',');
  c->add_option("--gpus", a.gpus, "Allowed accelerators")->delimiter(',');
  c->add_option("--currency", a.currency, "USD | CNY");
  c->add_option("--top", a.top, "Plans to print");
}

Result<Output> RunPlanInferFile(const GlobalOptions& g, const std::string& file) {
  InferArgs a;
  a.file = file;
  if (auto st = MergeFile(a, nullptr); !st) return st.error();
  return RunPlanInfer(g, a);
}

Result<Output> RunPlanInferDefault(const GlobalOptions& g) {
  // Guide B16 serving: the fine-tuned 13B model behind vLLM continuous batching at ~2000
  // output tokens/s (8 req/s x 256 tokens), P99 under 100 ms per token.
  InferArgs a;
  a.model = "Llama-2-13B";
  a.qps = 8;
  a.input_len = 512;
  a.output_len = 256;
  a.tpot_ms = 100;
  a.ttft_ms = 2000;
  a.top = 5;
  return RunPlanInfer(g, a);
}

void RegisterInferCommands(CLI::App& app, GlobalOptions& g, Runner& run) {
  CLI::App* plan = app.get_subcommand("plan");
  auto a = std::make_shared<InferArgs>();
  auto* c = plan->add_subcommand("infer", "Rank serving deployments that meet the load and SLOs");
  AddServeOptions(c, *a);
  c->add_flag("--cpu", a->cpu, "Also consider CPU instances");
  c->add_flag("--cpu-only", a->cpu_only, "Only CPU instances");
  c->add_flag("--reserved", a->reserved,
              "Rank by 1-year reserved prices where the catalog has them");
  c->add_flag("--include-suspect", a->include_suspect,
              "Also rank catalog rows whose source marks the price suspect or anomalous");
  c->add_flag("--no-marketplace", a->no_marketplace,
              "Rank the providers' own rows only, not marketplace listings (vast.ai hosts)");
  c->add_flag("--by-region", a->by_region, "List each region of an instance as its own plan");
  c->add_flag("--explain", a->explain, "Print the top plan's terms with their formulas");
  c->callback([&g, &run, a, c] {
    Status st = MergeFile(*a, c);
    run = [&g, a, st] {
      if (!st) return Result<Output>(st.error());
      return RunPlanInfer(g, *a);
    };
  });

  auto t = std::make_shared<InferArgs>();
  auto* tc = app.add_subcommand(
      "tco", "CPU vs GPU serving cost over 1-3 years, break-even load, day/night mix");
  AddServeOptions(tc, *t);
  tc->add_option("--years", t->years, "Horizon in years")->capture_default_str();
  tc->add_option("--profile", t->profile,
                 "24 comma-separated hourly loads (req/s) for the day/night mix");
  tc->callback([&g, &run, t, tc] {
    Status st = MergeFile(*t, tc);
    run = [&g, t, st] {
      if (!st) return Result<Output>(st.error());
      return RunTco(g, *t);
    };
  });
}

}  // namespace gpuplan::cli
