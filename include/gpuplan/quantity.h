// Quantities as people write them in flags and job files: counts with K/M/B/T suffixes and
// digit grouping ("2B", "50,000"), sizes ("800GB", "1.5 TiB"), durations ("36h", "2d 4h"),
// money ("$5000", "30000 CNY"). Errors name the field and give the accepted forms.
#pragma once

#include <optional>
#include <string_view>

#include "gpuplan/result.h"
#include "gpuplan/units.h"

namespace gpuplan {

// A count >= 0: "2B", "1.5M", "50000", "50,000", "1_000_000" (K = 1e3, M = 1e6, B/G = 1e9,
// T = 1e12).
Result<double> ParseCount(std::string_view s, std::string_view field);
// A size >= 0 with a unit: "800GB", "1.5TB", "512 GiB" (decimal and binary units).
Result<Bytes> ParseSize(std::string_view s, std::string_view field);
// A duration in hours >= 0: "36h", "2d", "90m", "1w", "2d 4h", or a plain number of hours.
Result<double> ParseHours(std::string_view s, std::string_view field);

// Money: "5000", "$5000", "¥30000", "30000 CNY", "5K USD": the amount and the currency the
// text names, if any.
struct MoneyText {
  double amount = 0;
  std::optional<Currency> currency;
};
Result<MoneyText> ParseMoney(std::string_view s, std::string_view field);

}  // namespace gpuplan
