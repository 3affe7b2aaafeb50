// The one YAML reader of gpuplan's input files (job, serve and check files): a schema of the
// sections and their keys, map sections that reject unknown and duplicate keys with a
// did-you-mean, typed scalars, and errors that name "label:LINE:yaml.path". yaml-cpp stays
// below this line: callers get Result values (they catch YAML::Exception from the loader).
#pragma once

#include <yaml-cpp/yaml.h>

#include <climits>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.h"

namespace gpuplan::internal {

// The keys one section of a file may hold; `path` "" is the top level, "train.data" a nested map.
struct YamlSectionKeys {
  std::string_view path;
  std::vector<std::string_view> keys;
};

// A file's schema: its sections, the document that describes it, and what to call it.
struct YamlSchema {
  std::vector<YamlSectionKeys> sections;
  std::string doc;                       // "docs/job-yaml.md"
  std::string what;                      // "the job file"
  std::string top_hint;                  // shown when the whole file is not a map
  std::string empty_hint;                // shown when the file holds no document
  std::string one_per_file;              // shown when it holds 2 documents: "put one job per file"
  std::string invalid = "invalid YAML";  // start of a syntax error's message
};

// "parent.key" (or "key" at the top level).
std::string JoinPath(std::string_view parent, std::string_view key);
// "nothing", "a map", "a list" or a safe excerpt of the scalar.
std::string Describe(const YAML::Node& n);
// 1-based line of a node, 0 when unknown.
int LineOf(const YAML::Node& n);

struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
  std::string path;  // "train.data.tokens"
  bool present() const { return value.IsDefined() && !value.IsNull(); }
};

struct Section {
  YAML::Node node;
  std::string path;
  std::vector<Entry> entries;
  // The entry for `key` when given with a value (a key with an empty value or ~ counts as
  // absent: the default applies).
  const Entry* Get(std::string_view key) const {
    for (const auto& e : entries) {
      if (e.key == key) return e.present() ? &e : nullptr;
    }
    return nullptr;
  }
  const Entry* Raw(std::string_view key) const {
    for (const auto& e : entries) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }
};

class YamlReader {
 public:
  YamlReader(std::string_view label, const YamlSchema& schema)
      : file_(label),
        label_(label.empty() ? std::string("<yaml>") : std::string(label)),
        schema_(schema) {}

  // The label for messages ("<yaml>" when none was given) and as given (a path, or empty).
  const std::string& label() const { return label_; }
  const std::string& file() const { return file_; }

  // "label:LINE:path" (the line omitted when unknown, the path when empty).
  std::string Field(const YAML::Node& at, std::string_view path) const;

  std::string Field(const Entry& e) const { return Field(e.key_node, e.path); }

  // An error at `at` (its line) and `path`, or at an entry.
  Error Fail(const YAML::Node& at, std::string_view path, std::string message,
             std::string hint = {}, ErrorCode code = ErrorCode::kInvalidArgument) const;

  Error Fail(const Entry& e, std::string message, std::string hint = {},
             ErrorCode code = ErrorCode::kInvalidArgument) const;

  // Loads the one document of `text` (size-limited; an empty file or a second document is an
  // error) and runs `parse(root)`, turning every yaml-cpp exception into an Error that names
  // "label:LINE" and any other exception into kInternal. `parse` returns a Result<T>.
  template <class F>
  auto Read(std::string_view text, F&& parse) const -> decltype(parse(YAML::Node())) {
    auto root = Load(text);
    if (!root) return root.error();
    try {
      return parse(*root);
    } catch (const YAML::Exception& e) {
      return FromException(e);
    } catch (const std::exception& e) {
      return Internal(e.what());
    } catch (...) {
      return Internal("");
    }
  }

  // The root of the one document of `text` (see Read).
  Result<YAML::Node> Load(std::string_view text) const;
  // A yaml-cpp exception as an Error at "label:LINE" (kParse).
  Error FromException(const YAML::Exception& e) const;
  // An unexpected exception as kInternal, asking for a report.
  Error Internal(std::string_view what) const;

  // Reads a map, rejecting non-map values, non-scalar keys, duplicate and unknown keys.
  // `key_node` is the key that holds the map (null for the whole file).
  Result<Section> ReadSection(const YAML::Node& node, const YAML::Node* key_node,
                              std::string_view path) const;

  Error UnknownKey(const Entry& e, std::string_view path,
                   const std::vector<std::string>& known) const;

  // A non-empty scalar.
  Result<std::string> Str(const Entry& e) const;

  // A scalar, trimmed, possibly empty (for text fields where "" means "not set").
  Result<std::string> Text(const Entry& e) const;

  // A count with K/M/B/T suffixes, > `min_exclusive`.
  Result<double> Count(const Entry& e, double min_exclusive) const;

  // A count with K/M/B/T suffixes, > 0.
  Result<double> PositiveCount(const Entry& e) const;

  // A plain number (no suffix), > 0.
  Result<double> PositiveNumber(const Entry& e) const;

  // A number (no suffix), finite and > `min_exclusive`.
  Result<double> Number(const Entry& e, double min_exclusive) const;

  // A whole number in [min, max], without suffixes ("4K" is ambiguous for a sequence length).
  Result<int> Int(const Entry& e, int min, int max = INT_MAX) const;

  // true/yes/on/y or false/no/off/n, any case.
  Result<bool> Bool(const Entry& e) const;

  // A list of non-empty names; a single scalar is a one-item list. Duplicates are dropped.
  Result<std::vector<std::string>> Names(const Entry& e, bool lower) const;

 private:
  std::string file_;
  std::string label_;
  const YamlSchema& schema_;
};

}  // namespace gpuplan::internal
