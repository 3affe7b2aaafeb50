// gpuplan memory: per-GPU memory breakdown for training or serving, which accelerators hold
// the job with how many GPUs, and the cheapest instances that do, per cloud.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <tuple>
#include <map>
#include <memory>

#include "commands.h"
#include "gpuplan/input.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

struct MemoryArgs {
  std::string model = "Llama-2-13B";
  bool train = false;
  bool infer = false;
  // Training.
  std::string method = "full";
  std::string precision;  // default: bf16 (training) / the model's dtype (serving)
  std::string optimizer = "adamw";
  bool guide_b4 = false;       // the guides' B4 arithmetic: no fp32 master copy
  std::string optimizer_states = "fp32";
  int batch = 1;               // micro-batch per GPU
  int seq_len = 0;             // 0 = model default
  int zero = -1;               // -1 = search 0..3
  std::string fsdp;            // full | hybrid | grad-op
  int tp = 1, pp = 1, cp = 1, ep = 1;
  bool sequence_parallel = false;
  std::string recompute;  // empty: none, and full where nothing fits without it
  int lora_rank = 16;
  std::string lora_targets = "all";
  int grad_accum = 1;
  // Serving.
  std::string quant;           // awq, gptq, int8, fp8, nf4 (QLoRA base)
  std::string kv_precision;    // default: 16-bit
  int context = 4096;
  int concurrency = 16;
  std::string engine = "vllm";
  double gpu_memory_utilization = 0;  // 0 = engine default
  // Hardware.
  std::string gpu;
  int gpus = 0;                // 0 = smallest count that fits
  double headroom = 0.8;
  int top = 8;
};

constexpr int kGpuCounts[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

struct Fit {
  const Accelerator* acc = nullptr;
  int gpus = 0;
  int tp = 1, pp = 1, dp = 1, zero = 0;
  Recompute recompute = Recompute::kNone;
  MemoryBreakdown mem;
  double limit_bytes = 0;     // what the job may use on one GPU
  std::int64_t kv_tokens = 0;  // serving
  std::int64_t max_concurrency = 0;
};

struct Offer {
  const InstanceType* inst = nullptr;
  int nodes = 1;
  std::optional<double> on_demand, spot;  // whole setup per hour, display currency
};

Status CheckPositive(int v, const char* flag, int min = 1) {
  if (v < min) {
    return MakeError(ErrorCode::kInvalidArgument, flag,
                     fmt::format("must be >= {}, got {}", min, v));
  }
  return {};
}

Result<TrainMemoryOptions> BuildTrainOptions(const MemoryArgs& a, const ModelSpec& m) {
  TrainMemoryOptions o;
  auto method = ParseTrainMethod(a.method);
  if (!method) {
    return MakeError(ErrorCode::kInvalidArgument, "--method", "unknown method \"" + a.method + "\"",
                     "use pretrain, full, lora or qlora");
  }
  o.method = *method;
  std::string prec = a.precision.empty() ? "bf16" : a.precision;
  auto p = ParsePrecision(prec);
  if (!p || *p == Precision::kInt8 || *p == Precision::kInt4 || *p == Precision::kTf32) {
    return MakeError(ErrorCode::kInvalidArgument, "--precision",
                     "unknown training precision \"" + prec + "\"", "use bf16, fp16, fp8 or fp32");
  }
  o.precision = *p;
  auto opt = ParseOptimizer(a.optimizer);
  if (!opt) {
    return MakeError(ErrorCode::kInvalidArgument, "--optimizer",
                     "unknown optimizer \"" + a.optimizer + "\"",
                     "use adamw, adam, sgd, lion or adamw-8bit");
  }
  o.optimizer = *opt;
  auto sd = ParsePrecision(a.optimizer_states);
  if (!sd || (*sd != Precision::kFp32 && *sd != Precision::kBf16)) {
    return MakeError(ErrorCode::kInvalidArgument, "--optimizer-states",
                     "must be fp32 or bf16, got \"" + a.optimizer_states + "\"");
  }
  o.optimizer_state_dtype = *sd;
  o.master_weights = !a.guide_b4;
  auto rc = ParseRecompute(a.recompute.empty() ? "none" : a.recompute);
  if (!rc) {
    return MakeError(ErrorCode::kInvalidArgument, "--recompute",
                     "unknown recompute \"" + a.recompute + "\"", "use none, selective or full");
  }
  o.recompute = *rc;
  auto lt = ParseLoraTargets(a.lora_targets);
  if (!lt) {
    return MakeError(ErrorCode::kInvalidArgument, "--lora-targets",
                     "unknown targets \"" + a.lora_targets + "\"", "use qv, attention or all");
  }
  o.lora_targets = *lt;
  if (auto s = CheckPositive(a.batch, "--batch"); !s) return s.error();
  if (auto s = CheckPositive(a.lora_rank, "--lora-rank"); !s) return s.error();
  if (auto s = CheckPositive(a.grad_accum, "--grad-accum"); !s) return s.error();
  if (a.seq_len < 0) return CheckPositive(a.seq_len, "--seq-len").error();
  o.micro_batch = a.batch;
  o.lora_rank = a.lora_rank;
  o.num_microbatches = a.grad_accum;
  o.dropout = DefaultDropout(m);
  int def_seq = m.arch == ModelArch::kEncoder ? 512 : 2048;
  if (m.arch == ModelArch::kVit && m.patch_size > 0) {
    def_seq = (m.image_size / m.patch_size) * (m.image_size / m.patch_size) + 1;
  }
  if (m.max_positions > 0) def_seq = std::min(def_seq, m.max_positions);
  o.seq_len = a.seq_len > 0 ? a.seq_len : def_seq;
  if (o.method == TrainMethod::kQlora) o.base_bits = 4;
  if (o.method == TrainMethod::kLora && !a.quant.empty()) {
    auto q = ParsePrecision(a.quant);
    if (!q || (*q != Precision::kInt8 && *q != Precision::kInt4)) {
      return MakeError(ErrorCode::kInvalidArgument, "--quant",
                       "LoRA base must be int8 or int4 (nf4), got \"" + a.quant + "\"");
    }
    o.base_bits = *q == Precision::kInt8 ? 8 : 4;
  }
  if (a.guide_b4) o.include_runtime = false;
  return o;
}

Result<InferMemoryOptions> BuildInferOptions(const MemoryArgs& a, const ModelSpec& m) {
  InferMemoryOptions o;
  auto eng = ParseEngine(a.engine);
  if (!eng) {
    return MakeError(ErrorCode::kInvalidArgument, "--engine", "unknown engine \"" + a.engine + "\"",
                     "use vllm, trt-llm, sglang, tgi or transformers");
  }
  o.engine = *eng;
  o.weight_precision = m.dtype == Precision::kFp32 ? Precision::kBf16 : m.dtype;
  if (!a.precision.empty()) {
    auto p = ParsePrecision(a.precision);
    if (!p) {
      return MakeError(ErrorCode::kInvalidArgument, "--precision",
                       "unknown precision \"" + a.precision + "\"",
                       "use fp32, bf16, fp16, fp8, int8 or int4");
    }
    o.weight_precision = *p;
  }
  o.quant = m.quant;
  if (!a.quant.empty()) {
    std::string q = a.quant;
    if (q == "awq" || q == "gptq") {
      o.quant = QuantSpec{q, 4, 128, true, false};
    } else if (q == "nf4" || q == "bnb-nf4") {
      o.quant = QuantSpec{"bnb-nf4", 4, 64, false, true, 32};
    } else if (auto p = ParsePrecision(q)) {
      o.weight_precision = *p;
      o.quant.reset();
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "--quant", "unknown quantization \"" + q + "\"",
                       "use awq, gptq, nf4, int8, int4 or fp8");
    }
  }
  o.kv_precision = Precision::kBf16;
  if (!a.kv_precision.empty()) {
    auto p = ParsePrecision(a.kv_precision);
    if (!p || *p == Precision::kInt4 || *p == Precision::kTf32) {
      return MakeError(ErrorCode::kInvalidArgument, "--kv-precision",
                       "unknown KV precision \"" + a.kv_precision + "\"", "use bf16, fp16, fp8 or int8");
    }
    o.kv_precision = *p;
  }
  if (auto s = CheckPositive(a.context, "--context"); !s) return s.error();
  if (auto s = CheckPositive(a.concurrency, "--concurrency"); !s) return s.error();
  o.context = a.context;
  o.concurrency = a.concurrency;
  if (a.gpu_memory_utilization != 0) {
    if (a.gpu_memory_utilization <= 0 || a.gpu_memory_utilization > 1) {
      return MakeError(ErrorCode::kInvalidArgument, "--gpu-memory-utilization",
                       fmt::format("must be in (0, 1], got {}", a.gpu_memory_utilization));
    }
    o.memory_fraction = a.gpu_memory_utilization;
  }
  return o;
}

// The smallest GPU count (and ZeRO stage) at which `acc` holds the training job.
std::optional<Fit> FitTraining(const ModelSpec& m, const TrainMemoryOptions& o, const MemoryArgs& a,
                               const Accelerator& acc) {
  const double limit = acc.Usable().value() * a.headroom;
  for (int n : kGpuCounts) {
    if (a.gpus > 0 && n != a.gpus) continue;
    const int mp = a.tp * a.pp * a.cp;
    if (n % mp != 0) continue;
    Parallelism par;
    par.tp = a.tp;
    par.pp = a.pp;
    par.cp = a.cp;
    par.ep = a.ep;
    par.dp = n / mp;
    if (par.ep > 1 && par.dp % par.ep != 0) continue;  // ep ranks come from dp
    par.sequence_parallel = a.sequence_parallel;
    if (a.fsdp == "hybrid") par.shard_group = std::min(8, par.dp);
    std::vector<int> stages;
    if (a.zero >= 0) stages = {a.zero};
    else if (par.dp == 1) stages = {0};
    else stages = {0, 1, 2, 3};
    for (int z : stages) {
      par.zero_stage = z;
      TrainMemoryOptions oo = o;
      oo.num_microbatches = std::max(o.num_microbatches, a.pp);
      MemoryBreakdown mem = EstimateTrainingMemory(m, par, oo);
      if (mem.Total().value() <= limit) {
        Fit f;
        f.acc = &acc;
        f.gpus = n;
        f.tp = par.tp;
        f.pp = par.pp;
        f.dp = par.dp;
        f.zero = z;
        f.mem = std::move(mem);
        f.limit_bytes = limit;
        return f;
      }
    }
    if (a.gpus > 0) break;
  }
  return std::nullopt;
}

double EngineLimit(const InferMemoryOptions& o, const MemoryArgs& a, const Accelerator& acc) {
  if (o.engine == Engine::kTransformers) return acc.memory.value() * a.headroom;
  return acc.memory.value();  // the engine's own fraction applies inside the estimator
}

std::optional<Fit> FitServing(const ModelSpec& m, const InferMemoryOptions& o, const MemoryArgs& a,
                              const Accelerator& acc, bool pinned_tp) {
  const double limit = EngineLimit(o, a, acc);
  for (int tp : {1, 2, 4, 8}) {
    if (pinned_tp && tp != a.tp) continue;
    int n = tp * a.pp;
    if (a.gpus > 0 && n != a.gpus) continue;
    if (m.heads > 0 && m.heads % tp != 0) continue;
    InferMemoryOptions oo = o;
    oo.tp = tp;
    oo.pp = a.pp;
    InferMemory r = EstimateInferenceMemory(m, oo, Bytes(limit));
    if (r.fits) {
      Fit f;
      f.acc = &acc;
      f.gpus = n;
      f.tp = tp;
      f.pp = a.pp;
      f.mem = r.breakdown;
      f.limit_bytes = limit;
      f.kv_tokens = r.kv_tokens;
      f.max_concurrency = r.max_concurrency;
      return f;
    }
  }
  return std::nullopt;
}

// Cheapest way per cloud to rent `gpus` of `acc`. Training may span nodes; serving replicas
// stay inside one machine.
std::vector<Offer> CheapestOffers(const Catalog& cat, const Accelerator& acc, int gpus,
                                  bool allow_multi_node, Currency cur,
                                  std::optional<double> rate) {
  std::map<std::string, Offer> best;
  for (const auto& i : cat.instances) {
    if (i.accelerator != acc.id || i.accelerator_count <= 0) continue;
    int nodes = 1;
    if (i.accelerator_count < gpus) {
      // Spanning machines needs a collective fabric (EFA, InfiniBand, RoCE, ...): data-parallel
      // training over plain TCP between single-GPU boxes is not a plan (guides A13, B8).
      if (!allow_multi_node || gpus % i.accelerator_count != 0 ||
          i.inter_node_fabric == InterNodeFabric::kNone) {
        continue;
      }
      nodes = gpus / i.accelerator_count;
    }
    Offer o;
    o.inst = &i;
    o.nodes = nodes;
    if (i.price_on_demand) o.on_demand = cat.Convert(*i.price_on_demand, i.currency, cur, rate) * nodes;
    if (i.price_spot) o.spot = cat.Convert(*i.price_spot, i.currency, cur, rate) * nodes;
    double key = o.on_demand.value_or(o.spot.value_or(1e300));
    auto it = best.find(i.cloud);
    if (it == best.end()) {
      best[i.cloud] = o;
    } else {
      double old = it->second.on_demand.value_or(it->second.spot.value_or(1e300));
      if (key < old || (key == old && i.instance_type < it->second.inst->instance_type)) {
        it->second = o;
      }
    }
  }
  std::vector<Offer> out;
  for (auto& [c, o] : best) out.push_back(o);
  std::sort(out.begin(), out.end(), [](const Offer& x, const Offer& y) {
    double a = x.on_demand.value_or(x.spot.value_or(1e300));
    double b = y.on_demand.value_or(y.spot.value_or(1e300));
    if (a != b) return a < b;
    return x.inst->cloud < y.inst->cloud;
  });
  return out;
}

std::optional<double> CheapestTotal(const std::vector<Offer>& offers) {
  std::optional<double> best;
  for (const auto& o : offers) {
    if (o.on_demand && (!best || *o.on_demand < *best)) best = o.on_demand;
  }
  return best;
}

json BreakdownJson(const MemoryBreakdown& b) {
  return {{"weights_bytes", b.weights.value()},
          {"master_weights_bytes", b.master_weights.value()},
          {"gradients_bytes", b.gradients.value()},
          {"optimizer_bytes", b.optimizer.value()},
          {"adapter_bytes", b.adapter.value()},
          {"activations_bytes", b.activations.value()},
          {"logits_bytes", b.logits.value()},
          {"kv_cache_bytes", b.kv_cache.value()},
          {"cuda_context_bytes", b.cuda_context.value()},
          {"nccl_buffers_bytes", b.nccl_buffers.value()},
          {"allocator_slack_bytes", b.allocator_slack.value()},
          {"total_bytes", b.Total().value()},
          {"notes", b.notes}};
}

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

struct Section {
  std::string text;
  json j;
  bool any_fit = false;
};

Result<Section> TrainSection(const Catalog& cat, const ModelSpec& m, const MemoryArgs& a,
                             Currency cur, std::optional<double> rate,
                             const Accelerator* pinned) {
  auto o = BuildTrainOptions(a, m);
  if (!o) return o.error();
  Section s;
  // Reference layout: the pinned GPU count (or 1), the user's ZeRO stage (or 0).
  Parallelism par;
  par.tp = a.tp;
  par.pp = a.pp;
  par.cp = a.cp;
  par.ep = a.ep;
  par.sequence_parallel = a.sequence_parallel;
  int n = a.gpus > 0 ? a.gpus : a.tp * a.pp * a.cp;
  if (n % (a.tp * a.pp * a.cp) != 0) {
    return MakeError(ErrorCode::kInvalidArgument, "--gpus",
                     fmt::format("{} GPUs cannot be split into tp {} x pp {} x cp {}", n, a.tp,
                                 a.pp, a.cp),
                     "make --gpus a multiple of tp x pp x cp");
  }
  par.dp = n / (a.tp * a.pp * a.cp);
  if (a.ep > 1) {
    // Expert-parallel ranks come from the data-parallel group and split the experts.
    if (!m.moe) {
      return MakeError(ErrorCode::kInvalidArgument, "--ep",
                       fmt::format("ep {} on {}, a dense model (no experts)", a.ep, m.name), "leave out --ep");
    }
    if (m.moe->experts % a.ep != 0 || par.dp % a.ep != 0) {
      return MakeError(ErrorCode::kInvalidArgument, "--ep",
                       fmt::format("ep {} must divide the {} experts and dp {} (= GPUs {} / (tp {} x pp {} x cp {}))",
                                   a.ep, m.moe->experts, par.dp, n, a.tp, a.pp, a.cp),
                       "use an ep that divides both, or more --gpus");
    }
  }
  par.zero_stage = a.zero >= 0 ? a.zero : (par.dp > 1 ? 3 : 0);
  if (a.fsdp == "full") par.zero_stage = 3;
  if (a.fsdp == "grad-op") par.zero_stage = 2;
  if (a.fsdp == "hybrid") {
    par.zero_stage = 3;
    par.shard_group = std::min(8, par.dp);
  }
  TrainMemoryOptions ro = *o;
  ro.num_microbatches = std::max(o->num_microbatches, a.pp);
  MemoryBreakdown ref = EstimateTrainingMemory(m, par, ro);
  ParamCounts pc = CountParams(m);

  std::string prec_desc =
      a.guide_b4 ? fmt::format("pure {} (no fp32 master; guide B4 arithmetic)", PrecisionName(o->precision))
                 : (o->precision == Precision::kFp32
                        ? std::string("fp32")
                        : fmt::format("{} mixed precision (fp32 master)", PrecisionName(o->precision)));
  s.text += fmt::format("Training: {} ({} params), {}, {}, optimizer {} (states {})\n", m.name,
                        Params(static_cast<double>(pc.total)), TrainMethodName(o->method), prec_desc,
                        OptimizerName(o->optimizer), PrecisionName(o->optimizer_state_dtype));
  s.text += fmt::format(
      "  layout: {} GPU(s) = tp {} x pp {} x cp {} x dp {}, ZeRO stage {}{}; micro-batch {}, seq "
      "{}, recompute {}, flash attention on\n\n",
      par.gpus(), par.tp, par.pp, par.cp, par.dp, par.zero_stage,
      par.shard_group > 0 ? " (hybrid shard)" : "", o->micro_batch, o->seq_len,
      RecomputeName(o->recompute));
  s.text += BreakdownText(ref, "  ");
  if (a.guide_b4) {
    double P = static_cast<double>(pc.total);
    s.text += fmt::format(
        "  the guide's B4 arithmetic leaves out: fp32 master weights ({:.1f} GB, 4 B/param; standard "
        "mixed precision is 16 B/param = {:.1f} GB of model states), the CUDA context, NCCL buffers "
        "and allocator slack (B5's 'x1.3')\n",
        P * 4 / 1e9, P * 16 / 1e9);
  }
  s.j["model"] = {{"name", m.name}, {"params", pc.total}, {"active_params", pc.active}};
  s.j["options"] = {{"method", TrainMethodName(o->method)},
                    {"precision", PrecisionName(o->precision)},
                    {"master_weights", o->master_weights},
                    {"optimizer", OptimizerName(o->optimizer)},
                    {"micro_batch", o->micro_batch},
                    {"seq_len", o->seq_len},
                    {"recompute", RecomputeName(o->recompute)},
                    {"headroom", a.headroom}};
  s.j["reference_layout"] = {{"gpus", par.gpus()}, {"tp", par.tp}, {"pp", par.pp},
                             {"dp", par.dp}, {"zero_stage", par.zero_stage}};
  s.j["memory_per_gpu"] = BreakdownJson(ref);

  // Which accelerators hold it.
  std::vector<Fit> fits;
  for (const auto& acc : cat.accelerators) {
    if (pinned && &acc != pinned) continue;
    auto f = FitTraining(m, *o, a, acc);
    if (!f && a.recompute.empty() && o->recompute == Recompute::kNone) {
      // Recompute was not stated: where nothing fits without it, full recompute is what a
      // user would turn on first (activations shrink to one layer input per layer).
      TrainMemoryOptions rc = *o;
      rc.recompute = Recompute::kFull;
      f = FitTraining(m, rc, a, acc);
      if (f) f->recompute = Recompute::kFull;
    }
    if (f) fits.push_back(std::move(*f));
  }
  s.j["fits"] = json::array();
  Table t({"accelerator", "GPUs", "layout", "per GPU", "of memory", "cheapest setup/h", "where"});
  std::vector<std::tuple<double, int, std::string>> order;
  std::vector<std::pair<Fit, std::vector<Offer>>> rows;
  for (auto& f : fits) {
    auto offers = CheapestOffers(cat, *f.acc, f.gpus, true, cur, rate);
    rows.emplace_back(std::move(f), std::move(offers));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    auto px = CheapestTotal(x.second), py = CheapestTotal(y.second);
    double cx = px.value_or(1e300), cy = py.value_or(1e300);
    if (cx != cy) return cx < cy;
    return x.first.acc->id < y.first.acc->id;
  });
  for (const auto& [f, offers] : rows) {
    auto cheapest = CheapestTotal(offers);
    std::string where = "-";
    for (const auto& of : offers) {
      if (of.on_demand && cheapest && *of.on_demand == *cheapest) {
        where = fmt::format("{} {}{}", of.inst->cloud, of.inst->instance_type,
                            of.nodes > 1 ? fmt::format(" x{}", of.nodes) : "");
        break;
      }
    }
    t.Row({f.acc->id, std::to_string(f.gpus),
           fmt::format("tp{} pp{} dp{} zero{}{}", f.tp, f.pp, f.dp, f.zero,
                       f.recompute != Recompute::kNone ? fmt::format(" recompute {}", RecomputeName(f.recompute)) : ""),
           Gib(f.mem.Total().value()),
           fmt::format("{:.0f}%", 100.0 * f.mem.Total().value() / f.acc->memory.value()),
           Price(cheapest, cur), where});
    json fj = {{"accelerator", f.acc->id}, {"gpus", f.gpus}, {"tp", f.tp}, {"pp", f.pp},
               {"dp", f.dp}, {"zero_stage", f.zero}, {"recompute", RecomputeName(f.recompute)},
               {"memory_per_gpu_bytes", f.mem.Total().value()},
               {"memory_fraction", f.mem.Total().value() / f.acc->memory.value()},
               {"instances", json::array()}};
    for (const auto& of : offers) {
      fj["instances"].push_back({{"cloud", of.inst->cloud},
                                 {"instance_type", of.inst->instance_type},
                                 {"region", of.inst->region},
                                 {"nodes", of.nodes},
                                 {"price_on_demand_per_hour", PriceJson(of.on_demand)},
                                 {"price_spot_per_hour", PriceJson(of.spot)},
                                 {"as_of", of.inst->as_of}});
    }
    s.j["fits"].push_back(fj);
  }
  s.any_fit = !rows.empty();
  s.text += fmt::format("\n  Accelerators that hold it under {:.0f}% of memory (B5) with the fewest"
                        " GPUs, cheapest setup first ({}):\n",
                        a.headroom * 100, a.gpus > 0 ? fmt::format("{} GPUs pinned", a.gpus)
                                                      : "GPU counts 1-1024");
  s.text += rows.empty() ? "  none: the job does not fit; try --recompute full, --zero 3, more "
                           "--gpus, or LoRA/QLoRA\n"
                         : t.Render("  ");
  if (!rows.empty()) {
    const auto& [f, offers] = rows.front();
    s.text += fmt::format("\n  Cheapest per cloud for {} x {}:\n", f.gpus, f.acc->id);
    Table ct({"cloud", "instance", "region", "nodes", "on-demand/h", "spot/h", "as of"});
    for (const auto& of : offers) {
      ct.Row({of.inst->cloud, of.inst->instance_type, of.inst->region, std::to_string(of.nodes),
              Price(of.on_demand, cur), Price(of.spot, cur), of.inst->as_of});
    }
    s.text += offers.empty() ? "  no instance in the catalog offers it\n" : ct.Render("  ");
  }
  return s;
}

Result<Section> InferSection(const Catalog& cat, const ModelSpec& m, const MemoryArgs& a,
                             Currency cur, std::optional<double> rate, const Accelerator* pinned,
                             bool pinned_tp) {
  auto o = BuildInferOptions(a, m);
  if (!o) return o.error();
  Section s;
  InferMemoryOptions ro = *o;
  ro.tp = a.tp;
  ro.pp = a.pp;
  const Accelerator* ref_acc = pinned;
  if (!ref_acc) ref_acc = cat.FindAccelerator("H100-SXM5-80GB");
  if (!ref_acc && !cat.accelerators.empty()) ref_acc = &cat.accelerators.front();
  if (!ref_acc) return MakeError(ErrorCode::kInvalidArgument, "--catalog", "no accelerators");
  InferMemory ref = EstimateInferenceMemory(m, ro, Bytes(EngineLimit(*o, a, *ref_acc)));
  ParamCounts pc = CountParams(m);
  std::string wdesc = o->quant ? fmt::format("{} ({:.2f} bits/weight incl. scales)", o->quant->method,
                                             o->quant->EffectiveBits())
                               : PrecisionName(o->weight_precision);
  s.text += fmt::format("Serving: {} ({} params), weights {}, KV cache {}, engine {}\n", m.name,
                        Params(static_cast<double>(pc.total)), wdesc, PrecisionName(o->kv_precision),
                        EngineName(o->engine));
  double fraction = o->memory_fraction.value_or(o->engine == Engine::kSglang ? 0.88 : 0.9);
  std::string rule = o->engine == Engine::kVllm
                         ? fmt::format("vLLM: gpu_memory_utilization {:.2f} of TOTAL memory", fraction)
                     : o->engine == Engine::kTrtLlm
                         ? fmt::format("TRT-LLM: {:.2f} of FREE memory after weights", fraction)
                     : o->engine == Engine::kSglang
                         ? fmt::format("SGLang: mem_fraction_static {:.2f}", fraction)
                         : fmt::format("stay under {:.0f}% of memory (B5)", a.headroom * 100);
  s.text += fmt::format(
      "  {} sequences x {} tokens; KV {:.0f} KiB/token at tp {}; memory rule: {}\n"
      "  reference: tp {} on {}: KV budget {} = {} tokens (max {} sequences of {} tokens)\n\n",
      o->concurrency, o->context, KvBytesPerToken(m, BytesPerElement(o->kv_precision), a.tp).value() / 1024,
      a.tp, rule, a.tp, ref_acc->id, Gib(ref.kv_budget.value()), ref.kv_tokens, ref.max_concurrency,
      o->context);
  s.text += BreakdownText(ref.breakdown, "  ");
  s.j["model"] = {{"name", m.name}, {"params", pc.total}, {"active_params", pc.active}};
  s.j["options"] = {{"weights", wdesc},
                    {"kv_precision", PrecisionName(o->kv_precision)},
                    {"engine", EngineName(o->engine)},
                    {"concurrency", o->concurrency},
                    {"context", o->context},
                    {"memory_fraction", fraction}};
  s.j["reference"] = {{"accelerator", ref_acc->id},
                      {"tp", a.tp},
                      {"kv_budget_bytes", ref.kv_budget.value()},
                      {"kv_tokens", ref.kv_tokens},
                      {"max_concurrency", ref.max_concurrency},
                      {"memory_per_gpu", BreakdownJson(ref.breakdown)}};
  std::vector<std::pair<Fit, std::vector<Offer>>> rows;
  for (const auto& acc : cat.accelerators) {
    if (pinned && &acc != pinned) continue;
    if (auto f = FitServing(m, *o, a, acc, pinned_tp)) {
      auto offers = CheapestOffers(cat, acc, f->gpus, false, cur, rate);
      rows.emplace_back(std::move(*f), std::move(offers));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    double cx = CheapestTotal(x.second).value_or(1e300);
    double cy = CheapestTotal(y.second).value_or(1e300);
    if (cx != cy) return cx < cy;
    return x.first.acc->id < y.first.acc->id;
  });
  s.j["fits"] = json::array();
  Table t({"accelerator", "GPUs", "TP", "weights/GPU", "KV tokens/GPU", "max seqs", "cheapest/h",
           "where"});
  for (const auto& [f, offers] : rows) {
    auto cheapest = CheapestTotal(offers);
    std::string where = "-";
    for (const auto& of : offers) {
      if (of.on_demand && cheapest && *of.on_demand == *cheapest) {
        where = of.inst->cloud + " " + of.inst->instance_type;
        break;
      }
    }
    t.Row({f.acc->id, std::to_string(f.gpus), std::to_string(f.tp), Gib(f.mem.weights.value()),
           std::to_string(f.kv_tokens), std::to_string(f.max_concurrency), Price(cheapest, cur),
           where});
    json fj = {{"accelerator", f.acc->id}, {"gpus", f.gpus}, {"tp", f.tp}, {"pp", f.pp},
               {"weights_per_gpu_bytes", f.mem.weights.value()},
               {"kv_tokens_per_gpu", f.kv_tokens}, {"max_concurrency", f.max_concurrency},
               {"instances", json::array()}};
    for (const auto& of : offers) {
      fj["instances"].push_back({{"cloud", of.inst->cloud},
                                 {"instance_type", of.inst->instance_type},
                                 {"region", of.inst->region},
                                 {"price_on_demand_per_hour", PriceJson(of.on_demand)},
                                 {"price_spot_per_hour", PriceJson(of.spot)},
                                 {"as_of", of.inst->as_of}});
    }
    s.j["fits"].push_back(fj);
  }
  s.any_fit = !rows.empty();
  s.text += fmt::format("\n  Accelerators that hold weights + {} x {} tokens of KV, cheapest first:\n",
                        o->concurrency, o->context);
  if (rows.empty()) {
    // Suggest only the knobs the user has not already turned.
    std::vector<std::string> knobs;
    std::string q = a.quant;
    std::transform(q.begin(), q.end(), q.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (q.empty() || q == "none") {
      knobs.push_back("--quant awq/int8/fp8");
    } else if (q == "int8" || q == "fp8") {
      knobs.push_back("--quant awq or gptq (4-bit)");
    }
    if (a.kv_precision.empty()) knobs.push_back("--kv-precision fp8");
    knobs.push_back("a shorter --context");
    if (o->concurrency > 1) knobs.push_back("fewer --concurrency");
    s.text += fmt::format("  none: try {}\n", fmt::join(knobs, ", "));
  } else {
    s.text += t.Render("  ");
  }
  return s;
}

Result<Output> RunMemory(const GlobalOptions& g, MemoryArgs a, bool tp_given) {
  // Upper bounds (docs/reliability.md): products of these stay inside 64-bit counts.
  for (auto [v, flag, hi] : {std::tuple{a.tp, "--tp", kMaxParallel}, {a.pp, "--pp", kMaxParallel},
                             {a.cp, "--cp", kMaxParallel}, {a.ep, "--ep", kMaxParallel},
                             {a.gpus, "--gpus", kMaxParallel}, {a.batch, "--batch", kMaxBatch},
                             {a.grad_accum, "--grad-accum", kMaxBatch},
                             {a.seq_len, "--seq-len", kMaxSeqLen}, {a.context, "--context", kMaxSeqLen},
                             {a.concurrency, "--concurrency", kMaxBatch},
                             {a.lora_rank, "--lora-rank", kMaxLoraRank}}) {
    if (v > hi) {
      return MakeError(ErrorCode::kInvalidArgument, flag, fmt::format("must be at most {}, got {}", hi, v));
    }
  }
  if (static_cast<long long>(a.tp) * a.pp * a.cp > kMaxParallel ||
      static_cast<long long>(a.batch) * a.grad_accum > kMaxBatch) {
    return MakeError(ErrorCode::kInvalidArgument, "--tp",
                     fmt::format("tp x pp x cp must be at most {} and batch x grad-accum at most {}",
                                 kMaxParallel, kMaxBatch));
  }
  if (!std::isfinite(a.gpu_memory_utilization) || a.gpu_memory_utilization < 0 || a.gpu_memory_utilization > 1) {
    return MakeError(ErrorCode::kInvalidArgument, "--gpu-memory-utilization",
                     fmt::format("must be in (0, 1], got {}", a.gpu_memory_utilization));
  }
  if (!(a.headroom > 0 && a.headroom <= 1)) {
    return MakeError(ErrorCode::kInvalidArgument, "--headroom",
                     fmt::format("must be in (0, 1], got {}", a.headroom),
                     "0.8 keeps 20% free, the guides' B5 rule");
  }
  for (auto [v, flag] : {std::pair{a.tp, "--tp"}, {a.pp, "--pp"}, {a.cp, "--cp"}, {a.ep, "--ep"}}) {
    if (auto s = CheckPositive(v, flag); !s) return s.error();
  }
  if (a.gpus < 0 || (a.gpus == 0 && false)) return CheckPositive(a.gpus, "--gpus").error();
  if (a.zero < -1 || a.zero > 3) {
    return MakeError(ErrorCode::kInvalidArgument, "--zero", fmt::format("must be 0-3, got {}", a.zero));
  }
  if (!a.fsdp.empty() && a.fsdp != "full" && a.fsdp != "hybrid" && a.fsdp != "grad-op") {
    return MakeError(ErrorCode::kInvalidArgument, "--fsdp", "unknown FSDP mode \"" + a.fsdp + "\"",
                     "use full, hybrid or grad-op");
  }
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto cur = DisplayCurrency(g);
  if (!cur) return cur.error();
  auto model = ResolveModel(a.model, "--model");
  if (!model) return model.error();
  const Accelerator* pinned = nullptr;
  if (!a.gpu.empty()) {
    auto acc = cat->ResolveAccelerator(a.gpu, "--gpu");
    if (!acc) return acc.error();
    pinned = *acc;
  }
  if (!a.train && !a.infer) a.train = a.infer = true;
  Output out;
  json j = {{"schema_version", kSchemaVersion},
            {"catalog_as_of", cat->PricesAsOf()},
            {"currency", CurrencyCode(*cur)},
            {"cny_per_usd", g.cny_per_usd.value_or(cat->CnyPerUsd())}};
  std::string text = fmt::format("gpuplan memory: {} (prices as of {}, in {})\n\n", model->name,
                                 cat->PricesAsOf(), CurrencyCode(*cur));
  bool any = false;
  if (a.train) {
    auto s = TrainSection(*cat, *model, a, *cur, g.cny_per_usd, pinned);
    if (!s) return s.error();
    text += s->text + "\n";
    j["train"] = s->j;
    any = any || s->any_fit;
  }
  if (a.infer) {
    auto s = InferSection(*cat, *model, a, *cur, g.cny_per_usd, pinned, tp_given);
    if (!s) return s.error();
    text += s->text;
    j["infer"] = s->j;
    any = any || s->any_fit;
  }
  out.text = g.json ? DumpJson(j) + "\n" : text;
  out.exit_code = any ? kExitOk : kExitNothingFits;
  return out;
}

void AddMemoryOptions(CLI::App* c, MemoryArgs& a) {
  c->add_option("--model,-m", a.model, "Preset name/alias/HF id, config.json, or .safetensors")
      ->capture_default_str();
  c->add_flag("--train", a.train, "Training memory");
  c->add_flag("--infer", a.infer, "Serving memory");
  c->add_option("--method", a.method, "pretrain | full | lora | qlora")->capture_default_str();
  c->add_option("--precision", a.precision,
                "Training: bf16|fp16|fp8|fp32; serving weights: bf16|fp16|fp8|int8|int4");
  c->add_option("--optimizer", a.optimizer, "adamw | adam | sgd | lion | adamw-8bit")
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
  c->add_option("--recompute", a.recompute, "none | selective | full (default: none, and full for GPUs that hold the job only with it)");
  c->add_option("--lora-rank", a.lora_rank, "LoRA rank")->capture_default_str();
  c->add_option("--lora-targets", a.lora_targets, "qv | attention | all")->capture_default_str();
  c->add_option("--quant", a.quant, "Serving: awq|gptq|nf4|int8|int4|fp8; LoRA base: int8|int4");
  c->add_option("--kv-precision", a.kv_precision, "KV cache: bf16 | fp16 | fp8 | int8");
  c->add_option("--context", a.context, "Tokens per sequence (serving)")->capture_default_str();
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
    bool tp_given = c->count("--tp") > 0;
    if (c->count("--gpus") > 0 && a->gpus < 1) {
      MemoryArgs bad = *a;
      run = [bad] {
        return Result<Output>(MakeError(ErrorCode::kInvalidArgument, "--gpus",
                                        fmt::format("must be >= 1, got {}", bad.gpus),
                                        "give a positive GPU count"));
      };
      return;
    }
    run = [&g, a, tp_given] { return RunMemory(g, *a, tp_given); };
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
    nlohmann::json j = {{"schema_version", kSchemaVersion},
                        {"scenario", "B16: Llama-2-13B full fine-tune in bf16 (2B tokens x 2 epochs), then serving"},
                        {"catalog_as_of", jt.value("catalog_as_of", "")},
                        {"train", jt},
                        {"infer", js}};
    out.text = DumpJson(j) + "\n";
  } else {
    out.text = "Default scenario (guide B16, NLP): Llama-2-13B, full fine-tuning in bf16 (job size assumed:\n"
               "2B tokens x 2 epochs), then serving it at ~2000 output tokens/s with P99 TPOT < 100 ms.\n"
               "`gpuplan plan train --help`, `gpuplan plan infer --help`, `gpuplan memory --help`.\n\n" +
               t->text + "\n" + s->text;
  }
  out.exit_code = std::max(t->exit_code, s->exit_code);
  return out;
}

}  // namespace gpuplan::cli
