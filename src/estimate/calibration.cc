#include <algorithm>
#include <fmt/format.h>

#include "io/embedded.h"
#include "gpuplan/perf.h"
#include "io/csv.h"

namespace gpuplan {

namespace {
// Key equality for the search loop: length, then the last and first characters (keys share
// prefixes such as "link_efficiency."), then the bytes; most entries fail the cheap checks.
inline bool SameKey(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || (a.back() == b.back() && a.front() == b.front())) &&
         a == b;
}
}  // namespace

double Calibration::Get(std::string_view key, double fallback) const {
  for (const auto& e : entries) {
    if (SameKey(e.key, key)) return e.value;
  }
  return fallback;
}

namespace {
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
// Case-insensitive substring search without allocation (used in the search loop).
bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  if (needle.empty() || needle.size() > hay.size()) return needle.empty();
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t j = 0;
    while (j < needle.size() && Lower(hay[i + j]) == Lower(needle[j])) ++j;
    if (j == needle.size()) return true;
  }
  return false;
}
}  // namespace

namespace {

// Entries "key.<keyword>" of several key families in one pass: per family the first entry whose
// keyword occurs in `arch`; else "key.default"; else "key"; else the fallback. No allocation.
template <std::size_t N>
void ForArchN(const std::vector<Calibration::Entry>& entries, const std::string_view (&keys)[N],
              std::string_view arch, const double (&fallback)[N], double (&out)[N]) {
  const Calibration::Entry* hit[N] = {};
  const Calibration::Entry* def[N] = {};
  const Calibration::Entry* plain[N] = {};
  for (const auto& e : entries) {
    const std::string_view k = e.key;
    for (std::size_t i = 0; i < N; ++i) {
      const std::string_view key = keys[i];
      if (hit[i]) continue;
      if (k == key) plain[i] = &e;
      if (k.size() <= key.size() + 1 || k.substr(0, key.size()) != key || k[key.size()] != '.')
        continue;
      const std::string_view kw = k.substr(key.size() + 1);
      if (kw == "default") {
        def[i] = &e;
      } else if (ContainsNoCase(arch, kw)) {
        hit[i] = &e;
      }
    }
  }
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = hit[i]     ? hit[i]->value
             : def[i]   ? def[i]->value
             : plain[i] ? plain[i]->value
                        : fallback[i];
  }
}

}  // namespace

double Calibration::ForArch(std::string_view key, std::string_view arch, double fallback) const {
  const std::string_view keys[] = {key};
  const double fb[] = {fallback};
  double out[1];
  ForArchN(entries, keys, arch, fb, out);
  return out[0];
}

double Calibration::GemmEfficiency(const Accelerator& acc) const {
  return ForAccelerator(acc).gemm_eff;
}

ArchEfficiency Calibration::ForAccelerator(const Accelerator& acc) const {
  static constexpr std::string_view kKeys[] = {"gemm_efficiency", "power_capped_tensor_fraction"};
  static constexpr double kFallback[] = {0.8, 1.0};
  double out[2];
  ForArchN(entries, kKeys, acc.arch, kFallback, out);
  return {out[0], out[1]};
}

Result<Calibration> ParseCalibration(std::string_view text, std::string_view label) {
  auto t = internal::ParseCsv(text, label, true);
  if (!t) return t.error();
  Calibration c;
  for (const auto& row : t->rows) {
    internal::RowReader r(*t, row);
    Calibration::Entry e;
    auto key = r.RequiredStr("key");
    if (!key) return key.error();
    e.key = *key;
    auto v = r.Number("value", 0);
    if (!v) return v.error();
    e.value = *v;
    if (e.key.find("efficiency") != std::string::npos && (e.value <= 0 || e.value > 1)) {
      return MakeError(ErrorCode::kParse, r.Where("value"),
                       "an efficiency must be in (0, 1], got " + r.Str("value"));
    }
    e.source = r.Str("source");
    if (e.source.empty())
      return MakeError(ErrorCode::kParse, r.Where("source"), "must not be empty");
    c.entries.push_back(std::move(e));
  }
  return c;
}

const Calibration& DefaultCalibration() {
  static const Calibration cal = [] {
    const auto* f = internal::FindEmbeddedFile("calibration.csv");
    if (!f) return Calibration{};
    auto c = ParseCalibration(f->text, f->path);
    return c ? *c : Calibration{};
  }();
  return cal;
}

Result<Calibration> WithSpotRate(Calibration cal, double rate, std::string_view field) {
  if (!(rate >= 0 && rate <= 1)) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     fmt::format("must be in [0, 1] interruptions per node-hour, got {}", rate));
  }
  bool found = false;
  for (auto& e : cal.entries) {
    if (e.key == "spot_interruptions_per_node_hour") {
      e.value = rate;
      e.source = std::string(field);
      found = true;
    }
  }
  if (!found) cal.entries.push_back({"spot_interruptions_per_node_hour", rate, std::string(field)});
  return cal;
}

}  // namespace gpuplan
