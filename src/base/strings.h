// String helpers shared by every reader (trim, lower-case, split, strict number parse).
// Vocabulary layer: depends on the standard library only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::internal {

// `s` without leading and trailing white space.
std::string Trim(std::string_view s);
// ASCII lower case (other bytes unchanged).
std::string ToLower(std::string_view s);
// Splits at every `sep`; each piece trimmed; an empty input gives one empty piece.
std::vector<std::string> Split(std::string_view s, char sep);
// The pieces separated by `sep`: "a, b, c".
std::string Join(const std::vector<std::string>& v, std::string_view sep = ", ");
// Parses a finite double from the whole of `s` (no trailing junk; a leading '+' is accepted).
std::optional<double> ParseDouble(std::string_view s);

}  // namespace gpuplan::internal
