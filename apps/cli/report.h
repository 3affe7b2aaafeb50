// Output helpers for the CLI: aligned text tables, number formatting, and the exit-code
// contract. Every command renders into a string and prints it only when it succeeds, so a
// failing command never leaves partial output.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/plan_document.h"
#include "gpuplan/result.h"

namespace gpuplan::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNothingFits = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 70;
inline constexpr const char* kSchemaVersion = kPlanSchemaVersion;

// A command's outcome: text for stdout and an exit code; or an Error.
struct Output {
  std::string text;
  int exit_code = kExitOk;
};

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void Row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  std::string Render(const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string Gib(double bytes, int decimals = 1);  // "12.3 GiB"
std::string Num(double v, int decimals = 1);
std::string Params(double n);                            // "6.74B", "110M"
std::string Price(std::optional<double> v, Currency c);  // "$12.34" / "¥88.00" / "-"

// Global options shared by commands.
struct GlobalOptions {
  std::vector<std::string> catalog_files;
  bool json = false;
  std::optional<double> cny_per_usd;
  std::string currency = "USD";
};

// Loads the built-in catalog and applies --catalog overrides.
Result<Catalog> LoadCatalog(const GlobalOptions& g);
Result<Currency> DisplayCurrency(const GlobalOptions& g);

// JSON text for stdout: invalid UTF-8 from user input (a model name, a catalog cell) is
// replaced with U+FFFD instead of throwing.
inline std::string DumpJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// JSON helpers (the plan document's, so every output rounds prices the same way).
using gpuplan::PriceJson;

}  // namespace gpuplan::cli
