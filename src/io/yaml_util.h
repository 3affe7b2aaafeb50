// One YAML document, without YAML::LoadAll: yaml-cpp 0.7 (Debian 12) loops forever in LoadAll
// on input such as ",\n" (an endless run of empty documents). The first document is loaded;
// later documents are only scanned (at most a few) to reject a second one with content.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

namespace gpuplan::internal {

struct YamlDocument {
  YAML::Node root;             // the first document (Null when empty)
  bool extra_content = false;  // a later document holds content
  int extra_line = 0;          // 1-based line where that document starts
};

// Throws YAML::Exception on malformed input (callers catch and name the file and line).
YamlDocument LoadOneYamlDocument(std::string_view text);

}  // namespace gpuplan::internal
