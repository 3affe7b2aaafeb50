#include "gpuplan/catalog.h"
#include "gpuplan/input.h"

#include <algorithm>
#include <cctype>
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

std::optional<FlopPerSec> Accelerator::PeakFor(Precision p) const {
  // Lower precisions fall back to the next wider tensor path the device has.
  switch (p) {
    case Precision::kInt4:
      if (int4) return int4;
      [[fallthrough]];
    case Precision::kInt8:
      if (int8) return int8;
      [[fallthrough]];
    case Precision::kFp8:
      if (fp8) return fp8;
      [[fallthrough]];
    case Precision::kBf16:
      if (bf16) return bf16;
      // No bf16 path (Volta, Turing: compute capability < 8.0): bf16 math is not offered.
      if (p == Precision::kBf16) return std::nullopt;
      [[fallthrough]];
    case Precision::kFp16:
      if (fp16) return fp16;
      if (bf16) return bf16;
      [[fallthrough]];
    case Precision::kTf32:
      if (tf32) return tf32;
      [[fallthrough]];
    case Precision::kFp32:
      return fp32;
  }
  return fp32;
}

const char* IntraNodeLinkName(IntraNodeLink l) {
  switch (l) {
    case IntraNodeLink::kNone: return "none";
    case IntraNodeLink::kPcie: return "pcie";
    case IntraNodeLink::kNvlink: return "nvlink";
    case IntraNodeLink::kNvswitch: return "nvswitch";
    case IntraNodeLink::kInfinityFabric: return "infinity-fabric";
    case IntraNodeLink::kNeuronLink: return "neuronlink";
    case IntraNodeLink::kIci: return "ici";
  }
  return "?";
}

const char* InterNodeFabricName(InterNodeFabric f) {
  switch (f) {
    case InterNodeFabric::kNone: return "none";
    case InterNodeFabric::kEfa: return "efa";
    case InterNodeFabric::kInfiniband: return "infiniband";
    case InterNodeFabric::kRoce: return "roce";
    case InterNodeFabric::kErdma: return "erdma";
    case InterNodeFabric::kGpuDirectTcpx: return "gpudirect-tcpx";
  }
  return "?";
}

std::optional<IntraNodeLink> ParseIntraNodeLink(std::string_view s) {
  std::string t = ToLower(s);
  for (auto l : {IntraNodeLink::kNone, IntraNodeLink::kPcie, IntraNodeLink::kNvlink,
                 IntraNodeLink::kNvswitch, IntraNodeLink::kInfinityFabric,
                 IntraNodeLink::kNeuronLink, IntraNodeLink::kIci}) {
    if (t == IntraNodeLinkName(l)) return l;
  }
  if (t.empty()) return IntraNodeLink::kNone;
  return std::nullopt;
}

std::optional<InterNodeFabric> ParseInterNodeFabric(std::string_view s) {
  std::string t = ToLower(s);
  for (auto f : {InterNodeFabric::kNone, InterNodeFabric::kEfa, InterNodeFabric::kInfiniband,
                 InterNodeFabric::kRoce, InterNodeFabric::kErdma,
                 InterNodeFabric::kGpuDirectTcpx}) {
    if (t == InterNodeFabricName(f)) return f;
  }
  if (t.empty()) return InterNodeFabric::kNone;
  if (t == "ib") return InterNodeFabric::kInfiniband;
  return std::nullopt;
}

const std::vector<InstanceFlag>& KnownInstanceFlags() {
  static const std::vector<InstanceFlag> flags = {
      {"suspect-sku", "the source's SKU-to-price mapping is doubtful (the row's notes say why)"},
      {"suspect-price",
       "price far from the same shape in the same cloud's other regions (source anomaly)"},
      {"spot-above-on-demand", "spot price above on-demand (source anomaly)"},
  };
  return flags;
}

std::string SuspectReason(const InstanceType& it) {
  for (const auto& f : it.flags) {
    for (const auto& k : KnownInstanceFlags()) {
      if (f == k.name) return k.meaning;
    }
  }
  if (it.price_spot && it.price_on_demand && *it.price_spot > *it.price_on_demand) {
    return "spot price above on-demand (source anomaly)";
  }
  return "";
}

int CloudCoverage::Skipped() const {
  int n = 0;
  for (const auto& [reason, count] : skipped) n += count;
  return n;
}

std::vector<CloudCoverage> CatalogCoverage(const Catalog& catalog) {
  struct Shape {
    bool gpu = false, priced = false, any_price = false, suspect = false, reserved = false;
  };
  std::map<std::string, std::map<std::string, Shape>> clouds;
  for (const auto& i : catalog.instances) {
    Shape& s = clouds[i.cloud][i.instance_type];
    s.gpu = s.gpu || !i.is_cpu_only();
    bool suspect = !i.suspect_reason.empty();
    s.suspect = s.suspect || suspect;
    s.any_price = s.any_price || i.price_on_demand.has_value();
    s.priced = s.priced || (i.price_on_demand.has_value() && !suspect);
    s.reserved = s.reserved || i.price_reserved_1y.has_value() || i.price_reserved_3y.has_value();
  }
  std::vector<CloudCoverage> out;
  for (const auto& [cloud, shapes] : clouds) {
    CloudCoverage c;
    c.cloud = cloud;
    std::map<std::string, int> skipped;
    for (const auto& [name, s] : shapes) {
      ++c.shapes;
      if (s.gpu) ++c.gpu_shapes;
      if (s.priced) ++c.priced;
      if (s.suspect) ++c.suspect;
      if (s.reserved) ++c.reserved;
      if (!s.any_price) {
        ++skipped["no public price"];
      } else if (!s.priced) {
        ++skipped["only suspect rows"];
      }
    }
    for (const auto& skip : catalog.import_skips) {
      if (skip.cloud == cloud && skip.rows > 0) skipped[skip.reason] += skip.rows;
    }
    c.skipped.assign(skipped.begin(), skipped.end());
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

// ASCII case-insensitive equality without allocating (the program runs in the "C" locale, where
// std::tolower is ASCII lowering): accelerator lookups run per catalog row in the planners and
// per HTTP request, and lowercased copies of every id and alias were a fifth of a plan's time.
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z') x = static_cast<unsigned char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<unsigned char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool NameMatches(std::string_view name, const std::string& id,
                 const std::vector<std::string>& aliases) {
  if (EqualsIgnoreCase(name, id)) return true;
  for (const auto& a : aliases) {
    if (EqualsIgnoreCase(name, a)) return true;
  }
  return false;
}

}  // namespace


const Accelerator* Catalog::FindAccelerator(std::string_view name) const {
  for (const auto& a : accelerators) {
    if (NameMatches(name, a.id, a.aliases)) return &a;
  }
  return nullptr;
}

const Cpu* Catalog::FindCpu(std::string_view name) const {
  std::string_view n = name;
  if (n.substr(0, 4) == "cpu:") n.remove_prefix(4);
  for (const auto& c : cpus) {
    if (NameMatches(n, c.id, c.aliases)) return &c;
  }
  return nullptr;
}

Result<const Accelerator*> Catalog::ResolveAccelerator(std::string_view name,
                                                       std::string_view field) const {
  if (const Accelerator* a = FindAccelerator(name)) return a;
  std::vector<std::string> names;
  for (const auto& a : accelerators) {
    names.push_back(a.id);
    for (const auto& al : a.aliases) names.push_back(al);
  }
  std::string best = ClosestMatch(name, names);
  return MakeError(ErrorCode::kNotFound, std::string(field),
                   "unknown accelerator " + Excerpt(name),
                   best.empty() ? "run `gpuplan gpus` for the list"
                                : "did you mean \"" + best + "\"? (`gpuplan gpus` lists all)");
}

Result<const Cpu*> Catalog::ResolveCpu(std::string_view name, std::string_view field) const {
  if (const Cpu* c = FindCpu(name)) return c;
  std::vector<std::string> names;
  for (const auto& c : cpus) names.push_back(c.id);
  std::string best = ClosestMatch(name, names);
  return MakeError(ErrorCode::kNotFound, std::string(field),
                   "unknown CPU " + Excerpt(name),
                   best.empty() ? "see data/cpus.csv for the list"
                                : "did you mean \"" + best + "\"?");
}

double Catalog::CnyPerUsd() const {
  for (const auto& r : rates) {
    if (r.from == Currency::kUsd && r.to == Currency::kCny) return r.rate;
  }
  for (const auto& r : rates) {
    if (r.from == Currency::kCny && r.to == Currency::kUsd && r.rate > 0) return 1.0 / r.rate;
  }
  return 7.2;  // unreachable with the built-in table; documented in data/currency.csv
}

std::string Catalog::CnyPerUsdAsOf() const {
  for (const auto& r : rates) {
    if (r.from == Currency::kUsd && r.to == Currency::kCny) return r.as_of;
  }
  return {};
}

double Catalog::Convert(double amount, Currency from, Currency to,
                        std::optional<double> cny_per_usd) const {
  if (from == to) return amount;
  double rate = cny_per_usd.value_or(CnyPerUsd());
  return from == Currency::kUsd ? amount * rate : amount / rate;
}

std::string Catalog::PricesAsOf() const {
  std::string latest;
  for (const auto& i : instances) {
    if (i.price_on_demand && i.as_of > latest) latest = i.as_of;
  }
  return latest;
}

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
    int y = std::stoi(d.substr(0, 4)), mo = std::stoi(d.substr(5, 2)), day = std::stoi(d.substr(8, 2));
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    ok = mo >= 1 && mo <= 12 && day >= 1 &&
         day <= kDays[mo - 1] + (mo == 2 && leap ? 1 : 0);
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
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("fp32_tflops"));
    a.fp32 = Tflops(v);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("tf32_tflops"));
    a.tf32 = Tflops(v);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("bf16_tflops"));
    a.bf16 = Tflops(v);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("fp16_tflops"));
    a.fp16 = Tflops(v);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("fp8_tflops"));
    a.fp8 = Tflops(v);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("int8_tops"));
    a.int8 = Tflops(v);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("int4_tops"));
    a.int4 = Tflops(v);
    if (!a.fp32 && !a.bf16 && !a.fp16) {
      return MakeError(ErrorCode::kParse, r.Where("fp32_tflops"),
                       "an accelerator needs at least one of fp32/bf16/fp16 peaks");
    }
    a.intra_link = r.Str("intra_link");
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("intra_link_gbps"));
    a.intra_link_bw = GBps(v.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("pcie_gen"));
    a.pcie_gen = static_cast<int>(v.value_or(0));
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("tdp_w"));
    a.tdp = Watts(v.value_or(0));
    a.form_factor = r.Str("form_factor");
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
  if (auto s = RequireColumns(t, {"id", "cores", "base_ghz", "fp32_flop_per_cycle", "mem_bw_gbps",
                                  "source", "as_of"});
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
    std::optional<double> v;
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("threads"));
    c.threads = static_cast<int>(v.value_or(c.cores));
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
              "price_on_demand", "price_spot", "price_reserved_1y", "price_reserved_3y",
              "currency", "source", "as_of"});
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
        return MakeError(ErrorCode::kParse, r.Where("accelerator_count"),
                         "must be >= 1 when an accelerator is named, got " +
                             r.Str("accelerator_count"));
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
                       "use none, pcie, nvlink, nvswitch, infinity-fabric, neuronlink or ici");
    }
    it.intra_node_link = *link;
    auto fab = ParseInterNodeFabric(r.Str("inter_node_fabric"));
    if (!fab) {
      return MakeError(ErrorCode::kParse, r.Where("inter_node_fabric"),
                       "unknown fabric \"" + r.Str("inter_node_fabric") + "\"",
                       "use none, efa, infiniband, roce, erdma or gpudirect-tcpx");
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
    case TableKind::kGpus: return LoadGpus(catalog, *table);
    case TableKind::kCpus: return LoadCpus(catalog, *table);
    case TableKind::kInstances: return LoadInstances(catalog, *table);
    case TableKind::kCurrency: return LoadCurrency(catalog, *table);
    case TableKind::kSkyPilotVms: break;
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

namespace {

Result<std::string> ReadWholeFile(const std::string& path, std::string_view field) {
  return ReadInputFile(path, field, kMaxCsvFileBytes);
}

// Every identifier of a user table reaches deployment files (emit): strict character sets.
// SkyPilot imports skip rows with unsafe names (OCI's "VM.Standard.E4.Flex$_2_8" CPU shapes)
// instead of failing the whole file; `skipped` counts them.
Status CheckIds(Catalog& c, std::string_view label, bool skip_unsafe_rows = false,
                int* skipped = nullptr) {
  const std::string L(label);
  for (const auto& a : c.accelerators) {
    if (auto st = CheckName(a.id, L + ": id"); !st) return st;
  }
  for (const auto& cpu : c.cpus) {
    if (auto st = CheckName(cpu.id, L + ": id"); !st) return st;
  }
  auto row_ok = [](const InstanceType& i) {
    return IsSafeIdentifier(i.cloud) && IsSafeName(i.instance_type) &&
           (i.region.empty() || IsSafeName(i.region)) &&
           (i.accelerator.empty() || IsSafeName(i.accelerator)) && (i.cpu.empty() || IsSafeName(i.cpu));
  };
  if (skip_unsafe_rows) {
    const size_t before = c.instances.size();
    std::erase_if(c.instances, [&](const InstanceType& i) { return !row_ok(i); });
    if (skipped != nullptr) *skipped = static_cast<int>(before - c.instances.size());
    return {};
  }
  for (const auto& i : c.instances) {
    if (row_ok(i)) continue;
    if (auto st = CheckName(i.instance_type, L + ": instance_type"); !st) return st;
    const std::string where = L + ": " + i.instance_type;
    if (auto st = CheckIdentifier(i.cloud, where + ": cloud"); !st) return st;
    if (!i.region.empty()) {
      if (auto st = CheckName(i.region, where + ": region"); !st) return st;
    }
    if (!i.accelerator.empty()) {
      if (auto st = CheckName(i.accelerator, where + ": accelerator"); !st) return st;
    }
    if (!i.cpu.empty()) {
      if (auto st = CheckName(i.cpu, where + ": cpu"); !st) return st;
    }
  }
  return {};
}

// Instances whose accelerator the catalog no longer has (a gpus override that drops one).
Status CheckInstanceAccelerators(const Catalog& c, std::string_view label) {
  for (const auto& i : c.instances) {
    if (!i.accelerator.empty() && c.FindAccelerator(i.accelerator) == nullptr) {
      return MakeError(ErrorCode::kInvalidArgument, std::string(label),
                       "instance " + Excerpt(i.cloud + " " + i.instance_type) +
                           " uses accelerator " + Excerpt(i.accelerator) +
                           ", which the catalog does not define",
                       "keep that accelerator's row in the gpus table, or override the "
                       "instances too");
    }
  }
  return {};
}

}  // namespace

std::string FileDate(const std::string& path) {
  std::error_code ec;
  auto t = std::filesystem::last_write_time(path, ec);
  if (ec) return "";
  auto sys = std::chrono::file_clock::to_sys(t);
  std::time_t tt = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys));
  std::tm tm{};
  if (!gmtime_r(&tt, &tm)) return "";
  char buf[16];
  if (std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm) != 10) return "";
  return buf;
}

Status ApplyCatalogOverride(Catalog& catalog, std::string_view spec) {
  std::string s(spec);
  std::string cloud;
  size_t eq = s.find('=');
  if (eq != std::string::npos && s.find('/') > eq) {
    cloud = ToLower(s.substr(0, eq));
    s = s.substr(eq + 1);
  }
  auto text = ReadWholeFile(s, "--catalog");
  if (!text) return text.error();
  auto kind = DetectTableKind(s, *text);
  if (!kind) return kind.error();
  Catalog fresh;
  // Keep what other tables need to resolve names.
  fresh.accelerators = catalog.accelerators;
  fresh.cpus = catalog.cpus;
  switch (*kind) {
    case TableKind::kGpus: {
      fresh.accelerators.clear();
      if (auto st = LoadTable(fresh, *kind, s, *text); !st) return st;
      if (auto st = CheckIds(fresh, s); !st) return st;
      catalog.accelerators = std::move(fresh.accelerators);
      // Instances of accelerators the new table drops go too: nothing may point at a missing
      // accelerator (`check` on such an instance was an internal error).
      std::erase_if(catalog.instances, [&](const InstanceType& i) {
        return !i.accelerator.empty() && catalog.FindAccelerator(i.accelerator) == nullptr;
      });
      return {};
    }
    case TableKind::kCpus:
      fresh.cpus.clear();
      if (auto st = LoadTable(fresh, *kind, s, *text); !st) return st;
      if (auto st = CheckIds(fresh, s); !st) return st;
      catalog.cpus = std::move(fresh.cpus);
      return {};
    case TableKind::kCurrency:
      if (auto st = LoadTable(fresh, *kind, s, *text); !st) return st;
      catalog.rates = std::move(fresh.rates);
      return {};
    case TableKind::kInstances:
    case TableKind::kSkyPilotVms: {
      if (*kind == TableKind::kSkyPilotVms && cloud.empty()) {
        cloud = std::filesystem::path(s).parent_path().filename().string();
        if (cloud.empty()) {
          return MakeError(ErrorCode::kInvalidArgument, "--catalog",
                           "cannot tell the cloud of SkyPilot file " + Excerpt(s),
                           "write --catalog CLOUD=PATH, e.g. --catalog aws=vms.csv");
        }
      }
      if (*kind == TableKind::kSkyPilotVms) {
        // Merged into the known specs, dated by the file.
        SkyPilotImportStats stats;
        if (auto st = ImportSkyPilotVms(fresh, cloud, s, *text, &stats, FileDate(s)); !st) {
          return st;
        }
        MergeImportedInstances(catalog, cloud, std::move(fresh.instances));
        const std::string id = ToLower(cloud);
        std::erase_if(catalog.import_skips, [&](const ImportSkip& k) { return k.cloud == id; });
        catalog.import_skips.push_back(
            {id, "unknown accelerator or fractional GPU (import)", stats.skipped_unknown_accelerator});
        catalog.import_skips.push_back({id, "TPU (not modelled, import)", stats.tpu_rows_skipped});
        return {};
      }
      if (auto st = LoadTable(fresh, *kind, s, *text, cloud); !st) return st;
      fresh.accelerators.clear();
      fresh.cpus.clear();
      if (auto st = CheckIds(fresh, s, *kind == TableKind::kSkyPilotVms); !st) return st;
      fresh.accelerators = catalog.accelerators;
      if (auto st = CheckInstanceAccelerators(fresh, s); !st) return st;
      std::set<std::string> clouds;
      for (const auto& i : fresh.instances) clouds.insert(i.cloud);
      std::erase_if(catalog.instances,
                    [&](const InstanceType& i) { return clouds.count(i.cloud) > 0; });
      for (auto& i : fresh.instances) catalog.instances.push_back(std::move(i));
      return {};
    }
  }
  return {};
}

}  // namespace gpuplan
