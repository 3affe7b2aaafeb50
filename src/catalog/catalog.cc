#include "gpuplan/catalog.h"
#include "gpuplan/input.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/enum_names.h"
#include "base/strings.h"
#include "io/embedded.h"
#include "io/csv.h"

namespace gpuplan {

using internal::CsvTable;
using internal::ParseCsv;
using internal::RowReader;
using internal::ToLower;

bool Accelerator::InferenceOnly() const { return id.rfind("Inferentia", 0) == 0; }

bool Accelerator::AwsNeuron() const { return vendor == "AWS" && arch.rfind("NeuronCore", 0) == 0; }

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

namespace {

constexpr internal::EnumName<IntraNodeLink> kIntraNodeLinkNames[] = {
    {IntraNodeLink::kNone, "none"},
    {IntraNodeLink::kPcie, "pcie"},
    {IntraNodeLink::kNvlink, "nvlink"},
    {IntraNodeLink::kNvswitch, "nvswitch"},
    {IntraNodeLink::kInfinityFabric, "infinity-fabric"},
    {IntraNodeLink::kNeuronLink, "neuronlink"},
    {IntraNodeLink::kIci, "ici"},
};
constexpr internal::EnumName<InterNodeFabric> kInterNodeFabricNames[] = {
    {InterNodeFabric::kNone, "none"},
    {InterNodeFabric::kEfa, "efa"},
    {InterNodeFabric::kInfiniband, "infiniband", "ib"},
    {InterNodeFabric::kRoce, "roce"},
    {InterNodeFabric::kErdma, "erdma"},
    {InterNodeFabric::kGpuDirectTcpx, "gpudirect-tcpx"},
};

}  // namespace

const char* IntraNodeLinkName(IntraNodeLink l) { return internal::NameIn(kIntraNodeLinkNames, l); }

const char* InterNodeFabricName(InterNodeFabric f) {
  return internal::NameIn(kInterNodeFabricNames, f);
}

// An empty cell is "none" (a single-GPU or single-node machine).
std::optional<IntraNodeLink> ParseIntraNodeLink(std::string_view s) {
  if (internal::Trim(s).empty()) return IntraNodeLink::kNone;
  return internal::ParseIn(kIntraNodeLinkNames, s);
}

std::optional<InterNodeFabric> ParseInterNodeFabric(std::string_view s) {
  if (internal::Trim(s).empty()) return InterNodeFabric::kNone;
  return internal::ParseIn(kInterNodeFabricNames, s);
}

std::vector<std::string> IntraNodeLinkNames() { return internal::NamesIn(kIntraNodeLinkNames); }
std::vector<std::string> InterNodeFabricNames() { return internal::NamesIn(kInterNodeFabricNames); }

const std::vector<InstanceFlag>& KnownInstanceFlags() {
  static const std::vector<InstanceFlag> flags = {
      {"suspect-sku", "the source's SKU-to-price mapping is doubtful (the row's notes say why)"},
      {"suspect-price",
       "price far from the same shape in the same cloud's other regions (source anomaly)"},
      {"spot-above-on-demand", "spot price above on-demand (source anomaly)"},
      {kMarketplaceFlag,
       "a marketplace listing: one host's offer, priced by the host, not the provider's own SKU",
       false},
  };
  return flags;
}

bool IsMarketplace(const InstanceType& it) {
  return std::find(it.flags.begin(), it.flags.end(), kMarketplaceFlag) != it.flags.end();
}

std::string SuspectReason(const InstanceType& it) {
  for (const auto& f : it.flags) {
    for (const auto& k : KnownInstanceFlags()) {
      if (f == k.name && k.suspect) return k.meaning;
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

// A device name as a set of words: lower-case alphanumeric runs, the vendor and memory-type
// words dropped ("NVIDIA H100 SXM5 80GB HBM3" and "H100-SXM5-80GB" are {80gb, h100, sxm5};
// "A100 80GB PCIe" is "A100-PCIE-80GB"). Generations stay words of their own: SXM6 is not SXM5.
// Lower-case alphanumeric runs of a name, in order ("AMD Instinct MI300X 192GB" ->
// amd, instinct, mi300x, 192gb).
std::vector<std::string> RawWords(std::string_view name) {
  std::vector<std::string> words;
  std::string w;
  for (char c : name) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      w += c;
    } else if (c >= 'A' && c <= 'Z') {
      w += static_cast<char>(c - 'A' + 'a');
    } else if (!w.empty()) {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  return words;
}

std::vector<std::string> NameWords(std::string_view name) {
  std::vector<std::string> words;
  for (auto& w : RawWords(name)) {
    if (w != "nvidia" && w != "amd" && w != "intel" && w.rfind("hbm", 0) != 0)
      words.push_back(std::move(w));
  }
  std::sort(words.begin(), words.end());
  return words;
}

bool AllDigits(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A device name taken apart the way system descriptions write it (MLPerf's "H100-SXM-80GB",
// "L4-PCIe-24GB", "AMD Instinct MI325X 256GB HBM3e"): the words that name the model, the
// memory in GB, and the package: "sxm" (SXM, HGX and OAM modules), "pcie", or unstated; a
// generation-specific SXM word (sxm5) is kept apart, because SXM6 is not SXM5.
struct DeviceName {
  std::vector<std::string> model;  // sorted
  double memory_gb = 0;
  std::string form;
  std::vector<std::string> sxm_gen;
};

DeviceName ParseDeviceName(std::string_view name) {
  static const std::set<std::string, std::less<>> kNoise = {
      "nvidia",      "amd",   "intel",  "instinct",  "geforce", "tesla",
      "virtualized", "grace", "hopper", "superchip", "gpu"};
  DeviceName d;
  const std::vector<std::string> raw = RawWords(name);
  for (size_t i = 0; i < raw.size(); ++i) {
    const std::string& w = raw[i];
    if (kNoise.count(w) || w.rfind("hbm", 0) == 0 || w.rfind("gddr", 0) == 0) continue;
    // "80GB", "40G", or "80 GB" (at most 7 digits: no device has 10 TB; longer runs of digits
    // are words of the name).
    const size_t digits = static_cast<size_t>(
        std::find_if(w.begin(), w.end(), [](char c) { return c < '0' || c > '9'; }) - w.begin());
    const std::string_view unit = std::string_view(w).substr(digits);
    if (digits > 0 && digits <= 7 && (unit == "gb" || unit == "g" || unit == "gib")) {
      d.memory_gb = internal::ParseDouble(w.substr(0, digits)).value_or(0);
      continue;
    }
    if ((w == "gb" || w == "gib") && i > 0 && AllDigits(raw[i - 1]) && raw[i - 1].size() <= 7 &&
        !d.model.empty() && d.model.back() == raw[i - 1]) {
      d.memory_gb = internal::ParseDouble(raw[i - 1]).value_or(0);
      d.model.pop_back();
      continue;
    }
    if (w.rfind("sxm", 0) == 0 && (w.size() == 3 || AllDigits(w.substr(3)))) {
      d.form = "sxm";
      if (w.size() > 3) d.sxm_gen.push_back(w);
      continue;
    }
    if (w == "hgx" || w == "oam") {
      d.form = "sxm";
      continue;
    }
    if (w.rfind("pcie", 0) == 0 && (w.size() == 4 || AllDigits(w.substr(4)))) {
      d.form = "pcie";
      continue;
    }
    d.model.push_back(w);
  }
  std::sort(d.model.begin(), d.model.end());
  return d;
}

// The one entry (an accelerator or a CPU) whose id or an alias has the words `want` (as `words`
// takes a name apart); none when no entry or several do.
template <typename T, typename Words>
const T* UniqueByWords(const std::vector<T>& entries, const std::vector<std::string>& want,
                       const Words& words) {
  if (want.empty()) return nullptr;
  const T* found = nullptr;
  for (const auto& e : entries) {
    bool match = words(e.id) == want;
    for (const auto& al : e.aliases) match = match || words(al) == want;
    if (!match) continue;
    if (found && found != &e) return nullptr;  // ambiguous
    found = &e;
  }
  return found;
}

// The accelerators whose model words equal the name's and whose memory and package agree with
// what the name states.
std::vector<const Accelerator*> MatchByParts(const std::vector<Accelerator>& accelerators,
                                             std::string_view name) {
  const DeviceName want = ParseDeviceName(name);
  std::vector<const Accelerator*> found;
  if (want.model.empty()) return found;
  for (const auto& a : accelerators) {
    bool model = false, gen = want.sxm_gen.empty();
    auto consider = [&](std::string_view n) {
      const DeviceName have = ParseDeviceName(n);
      model = model || have.model == want.model;
      for (const auto& g : want.sxm_gen)
        gen = gen || std::find(have.sxm_gen.begin(), have.sxm_gen.end(), g) != have.sxm_gen.end();
    };
    consider(a.id);
    for (const auto& al : a.aliases) consider(al);
    if (!model || !gen) continue;
    if (want.memory_gb > 0) {
      const double gb = a.memory.value() / kBytesPerGiB;
      if (std::abs(gb - want.memory_gb) > std::max(1.5, 0.03 * want.memory_gb)) continue;
    }
    const bool module =
        a.form_factor == "sxm" || a.form_factor == "oam" || a.form_factor == "superchip";
    if (want.form == "sxm" && !module) continue;
    if (want.form == "pcie" && a.form_factor != "pcie") continue;
    found.push_back(&a);
  }
  return found;
}

// The one accelerator MatchByParts finds; none when several match (ambiguous).
const Accelerator* FindByParts(const std::vector<Accelerator>& accelerators,
                               std::string_view name) {
  const auto found = MatchByParts(accelerators, name);
  return found.size() == 1 ? found.front() : nullptr;
}

}  // namespace

std::vector<IdsWithWhy> GroupByWhy(const std::vector<std::pair<std::string, std::string>>& id_why) {
  std::vector<IdsWithWhy> out;
  for (const auto& [id, why] : id_why) {
    auto g = std::find_if(out.begin(), out.end(),
                          [&w = why](const IdsWithWhy& x) { return x.why == w; });
    if (g == out.end()) {
      out.push_back({why, {id}});
    } else {
      g->ids.push_back(id);
    }
  }
  return out;
}

const Accelerator* Catalog::FindAccelerator(std::string_view name) const {
  for (const auto& a : accelerators) {
    if (NameMatches(name, a.id, a.aliases)) return &a;
  }
  // The same words in another order or spelling, when exactly one accelerator has them.
  if (const Accelerator* a = UniqueByWords(accelerators, NameWords(name), NameWords)) return a;
  // The model, memory and package as a system description spells them.
  return FindByParts(accelerators, name);
}

const Cpu* Catalog::FindCpu(std::string_view name) const {
  std::string_view n = name;
  if (n.substr(0, 4) == "cpu:") n.remove_prefix(4);
  for (const auto& c : cpus) {
    if (NameMatches(n, c.id, c.aliases)) return &c;
  }
  // As /proc/cpuinfo and system descriptions write it ("INTEL(R) XEON(R) PLATINUM 8580", "AMD
  // EPYC 9654 96-Core Processor", "13th Gen Intel(R) Core(TM) i9-13900K"): the same words
  // without the vendor, trademarks, core count and generation, when one CPU has them.
  auto words = [](std::string_view s) {
    static const std::set<std::string, std::less<>> kNoise = {"intel",     "amd", "r",  "tm",
                                                              "processor", "cpu", "gen"};
    const std::vector<std::string> raw = RawWords(s);
    std::vector<std::string> w;
    for (size_t i = 0; i < raw.size(); ++i) {
      const std::string& x = raw[i];
      if (kNoise.count(x)) continue;
      if (x == "core" && i > 0 && AllDigits(raw[i - 1])) continue;  // "96-Core"
      if (AllDigits(x) && i + 1 < raw.size() && raw[i + 1] == "core") continue;
      const size_t d = x.find_first_not_of("0123456789");
      if (d > 0 && d != std::string::npos &&
          (x.substr(d) == "st" || x.substr(d) == "nd" || x.substr(d) == "rd" ||
           x.substr(d) == "th")) {
        continue;  // "13th" (Gen)
      }
      w.push_back(x);
    }
    std::sort(w.begin(), w.end());
    return w;
  };
  return UniqueByWords(cpus, words(n), words);
}

Result<const Accelerator*> Catalog::ResolveAccelerator(std::string_view name,
                                                       std::string_view field) const {
  if (const Accelerator* a = FindAccelerator(name)) return a;
  std::vector<std::string> names;
  for (const auto& a : accelerators) {
    names.push_back(a.id);
    for (const auto& al : a.aliases) names.push_back(al);
  }
  // A model several parts share ("A100 SXM": 40 and 80 GB): name them.
  if (const auto parts = MatchByParts(accelerators, name); parts.size() > 1) {
    std::string ids;
    for (const Accelerator* a : parts) ids += (ids.empty() ? "" : ", ") + a->id;
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "accelerator " + Excerpt(name) + " names " + std::to_string(parts.size()) +
                         " parts: " + ids,
                     "name one of them, e.g. \"" + parts.back()->id + "\"");
  }
  std::string best = ClosestMatch(name, names);
  return MakeError(ErrorCode::kNotFound, std::string(field), "unknown accelerator " + Excerpt(name),
                   best.empty() ? "run `gpuplan gpus` for the list"
                                : "did you mean \"" + best + "\"? (`gpuplan gpus` lists all)");
}

Result<const Cpu*> Catalog::ResolveCpu(std::string_view name, std::string_view field) const {
  if (const Cpu* c = FindCpu(name)) return c;
  std::vector<std::string> names;
  for (const auto& c : cpus) names.push_back(c.id);
  std::string best = ClosestMatch(name, names);
  return MakeError(
      ErrorCode::kNotFound, std::string(field), "unknown CPU " + Excerpt(name),
      best.empty() ? "see data/cpus.csv for the list" : "did you mean \"" + best + "\"?");
}

Status Catalog::CheckCloud(std::string_view name, std::string_view field) const {
  std::vector<std::string> clouds;
  for (const auto& i : instances) {
    if (i.cloud == name) return {};
    if (std::find(clouds.begin(), clouds.end(), i.cloud) == clouds.end()) clouds.push_back(i.cloud);
  }
  std::sort(clouds.begin(), clouds.end());
  std::string best = ClosestMatch(name, clouds);
  std::string known;
  for (const auto& c : clouds) known += (known.empty() ? "" : ", ") + c;
  return MakeError(ErrorCode::kNotFound, std::string(field), "unknown cloud " + Excerpt(name),
                   best.empty() ? "known: " + known : "did you mean \"" + best + "\"?");
}

Result<std::string> Catalog::ResolveRegion(std::string_view name, std::string_view field,
                                           const std::vector<std::string>& clouds) const {
  const std::string want = internal::ToLower(name);
  std::vector<std::string> regions;
  for (const auto& i : instances) {
    if (!clouds.empty() && std::find(clouds.begin(), clouds.end(), i.cloud) == clouds.end())
      continue;
    if (internal::ToLower(i.region) == want) return i.region;
    if (!i.region.empty() && std::find(regions.begin(), regions.end(), i.region) == regions.end())
      regions.push_back(i.region);
  }
  std::sort(regions.begin(), regions.end());
  const std::string best = ClosestMatch(name, regions);
  const std::string where =
      clouds.empty() ? std::string() : fmt::format("{} ", fmt::join(clouds, "/"));
  return MakeError(ErrorCode::kNotFound, std::string(field),
                   fmt::format("no {}instance in region {} in the catalog", where, Excerpt(name)),
                   best.empty() ? fmt::format("the catalog has: {}", fmt::join(regions, "; "))
                                : "did you mean \"" + best + "\"?");
}

Result<std::vector<std::string>> Catalog::ResolveRegions(
    const std::vector<std::string>& names, std::string_view field,
    const std::vector<std::string>& clouds) const {
  std::vector<std::string> out;
  for (size_t k = 0; k < names.size(); ++k) {
    auto r = ResolveRegion(names[k], fmt::format("{}[{}]", field, k), clouds);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
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

}  // namespace gpuplan
