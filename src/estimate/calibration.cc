#include <algorithm>

#include "catalog/embedded.h"
#include "gpuplan/perf.h"
#include "io/csv.h"

namespace gpuplan {

double Calibration::Get(std::string_view key, double fallback) const {
  for (const auto& e : entries) {
    if (e.key == key) return e.value;
  }
  return fallback;
}

double Calibration::ForArch(std::string_view key, std::string_view arch, double fallback) const {
  std::string a = internal::ToLower(arch);
  std::string prefix = std::string(key) + ".";
  for (const auto& e : entries) {
    if (e.key.rfind(prefix, 0) != 0) continue;
    std::string kw = e.key.substr(prefix.size());
    if (kw != "default" && a.find(kw) != std::string::npos) return e.value;
  }
  return Get(std::string(key) + ".default", Get(key, fallback));
}

double Calibration::GemmEfficiency(const Accelerator& acc) const {
  return ForArch("gemm_efficiency", acc.arch, 0.8);
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
    if (e.source.empty()) return MakeError(ErrorCode::kParse, r.Where("source"), "must not be empty");
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

}  // namespace gpuplan
