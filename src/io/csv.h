// Minimal RFC-4180 CSV reader: quoted cells with "" escapes, LF or CRLF (mixed) line ends,
// `#` comment lines, and typed cell access whose errors name "label:line:column".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "gpuplan/result.h"

namespace gpuplan::internal {

struct CsvRow {
  int line = 0;  // 1-based line number in the file where the row starts
  std::vector<std::string> cells;
};

struct CsvTable {
  std::string label;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  // Column index by header name, or -1.
  int Column(std::string_view name) const;
};

// Parses `text`. A row whose cell count differs from the header's is an error naming the line.
// `allow_comments`: lines starting with '#' are skipped (our own tables; SkyPilot has none).
Result<CsvTable> ParseCsv(std::string_view text, std::string_view label, bool allow_comments);

// Typed access to one row, with errors that point at the cell.
class RowReader {
 public:
  RowReader(const CsvTable& table, const CsvRow& row) : table_(table), row_(row) {}
  // The raw cell, trimmed; empty when the column is absent.
  std::string Str(std::string_view column) const;
  // Required non-empty string.
  Result<std::string> RequiredStr(std::string_view column) const;
  // Empty cell -> nullopt; otherwise a finite number or an error.
  Result<std::optional<double>> OptNumber(std::string_view column) const;
  // Required number; `min` is an inclusive lower bound.
  Result<double> Number(std::string_view column, double min = 0.0) const;
  Result<int> Int(std::string_view column, int min = 0) const;
  // Empty cell -> nullopt; otherwise a whole number in [min, max] or an error.
  Result<std::optional<int>> OptInt(std::string_view column, int min, int max) const;
  // "label:line:column"
  std::string Where(std::string_view column) const;

 private:
  const CsvTable& table_;
  const CsvRow& row_;
};

}  // namespace gpuplan::internal
