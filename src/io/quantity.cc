#include "gpuplan/quantity.h"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <utility>

#include "base/strings.h"
#include "gpuplan/input.h"
#include "io/quantity_text.h"

namespace gpuplan {
namespace internal {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool LooksNegative(std::string_view s) { return !s.empty() && s[0] == '-'; }

std::string Shown(std::string_view s) {
  if (s.size() > 60) return Excerpt(s);
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F)
      return Excerpt(s);
  }
  return std::string(s);
}

bool StripGrouping(std::string& t) {
  std::string out;
  out.reserve(t.size());
  bool seen_point = false;
  bool first_comma = true;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '.') seen_point = true;
    if (c == '_') {
      if (i == 0 || i + 1 >= t.size() || !IsDigit(t[i - 1]) || !IsDigit(t[i + 1])) return false;
      continue;
    }
    if (c == ',') {
      if (seen_point || i == 0 || !IsDigit(t[i - 1])) return false;
      if (first_comma) {
        size_t j = i;
        while (j > 0 && IsDigit(t[j - 1])) --j;
        if (i - j > 3) return false;
        first_comma = false;
      }
      // Exactly three digits follow, then a non-digit or the end.
      if (i + 3 >= t.size()) return false;
      for (size_t k = i + 1; k <= i + 3; ++k) {
        if (k >= t.size() || !IsDigit(t[k])) return false;
      }
      if (i + 4 < t.size() && IsDigit(t[i + 4])) return false;
      continue;
    }
    out.push_back(c);
  }
  t = std::move(out);
  return true;
}

}  // namespace internal

namespace {

using internal::IsAlpha;
using internal::IsDigit;
using internal::LooksNegative;
using internal::StripGrouping;
using internal::ToLower;
using internal::Trim;

// Parses a finite non-negative double at the start of `s`; returns the characters consumed
// (0 when there is no number). No sign, no "inf"/"nan", no hex.
size_t ParseLeadingNumber(std::string_view s, double& out) {
  if (s.empty() || !(IsDigit(s[0]) || s[0] == '.')) return 0;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return 0;
  out = v;
  return static_cast<size_t>(ptr - s.data());
}

// Strips a leading currency symbol ("$", "US$", "¥", "￥", "CN¥") and reports which currency
// it names.
std::optional<Currency> StripCurrencySymbol(std::string& t) {
  static const std::pair<std::string_view, Currency> kSymbols[] = {
      {"US$", Currency::kUsd},          {"$", Currency::kUsd},
      {"CN\xC2\xA5", Currency::kCny},   {"\xC2\xA5", Currency::kCny},  // ¥
      {"\xEF\xBF\xA5", Currency::kCny},                                // fullwidth ￥
  };
  for (const auto& [sym, cur] : kSymbols) {
    if (t.size() >= sym.size() && std::string_view(t).substr(0, sym.size()) == sym) {
      t = Trim(std::string_view(t).substr(sym.size()));
      return cur;
    }
  }
  return std::nullopt;
}

Error NegativeError(std::string_view field, std::string_view raw) {
  return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                   "must be >= 0, got " + Excerpt(raw));
}

// Splits "800GB" into the number and its alphabetic unit ("800", "gb"), trimmed and
// lower-cased. Returns false when there is no leading number or junk follows the unit.
bool SplitNumberUnit(std::string_view text, double& number, std::string& unit) {
  std::string t(text);
  if (!StripGrouping(t)) return false;
  size_t n = ParseLeadingNumber(t, number);
  if (n == 0) return false;
  std::string rest = Trim(std::string_view(t).substr(n));
  for (char c : rest) {
    if (!IsAlpha(c)) return false;
  }
  unit = ToLower(rest);
  return true;
}

}  // namespace

Result<double> ParseCount(std::string_view s, std::string_view field) {
  std::string raw = Trim(s);
  auto bad = [&](std::string hint) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected a count such as 2B, 1.5M or 50000, got " + Excerpt(raw),
                     std::move(hint));
  };
  const std::string kSuffixHint = "suffixes: K = 1e3, M = 1e6, B or G = 1e9, T = 1e12";
  if (raw.empty()) return bad(kSuffixHint);
  std::string t = raw;
  if (t[0] == '-') return NegativeError(field, raw);
  if (t[0] == '+') t = Trim(std::string_view(t).substr(1));
  StripCurrencySymbol(t);
  if (!t.empty() && t[0] == '-') return NegativeError(field, raw);
  double v = 0;
  std::string unit;
  if (!SplitNumberUnit(t, v, unit)) return bad(kSuffixHint);
  double mult = 0;
  if (unit.empty()) {
    mult = 1;
  } else if (unit == "k") {
    mult = 1e3;
  } else if (unit == "m") {
    mult = 1e6;
  } else if (unit == "b" || unit == "g" || unit == "bn") {
    mult = 1e9;
  } else if (unit == "t") {
    mult = 1e12;
  }
  if (mult == 0) {
    bool bytes = unit.size() >= 2 && unit.back() == 'b';
    return bad(bytes ? "\"" + raw +
                           "\" is a size in bytes; counts take K, M, B, T (sizes go in "
                           "dataset_size)"
                     : kSuffixHint);
  }
  double out = v * mult;
  if (!std::isfinite(out)) return bad(kSuffixHint);
  return out;
}

Result<Bytes> ParseSize(std::string_view s, std::string_view field) {
  std::string raw = Trim(s);
  auto bad = [&]() {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected a size such as 800GB, 1.2TB or 64GiB, got " + Excerpt(raw),
                     "units: B, KB, MB, GB, TB, PB (powers of 1000), KiB, MiB, GiB, TiB, PiB "
                     "(powers of 1024); a bare number is bytes");
  };
  if (raw.empty()) return bad();
  if (raw[0] == '-') return NegativeError(field, raw);
  double v = 0;
  std::string unit;
  if (!SplitNumberUnit(raw, v, unit)) return bad();
  static const std::pair<std::string_view, double> kUnits[] = {
      {"", 1},         {"b", 1},        {"k", 1e3},      {"kb", 1e3},     {"m", 1e6},
      {"mb", 1e6},     {"g", 1e9},      {"gb", 1e9},     {"t", 1e12},     {"tb", 1e12},
      {"p", 1e15},     {"pb", 1e15},    {"ki", 0x1p10},  {"kib", 0x1p10}, {"mi", 0x1p20},
      {"mib", 0x1p20}, {"gi", 0x1p30},  {"gib", 0x1p30}, {"ti", 0x1p40},  {"tib", 0x1p40},
      {"pi", 0x1p50},  {"pib", 0x1p50},
  };
  for (const auto& [u, mult] : kUnits) {
    if (unit == u) {
      double out = v * mult;
      if (!std::isfinite(out)) return bad();
      return Bytes(out);
    }
  }
  return bad();
}

Result<double> ParseHours(std::string_view s, std::string_view field) {
  std::string raw = Trim(s);
  auto bad = [&]() {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected a duration such as 48h, 3d, 90m or 1h30m, got " + Excerpt(raw),
                     "units: s, m (minutes), h, d, w; a bare number is hours");
  };
  if (raw.empty()) return bad();
  if (raw[0] == '-') return NegativeError(field, raw);
  std::string_view t = raw;
  if (t[0] == '+') t.remove_prefix(1);
  // A bare number is hours.
  if (auto v = internal::ParseDouble(t)) {
    if (*v < 0) return NegativeError(field, raw);
    return *v;
  }
  double total = 0;
  size_t i = 0;
  int parts = 0;
  while (i < t.size()) {
    while (i < t.size() && t[i] == ' ') ++i;
    if (i >= t.size()) break;
    double v = 0;
    size_t n = ParseLeadingNumber(t.substr(i), v);
    if (n == 0) return bad();
    i += n;
    while (i < t.size() && t[i] == ' ') ++i;
    size_t u0 = i;
    while (i < t.size() && IsAlpha(t[i])) ++i;
    std::string unit = ToLower(t.substr(u0, i - u0));
    double hours_per = 0;
    if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") {
      hours_per = 1.0 / 3600.0;
    } else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" ||
               unit == "minutes") {
      hours_per = 1.0 / 60.0;
    } else if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hour" || unit == "hours") {
      hours_per = 1.0;
    } else if (unit == "d" || unit == "day" || unit == "days") {
      hours_per = 24.0;
    } else if (unit == "w" || unit == "week" || unit == "weeks") {
      hours_per = 168.0;
    } else {
      return bad();
    }
    total += v * hours_per;
    ++parts;
  }
  if (parts == 0 || !std::isfinite(total)) return bad();
  return total;
}

Result<MoneyText> ParseMoney(std::string_view s, std::string_view field) {
  std::string t = Trim(s);
  MoneyText out;
  out.currency = StripCurrencySymbol(t);
  if (LooksNegative(t)) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "must be > 0, got " + std::string(s));
  }
  // A trailing currency code: "30000 CNY".
  size_t end = t.size();
  while (end > 0 && IsAlpha(t[end - 1])) --end;
  if (end < t.size() && end > 0 && t[end - 1] == ' ') {
    std::string code = t.substr(end);
    if (auto c = ParseCurrency(code)) {
      if (out.currency && *out.currency != *c) {
        return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                         "names two currencies, got " + Excerpt(s),
                         "write the amount with one currency, e.g. 30000 CNY");
      }
      out.currency = c;
      t = Trim(std::string_view(t).substr(0, end));
    }
  }
  auto v = ParseCount(t, field);
  if (!v) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     "expected an amount such as 5000, $5000, 30000 CNY or ¥30000, got \"" +
                         std::string(s) + "\"",
                     "currencies: USD ($) and CNY (¥)");
  }
  out.amount = *v;
  return out;
}

}  // namespace gpuplan
