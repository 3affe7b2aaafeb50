#include "io/csv.h"

#include "gpuplan/input.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace gpuplan::internal {

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Result<CsvTable> ParseCsv(std::string_view text, std::string_view label, bool allow_comments) {
  CsvTable table;
  table.label = std::string(label);
  // Skip a UTF-8 byte-order mark.
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    text.remove_prefix(3);
  }
  size_t i = 0;
  int line = 1;
  bool have_header = false;
  while (i < text.size()) {
    // Blank or comment line.
    if (text[i] == '\n' || text[i] == '\r') {
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++i;
      ++line;
      continue;
    }
    if (allow_comments && text[i] == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    CsvRow row;
    row.line = line;
    std::string cell;
    bool in_quotes = false;
    bool cell_was_quoted = false;
    int start_line = line;
    for (;;) {
      if (i >= text.size()) {
        if (in_quotes) {
          return MakeError(ErrorCode::kParse, std::string(label) + ":" + std::to_string(start_line),
                           "unterminated quoted cell", "close the quote with \"");
        }
        row.cells.push_back(cell_was_quoted ? cell : Trim(cell));
        break;
      }
      char c = text[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            cell.push_back('"');
            i += 2;
            continue;
          }
          in_quotes = false;
          ++i;
          continue;
        }
        if (c == '\n') ++line;
        if (c != '\r') cell.push_back(c);
        ++i;
        continue;
      }
      if (c == '"' && Trim(cell).empty()) {
        in_quotes = true;
        cell_was_quoted = true;
        cell.clear();
        ++i;
        continue;
      }
      if (c == ',') {
        row.cells.push_back(cell_was_quoted ? cell : Trim(cell));
        cell.clear();
        cell_was_quoted = false;
        ++i;
        continue;
      }
      if (c == '\r' || c == '\n') {
        row.cells.push_back(cell_was_quoted ? cell : Trim(cell));
        if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        ++i;
        ++line;
        break;
      }
      cell.push_back(c);
      ++i;
    }
    if (!have_header) {
      if (row.cells.size() > 1024) {
        return MakeError(
            ErrorCode::kParse, std::string(label) + ":" + std::to_string(row.line),
            "header has " + std::to_string(row.cells.size()) + " columns, more than 1024");
      }
      table.header = std::move(row.cells);
      have_header = true;
      continue;
    }
    if (table.rows.size() >= kMaxCsvRows) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string(label) + ":" + std::to_string(row.line),
                       "more than " + std::to_string(kMaxCsvRows) + " rows",
                       "split the table or filter it to the clouds you use (docs/reliability.md)");
    }
    if (row.cells.size() != table.header.size()) {
      return MakeError(ErrorCode::kParse, std::string(label) + ":" + std::to_string(row.line),
                       "expected " + std::to_string(table.header.size()) + " cells, got " +
                           std::to_string(row.cells.size()),
                       "quote cells that contain commas");
    }
    table.rows.push_back(std::move(row));
  }
  if (!have_header) {
    return MakeError(ErrorCode::kParse, std::string(label), "empty table: no header line",
                     "the first line must name the columns");
  }
  return table;
}

std::string RowReader::Where(std::string_view column) const {
  int col = table_.Column(column);
  return table_.label + ":" + std::to_string(row_.line) + ":" +
         (col >= 0 ? std::to_string(col + 1) + " (" + std::string(column) + ")"
                   : std::string(column));
}

std::string RowReader::Str(std::string_view column) const {
  int col = table_.Column(column);
  if (col < 0) return {};
  return Trim(row_.cells[static_cast<size_t>(col)]);
}

Result<std::string> RowReader::RequiredStr(std::string_view column) const {
  if (table_.Column(column) < 0) {
    return MakeError(ErrorCode::kParse, table_.label + ":1",
                     "missing column \"" + std::string(column) + "\"",
                     "add the column to the header");
  }
  std::string s = Str(column);
  if (s.empty()) {
    return MakeError(ErrorCode::kParse, Where(column), "must not be empty");
  }
  return s;
}

Result<std::optional<double>> RowReader::OptNumber(std::string_view column) const {
  std::string s = Str(column);
  if (s.empty()) return std::optional<double>();
  auto v = ParseDouble(s);
  if (!v) {
    return MakeError(ErrorCode::kParse, Where(column), "expected a number, got " + Excerpt(s),
                     "leave the cell empty when the value is unknown");
  }
  if (*v < 0) {
    return MakeError(ErrorCode::kParse, Where(column), "must be >= 0, got " + s);
  }
  return std::optional<double>(*v);
}

Result<double> RowReader::Number(std::string_view column, double min) const {
  auto s = RequiredStr(column);
  if (!s) return s.error();
  auto v = ParseDouble(*s);
  if (!v) {
    return MakeError(ErrorCode::kParse, Where(column), "expected a number, got " + Excerpt(*s));
  }
  if (*v < min) {
    return MakeError(ErrorCode::kParse, Where(column),
                     "must be >= " + std::to_string(min) + ", got " + *s);
  }
  return *v;
}

Result<int> RowReader::Int(std::string_view column, int min) const {
  auto v = Number(column, min);
  if (!v) return v.error();
  if (*v != std::floor(*v) || *v > 1e9) {
    return MakeError(ErrorCode::kParse, Where(column),
                     "expected a whole number, got " + Excerpt(Str(column)));
  }
  return static_cast<int>(*v);
}

Result<std::optional<int>> RowReader::OptInt(std::string_view column, int min, int max) const {
  auto v = OptNumber(column);
  if (!v) return v.error();
  if (!*v) return std::optional<int>();
  const double x = **v;
  if (x != std::floor(x) || x < min || x > max) {
    return MakeError(ErrorCode::kParse, Where(column),
                     "expected a whole number from " + std::to_string(min) + " to " +
                         std::to_string(max) + ", got " + Excerpt(Str(column)),
                     "leave the cell empty when the value is unknown");
  }
  return std::optional<int>(static_cast<int>(x));
}

}  // namespace gpuplan::internal
