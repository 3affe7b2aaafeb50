#include "gpuplan/units.h"

#include <string>

#include "base/strings.h"

namespace gpuplan {

using internal::ToLower;

const char* CurrencyCode(Currency c) { return c == Currency::kUsd ? "USD" : "CNY"; }

std::optional<Currency> ParseCurrency(std::string_view s) {
  std::string t = ToLower(internal::Trim(s));
  if (t == "usd" || t == "$") return Currency::kUsd;
  if (t == "cny" || t == "rmb" || t == "yuan") return Currency::kCny;
  return std::nullopt;
}

}  // namespace gpuplan
