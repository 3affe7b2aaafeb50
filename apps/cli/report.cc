#include "report.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace gpuplan::cli {

namespace {
// Display width of UTF-8 text (counts code points; our text has no wide characters).
size_t Width(const std::string& s) {
  size_t w = 0;
  for (char ch : s) {
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++w;
  }
  return w;
}
bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  char c = s[0];
  return (c >= '0' && c <= '9') || c == '$' || c == '-' || c == '+' || s.rfind("¥", 0) == 0;
}
}  // namespace

std::string Table::Render(const std::string& indent) const {
  std::vector<size_t> w(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) w[i] = Width(header_[i]);
  for (const auto& r : rows_) {
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], Width(r[i]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string l = indent;
    for (size_t i = 0; i < w.size(); ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      size_t pad = w[i] - Width(c);
      bool right = !header && LooksNumeric(c) && i > 0;
      if (right)
        l += std::string(pad, ' ') + c;
      else
        l += c + std::string(pad, ' ');
      if (i + 1 < w.size()) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header_, true);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  line(rule, true);
  for (const auto& r : rows_) line(r, false);
  return out;
}

std::string Gib(double bytes, int decimals) {
  return fmt::format("{:.{}f} GiB", bytes / 1073741824.0, decimals);
}
std::string Num(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }
std::string Params(double n) {
  if (n >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  return fmt::format("{:.0f}", n);
}
std::string Price(std::optional<double> v, Currency c) {
  if (!v) return "-";
  // Small amounts (per request, per token) keep 2 significant digits.
  if (*v != 0 && std::fabs(*v) < 0.01)
    return fmt::format("{}{:.2g}", c == Currency::kUsd ? "$" : "¥", *v);
  return fmt::format("{}{:.2f}", c == Currency::kUsd ? "$" : "¥", *v);
}

Result<Catalog> LoadCatalog(const GlobalOptions& g) {
  auto cat = LoadBuiltinCatalog();
  if (!cat) return cat.error();
  for (const auto& f : g.catalog_files) {
    if (auto s = ApplyCatalogOverride(*cat, f); !s) return s.error();
  }
  return cat;
}

Result<Currency> DisplayCurrency(const GlobalOptions& g) {
  auto c = ParseCurrency(g.currency);
  if (!c) {
    return MakeError(ErrorCode::kInvalidArgument, "--currency",
                     "unknown currency \"" + g.currency + "\"", "use USD or CNY");
  }
  return *c;
}

}  // namespace gpuplan::cli
