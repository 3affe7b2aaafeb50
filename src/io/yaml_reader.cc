#include "io/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

#include "gpuplan/input.h"
#include "gpuplan/quantity.h"
#include "io/quantity_text.h"
#include "base/strings.h"
#include "io/yaml_util.h"

namespace gpuplan::internal {

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string Describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return Excerpt(n.Scalar());
}

int LineOf(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  int line = n.Mark().line;
  return line >= 0 ? line + 1 : 0;
}

std::string YamlReader::Field(const YAML::Node& at, std::string_view path) const {
  std::string f = label_;
  int line = LineOf(at);
  if (line > 0) f += ":" + std::to_string(line);
  if (!path.empty()) {
    f += ":";
    f += path;
  }
  return f;
}

Error YamlReader::Fail(const YAML::Node& at, std::string_view path, std::string message,
                       std::string hint, ErrorCode code) const {
  return MakeError(code, Field(at, path), std::move(message), std::move(hint));
}

Error YamlReader::Fail(const Entry& e, std::string message, std::string hint,
                       ErrorCode code) const {
  return MakeError(code, Field(e), std::move(message), std::move(hint));
}

Result<YAML::Node> YamlReader::Load(std::string_view text) const {
  if (text.size() > kMaxYamlFileBytes) {
    return MakeError(ErrorCode::kInvalidArgument, label_,
                     "is " + std::to_string(text.size()) + " bytes, over the limit of " +
                         std::to_string(kMaxYamlFileBytes) + " bytes",
                     schema_.what + " is a few lines; see docs/reliability.md");
  }
  YamlDocument doc;
  try {
    doc = LoadOneYamlDocument(text);
  } catch (const YAML::Exception& e) {
    return FromException(e);
  } catch (const std::exception& e) {
    return Internal(e.what());
  }
  if (doc.extra_content) {
    return MakeError(ErrorCode::kParse, label_ + ":" + std::to_string(doc.extra_line),
                     "holds 2 YAML documents or more", schema_.one_per_file);
  }
  if (!doc.root.IsDefined() || doc.root.IsNull()) {
    return MakeError(ErrorCode::kInvalidArgument, label_, "is empty", schema_.empty_hint);
  }
  return doc.root;
}

Error YamlReader::FromException(const YAML::Exception& e) const {
  std::string f = label_;
  if (e.mark.line >= 0) f += ":" + std::to_string(e.mark.line + 1);
  const bool syntax = dynamic_cast<const YAML::ParserException*>(&e) != nullptr;
  return MakeError(
      ErrorCode::kParse, f, schema_.invalid + ": " + e.msg,
      syntax ? "check the indentation (spaces, not tabs), `key: value` pairs and quotes" : "");
}

Error YamlReader::Internal(std::string_view what) const {
  std::string m = "unexpected error while reading " + schema_.what;
  if (!what.empty()) m += ": " + std::string(what);
  return MakeError(ErrorCode::kInternal, label_, m, "please report this with the file");
}

Result<Section> YamlReader::ReadSection(const YAML::Node& node, const YAML::Node* key_node,
                                        std::string_view path) const {
  const YamlSectionKeys* keys = nullptr;
  for (const auto& s : schema_.sections) {
    if (s.path == path) keys = &s;
  }
  Section sec;
  sec.node = node;
  sec.path = std::string(path);
  if (!node.IsMap()) {
    std::string what = path.empty() ? schema_.what : std::string(path);
    return Fail(key_node != nullptr ? *key_node : node, path,
                "expected a map of keys, got " + Describe(node),
                path.empty() ? schema_.top_hint
                             : "indent the keys of " + what + " under `" +
                                   std::string(path.substr(path.rfind('.') + 1)) + ":`");
  }
  std::vector<std::string> known;
  if (keys != nullptr) {
    for (const auto& k : keys->keys) known.emplace_back(k);
  }
  for (const auto& kv : node) {
    const YAML::Node& k = kv.first;
    if (!k.IsScalar() || Trim(k.Scalar()).empty()) {
      return Fail(k, path, "expected a key name, got " + Describe(k));
    }
    Entry e;
    e.key = k.Scalar();
    e.key_node = k;
    e.value = kv.second;
    e.path = JoinPath(path, FieldKey(e.key));
    for (const auto& prev : sec.entries) {
      if (prev.key == e.key) {
        return Fail(
            k, e.path,
            "duplicate key (first given on line " + std::to_string(LineOf(prev.key_node)) + ")",
            "keep one `" + e.key + ":`");
      }
    }
    if (std::find(known.begin(), known.end(), e.key) == known.end()) {
      return UnknownKey(e, path, known);
    }
    sec.entries.push_back(std::move(e));
  }
  return sec;
}

Error YamlReader::UnknownKey(const Entry& e, std::string_view path,
                             const std::vector<std::string>& known) const {
  std::string where = path.empty() ? "at the top level" : "in " + std::string(path);
  // A key that belongs to another section.
  for (const auto& s : schema_.sections) {
    if (s.path == path) continue;
    for (const auto& k : s.keys) {
      if (k == e.key) {
        std::string home =
            s.path.empty() ? std::string("at the top level") : "under " + std::string(s.path) + ":";
        return Fail(e, "unknown key " + Excerpt(e.key) + " " + where,
                    "`" + e.key + "` belongs " + home + " (see " + schema_.doc + ")");
      }
    }
  }
  std::string best = ClosestMatch(e.key, known);
  return Fail(e, "unknown key " + Excerpt(e.key) + " " + where,
              best.empty() ? "known keys: " + Join(known)
                           : "did you mean \"" + best + "\"? (known keys: " + Join(known) + ")");
}

namespace {
// The fix for a list or map where one value belongs.
std::string OneValueHint(const Entry& e) {
  return "write one value on the key's line, e.g. `" + e.key + ": 4`";
}
// The fix for text where a finite number belongs.
std::string NumberHint(const Entry& e) {
  return "write a finite number, e.g. `" + e.key + ": 2.5` (no units, not .nan or .inf)";
}
}  // namespace

Result<std::string> YamlReader::Str(const Entry& e) const {
  if (!e.value.IsScalar()) {
    return Fail(e, "expected one value, got " + Describe(e.value), OneValueHint(e));
  }
  std::string s = Trim(e.value.Scalar());
  if (s.empty()) {
    return Fail(
        e, "is empty",
        "give it a value, or remove `" + e.key + ":` to use the default (" + schema_.doc + ")");
  }
  return s;
}

Result<std::string> YamlReader::Text(const Entry& e) const {
  if (!e.value.IsScalar()) {
    return Fail(e, "expected one value, got " + Describe(e.value), OneValueHint(e));
  }
  return Trim(e.value.Scalar());
}

Result<double> YamlReader::Count(const Entry& e, double min_exclusive) const {
  auto s = Str(e);
  if (!s) return s.error();
  if (min_exclusive >= 0 && LooksNegative(*s)) {
    return Fail(e, fmt::format("must be > {:g}, got ", min_exclusive) + Shown(*s));
  }
  auto v = ParseCount(*s, Field(e));
  if (!v) return v.error();
  if (!(*v > min_exclusive)) {
    return Fail(e, fmt::format("must be > {:g}, got ", min_exclusive) + Shown(*s));
  }
  return *v;
}

Result<double> YamlReader::Number(const Entry& e, double min_exclusive) const {
  auto s = Str(e);
  if (!s) return s.error();
  auto v = internal::ParseDouble(*s);
  if (!v) return Fail(e, "expected a number, got " + Excerpt(*s), NumberHint(e));
  if (!(*v > min_exclusive)) {
    return Fail(e, fmt::format("must be > {:g}, got ", min_exclusive) + Shown(*s));
  }
  return *v;
}

Result<double> YamlReader::PositiveCount(const Entry& e) const {
  auto s = Str(e);
  if (!s) return s.error();
  if (LooksNegative(*s)) return Fail(e, "must be > 0, got " + Shown(*s));
  auto v = ParseCount(*s, Field(e));
  if (!v) return v.error();
  if (!(*v > 0)) return Fail(e, "must be > 0, got " + Shown(*s));
  return *v;
}

Result<double> YamlReader::PositiveNumber(const Entry& e) const {
  auto s = Str(e);
  if (!s) return s.error();
  auto v = internal::ParseDouble(*s);
  if (!v) return Fail(e, "expected a number, got " + Excerpt(*s), NumberHint(e));
  if (!(*v > 0)) return Fail(e, "must be > 0, got " + Shown(*s));
  return *v;
}

Result<int> YamlReader::Int(const Entry& e, int min, int max) const {
  auto s = Str(e);
  if (!s) return s.error();
  std::string t = *s;
  if (!StripGrouping(t)) {
    return Fail(e, "expected a whole number, got " + Excerpt(*s),
                "write the number in full, e.g. 4096 (no K/M suffixes here)");
  }
  auto v = internal::ParseDouble(t);
  if (!v || *v != std::floor(*v)) {
    return Fail(e, "expected a whole number, got " + Excerpt(*s),
                "write the number in full, e.g. 4096 (no K/M suffixes here)");
  }
  // Either bound's fix names both (MakeError's range fix would give one).
  const std::string range = fmt::format("give `{}:` a whole number from {} to {}", e.key, min, max);
  if (*v < min) {
    return Fail(e, "must be >= " + std::to_string(min) + ", got " + Shown(*s), range);
  }
  if (*v > max) {
    return Fail(e, "must be <= " + std::to_string(max) + ", got " + Shown(*s), range);
  }
  return static_cast<int>(*v);
}

Result<bool> YamlReader::Bool(const Entry& e) const {
  auto s = Str(e);
  if (!s) return s.error();
  std::string t = ToLower(*s);
  // YAML 1.1's spellings, as yaml-cpp reads them.
  if (t == "true" || t == "yes" || t == "on" || t == "y") return true;
  if (t == "false" || t == "no" || t == "off" || t == "n") return false;
  return Fail(e, "expected true or false, got " + Excerpt(*s),
              "write `" + e.key + ": true` or `" + e.key + ": false`");
}

Result<std::vector<std::string>> YamlReader::Names(const Entry& e, bool lower) const {
  std::vector<std::string> out;
  auto add = [&](const YAML::Node& item, const std::string& path) -> Status {
    if (!item.IsScalar()) {
      return Fail(item, path, "expected a name, got " + Describe(item),
                  "write each item as a plain name, e.g. `" + e.key + ": [a, b]`");
    }
    std::string s = Trim(item.Scalar());
    if (s.empty()) return Fail(item, path, "is empty", "remove the empty item");
    if (lower) s = ToLower(s);
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    return {};
  };
  if (e.value.IsScalar()) {
    Status st = add(e.value, e.path);
    if (!st) return st.error();
    return out;
  }
  if (!e.value.IsSequence()) {
    return Fail(e, "expected a list of names, got " + Describe(e.value),
                "write `" + e.key + ": [a, b]`");
  }
  size_t i = 0;
  for (const auto& item : e.value) {
    Status st = add(item, e.path + "[" + std::to_string(i) + "]");
    if (!st) return st.error();
    ++i;
  }
  return out;
}

}  // namespace gpuplan::internal
