// The catalog's CSV tables (GPUs, CPUs, instances, currency): typed rows with errors that
// name "file:line:column", table-kind detection and the built-in catalog (data/ embedded).
#include "gpuplan/catalog.h"
#include "gpuplan/input.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/embedded.h"
#include "io/csv.h"

namespace gpuplan {

using internal::CsvTable;
using internal::ParseCsv;
using internal::RowReader;
using internal::ToLower;

namespace {

std::vector<std::string> ParseAliases(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  for (auto& a : internal::Split(s, ';')) {
    if (!a.empty()) out.push_back(a);
  }
  return out;
}

Status CheckDate(const RowReader& r, std::string_view column) {
  std::string d = r.Str(column);
  bool ok = d.size() == 10 && d[4] == '-' && d[7] == '-';
  for (size_t i = 0; ok && i < d.size(); ++i) {
    if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(d[i]))) ok = false;
  }
  if (ok) {
    int y = std::stoi(d.substr(0, 4)), mo = std::stoi(d.substr(5, 2)),
        day = std::stoi(d.substr(8, 2));
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    ok = mo >= 1 && mo <= 12 && day >= 1 && day <= kDays[mo - 1] + (mo == 2 && leap ? 1 : 0);
  }
  if (!ok) {
    return MakeError(ErrorCode::kParse, r.Where(column),
                     "expected a date YYYY-MM-DD, got \"" + d + "\"");
  }
  return {};
}

Status RequireColumns(const CsvTable& t, std::initializer_list<std::string_view> cols) {
  for (auto c : cols) {
    if (t.Column(c) < 0) {
      return MakeError(ErrorCode::kParse, t.label + ":1:" + std::string(c),
                       "missing column \"" + std::string(c) + "\"",
                       "see data/README.md for the table's columns");
    }
  }
  return {};
}

std::optional<FlopPerSec> Tflops(std::optional<double> v) {
  if (!v || *v <= 0) return std::nullopt;
  return TFLOPps(*v);
}

Status LoadGpus(Catalog& cat, const CsvTable& t) {
  if (auto s = RequireColumns(t, {"id", "aliases", "vendor", "memory_gib", "memory_bw_gbps",
                                  "fp32_tflops", "bf16_tflops", "source", "as_of"});
      !s) {
    return s;
  }
  std::set<std::string> seen;
  for (const auto& row : t.rows) {
    RowReader r(t, row);
    Accelerator a;
    GPUPLAN_ASSIGN_OR_RETURN(a.id, r.RequiredStr("id"));
    a.aliases = ParseAliases(r.Str("aliases"));
    a.vendor = r.Str("vendor");
    a.arch = r.Str("arch");
    double mem = 0, bw = 0;
    std::optional<double> v0;
    GPUPLAN_ASSIGN_OR_RETURN(mem, r.Number("memory_gib", 0.001));
    GPUPLAN_ASSIGN_OR_RETURN(bw, r.Number("memory_bw_gbps", 0.001));
    a.memory = GiB(mem);
    a.memory_bw = GBps(bw);
    // Capacity as the driver reports it (nvidia-smi memory.total), when known: what a process
    // can allocate against, and what the headroom rule applies to.
    GPUPLAN_ASSIGN_OR_RETURN(v0, r.OptNumber("driver_memory_mib"));
    if (v0 && *v0 > 0) {
      a.driver_memory = MiB(*v0);
      a.memory_source = r.Str("driver_memory_source");
    }
    std::optional<double> v;
    // Dense peaks per precision: column -> member.
    static constexpr std::pair<std::string_view, std::optional<FlopPerSec> Accelerator::*>
        kPeaks[] = {{"fp32_tflops", &Accelerator::fp32}, {"tf32_tflops", &Accelerator::tf32},
                    {"bf16_tflops", &Accelerator::bf16}, {"fp16_tflops", &Accelerator::fp16},
                    {"fp8_tflops", &Accelerator::fp8},   {"int8_tops", &Accelerator::int8},
                    {"int4_tops", &Accelerator::int4},   {"fp4_tflops", &Accelerator::fp4}};
    for (const auto& [column, member] : kPeaks) {
      GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber(column));
      a.*member = Tflops(v);
    }
    if (!a.fp32 && !a.bf16 && !a.fp16) {
      return MakeError(ErrorCode::kParse, r.Where("fp32_tflops"),
                       "an accelerator needs at least one of fp32/bf16/fp16 peaks");
    }
    a.intra_link = r.Str("intra_link");
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("intra_link_gbps"));
    a.intra_link_bw = GBps(v.value_or(0));
    std::optional<int> n;
    GPUPLAN_ASSIGN_OR_RETURN(n, r.OptInt("pcie_gen", 1, 7));
    a.pcie_gen = n.value_or(0);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("tdp_w"));
    a.tdp = Watts(v.value_or(0));
    a.form_factor = r.Str("form_factor");
    GPUPLAN_ASSIGN_OR_RETURN(n, r.OptInt("nvlink_domain", 1, 100000));
    a.nvlink_domain = n.value_or(0);
    GPUPLAN_ASSIGN_OR_RETURN(a.source, r.RequiredStr("source"));
    if (auto s = CheckDate(r, "as_of"); !s) return s;
    a.as_of = r.Str("as_of");
    a.notes = r.Str("notes");
    if (!seen.insert(ToLower(a.id)).second) {
      return MakeError(ErrorCode::kParse, r.Where("id"), "duplicate id \"" + a.id + "\"");
    }
    for (const auto& al : a.aliases) {
      if (!seen.insert(ToLower(al)).second) {
        return MakeError(ErrorCode::kParse, r.Where("aliases"),
                         "alias \"" + al + "\" is already used by another row");
      }
    }
    cat.accelerators.push_back(std::move(a));
  }
  return {};
}

Status LoadCpus(Catalog& cat, const CsvTable& t) {
  if (auto s = RequireColumns(
          t, {"id", "cores", "base_ghz", "fp32_flop_per_cycle", "mem_bw_gbps", "source", "as_of"});
      !s) {
    return s;
  }
  for (const auto& row : t.rows) {
    RowReader r(t, row);
    Cpu c;
    GPUPLAN_ASSIGN_OR_RETURN(c.id, r.RequiredStr("id"));
    c.aliases = ParseAliases(r.Str("aliases"));
    c.vendor = r.Str("vendor");
    c.arch = r.Str("arch");
    GPUPLAN_ASSIGN_OR_RETURN(c.cores, r.Int("cores", 1));
    // SMT is at most 8 threads per core (POWER); more is a typo, not a CPU.
    std::optional<int> threads;
    GPUPLAN_ASSIGN_OR_RETURN(
        threads, r.OptInt("threads", c.cores,
                          static_cast<int>(std::min<long long>(8LL * c.cores, INT_MAX))));
    c.threads = threads.value_or(c.cores);
    GPUPLAN_ASSIGN_OR_RETURN(c.base_ghz, r.Number("base_ghz", 0.1));
    GPUPLAN_ASSIGN_OR_RETURN(c.all_core_turbo_ghz, r.OptNumber("all_core_turbo_ghz"));
    GPUPLAN_ASSIGN_OR_RETURN(c.fp32_flop_per_cycle, r.Number("fp32_flop_per_cycle", 1));
    GPUPLAN_ASSIGN_OR_RETURN(c.bf16_flop_per_cycle, r.OptNumber("bf16_flop_per_cycle"));
    GPUPLAN_ASSIGN_OR_RETURN(c.int8_op_per_cycle, r.OptNumber("int8_op_per_cycle"));
    c.matrix_ext = r.Str("matrix_ext");
    double bw = 0;
    GPUPLAN_ASSIGN_OR_RETURN(bw, r.Number("mem_bw_gbps", 0.001));
    c.memory_bw = GBps(bw);
    GPUPLAN_ASSIGN_OR_RETURN(c.l3_mib, r.OptNumber("l3_mib"));
    GPUPLAN_ASSIGN_OR_RETURN(c.tdp_w, r.OptNumber("tdp_w"));
    GPUPLAN_ASSIGN_OR_RETURN(c.source, r.RequiredStr("source"));
    if (auto s = CheckDate(r, "as_of"); !s) return s;
    c.as_of = r.Str("as_of");
    c.notes = r.Str("notes");
    cat.cpus.push_back(std::move(c));
  }
  return {};
}

// Reads the optional `flags` column: `;`-separated names of KnownInstanceFlags().
Status ReadFlags(const RowReader& r, InstanceType& it) {
  for (const auto& part : internal::Split(r.Str("flags"), ';')) {
    std::string f = ToLower(internal::Trim(part));
    if (f.empty()) continue;
    bool known = false;
    std::vector<std::string> names;
    for (const auto& k : KnownInstanceFlags()) {
      names.emplace_back(k.name);
      known = known || f == k.name;
    }
    if (!known) {
      std::string best = ClosestMatch(f, names);
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return MakeError(ErrorCode::kParse, r.Where("flags"), "unknown flag \"" + f + "\"",
                       best.empty() ? "use one of " + all : "did you mean \"" + best + "\"?");
    }
    if (std::find(it.flags.begin(), it.flags.end(), f) == it.flags.end()) it.flags.push_back(f);
  }
  return {};
}

Status LoadInstances(Catalog& cat, const CsvTable& t) {
  if (auto s = RequireColumns(
          t, {"cloud", "instance_type", "region", "accelerator", "accelerator_count", "vcpus",
              "ram_gib", "local_nvme_gb", "network_gbps", "intra_node_link", "inter_node_fabric",
              "price_on_demand", "price_spot", "price_reserved_1y", "price_reserved_3y", "currency",
              "source", "as_of"});
      !s) {
    return s;
  }
  for (const auto& row : t.rows) {
    RowReader r(t, row);
    InstanceType it;
    GPUPLAN_ASSIGN_OR_RETURN(it.cloud, r.RequiredStr("cloud"));
    it.cloud = ToLower(it.cloud);
    GPUPLAN_ASSIGN_OR_RETURN(it.instance_type, r.RequiredStr("instance_type"));
    it.region = r.Str("region");
    std::string acc = r.Str("accelerator");
    GPUPLAN_ASSIGN_OR_RETURN(it.accelerator_count, r.Int("accelerator_count", 0));
    if (!acc.empty()) {
      const Accelerator* a = cat.FindAccelerator(acc);
      if (!a) {
        auto e = cat.ResolveAccelerator(acc, r.Where("accelerator"));
        return e.error();
      }
      it.accelerator = a->id;
      if (it.accelerator_count < 1) {
        return MakeError(
            ErrorCode::kParse, r.Where("accelerator_count"),
            "must be >= 1 when an accelerator is named, got " + r.Str("accelerator_count"));
      }
    } else if (it.accelerator_count != 0) {
      return MakeError(ErrorCode::kParse, r.Where("accelerator"),
                       "empty, but accelerator_count is " + r.Str("accelerator_count"),
                       "name the accelerator or set the count to 0");
    }
    std::string cpu = r.Str("cpu");
    if (!cpu.empty()) {
      const Cpu* c = cat.FindCpu(cpu);
      if (!c) return cat.ResolveCpu(cpu, r.Where("cpu")).error();
      it.cpu = c->id;
    }
    GPUPLAN_ASSIGN_OR_RETURN(it.vcpus, r.Int("vcpus", 1));
    double d = 0;
    GPUPLAN_ASSIGN_OR_RETURN(d, r.Number("ram_gib", 0.001));
    it.ram = GiB(d);
    std::optional<double> v;
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("local_nvme_gb"));
    it.local_nvme = GB(v.value_or(0));
    it.local_nvme_known = v.has_value();
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("network_gbps"));
    it.network = Gbps(v.value_or(0));
    auto link = ParseIntraNodeLink(r.Str("intra_node_link"));
    if (!link) {
      return MakeError(ErrorCode::kParse, r.Where("intra_node_link"),
                       "unknown link \"" + r.Str("intra_node_link") + "\"",
                       ChoiceHint(r.Str("intra_node_link"), IntraNodeLinkNames()));
    }
    it.intra_node_link = *link;
    auto fab = ParseInterNodeFabric(r.Str("inter_node_fabric"));
    if (!fab) {
      return MakeError(ErrorCode::kParse, r.Where("inter_node_fabric"),
                       "unknown fabric \"" + r.Str("inter_node_fabric") + "\"",
                       ChoiceHint(r.Str("inter_node_fabric"), InterNodeFabricNames()));
    }
    it.inter_node_fabric = *fab;
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("inter_node_gbps"));
    if (v) it.inter_node_bw = Gbps(*v);
    GPUPLAN_ASSIGN_OR_RETURN(it.price_on_demand, r.OptNumber("price_on_demand"));
    GPUPLAN_ASSIGN_OR_RETURN(it.price_spot, r.OptNumber("price_spot"));
    GPUPLAN_ASSIGN_OR_RETURN(it.price_reserved_1y, r.OptNumber("price_reserved_1y"));
    GPUPLAN_ASSIGN_OR_RETURN(it.price_reserved_3y, r.OptNumber("price_reserved_3y"));
    auto cur = ParseCurrency(r.Str("currency"));
    if (!cur) {
      return MakeError(ErrorCode::kParse, r.Where("currency"),
                       "unknown currency \"" + r.Str("currency") + "\"", "use USD or CNY");
    }
    it.currency = *cur;
    GPUPLAN_ASSIGN_OR_RETURN(it.source, r.RequiredStr("source"));
    if (auto s = CheckDate(r, "as_of"); !s) return s;
    it.as_of = r.Str("as_of");
    it.notes = r.Str("notes");
    if (auto st = ReadFlags(r, it); !st) return st;
    it.reserved_source = r.Str("reserved_source");
    it.suspect_reason = SuspectReason(it);
    cat.instances.push_back(std::move(it));
  }
  return {};
}

Status LoadCurrency(Catalog& cat, const CsvTable& t) {
  if (auto s = RequireColumns(t, {"from", "to", "rate", "source", "as_of"}); !s) return s;
  for (const auto& row : t.rows) {
    RowReader r(t, row);
    CurrencyRate cr;
    auto from = ParseCurrency(r.Str("from"));
    auto to = ParseCurrency(r.Str("to"));
    if (!from) return MakeError(ErrorCode::kParse, r.Where("from"), "unknown currency");
    if (!to) return MakeError(ErrorCode::kParse, r.Where("to"), "unknown currency");
    cr.from = *from;
    cr.to = *to;
    GPUPLAN_ASSIGN_OR_RETURN(cr.rate, r.Number("rate", 1e-9));
    GPUPLAN_ASSIGN_OR_RETURN(cr.source, r.RequiredStr("source"));
    if (auto s = CheckDate(r, "as_of"); !s) return s;
    cr.as_of = r.Str("as_of");
    cat.rates.push_back(std::move(cr));
  }
  return {};
}

}  // namespace

Status LoadTable(Catalog& catalog, TableKind kind, std::string_view label, std::string_view text,
                 std::string_view cloud) {
  if (kind == TableKind::kSkyPilotVms) return ImportSkyPilotVms(catalog, cloud, label, text);
  auto table = ParseCsv(text, label, /*allow_comments=*/true);
  if (!table) return table.error();
  switch (kind) {
    case TableKind::kGpus:
      return LoadGpus(catalog, *table);
    case TableKind::kCpus:
      return LoadCpus(catalog, *table);
    case TableKind::kInstances:
      return LoadInstances(catalog, *table);
    case TableKind::kCurrency:
      return LoadCurrency(catalog, *table);
    case TableKind::kSkyPilotVms:
      break;
  }
  return MakeError(ErrorCode::kInternal, std::string(label), "unknown table kind");
}

Result<TableKind> DetectTableKind(std::string_view label, std::string_view text) {
  // The header is the first line that is neither blank nor a # comment.
  std::string header;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find_first_of("\r\n", pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string line = internal::Trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    if (line.empty() || line[0] == '#') continue;
    header = line;
    break;
  }
  auto has = [&](std::string_view col) { return header.find(col) != std::string::npos; };
  if (has("InstanceType") && has("vCPUs")) return TableKind::kSkyPilotVms;
  if (has("instance_type") && has("accelerator_count")) return TableKind::kInstances;
  if (has("memory_bw_gbps") && has("bf16_tflops")) return TableKind::kGpus;
  if (has("fp32_flop_per_cycle")) return TableKind::kCpus;
  if (has("from") && has("rate")) return TableKind::kCurrency;
  return MakeError(ErrorCode::kParse, std::string(label) + ":1",
                   "cannot tell which catalog table this is from its header",
                   "use the columns of data/README.md, or a SkyPilot vms.csv");
}

Result<Catalog> LoadBuiltinCatalog() {
  Catalog cat;
  struct Step {
    TableKind kind;
    std::string_view prefix;
  };
  // Accelerators and CPUs first: instance rows refer to them.
  const Step steps[] = {{TableKind::kGpus, "gpus.csv"},
                        {TableKind::kCpus, "cpus.csv"},
                        {TableKind::kCurrency, "currency.csv"},
                        {TableKind::kInstances, "instances/"}};
  for (const auto& step : steps) {
    const auto* files = internal::EmbeddedFiles();
    for (size_t i = 0; i < internal::NumEmbeddedFiles(); ++i) {
      const auto& f = files[i];
      if (f.path.substr(0, step.prefix.size()) != step.prefix) continue;
      if (f.path.size() < 4 || f.path.substr(f.path.size() - 4) != ".csv") continue;
      if (auto s = LoadTable(cat, step.kind, f.path, f.text); !s) return s.error();
    }
  }
  return cat;
}

}  // namespace gpuplan
