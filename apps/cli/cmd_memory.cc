// gpuplan memory: per-GPU memory breakdown for training or serving, which accelerators hold
// the job with how many GPUs, and the cheapest instances that do, per cloud. The analysis is the
// library's (gpuplan/memory_fit.h); this file maps flags and renders text.
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "commands.h"
#include "gpuplan/documents.h"
#include "gpuplan/estimate.h"
#include "gpuplan/memory_fit.h"
#include "gpuplan/model.h"

namespace gpuplan::cli {

namespace {

struct MemoryArgs {
  std::string model = "Llama-2-13B";
  MemoryRequest r;
};

std::string BreakdownText(const MemoryBreakdown& b, const std::string& indent) {
  Table t({"term", "per GPU", "GB"});
  auto add = [&](const char* name, Bytes v) {
    if (v.value() <= 0) return;
    t.Row({name, Gib(v.value(), 2), fmt::format("{:.2f}", v.value() / 1e9)});
  };
  add("weights", b.weights);
  add("fp32 master weights", b.master_weights);
  add("gradients", b.gradients);
  add("optimizer states", b.optimizer);
  add("LoRA adapter (+grads, states)", b.adapter);
  add("activations", b.activations);
  add("logits buffer", b.logits);
  add("KV cache", b.kv_cache);
  add("CUDA context", b.cuda_context);
  add("NCCL buffers", b.nccl_buffers);
  add("allocator slack", b.allocator_slack);
  t.Row({"total", Gib(b.Total().value(), 2), fmt::format("{:.2f}", b.Total().value() / 1e9)});
  std::string s = t.Render(indent);
  for (const auto& n : b.notes) s += indent + "note: " + n + "\n";
  return s;
}

// The cheapest on-demand offer of a fit and where it is ("cloud instance[ xN nodes]"; "-" when
// none is priced).
std::pair<std::optional<double>, std::string> CheapestWhere(const std::vector<Offer>& offers) {
  const auto cheapest = CheapestOnDemand(offers);
  for (const auto& of : offers) {
    if (of.on_demand && cheapest && *of.on_demand == *cheapest) {
      return {cheapest, fmt::format("{} {}{}", of.inst->cloud, of.inst->instance_type,
                                    of.nodes > 1 ? fmt::format(" x{}", of.nodes) : "")};
    }
  }
  return {cheapest, "-"};
}

// Accelerators an analysis left out because the job cannot run there, one line per reason.
std::string NotListed(const std::vector<std::pair<std::string, std::string>>& id_why) {
  std::string text;
  for (const auto& g : GroupByWhy(id_why)) {
    text += fmt::format("  not listed: {} ({})\n", fmt::join(g.ids, ", "), g.why);
  }
  return text;
}

std::string TrainText(const MemoryAnalysis& an, const TrainMemoryAnalysis& t,
                      const MemoryRequest& a) {
  const ModelSpec& m = an.model;
  const auto* o = &t.options;
  const Parallelism& par = t.reference;
  const ParamCounts& pc = an.params;
  const Currency cur = an.currency;
  std::string text;
  std::string prec_desc = a.guide_b4
                              ? fmt::format("pure {} (no fp32 master; guide B4 arithmetic)",
                                            PrecisionName(o->precision))
                              : (o->precision == Precision::kFp32
                                     ? std::string("fp32")
                                     : fmt::format("{} mixed precision (fp32 master)",
                                                   TrainPrecisionName(o->precision, o->fp4_gemms)));
  // Quantized optimizers (8-bit, 4-bit) store their own codes; the state dtype applies to the
  // others.
  const bool quantized_states =
      o->optimizer == Optimizer::kAdamW8bit || o->optimizer == Optimizer::kAdamW4bit;
  text += fmt::format("Training: {} ({} params), {}, {}, optimizer {} (states {})\n", m.name,
                      Params(static_cast<double>(pc.total)), TrainMethodName(o->method), prec_desc,
                      OptimizerName(o->optimizer),
                      quantized_states ? (o->optimizer == Optimizer::kAdamW8bit ? "8-bit blockwise"
                                                                                : "4-bit blockwise")
                                       : PrecisionName(o->optimizer_state_dtype));
  // A sequence and an attention kernel are a transformer's; a CNN or UNet counts samples.
  const std::string per_sample =
      m.is_transformer()
          ? fmt::format("seq {}, recompute {}, flash attention {}", o->seq_len,
                        RecomputeName(o->recompute), o->flash_attention ? "on" : "off")
          : fmt::format("{}{}", m.sample.empty() ? "samples" : m.sample,
                        m.frozen_norm ? ", frozen batch norms" : "");
  text += fmt::format(
      "  layout: {} GPU(s) = tp {} x pp {} x cp {} x dp {}, ZeRO stage {}{}; micro-batch {}, "
      "{}\n\n",
      par.gpus(), par.tp, par.pp, par.cp, par.dp, par.zero_stage,
      par.shard_group > 0 ? " (hybrid shard)" : "", o->micro_batch, per_sample);
  text += BreakdownText(t.memory, "  ");
  if (a.guide_b4) {
    double P = static_cast<double>(pc.total);
    text += fmt::format(
        "  the guide's B4 arithmetic leaves out: fp32 master weights ({:.1f} GB, 4 B/param; "
        "standard "
        "mixed precision is 16 B/param = {:.1f} GB of model states), the CUDA context, NCCL "
        "buffers "
        "and allocator slack (B5's 'x1.3')\n",
        P * 4 / 1e9, P * 16 / 1e9);
  }
  Table tb({"accelerator", "GPUs", "layout", "per GPU", "of memory", "cheapest setup/h", "where"});
  for (const auto& f : t.fits) {
    const auto [cheapest, where] = CheapestWhere(f.offers);
    tb.Row({f.acc->id, std::to_string(f.gpus),
            fmt::format("tp{} pp{} dp{} zero{}{}", f.tp, f.pp, f.dp, f.zero,
                        f.recompute != Recompute::kNone
                            ? fmt::format(" recompute {}", RecomputeName(f.recompute))
                            : ""),
            Gib(f.mem.Total().value()),
            fmt::format("{:.0f}%", 100.0 * f.mem.Total().value() / f.acc->memory.value()),
            Price(cheapest, cur), where});
  }
  text += fmt::format(
      "\n  Accelerators that hold it under {:.0f}% of memory (B5) with the fewest"
      " GPUs, cheapest setup first ({}):\n",
      a.headroom * 100, a.gpus > 0 ? fmt::format("{} GPUs pinned", a.gpus) : "GPU counts 1-1024");
  // Nothing listed because the job cannot run on the pinned accelerator: the reason follows.
  text += !t.fits.empty() ? tb.Render("  ")
          : !a.gpu.empty() && !t.no_kernels.empty()
              ? std::string("  none\n")
              : "  none: the job does not fit; try --recompute full, --zero "
                "3, more --gpus, or LoRA/QLoRA\n";
  text += NotListed(t.no_kernels);
  if (!t.fits.empty()) {
    const auto& f = t.fits.front();
    text += fmt::format("\n  Cheapest per cloud for {} x {}:\n", f.gpus, f.acc->id);
    Table ct({"cloud", "instance", "region", "nodes", "on-demand/h", "spot/h", "as of"});
    for (const auto& of : f.offers) {
      ct.Row({of.inst->cloud, of.inst->instance_type, of.inst->region, std::to_string(of.nodes),
              Price(of.on_demand, cur), Price(of.spot, cur), of.inst->as_of});
    }
    text += f.offers.empty() ? "  no instance in the catalog offers it\n" : ct.Render("  ");
  }
  return text;
}

std::string InferText(const MemoryAnalysis& an, const InferMemoryAnalysis& s,
                      const MemoryRequest& a) {
  const ModelSpec& m = an.model;
  const auto* o = &s.options;
  const Currency cur = an.currency;
  const auto& ref = s.reference;
  std::string text;
  if (KvBytesPerToken(m, BytesPerElement(o->kv_precision), a.tp).value() <= 0) {
    // No KV cache (CNNs, UNets, encoders): a request is one forward pass, and what a GPU must
    // hold is the weights; engines, sequences and token budgets do not apply.
    text += fmt::format(
        "Serving: {} ({} params), weights {}; no KV cache: each request is one forward pass{}\n\n",
        m.name, Params(static_cast<double>(an.params.total)), s.weights,
        m.sample.empty() ? std::string() : " (one " + m.sample + ")");
    text += BreakdownText(ref.breakdown, "  ");
    Table t({"accelerator", "GPUs", "weights/GPU", "cheapest/h", "where"});
    for (const auto& f : s.fits) {
      const auto [cheapest, where] = CheapestWhere(f.offers);
      t.Row({f.acc->id, std::to_string(f.gpus), Gib(f.mem.weights.value(), 2), Price(cheapest, cur),
             where});
    }
    text +=
        "\n  Accelerators that hold the weights, cheapest first (`gpuplan plan infer` sizes "
        "the replicas for a load):\n";
    text += s.fits.empty() ? "  none\n" : t.Render("  ");
    return text;
  }
  text += fmt::format("Serving: {} ({} params), weights {}, KV cache {}, engine {}\n", m.name,
                      Params(static_cast<double>(an.params.total)), s.weights,
                      PrecisionName(o->kv_precision), EngineName(o->engine));
  const double fraction = s.memory_fraction;
  std::string rule =
      o->engine == Engine::kVllm
          ? fmt::format("vLLM: gpu_memory_utilization {:.2f} of TOTAL memory{}", fraction,
                        o->cuda_graph_captures > 0
                            ? fmt::format(", minus the {} GiB it estimates for its {} CUDA graphs",
                                          fmt::format("{:.2f}", ref.cuda_graph_estimate.value() /
                                                                    kBytesPerGiB),
                                          o->cuda_graph_captures)
                            : "")
      : o->engine == Engine::kTrtLlm
          ? fmt::format("TRT-LLM: {:.2f} of FREE memory after weights", fraction)
      : o->engine == Engine::kSglang
          ? fmt::format("SGLang: mem_fraction_static {:.3f}{}", fraction,
                        o->memory_fraction ? "" : " (its default for the reference GPU)")
          : fmt::format("stay under {:.0f}% of memory (B5)", a.headroom * 100);
  if (m.arch == ModelArch::kEncoderDecoder) {
    const int cross = EncoderInputTokens(m, o->context);
    text += fmt::format(
        "  encoder-decoder: a sequence's KV = its decoder tokens + {} encoder positions of "
        "cross-attention K/V{}\n",
        m.is_audio_model() ? cross : o->context - o->context / 2,
        m.is_audio_model() ? " (one 30 s audio window)" : " (its input, as long as --context)");
  }
  if (m.sliding_layers > 0) {
    const double full = KvBytesPerToken(m, BytesPerElement(o->kv_precision), a.tp).value();
    text += fmt::format(
        "  sliding-window attention: {} of {} layers attend to the last {} tokens; {} holds "
        "{:.0f} KiB/token at {} tokens (docs/model.md 4.3)\n",
        m.sliding_layers, m.layers, m.sliding_window, EngineName(o->engine),
        full * SlidingKvEngineShare(m, *o) / 1024, o->context);
  }
  text += fmt::format(
      "  {} sequences x {} tokens; KV {:.0f} KiB/token at tp {}; memory rule: {}\n"
      "  reference: tp {} on {}: KV budget {} = {} tokens (max {} sequences of {} tokens)\n\n",
      o->concurrency, o->context,
      KvBytesPerToken(m, BytesPerElement(o->kv_precision), a.tp).value() / 1024, a.tp, rule, a.tp,
      s.reference_acc->id, Gib(ref.kv_budget.value()), ref.kv_tokens, ref.max_concurrency,
      o->context);
  text += BreakdownText(ref.breakdown, "  ");
  Table t({"accelerator", "GPUs", "TP", "weights/GPU", "KV tokens/GPU", "max seqs", "cheapest/h",
           "where"});
  for (const auto& f : s.fits) {
    const auto [cheapest, where] = CheapestWhere(f.offers);
    t.Row({f.acc->id, std::to_string(f.gpus), std::to_string(f.tp), Gib(f.mem.weights.value()),
           std::to_string(f.kv_tokens), std::to_string(f.max_concurrency), Price(cheapest, cur),
           where});
  }
  text +=
      fmt::format("\n  Accelerators that hold weights + {} x {} tokens of KV, cheapest first:\n",
                  o->concurrency, o->context);
  const std::string left_out = NotListed(s.no_kernels);
  if (s.fits.empty() && !a.gpu.empty() && !s.no_kernels.empty()) {
    text += "  none\n";  // the engine cannot serve these weights there: the reason follows
  } else if (s.fits.empty()) {
    // Suggest only the knobs the user has not already turned.
    std::vector<std::string> knobs;
    std::string q = a.quant;
    std::transform(q.begin(), q.end(), q.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (q.empty() || q == "none") {
      knobs.push_back("--quant awq/int8/fp8");
    } else if (q == "int8" || q == "fp8") {
      knobs.push_back("--quant awq or gptq (4-bit)");
    }
    if (a.kv_precision.empty()) knobs.push_back("--kv-precision fp8");
    knobs.push_back("a shorter --context");
    if (o->concurrency > 1) knobs.push_back("fewer --concurrency");
    text += fmt::format("  none: try {}\n", fmt::join(knobs, ", "));
  } else {
    text += t.Render("  ");
  }
  return text + left_out;
}

Result<Output> RunMemory(const GlobalOptions& g, const MemoryArgs& args) {
  const MemoryRequest& a = args.r;
  if (auto st = ValidateMemoryRequest(a); !st) return st.error();
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto cur = DisplayCurrency(g);
  if (!cur) return cur.error();
  auto model = ResolveModel(args.model, "--model");
  if (!model) return model.error();
  auto an = AnalyzeMemory(a, *model, *cat, *cur, g.cny_per_usd);
  if (!an) return an.error();
  Output out;
  std::string text = fmt::format("gpuplan memory: {} (prices as of {}, in {})\n\n", model->name,
                                 cat->PricesAsOf(), CurrencyCode(*cur));
  if (an->train) text += TrainText(*an, *an->train, a) + "\n";
  if (an->infer) text += InferText(*an, *an->infer, a);
  out.text = g.json ? DumpJson(MemoryDocument(*an)) + "\n" : text;
  out.exit_code = an->any_fit() ? kExitOk : kExitNothingFits;
  return out;
}

void AddMemoryOptions(CLI::App* c, MemoryArgs& args) {
  MemoryRequest& a = args.r;
  c->add_option("--model,-m", args.model, "Preset name/alias/HF id, config.json, or .safetensors")
      ->capture_default_str();
  c->add_flag("--train", a.train, "Training memory");
  c->add_flag("--infer", a.infer, "Serving memory");
  c->add_option("--method", a.method, "pretrain | full | lora | qlora")->capture_default_str();
  c->add_option("--precision", a.precision,
                "Training: bf16|fp16|fp8|fp32; serving weights: bf16|fp16|fp8|int8|int4");
  c->add_option("--optimizer", a.optimizer, fmt::format("{}", fmt::join(OptimizerNames(), " | ")))
      ->capture_default_str();
  c->add_option("--optimizer-states", a.optimizer_states, "fp32 | bf16")->capture_default_str();
  c->add_flag("--guide-b4", a.guide_b4,
              "The guides' B4 arithmetic: 16-bit weights+grads, fp32 Adam, no master copy");
  c->add_option("--batch", a.batch, "Micro-batch per GPU (training)")->capture_default_str();
  c->add_option("--seq-len", a.seq_len, "Sequence length (training; default 2048 / model max)");
  c->add_option("--grad-accum", a.grad_accum, "Micro-batches per step")->capture_default_str();
  c->add_option("--zero", a.zero, "ZeRO stage 0-3 (default: smallest that fits)");
  c->add_option("--fsdp", a.fsdp, "FSDP mode: full | hybrid | grad-op");
  c->add_option("--tp", a.tp, "Tensor-parallel size")->capture_default_str();
  c->add_option("--pp", a.pp, "Pipeline-parallel size")->capture_default_str();
  c->add_option("--cp", a.cp, "Context-parallel size")->capture_default_str();
  c->add_option("--ep", a.ep, "Expert-parallel size")->capture_default_str();
  c->add_flag("--sequence-parallel", a.sequence_parallel, "Megatron sequence parallelism");
  c->add_option("--recompute", a.recompute,
                "none | selective | full (default: none, or full where that needs fewer GPUs)");
  c->add_option("--lora-rank", a.lora_rank, "LoRA rank")->capture_default_str();
  c->add_option("--lora-targets", a.lora_targets, "qv | attention | all")->capture_default_str();
  c->add_option("--quant", a.quant, "Serving: awq|gptq|nf4|int8|int4|fp8; LoRA base: int8|int4");
  c->add_option("--kv-precision", a.kv_precision, "KV cache: bf16 | fp16 | fp8 | int8");
  c->add_option("--context", a.context,
                "Tokens per sequence (serving; a model with a shorter context takes its own)")
      ->capture_default_str();
  c->add_option("--concurrency", a.concurrency, "Sequences served at once")->capture_default_str();
  c->add_option("--engine", a.engine, "vllm | trt-llm | sglang | tgi | transformers")
      ->capture_default_str();
  c->add_option("--gpu-memory-utilization", a.gpu_memory_utilization,
                "Engine memory fraction (vLLM default 0.9)");
  c->add_option("--gpu", a.gpu, "Pin the accelerator (id or alias)");
  c->add_option("--gpus", a.gpus, "Pin the GPU count");
  c->add_option("--headroom", a.headroom, "Usable fraction of GPU memory (B5: 0.8)")
      ->capture_default_str();
}

}  // namespace

void RegisterMemoryCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto a = std::make_shared<MemoryArgs>();
  auto* c = app.add_subcommand("memory", "Per-GPU memory breakdown and who can hold the job");
  AddMemoryOptions(c, *a);
  c->callback([&g, &run, a, c] {
    a->r.tp_given = c->count("--tp") > 0;
    a->r.context_given = c->count("--context") > 0;
    if (c->count("--gpus") > 0 && a->r.gpus < 1) {
      MemoryArgs bad = *a;
      run = [bad] {
        return Result<Output>(MakeError(ErrorCode::kInvalidArgument, "--gpus",
                                        fmt::format("must be >= 1, got {}", bad.r.gpus),
                                        "give a positive GPU count"));
      };
      return;
    }
    if (auto wrong = MemoryFlagOfOtherMode(
            a->r, [c](std::string_view flag) { return c->count(std::string(flag)) > 0; })) {
      run = [wrong] { return Result<Output>(*wrong); };
      return;
    }
    run = [&g, a] { return RunMemory(g, *a); };
  });
}

Result<Output> RunDefaultScenario(const GlobalOptions& g) {
  // The guides' NLP scenario (B16): a 13B-class Llama, full fine-tuning in bf16 (the guide
  // rents 8 x H100), then serving it. Training: the planner over the whole catalog; serving:
  // the memory view until the serving planner lands (issue #5).
  auto t = RunPlanTrainDefault(g);
  if (!t) return t;
  auto s = RunPlanInferDefault(g);
  if (!s) return s;
  Output out;
  if (g.json) {
    auto jt = nlohmann::json::parse(t->text);
    auto js = nlohmann::json::parse(s->text);
    nlohmann::json j = {
        {"schema_version", kSchemaVersion},
        {"scenario",
         "B16: Llama-2-13B full fine-tune in bf16 (2B tokens x 2 epochs), then serving"},
        {"catalog_as_of", jt.value("catalog_as_of", "")},
        {"train", jt},
        {"infer", js}};
    out.text = DumpJson(j) + "\n";
  } else {
    out.text =
        "Default scenario (guide B16, NLP): Llama-2-13B, full fine-tuning in bf16 (job size "
        "assumed:\n"
        "2B tokens x 2 epochs), then serving it at ~2000 output tokens/s with P99 TPOT < 100 ms.\n"
        "`gpuplan plan train --help`, `gpuplan plan infer --help`, `gpuplan memory --help`.\n\n" +
        t->text + "\n" + s->text;
  }
  out.exit_code = std::max(t->exit_code, s->exit_code);
  return out;
}

}  // namespace gpuplan::cli
