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

// `s` lower-cased without separators ('-', '_', '.', '/', spaces): "adamw_8bit", "AdamW-8bit"
// and "adamw 8bit" are one spelling.
inline std::string SquashName(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.' || c == '/' || c == ' ' || c == '\t') continue;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

// The row whose name or alias squashes to `t` (already squashed), or nullptr.
template <class E, std::size_t N>
const EnumName<E>* FindSquashedIn(const EnumName<E> (&table)[N], const std::string& t) {
  if (t.empty()) return nullptr;
  for (const auto& row : table) {
    if (t == SquashName(row.name)) return &row;
    std::string_view rest = row.aliases;
    while (!rest.empty()) {
      const std::size_t sp = rest.find(' ');
      const std::string_view alias = rest.substr(0, sp);
      if (!alias.empty() && t == SquashName(alias)) return &row;
      if (sp == std::string_view::npos) break;
      rest.remove_prefix(sp + 1);
    }
  }
  return nullptr;
}

// The value whose name or alias is `s`, case- and separator-insensitive ("AdamW_8bit" is
// "adamw-8bit"); with `class_path`, also the row named by the last component of a dotted
// class path as configs write it ("torch.optim.AdamW", "bitsandbytes.optim.PagedAdamW8bit");
// nullopt when none names a row.
template <class E, std::size_t N>
std::optional<E> ParseIn(const EnumName<E> (&table)[N], std::string_view s,
                         bool class_path = false) {
  const std::string trimmed = Trim(s);
  const std::string_view t = trimmed;
  if (const auto* row = FindSquashedIn(table, SquashName(t))) return row->value;
  if (const std::size_t dot = t.rfind('.');
      class_path && dot != std::string_view::npos && dot > 0 && dot + 1 < t.size()) {
    if (const auto* row = FindSquashedIn(table, SquashName(t.substr(dot + 1)))) return row->value;
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
