// One name table per enum (issue 10): each enum's values, canonical names and accepted aliases
// are written once, as a constexpr array of EnumName rows in the enum's home .cc, and its
// XxxName(), ParseXxx() and XxxNames() (the did-you-mean candidates) are read from that table.
// Vocabulary layer: depends on the standard library and base/strings only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"

namespace gpuplan::internal {

// One value: its canonical name (what Name() prints and what did-you-mean offers) and the other
// spellings Parse() accepts, separated by spaces ("" when none).
template <class E>
struct EnumName {
  E value;
  const char* name;
  std::string_view aliases = "";
};

// The canonical name of `v`, or "?" for a value missing from the table.
template <class E, std::size_t N>
const char* NameIn(const EnumName<E> (&table)[N], E v) {
  for (const auto& row : table) {
    if (row.value == v) return row.name;
  }
  return "?";
}

// The value whose name or alias is `s` (trimmed, case-insensitive), or nullopt.
template <class E, std::size_t N>
std::optional<E> ParseIn(const EnumName<E> (&table)[N], std::string_view s) {
  const std::string t = ToLower(Trim(s));
  if (t.empty()) return std::nullopt;
  for (const auto& row : table) {
    if (t == row.name) return row.value;
    std::string_view rest = row.aliases;
    while (!rest.empty()) {
      const std::size_t sp = rest.find(' ');
      const std::string_view alias = rest.substr(0, sp);
      if (!alias.empty() && t == alias) return row.value;
      if (sp == std::string_view::npos) break;
      rest.remove_prefix(sp + 1);
    }
  }
  return std::nullopt;
}

// The canonical names in table order: the candidates of a did-you-mean.
template <class E, std::size_t N>
std::vector<std::string> NamesIn(const EnumName<E> (&table)[N]) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const auto& row : table) out.emplace_back(row.name);
  return out;
}

// The names of `values` (a subset chosen by the caller, e.g. the training precisions).
template <class E, std::size_t N>
std::vector<std::string> NamesIn(const EnumName<E> (&table)[N], std::initializer_list<E> values) {
  std::vector<std::string> out;
  for (E v : values) out.emplace_back(NameIn(table, v));
  return out;
}

}  // namespace gpuplan::internal
