// gpuplan gpus | instances | models: browse the catalog and the model library.
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "commands.h"
#include "gpuplan/input.h"
#include "gpuplan/model.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

std::string Tf(const std::optional<FlopPerSec>& f) {
  return f ? fmt::format("{:.0f}", f->value() / 1e12) : "-";
}
json TfJson(const std::optional<FlopPerSec>& f) {
  if (!f) return nullptr;
  return f->value() / 1e12;
}

// Cheapest on-demand hourly price per accelerator (per GPU), in `cur`.
std::map<std::string, std::pair<double, const InstanceType*>> CheapestPerGpu(
    const Catalog& cat, Currency cur, std::optional<double> rate) {
  std::map<std::string, std::pair<double, const InstanceType*>> best;
  for (const auto& i : cat.instances) {
    if (i.is_cpu_only() || !i.price_on_demand) continue;
    double p = cat.Convert(*i.price_on_demand, i.currency, cur, rate) / i.accelerator_count;
    auto it = best.find(i.accelerator);
    if (it == best.end() || p < it->second.first) best[i.accelerator] = {p, &i};
  }
  return best;
}

Result<Output> RunGpus(const GlobalOptions& g) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto cur = DisplayCurrency(g);
  if (!cur) return cur.error();
  auto cheapest = CheapestPerGpu(*cat, *cur, g.cny_per_usd);
  Output out;
  if (g.json) {
    json j = {{"schema_version", kSchemaVersion},
              {"catalog_as_of", cat->PricesAsOf()},
              {"currency", CurrencyCode(*cur)},
              {"accelerators", json::array()}};
    for (const auto& a : cat->accelerators) {
      json row = {{"id", a.id},
                  {"vendor", a.vendor},
                  {"memory_gib", a.memory.value() / 1073741824.0},
                  {"driver_memory_gib", a.Usable().value() / 1073741824.0},
                  {"memory_bw_gbps", a.memory_bw.value() / 1e9},
                  {"fp32_tflops", TfJson(a.fp32)},
                  {"tf32_tflops", TfJson(a.tf32)},
                  {"bf16_tflops", TfJson(a.bf16)},
                  {"fp16_tflops", TfJson(a.fp16)},
                  {"fp8_tflops", TfJson(a.fp8)},
                  {"int8_tops", TfJson(a.int8)},
                  {"intra_link", a.intra_link},
                  {"intra_link_gbps", a.intra_link_bw.value() / 1e9},
                  {"tdp_w", a.tdp.value()},
                  {"source", a.source}};
      auto it = cheapest.find(a.id);
      row["cheapest_price_per_gpu_hour"] =
          it == cheapest.end() ? json(nullptr) : PriceJson(it->second.first);
      row["cheapest_instance"] =
          it == cheapest.end()
              ? json(nullptr)
              : json(it->second.second->cloud + ":" + it->second.second->instance_type);
      j["accelerators"].push_back(row);
    }
    out.text = DumpJson(j) + "\n";
    return out;
  }
  Table t({"accelerator", "memory", "HBM GB/s", "fp32", "bf16", "fp8", "int8", "link", "link GB/s",
           "TDP W", "cheapest/GPU-h", "where"});
  for (const auto& a : cat->accelerators) {
    auto it = cheapest.find(a.id);
    t.Row(
        {a.id, fmt::format("{:.0f} GiB", a.memory.value() / 1073741824.0),
         fmt::format("{:.0f}", a.memory_bw.value() / 1e9), Tf(a.fp32), Tf(a.bf16 ? a.bf16 : a.fp16),
         Tf(a.fp8), Tf(a.int8), a.intra_link.empty() ? "-" : a.intra_link,
         fmt::format("{:.0f}", a.intra_link_bw.value() / 1e9),
         a.tdp.value() > 0 ? fmt::format("{:.0f}", a.tdp.value()) : "-",
         it == cheapest.end() ? "-" : Price(it->second.first, *cur),
         it == cheapest.end() ? "no priced instance"
                              : it->second.second->cloud + " " + it->second.second->instance_type});
  }
  out.text = fmt::format(
      "Accelerators ({}): dense peak TFLOP/s (no sparsity); memory in GiB; prices as of {}\n\n",
      cat->accelerators.size(), cat->PricesAsOf());
  out.text += t.Render();
  return out;
}

// "Coverage per cloud" block: shapes, priced, suspect, reserved and skipped-with-reason.
std::string CoverageText(const std::vector<CloudCoverage>& coverage) {
  if (coverage.empty()) return "";
  Table t({"cloud", "shapes", "GPU shapes", "priced", "suspect", "reserved 1y/3y", "skipped"});
  for (const auto& c : coverage) {
    std::string skipped;
    for (const auto& [reason, n] : c.skipped) {
      skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", n, reason);
    }
    t.Row({c.cloud, std::to_string(c.shapes), std::to_string(c.gpu_shapes),
           std::to_string(c.priced), std::to_string(c.suspect), std::to_string(c.reserved),
           skipped.empty() ? "0" : skipped});
  }
  return "\nCatalog coverage per cloud (shapes = instance types; a shape in several regions counts"
         " once; priced = an on-demand price in a row not flagged suspect):\n\n" +
         t.Render();
}

struct InstanceFilter {
  std::string gpu;
  std::string cloud;
  std::string region;
  double min_gpu_memory_gib = 0;
  int min_gpus = 0;
  bool cpu_only = false;
  int limit = 0;
};

Result<Output> RunInstances(const GlobalOptions& g, const InstanceFilter& f) {
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  auto cur = DisplayCurrency(g);
  if (!cur) return cur.error();
  const Accelerator* want = nullptr;
  if (!f.gpu.empty()) {
    auto a = cat->ResolveAccelerator(f.gpu, "--gpu");
    if (!a) return a.error();
    want = *a;
  }
  if (!(f.min_gpu_memory_gib >= 0 && f.min_gpu_memory_gib <= 1e6)) {
    return MakeError(ErrorCode::kInvalidArgument, "--min-gpu-memory",
                     "must be in [0, 1e6] GiB, got " + fmt::format("{}", f.min_gpu_memory_gib));
  }
  if (f.min_gpus < 0) {
    return MakeError(ErrorCode::kInvalidArgument, "--min-gpus",
                     fmt::format("must be >= 0, got {}", f.min_gpus), "0 = no bound");
  }
  if (f.limit < 0) {
    return MakeError(ErrorCode::kInvalidArgument, "--limit",
                     fmt::format("must be >= 0, got {}", f.limit), "0 = every row");
  }
  if (f.cpu_only && (want != nullptr || f.min_gpus > 0 || f.min_gpu_memory_gib > 0)) {
    return MakeError(ErrorCode::kInvalidArgument, "--cpu-only",
                     "lists CPU instances, but a GPU filter (--gpu, --min-gpus or "
                     "--min-gpu-memory) was given",
                     "drop --cpu-only, or drop the GPU filter");
  }
  // A cloud or region no catalog row has is a typo or a place the catalog does not price: say
  // which, with the nearest known name, rather than list nothing.
  if (!f.cloud.empty()) {
    if (auto st = cat->CheckCloud(f.cloud, "--cloud"); !st) return st.error();
  }
  std::string region;  // the catalog's spelling
  if (!f.region.empty()) {
    std::vector<std::string> clouds;
    if (!f.cloud.empty()) clouds.push_back(f.cloud);
    auto r = cat->ResolveRegion(f.region, "--region", clouds);
    if (!r) return r.error();
    region = std::move(*r);
  }
  std::vector<std::pair<double, const InstanceType*>> rows;
  for (const auto& i : cat->instances) {
    if (want && i.accelerator != want->id) continue;
    if (!f.cloud.empty() && i.cloud != f.cloud) continue;
    if (!region.empty() && i.region != region) continue;
    if (f.cpu_only && !i.is_cpu_only()) continue;
    if (f.min_gpus > 0 && i.accelerator_count < f.min_gpus) continue;
    if (f.min_gpu_memory_gib > 0) {
      const Accelerator* a = cat->FindAccelerator(i.accelerator);
      if (!a || a->memory.value() / 1073741824.0 + 1e-9 < f.min_gpu_memory_gib) continue;
    }
    double p = i.price_on_demand ? cat->Convert(*i.price_on_demand, i.currency, *cur, g.cny_per_usd)
                                 : 1e300;
    rows.emplace_back(p, &i);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.second->cloud != b.second->cloud) return a.second->cloud < b.second->cloud;
    if (a.second->instance_type != b.second->instance_type) {
      return a.second->instance_type < b.second->instance_type;
    }
    return a.second->region < b.second->region;
  });
  if (f.limit > 0 && rows.size() > static_cast<size_t>(f.limit))
    rows.resize(static_cast<size_t>(f.limit));
  std::vector<CloudCoverage> coverage;
  for (auto& c : CatalogCoverage(*cat)) {
    if (f.cloud.empty() || c.cloud == f.cloud) coverage.push_back(std::move(c));
  }
  Output out;
  auto conv = [&](const InstanceType& i, std::optional<double> v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return cat->Convert(*v, i.currency, *cur, g.cny_per_usd);
  };
  if (g.json) {
    json j = {{"schema_version", kSchemaVersion},
              {"catalog_as_of", cat->PricesAsOf()},
              {"currency", CurrencyCode(*cur)},
              {"cny_per_usd", g.cny_per_usd.value_or(cat->CnyPerUsd())},
              {"instances", json::array()}};
    for (const auto& [p, i] : rows) {
      j["instances"].push_back(
          {{"cloud", i->cloud},
           {"instance_type", i->instance_type},
           {"region", i->region},
           {"accelerator", i->accelerator.empty() ? json(nullptr) : json(i->accelerator)},
           {"accelerator_count", i->accelerator_count},
           {"cpu", i->cpu},
           {"vcpus", i->vcpus},
           {"ram_gib", i->ram.value() / 1073741824.0},
           {"local_nvme_gb",
            i->local_nvme_known ? json(i->local_nvme.value() / 1e9) : json(nullptr)},
           {"network_gbps", i->network.value() / 1e9},
           {"intra_node_link", IntraNodeLinkName(i->intra_node_link)},
           {"inter_node_fabric", InterNodeFabricName(i->inter_node_fabric)},
           {"price_on_demand_per_hour", PriceJson(conv(*i, i->price_on_demand))},
           {"price_spot_per_hour", PriceJson(conv(*i, i->price_spot))},
           {"price_reserved_1y_per_hour", PriceJson(conv(*i, i->price_reserved_1y))},
           {"price_reserved_3y_per_hour", PriceJson(conv(*i, i->price_reserved_3y))},
           {"source_currency", CurrencyCode(i->currency)},
           {"as_of", i->as_of},
           {"source", i->source},
           {"flags", i->flags},
           {"suspect_reason", i->suspect_reason.empty() ? json(nullptr) : json(i->suspect_reason)},
           {"reserved_source",
            i->reserved_source.empty() ? json(nullptr) : json(i->reserved_source)}});
    }
    j["coverage"] = json::array();
    for (const auto& c : coverage) {
      json skipped = json::object();
      for (const auto& [reason, n] : c.skipped) skipped[reason] = n;
      j["coverage"].push_back({{"cloud", c.cloud},
                               {"shapes", c.shapes},
                               {"gpu_shapes", c.gpu_shapes},
                               {"priced_shapes", c.priced},
                               {"suspect_shapes", c.suspect},
                               {"reserved_shapes", c.reserved},
                               {"skipped_shapes", skipped}});
    }
    out.text = DumpJson(j) + "\n";
    return out;
  }
  Table t({"cloud", "instance", "region", "accelerators", "vCPU", "RAM GiB", "NVMe GB", "net Gb/s",
           "intra", "fabric", "on-demand/h", "spot/h", "1y/h", "3y/h", "as of", "flags"});
  for (const auto& [p, i] : rows) {
    t.Row({i->cloud, i->instance_type, i->region.empty() ? "-" : i->region,
           i->is_cpu_only() ? (i->cpu.empty() ? "CPU" : "CPU " + i->cpu)
                            : fmt::format("{}x {}", i->accelerator_count, i->accelerator),
           std::to_string(i->vcpus), fmt::format("{:.0f}", i->ram.value() / 1073741824.0),
           i->local_nvme_known ? fmt::format("{:.0f}", i->local_nvme.value() / 1e9) : "?",
           fmt::format("{:g}", i->network.value() / 1e9), IntraNodeLinkName(i->intra_node_link),
           InterNodeFabricName(i->inter_node_fabric), Price(conv(*i, i->price_on_demand), *cur),
           Price(conv(*i, i->price_spot), *cur), Price(conv(*i, i->price_reserved_1y), *cur),
           Price(conv(*i, i->price_reserved_3y), *cur), i->as_of.empty() ? "-" : i->as_of,
           i->flags.empty() ? (i->suspect_reason.empty() ? "-" : "suspect")
                            : fmt::format("{}", fmt::join(i->flags, ";"))});
  }
  out.text = fmt::format(
      "{} instances, sorted by on-demand price in {} (catalog prices as of {};"
      " CNY rows converted at {:.4g} CNY/USD); '-' = no public price\n\n",
      rows.size(), CurrencyCode(*cur), cat->PricesAsOf(), g.cny_per_usd.value_or(cat->CnyPerUsd()));
  out.text += t.Render();
  out.text +=
      "\nNVMe '?' = local disk not recorded for the shape; flags = a source anomaly found"
      " by review (data/README.md): such rows are suspect and not ranked by default\n";
  out.text += CoverageText(coverage);
  if (rows.empty()) out.exit_code = kExitNothingFits;
  return out;
}

Result<Output> RunModels(const GlobalOptions& g) {
  const auto& presets = Presets();
  Output out;
  if (g.json) {
    json j = {{"schema_version", kSchemaVersion}, {"models", json::array()}};
    for (const auto& m : presets) {
      ParamCounts pc = CountParams(m);
      j["models"].push_back({{"name", m.name},
                             {"hf_id", m.hf_id},
                             {"arch", ModelArchName(m.arch)},
                             {"params", pc.total},
                             {"active_params", pc.active},
                             {"layers", m.layers},
                             {"hidden", m.hidden},
                             {"kv_bytes_per_token_bf16", KvBytesPerToken(m, 2.0, 1).value()},
                             {"sliding_window", m.sliding_window},
                             {"sliding_layers", m.sliding_layers},
                             {"aliases", m.aliases}});
    }
    out.text = DumpJson(j) + "\n";
    return out;
  }
  Table t({"model", "arch", "params", "active", "layers", "hidden", "heads/kv", "KV/token bf16",
           "aliases"});
  for (const auto& m : presets) {
    ParamCounts pc = CountParams(m);
    double kv = KvBytesPerToken(m, 2.0, 1).value();
    t.Row({m.name, ModelArchName(m.arch), Params(static_cast<double>(pc.total)),
           pc.active != pc.total ? Params(static_cast<double>(pc.active)) : "-",
           m.layers ? std::to_string(m.layers) : "-", m.hidden ? std::to_string(m.hidden) : "-",
           m.heads ? fmt::format("{}/{}", m.heads, m.kv_heads) : "-",
           kv > 0 ? fmt::format("{:.0f} KiB{}", kv / 1024, m.sliding_layers > 0 ? "*" : "") : "-",
           fmt::format(
               "{}", fmt::join(m.aliases.begin(),
                               m.aliases.begin() + std::min<size_t>(3, m.aliases.size()), ", "))});
  }
  out.text = fmt::format("{} model presets (`--model` also takes config.json or .safetensors)\n\n",
                         presets.size()) +
             t.Render() +
             "\n* sliding-window attention: KV/token counts every layer over the whole context; "
             "the sliding layers hold at most their window (`gpuplan memory --infer` shows what "
             "an engine holds; docs/model.md 4.3)\n";
  return out;
}

}  // namespace

void RegisterCatalogCommands(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto* gpus = app.add_subcommand("gpus", "List accelerators with key figures and cheapest price");
  gpus->callback([&g, &run] { run = [&g] { return RunGpus(g); }; });

  auto f = std::make_shared<InstanceFilter>();
  auto* inst = app.add_subcommand("instances", "List cloud instances, sorted by price");
  inst->add_option("--gpu", f->gpu, "Accelerator id or alias (e.g. H100, A100-80GB)");
  inst->add_option("--cloud", f->cloud, "Cloud (aws, gcp, azure, alibaba, tencent, lambda, ...)");
  inst->add_option("--region", f->region, "Region");
  inst->add_option("--min-gpu-memory", f->min_gpu_memory_gib, "Minimum memory per GPU, GiB");
  inst->add_option("--min-gpus", f->min_gpus, "Minimum accelerators per instance");
  inst->add_flag("--cpu-only", f->cpu_only, "Only CPU instances (for CPU inference)");
  inst->add_option("--limit", f->limit, "Show at most N rows");
  inst->callback([&g, &run, f] { run = [&g, f] { return RunInstances(g, *f); }; });

  auto* models = app.add_subcommand("models", "List the built-in model presets");
  models->callback([&g, &run] { run = [&g] { return RunModels(g); }; });
}

}  // namespace gpuplan::cli
