// gpuplan plan infer and gpuplan tco (issue #5).
#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>
#include <sstream>

#include "commands.h"
#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/plan_document.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/simulate.h"
#include "serve_args.h"

namespace gpuplan::cli {

using nlohmann::json;


// Fills the fields a flag left unset from the YAML job file (flags win).
Status MergeFile(InferArgs& a, const CLI::App* cmd) {
  if (a.file.empty()) return {};
  auto text = ReadInputFile(a.file, "-f", kMaxYamlFileBytes);
  if (!text) return text.error();
  auto f = ParseServeJobYaml(*text, a.file);
  if (!f) return f.error();
  auto unset = [&](const char* flag) {
    if (cmd == nullptr) return true;
    const CLI::Option* o = cmd->get_option_no_throw(flag);
    return o == nullptr || o->count() == 0;
  };
  if (unset("--model") && !f->model.empty()) a.model = f->model;
  if (unset("--qps") && unset("--tokens-per-s") && unset("--users") && f->qps) a.qps = *f->qps;
  if (unset("--input-len") && f->input_len) a.input_len = *f->input_len;
  if (unset("--output-len") && f->output_len) a.output_len = *f->output_len;
  if (unset("--ttft-ms") && f->ttft_p99_ms) a.ttft_ms = *f->ttft_p99_ms;
  if (unset("--tpot-ms") && f->tpot_p99_ms) a.tpot_ms = *f->tpot_p99_ms;
  if (unset("--e2e-ms") && f->e2e_p99_ms) a.e2e_ms = *f->e2e_p99_ms;
  if (unset("--util") && f->target_utilization) a.util = *f->target_utilization;
  if (unset("--precision") && !f->precision.empty()) a.precision = f->precision;
  if (unset("--quant") && !f->quant.empty()) a.quant = f->quant;
  if (unset("--kv-precision") && !f->kv_precision.empty()) a.kv_precision = f->kv_precision;
  if (unset("--engine") && !f->engine.empty()) a.engine = f->engine;
  if (unset("--currency") && !f->currency.empty()) a.currency = f->currency;
  if (unset("--clouds") && !f->clouds.empty()) a.clouds = f->clouds;
  if (unset("--regions") && !f->regions.empty()) a.regions = f->regions;
  if (unset("--gpus") && !f->gpus.empty()) a.gpus = f->gpus;
  if (unset("--cpu") && f->cpu) a.cpu = *f->cpu;
  if (unset("--cpu-only") && f->cpu_only) a.cpu_only = *f->cpu_only;
  if (unset("--reserved") && f->reserved) a.reserved = *f->reserved;
  if (unset("--include-suspect") && f->include_suspect) a.include_suspect = *f->include_suspect;
  if (unset("--top") && f->top) a.top = *f->top;
  return {};
}

Result<ServeJobSpec> BuildServeJob(const InferArgs& a, const GlobalOptions& g) {
  ServeJobSpec job;
  if (a.model.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "--model", "is empty",
                     "give a preset name (see `gpuplan models`) or a path to config.json");
  }
  // Mutually exclusive load flags; each given value finite and in range.
  if ((a.qps ? 1 : 0) + (a.tokens_per_s ? 1 : 0) + (a.users ? 1 : 0) > 1) {
    return MakeError(ErrorCode::kInvalidArgument, a.qps ? "--qps" : "--tokens-per-s",
                     "give one load: --qps, --tokens-per-s or --users",
                     "they are three ways to say the same thing");
  }
  if (auto st = CheckRange(a.qps, "--qps", 0, kMaxQps, true); !st) return st.error();
  if (auto st = CheckRange(a.tokens_per_s, "--tokens-per-s", 0, kMaxQps * 1e4, true); !st) return st.error();
  if (auto st = CheckRange(a.users, "--users", 0, 1e9, true); !st) return st.error();
  if (auto st = CheckRange(a.think_s, "--think-s", 0, 86400, true); !st) return st.error();
  for (const auto& [v, flag] : {std::pair{a.ttft_ms, "--ttft-ms"}, {a.tpot_ms, "--tpot-ms"}, {a.e2e_ms, "--e2e-ms"}}) {
    if (auto st = CheckRange(v, flag, 0, kMaxSloMs, true); !st) return st.error();
  }
  if (a.input_len && (*a.input_len < 1 || *a.input_len > kMaxSeqLen)) {
    return MakeError(ErrorCode::kInvalidArgument, "--input-len", fmt::format("must be in [1, {}], got {}", kMaxSeqLen, *a.input_len));
  }
  if (a.output_len && (*a.output_len < 0 || *a.output_len > kMaxSeqLen)) {
    return MakeError(ErrorCode::kInvalidArgument, "--output-len", fmt::format("must be in [0, {}], got {}", kMaxSeqLen, *a.output_len));
  }
  if (a.top && (*a.top < 1 || *a.top > kMaxTop)) {
    return MakeError(ErrorCode::kInvalidArgument, "--top", fmt::format("must be in [1, {}], got {}", kMaxTop, *a.top));
  }
  if (auto st = CheckRange(a.util, "--util", 0, 1, true); !st) return st.error();
  auto m = ResolveModel(a.model, "--model");
  if (!m) return m.error();
  job.model = *m;
  job.weight_precision = m->dtype == Precision::kFp32 ? Precision::kFp16 : m->dtype;
  job.quant = m->quant;
  if (!a.precision.empty()) {
    auto p = ParsePrecision(a.precision);
    if (!p) return MakeError(ErrorCode::kInvalidArgument, "--precision", "unknown precision \"" + a.precision + "\"", "use fp32, bf16, fp16, fp8, int8 or int4");
    job.weight_precision = *p;
  }
  if (!a.quant.empty()) {
    if (a.quant == "awq" || a.quant == "gptq") job.quant = QuantSpec{a.quant, 4, 128, true, false, 16};
    else if (a.quant == "nf4") job.quant = QuantSpec{"bnb-nf4", 4, 64, false, true, 32};
    else if (auto p = ParsePrecision(a.quant)) job.weight_precision = *p;
    else return MakeError(ErrorCode::kInvalidArgument, "--quant", "unknown quantization \"" + a.quant + "\"", "use awq, gptq, nf4, int8, int4 or fp8");
  }
  job.kv_precision = job.weight_precision == Precision::kFp8 ? Precision::kFp8 : Precision::kBf16;
  if (!a.kv_precision.empty()) {
    auto p = ParsePrecision(a.kv_precision);
    if (!p || *p == Precision::kInt4) return MakeError(ErrorCode::kInvalidArgument, "--kv-precision", "unknown KV precision \"" + a.kv_precision + "\"", "use bf16, fp16, fp8 or int8");
    job.kv_precision = *p;
  }
  auto e = ParseEngine(a.engine);
  if (!e) return MakeError(ErrorCode::kInvalidArgument, "--engine", "unknown engine \"" + a.engine + "\"", "use vllm, trt-llm, sglang, tgi or transformers");
  job.engine = *e;
  const bool llm = m->is_decoder_llm();
  if (m->arch == ModelArch::kEncoderDecoder) {
    return MakeError(ErrorCode::kUnsupported, "--model",
                     "serving encoder-decoder models (" + m->name + ") is not modelled yet",
                     "plan a decoder LLM, an encoder, a ViT or a CNN");
  }
  job.input_len = a.input_len ? *a.input_len : (llm ? 512 : (m->arch == ModelArch::kEncoder ? 128 : 1));
  job.output_len = a.output_len ? *a.output_len : (llm ? 256 : 0);
  // The load: requests/s, or output tokens/s (/ output_len), or concurrent users each sending a
  // request every (think time + the request's own latency, taken as the think time's floor).
  double qps = a.qps.value_or(0);
  if (a.tokens_per_s) {
    if (job.output_len <= 0) {
      return MakeError(ErrorCode::kInvalidArgument, "--tokens-per-s", "needs --output-len > 0 to convert tokens/s into requests/s");
    }
    qps = *a.tokens_per_s / job.output_len;
  }
  if (a.users) qps = *a.users / a.think_s;
  if (!(qps > 0)) {
    return MakeError(ErrorCode::kInvalidArgument, "--qps", "no load given",
                     "give the peak load: --qps (requests/s), --tokens-per-s (output tokens/s) or --users");
  }
  if (qps > kMaxQps) {
    return MakeError(ErrorCode::kInvalidArgument, a.qps ? "--qps" : a.tokens_per_s ? "--tokens-per-s" : "--users",
                     fmt::format("the load is {:g} requests/s, more than the limit of {:g}", qps, kMaxQps));
  }
  job.qps = qps;
  job.ttft_p99_ms = a.ttft_ms;
  job.tpot_p99_ms = a.tpot_ms;
  job.e2e_p99_ms = a.e2e_ms;
  if (!(a.util > 0 && a.util < 1)) return MakeError(ErrorCode::kInvalidArgument, "--util", fmt::format("must be in (0, 1), got {}", a.util), "0.6 is the guides' HPA target (B12)");
  job.target_utilization = a.util;
  job.clouds = a.clouds;
  job.regions = a.regions;
  job.gpus = a.gpus;
  job.allow_cpu = a.cpu || a.cpu_only;
  job.allow_gpu = !a.cpu_only;
  job.reserved = a.reserved;
  job.include_suspect = a.include_suspect;
  job.by_region = a.by_region;
  job.top = a.top.value_or(5);
  std::string cur = a.currency.empty() ? g.currency : a.currency;
  auto c = ParseCurrency(cur);
  if (!c) return MakeError(ErrorCode::kInvalidArgument, "--currency", "unknown currency \"" + cur + "\"", "use USD or CNY");
  job.currency = *c;
  if (auto st = ValidateServeJob(job, InputSource::kFlags); !st) return st.error();
  return job;
}

namespace {

std::string PlansTable(const std::vector<ServePlan>& plans, Currency cur) {
  Table t({"#", "cloud", "instance", "region", "hardware", "replicas", "batch", "TTFT p99", "TPOT p99",
           "e2e p99", "util", "$/h", "$/month", "per 1k req", "per 1M tok"});
  int k = 1;
  for (const auto& p : plans) {
    const auto& i = *p.instance;
    t.Row({std::to_string(k++), i.cloud, i.instance_type, i.region,
           i.is_cpu_only() ? "CPU " + i.cpu : fmt::format("{} x {} per replica", p.tp, i.accelerator),
           fmt::format("{} on {}", p.replicas, p.instances), std::to_string(p.batch),
           fmt::format("{:.0f} ms", p.ttft_p99_ms), p.tpot_p99_ms > 0 ? fmt::format("{:.1f} ms", p.tpot_p99_ms) : "-",
           fmt::format("{:.0f} ms", p.e2e_p99_ms), fmt::format("{:.0f}%", 100 * p.utilization),
           Price(p.cost_per_hour, cur), Price(p.cost_per_month, cur), Price(p.cost_per_1k_requests, cur),
           p.cost_per_1m_output_tokens > 0 ? Price(p.cost_per_1m_output_tokens, cur) : "-"});
  }
  return t.Render();
}

Result<Output> RunPlanInfer(const GlobalOptions& g, const InferArgs& a) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto job = BuildServeJob(a, g);
  if (!job) return job.error();
  auto res = PlanServing(*job, *cat, DefaultCalibration(), g.cny_per_usd);
  if (!res) return res.error();
  Output out;
  out.exit_code = res->plans.empty() ? kExitNothingFits : kExitOk;
  if (g.json) {
    json j = ServePlanDocument(*job, a.model, *res);
    out.text = DumpJson(j) + "\n";
    return out;
  }
  std::string s = fmt::format(
      "gpuplan plan infer: {} at {:g} req/s, {} in / {} out tokens, engine {}, target utilisation {:.0f}% (B12)\n"
      "SLOs (p99): TTFT {}, TPOT {}, e2e {}; prices as of {} in {}; {} configurations evaluated\n\n",
      job->model.name, job->qps, job->input_len, job->output_len, EngineName(job->engine),
      100 * job->target_utilization, job->ttft_p99_ms ? fmt::format("{:g} ms", *job->ttft_p99_ms) : "-",
      job->tpot_p99_ms ? fmt::format("{:g} ms", *job->tpot_p99_ms) : "-",
      job->e2e_p99_ms ? fmt::format("{:g} ms", *job->e2e_p99_ms) : "-", res->prices_as_of,
      CurrencyCode(job->currency), res->evaluated);
  if (res->plans.empty()) {
    s += "No deployment meets the constraints.\n";
  } else {
    s += PlansTable(res->plans, job->currency);
    const auto& p = res->plans.front();
    s += fmt::format("\nTop: {} replica(s) of {} on {} x {} {}{}; runtime {}; per replica {:.1f} req/s max ({:.0f} output tok/s), "
                     "KV capacity {} tokens\n",
                     p.replicas, p.instance->is_cpu_only() ? "CPU " + p.instance->cpu : fmt::format("{} x {}", p.tp, p.instance->accelerator),
                     p.instances, p.instance->cloud, p.instance->instance_type,
                     p.also_regions.empty() ? "" : fmt::format(" (also in {})", fmt::join(p.also_regions, ", ")),
                     p.runtime, p.perf.samples_per_s, p.perf.output_tokens_per_s, p.perf.kv_tokens);
    for (const auto& w : p.warnings) s += "  warning: " + w + "\n";
    if (a.explain) {
      s += "\nExplain (top plan, per replica):\n";
      auto line = [&](const char* name, double v, const char* unit, const char* how) {
        s += fmt::format("  {:<30} = {:<12.6g} {:<6} [{}]\n", name, v, unit, how);
      };
      line("prefill of one request", p.perf.prefill.value() * 1e3, "ms", "L x GEMMs(input tokens) + causal attention + LM head + TP all-reduces (docs/model.md 10.1)");
      line("decode step", p.perf.decode_step.value() * 1e3, "ms", "weights read or batch FLOPs + KV read + per-sequence sampling + TP all-reduces (10.2)");
      line("concurrency", p.batch, "seqs", "largest meeting the SLOs, bounded by KV capacity (10.3, 11)");
      line("KV capacity", static_cast<double>(p.perf.kv_tokens), "tokens", "engine memory rule (section 4)");
      line("requests/s at that concurrency", p.perf.samples_per_s, "req/s", "B / (prefill of B prompts + output x decode step)");
      line("capacity at target utilisation", p.capacity_qps, "req/s", "requests/s x target utilisation");
      line("replicas", p.replicas, "", "ceil(qps / capacity)");
      line("TTFT p99", p.ttft_p99_ms, "ms", "prefill + M/M/c p99 wait");
    }
  }
  if (!res->guide_rule.empty()) {
    s += "\nGuide's rule of thumb: " + res->guide_rule + "\n";
    if (!res->guide_plans.empty()) {
      const ServePlan& gp = res->guide_plans.front();
      s += fmt::format("  cheapest deployment following it: {} replica(s) of {} x {} on {} {}, {}/month\n",
                       gp.replicas, gp.tp, gp.instance->accelerator, gp.instance->cloud,
                       gp.instance->instance_type, Price(gp.cost_per_month, job->currency));
    }
    if (!res->guide_comparison.empty()) s += "  " + res->guide_comparison + "\n";
  }
  for (const auto& n : res->notes) s += "note: " + n + "\n";
  out.text = s;
  return out;
}

// Cheapest monthly cost of serving `qps` with only GPUs or only CPUs.
std::optional<ServePlan> Cheapest(const ServeJobSpec& base, const Catalog& cat, double qps, bool cpu,
                                  std::optional<double> rate) {
  ServeJobSpec j = base;
  j.qps = qps;
  j.allow_cpu = cpu;
  j.allow_gpu = !cpu;
  j.top = 1;
  j.with_guide = false;
  auto r = PlanServing(j, cat, DefaultCalibration(), rate);
  if (!r || r->plans.empty()) return std::nullopt;
  return r->plans.front();
}

Result<Output> RunTco(const GlobalOptions& g, const InferArgs& a) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto job = BuildServeJob(a, g);
  if (!job) return job.error();
  if (!(a.years > 0 && a.years <= 10)) {
    return MakeError(ErrorCode::kInvalidArgument, "--years", fmt::format("must be in (0, 10], got {}", a.years));
  }
  const Currency cur = job->currency;
  auto gpu = Cheapest(*job, *cat, job->qps, false, g.cny_per_usd);
  auto cpu = Cheapest(*job, *cat, job->qps, true, g.cny_per_usd);
  // Break-even: the load below which the CPU deployment is cheaper (scan, geometric steps).
  std::optional<double> break_even;
  for (double q = 0.5; q <= 100000; q *= 1.25) {
    auto gq = Cheapest(*job, *cat, q, false, g.cny_per_usd);
    auto cq = Cheapest(*job, *cat, q, true, g.cny_per_usd);
    if (!cq) break;
    if (gq && cq->cost_per_month > gq->cost_per_month) break;
    break_even = q;
  }
  // Day/night mix from an hourly profile (B14/B15): each hour on the cheaper of the two.
  std::vector<double> profile;
  if (!a.profile.empty()) {
    for (const auto& tok : [&] {
           std::vector<std::string> v;
           std::stringstream ss(a.profile);
           std::string x;
           while (std::getline(ss, x, ',')) v.push_back(x);
           return v;
         }()) {
      try {
        size_t used = 0;
        double v = std::stod(tok, &used);
        if (used != tok.size() || v < 0) throw std::invalid_argument("bad");
        profile.push_back(v);
      } catch (...) {
        return MakeError(ErrorCode::kInvalidArgument, "--profile", "expected 24 loads (req/s) separated by commas, got \"" + tok + "\"");
      }
    }
    if (profile.size() != 24) {
      return MakeError(ErrorCode::kInvalidArgument, "--profile", fmt::format("needs 24 hourly loads, got {}", profile.size()));
    }
  }
  Output out;
  const double months = a.years * 12;
  json j = {{"schema_version", kSchemaVersion}, {"catalog_as_of", cat->PricesAsOf()}, {"currency", CurrencyCode(cur)},
            {"model", job->model.name}, {"qps", job->qps}, {"years", a.years},
            {"gpu", gpu ? ServePlanJson(*gpu, cur) : json(nullptr)}, {"cpu", cpu ? ServePlanJson(*cpu, cur) : json(nullptr)},
            {"break_even_qps", break_even ? json(*break_even) : json(nullptr)}};
  std::string s = fmt::format("gpuplan tco: {} at {:g} req/s over {:g} years (prices as of {}, {})\n\n", job->model.name,
                              job->qps, a.years, cat->PricesAsOf(), CurrencyCode(cur));
  std::vector<ServePlan> both;
  if (gpu) both.push_back(*gpu);
  if (cpu) both.push_back(*cpu);
  s += both.empty() ? "neither a GPU nor a CPU deployment meets the SLOs\n" : PlansTable(both, cur);
  if (gpu && cpu) {
    double gt = gpu->cost_per_month * months, ct = cpu->cost_per_month * months;
    s += fmt::format("\n{}-year total: GPU {} vs CPU {}: {} is cheaper by {:.0f}%\n", a.years, Price(gt, cur), Price(ct, cur),
                     ct < gt ? "CPU" : "GPU", 100 * std::fabs(gt - ct) / std::max(gt, ct));
    j["total_gpu"] = gt;
    j["total_cpu"] = ct;
  }
  if (break_even) {
    s += fmt::format("break-even: CPU serving is cheaper up to about {:.0f} req/s (guide B10 says ~500 QPS for BERT-base)\n", *break_even);
  } else {
    s += "break-even: CPU serving is not cheaper at any load scanned (or cannot meet the SLOs)\n";
  }
  if (!profile.empty()) {
    // The library's day/night plan (also used by `simulate --policy schedule`): GPU replicas of
    // the peak deployment follow the hourly load; an hour runs on CPUs only where that is cheaper.
    auto dn = PlanDayNight(*job, *cat, DefaultCalibration(), profile, g.cny_per_usd);
    if (!dn) return dn.error();
    const double peak = *std::max_element(profile.begin(), profile.end());
    const double saving_day = dn->static_gpu_per_day - dn->mixed_per_day;
    s += fmt::format("\nhourly profile (peak {:g} req/s): static GPU fleet {}/day; GPU autoscaled by hour {}/day",
                     peak, Price(dn->static_gpu_per_day, cur), Price(dn->autoscaled_gpu_per_day, cur));
    std::vector<int> cpu_hours;
    for (int h = 0; h < 24; ++h) {
      if (dn->hours[static_cast<size_t>(h)].on_cpu) cpu_hours.push_back(h);
    }
    if (dn->cpu_hours > 0) {
      std::string hours;
      for (int h : cpu_hours) hours += (hours.empty() ? "" : ",") + std::to_string(h);
      s += fmt::format("; GPU by day + CPU by night: {}/day, {} hour(s) on CPU (hours {}), CPU saves {}/day, {}/year (guide B14)\n",
                       Price(dn->mixed_per_day, cur), dn->cpu_hours, hours, Price(dn->cpu_saving_per_day, cur),
                       Price(dn->cpu_saving_per_day * 365, cur));
    } else {
      s += "; no hour runs on CPU (a CPU deployment is never cheaper or cannot meet the SLOs): the saving is GPU "
           "autoscaling alone\n";
    }
    s += fmt::format("saving against the static fleet: {}/day, {} per year ({:.0f}%)\n", Price(saving_day, cur),
                     Price(saving_day * 365, cur),
                     dn->static_gpu_per_day > 0 ? 100 * saving_day / dn->static_gpu_per_day : 0);
    j["profile"] = {{"static_gpu_per_day", dn->static_gpu_per_day},
                    {"autoscaled_gpu_per_day", dn->autoscaled_gpu_per_day},
                    {"mixed_per_day", dn->mixed_per_day},
                    {"saving_per_year", saving_day * 365},
                    {"cpu_hours", cpu_hours},
                    {"cpu_saving_per_day", dn->cpu_saving_per_day},
                    {"cpu_saving_per_year", dn->cpu_saving_per_day * 365}};
  }
  out.text = g.json ? DumpJson(j) + "\n" : s;
  return out;
}

}  // namespace

void AddServeOptions(CLI::App* c, InferArgs& a) {
  c->add_option("--model,-m", a.model, "Preset, HF id, config.json or .safetensors")->capture_default_str();
  c->add_option("-f,--file", a.file, "YAML serving job file (docs/serve-yaml.md); flags override it");
  c->add_option("--qps", a.qps, "Peak load, requests per second (or --tokens-per-s / --users)");
  c->add_option("--tokens-per-s", a.tokens_per_s, "Peak load as output tokens per second (/ --output-len)");
  c->add_option("--users", a.users, "Peak load as concurrent users, each sending a request every --think-s");
  c->add_option("--think-s", a.think_s, "Seconds between a user's requests (with --users)")->capture_default_str();
  c->add_option("--input-len", a.input_len, "Prompt tokens (LLM) or sequence length (encoders)");
  c->add_option("--output-len", a.output_len, "Output tokens (LLM)");
  c->add_option("--ttft-ms", a.ttft_ms, "TTFT p99 SLO, ms");
  c->add_option("--tpot-ms", a.tpot_ms, "TPOT p99 SLO, ms");
  c->add_option("--e2e-ms", a.e2e_ms, "End-to-end p99 SLO, ms");
  c->add_option("--precision", a.precision, "Weights: bf16 | fp16 | fp8 | int8 | int4");
  c->add_option("--quant", a.quant, "awq | gptq | nf4 | int8 | int4 | fp8");
  c->add_option("--kv-precision", a.kv_precision, "KV cache: bf16 | fp16 | fp8 | int8");
  c->add_option("--engine", a.engine, "vllm | trt-llm | sglang | tgi | transformers")->capture_default_str();
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
  c->add_flag("--reserved", a->reserved, "Rank by 1-year reserved prices where the catalog has them");
  c->add_flag("--include-suspect", a->include_suspect,
              "Also rank catalog rows whose source marks the price suspect or anomalous");
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
  auto* tc = app.add_subcommand("tco", "CPU vs GPU serving cost over 1-3 years, break-even load, day/night mix");
  AddServeOptions(tc, *t);
  tc->add_option("--years", t->years, "Horizon in years")->capture_default_str();
  tc->add_option("--profile", t->profile, "24 comma-separated hourly loads (req/s) for the day/night mix");
  tc->callback([&g, &run, t, tc] {
    Status st = MergeFile(*t, tc);
    run = [&g, t, st] {
      if (!st) return Result<Output>(st.error());
      return RunTco(g, *t);
    };
  });
}

}  // namespace gpuplan::cli
