// Issue 10: dependencies point down. Parses every #include "..." under include/, src/ and apps/
// and fails when a module includes a header of a module on its own layer or above it, with the
// order read from docs/layers.txt (the one place it is written). Also checks that every public
// header is owned by a module there and described in docs/architecture.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Layers {
  std::map<std::string, int> layer_of_module;
  std::map<std::string, std::string> module_of_public_header;  // "catalog.h" -> "catalog"
};

Layers ParseLayers(const std::string& text) {
  Layers l;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    int layer = 0;
    std::string module, header;
    if (!(row >> layer >> module)) continue;
    l.layer_of_module[module] = layer;
    while (row >> header) l.module_of_public_header[header] = module;
  }
  return l;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One source file: its path relative to the repository root and its text.
struct SourceFile {
  std::string path;
  std::string text;
};

// The module a repository path belongs to: include/gpuplan/X.h -> owner of X.h; src/M/... -> M;
// apps/M/... -> M. Empty when the file is outside the layered tree.
std::string ModuleOfPath(const Layers& l, const std::string& path) {
  const std::string pub = "include/gpuplan/";
  if (path.rfind(pub, 0) == 0) {
    auto it = l.module_of_public_header.find(path.substr(pub.size()));
    return it == l.module_of_public_header.end() ? "?" + path : it->second;
  }
  for (const std::string root : {"src/", "apps/"}) {
    if (path.rfind(root, 0) == 0) {
      const std::string rest = path.substr(root.size());
      return rest.substr(0, rest.find('/'));
    }
  }
  return {};
}

// The module an include target belongs to ("gpuplan/x.h" or "io/csv.h"), or empty for a
// header outside the tree (a generated file, a header next to the includer).
std::string ModuleOfInclude(const Layers& l, const std::string& target) {
  if (target.rfind("gpuplan/", 0) == 0) return ModuleOfPath(l, "include/" + target);
  const auto slash = target.find('/');
  if (slash == std::string::npos) return {};
  return target.substr(0, slash);
}

// Every violation as "file: includes X (module m, layer a) from module n (layer b)".
std::vector<std::string> Violations(const Layers& l, const std::vector<SourceFile>& files) {
  std::vector<std::string> out;
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  for (const auto& f : files) {
    const std::string from = ModuleOfPath(l, f.path);
    if (from.empty()) continue;
    if (from[0] == '?' || !l.layer_of_module.count(from)) {
      out.push_back(f.path + ": its module '" + from + "' is not in docs/layers.txt");
      continue;
    }
    std::istringstream in(f.text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const std::string to = ModuleOfInclude(l, m[1]);
      if (to.empty() || to == from) continue;
      auto it = l.layer_of_module.find(to);
      if (it == l.layer_of_module.end()) {
        out.push_back(f.path + ":" + std::to_string(n) + ": includes " + m[1].str() +
                      " of unknown module '" + to + "'");
        continue;
      }
      const int a = it->second, b = l.layer_of_module.at(from);
      if (a >= b) {
        out.push_back(f.path + ":" + std::to_string(n) + ": includes " + m[1].str() + " (module " +
                      to + ", layer " + std::to_string(a) + ") from module " + from + " (layer " +
                      std::to_string(b) + ")");
      }
    }
  }
  return out;
}

std::vector<SourceFile> RepositoryFiles(const fs::path& root) {
  std::vector<SourceFile> files;
  for (const char* dir : {"include", "src", "apps"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file()) continue;
      const auto ext = e.path().extension().string();
      if (ext != ".h" && ext != ".cc") continue;
      files.push_back({fs::relative(e.path(), root).generic_string(), ReadFile(e.path())});
    }
  }
  return files;
}

Layers RepositoryLayers() {
  return ParseLayers(ReadFile(fs::path(GPUPLAN_SOURCE_DIR) / "docs/layers.txt"));
}

TEST(Layering, NoModuleIncludesOneAboveIt) {
  const Layers l = RepositoryLayers();
  ASSERT_GE(l.layer_of_module.size(), 10u);
  const auto files = RepositoryFiles(GPUPLAN_SOURCE_DIR);
  ASSERT_GT(files.size(), 50u);
  const auto v = Violations(l, files);
  std::string all;
  for (const auto& s : v) all += s + "\n";
  EXPECT_TRUE(v.empty()) << v.size() << " upward includes:\n" << all;
}

TEST(Layering, APlantedUpwardIncludeFails) {
  const Layers l = RepositoryLayers();
  auto files = RepositoryFiles(GPUPLAN_SOURCE_DIR);
  // The estimators must not know the planner: plant that include in a real estimator file.
  bool planted = false;
  for (auto& f : files) {
    if (f.path == "src/estimate/memory.cc") {
      f.text += "\n#include \"gpuplan/planner.h\"\n";
      planted = true;
    }
  }
  ASSERT_TRUE(planted);
  const auto v = Violations(l, files);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("src/estimate/memory.cc"), std::string::npos) << v[0];
  EXPECT_NE(v[0].find("module plan"), std::string::npos) << v[0];
  // Same layer is not allowed either (siblings do not include each other).
  const auto w = Violations(l, {{"src/catalog/x.cc", "#include \"gpuplan/model.h\"\n"}});
  EXPECT_EQ(w.size(), 1u);
  // A private header of a higher module, and a file in a folder the table does not know.
  EXPECT_EQ(Violations(l, {{"src/io/x.cc", "#include \"emit/emit_internal.h\"\n"}}).size(), 1u);
  EXPECT_EQ(Violations(l, {{"src/newmod/x.cc", "\n"}}).size(), 1u);
  // Down and same-module includes are fine.
  EXPECT_TRUE(
      Violations(l, {{"src/plan/x.cc", "#include \"gpuplan/catalog.h\"\n#include \"plan/y.h\"\n"}})
          .empty());
}

TEST(Layering, EveryPublicHeaderHasAModuleAndIsDocumented) {
  const Layers l = RepositoryLayers();
  const std::string arch = ReadFile(fs::path(GPUPLAN_SOURCE_DIR) / "docs/architecture.md");
  std::set<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(fs::path(GPUPLAN_SOURCE_DIR) / "include/gpuplan")) {
    on_disk.insert(e.path().filename().string());
  }
  for (const auto& h : on_disk) {
    EXPECT_TRUE(l.module_of_public_header.count(h))
        << h << " is not owned by a module in docs/layers.txt";
    EXPECT_NE(arch.find("`" + h + "`"), std::string::npos)
        << h << " is not described in docs/architecture.md";
  }
  for (const auto& [h, m] : l.module_of_public_header) {
    EXPECT_TRUE(on_disk.count(h)) << "docs/layers.txt lists " << h << " (module " << m
                                  << ") but it does not exist";
  }
}

}  // namespace
