// Private to the readers in src/io: the character tests and number-text helpers shared by the
// quantity parsers (quantity.cc) and the YAML reader (yaml_reader.cc).
#pragma once

#include <string>
#include <string_view>

namespace gpuplan::internal {

bool IsDigit(char c);
bool IsAlpha(char c);
// "-4", "-2B": reported as "must be > 0" where a positive value is needed, before the
// parsers' generic ">= 0".
bool LooksNegative(std::string_view s);
// A value echoed unquoted in a message when it is short and printable, else a safe excerpt.
std::string Shown(std::string_view s);
// Removes digit-grouping separators: "50,000" (groups of exactly three before any decimal
// point) and "1_000_000" (between digits). Returns false on a misplaced separator such as
// "1,5M" (a decimal comma), which must not silently become 15M.
bool StripGrouping(std::string& t);

}  // namespace gpuplan::internal
