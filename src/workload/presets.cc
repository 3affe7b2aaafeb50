// The built-in model library (data/models/*.json, embedded) and --model resolution.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/embedded.h"
#include "gpuplan/input.h"
#include "gpuplan/model.h"
#include "io/csv.h"

namespace gpuplan {

namespace {

std::vector<ModelSpec> LoadPresets() {
  std::vector<ModelSpec> out;
  const auto* files = internal::EmbeddedFiles();
  for (size_t i = 0; i < internal::NumEmbeddedFiles(); ++i) {
    const auto& f = files[i];
    if (f.path.substr(0, 7) != "models/" || f.path.size() < 5 ||
        f.path.substr(f.path.size() - 5) != ".json") {
      continue;
    }
    auto m = ParseHfConfig(f.text, f.path);
    // A broken preset is a build defect caught by the preset test; skip it here rather than
    // abort every command.
    if (m) out.push_back(std::move(*m));
  }
  std::sort(out.begin(), out.end(),
            [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
  return out;
}

// Lowercase with separators removed: "Llama-2-7B" == "llama2_7b" == "llama 2 7b".
std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

Result<ModelSpec> ParseConfigFile(const std::string& path) {
  auto text = ReadInputFile(path, path, kMaxJsonFileBytes);
  if (!text) return text.error();
  return ParseHfConfig(*text, path);
}

}  // namespace

const std::vector<ModelSpec>& Presets() {
  static const std::vector<ModelSpec> presets = LoadPresets();
  return presets;
}

namespace {

// Every preset's names (aliases, display name, Hugging Face id with and without its owner),
// lowercased and separator-free, indexed once. The first preset in library order wins a shared
// name, as the linear scan did.
struct PresetIndex {
  std::unordered_map<std::string, std::size_t> lower, normalized;
};

const PresetIndex& Index() {
  static const PresetIndex idx = [] {
    PresetIndex x;
    const auto& all = Presets();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const ModelSpec& m = all[i];
      std::vector<std::string> names = m.aliases;
      names.push_back(m.name);
      if (!m.hf_id.empty()) {
        names.push_back(m.hf_id);
        names.push_back(m.hf_id.substr(m.hf_id.find('/') + 1));
      }
      for (const auto& n : names) {
        x.lower.emplace(internal::ToLower(n), i);
        std::string norm = Normalize(n);
        if (!norm.empty()) x.normalized.emplace(std::move(norm), i);
      }
    }
    return x;
  }();
  return idx;
}

}  // namespace

const ModelSpec* FindPreset(std::string_view name) {
  const auto& all = Presets();
  const PresetIndex& idx = Index();
  // Exact (case-insensitive) first, then separator-insensitive.
  if (auto it = idx.lower.find(internal::ToLower(internal::Trim(name))); it != idx.lower.end())
    return &all[it->second];
  std::string norm = Normalize(name);
  if (norm.empty()) return nullptr;
  if (auto it = idx.normalized.find(norm); it != idx.normalized.end()) return &all[it->second];
  return nullptr;
}

Result<ModelSpec> ResolveModel(std::string_view arg, std::string_view field) {
  namespace fs = std::filesystem;
  std::string a = internal::Trim(arg);
  if (a.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field), "is empty",
                     "give a preset name (see `gpuplan models`) or a path to config.json");
  }
  if (a.size() > 4096 || a.find('\0') != std::string::npos) {
    return MakeError(
        ErrorCode::kInvalidArgument, std::string(field),
        "is " + std::to_string(a.size()) + " bytes, longer than a model name or path can be",
        "give a preset name (see `gpuplan models`) or a path to config.json");
  }
  if (const ModelSpec* p = FindPreset(a)) return *p;

  std::error_code ec;
  fs::path path(a);
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "config.json", ec)) {
      path /= "config.json";
    } else {
      return MakeError(ErrorCode::kNotFound, std::string(field),
                       "directory " + Excerpt(a) + " has no config.json",
                       "point at a config.json or a .safetensors file");
    }
  }
  if (fs::is_regular_file(path, ec)) {
    std::string p = path.string();
    std::string fname = path.filename().string();
    bool is_index = fname.size() > 11 && fname.substr(fname.size() - 11) == ".index.json";
    bool is_st = fname.size() > 12 && fname.substr(fname.size() - 12) == ".safetensors";
    if (is_index || is_st) {
      auto st = ReadSafetensors(p);
      if (!st) return st.error();
      ModelSpec m;
      fs::path cfg = path.parent_path() / "config.json";
      if (fs::exists(cfg, ec)) {
        auto parsed = ParseConfigFile(cfg.string());
        if (!parsed) return parsed.error();
        m = std::move(*parsed);
      } else {
        m.name = SanitizeUtf8(path.parent_path().filename().string());
        if (m.name.empty()) m.name = SanitizeUtf8(fname);
        if (m.name.size() > kMaxNameBytes) m.name.resize(kMaxNameBytes);
        m.arch = ModelArch::kDense;  // architecture unknown: weights only
      }
      if (st->params > 0 && !m.quant) m.params_override = st->params;
      if (st->bytes > 0) m.checkpoint_bytes = st->bytes;
      if (st->params == 0 && st->bytes > 0 && !m.quant) {
        m.params_override =
            static_cast<std::int64_t>(static_cast<double>(st->bytes) / BytesPerElement(m.dtype));
      }
      if (m.layers == 0 && !m.params_override) {
        return MakeError(ErrorCode::kParse, p, "no parameter count in the header or index");
      }
      m.source = SanitizeUtf8(p);
      if (auto v = ValidateModel(m, p); !v) return v.error();
      return m;
    }
    if (fname.size() >= 5 && fname.substr(fname.size() - 5) == ".json") {
      return ParseConfigFile(p);
    }
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     Excerpt(a) + " is not a config.json, .safetensors or index.json file",
                     "pass a preset name, config.json, or .safetensors");
  }
  // Unknown name: suggest the closest preset.
  std::vector<std::string> names;
  for (const auto& m : Presets()) {
    names.push_back(m.name);
    for (const auto& al : m.aliases) names.push_back(al);
  }
  std::string best = a.size() <= kMaxNameBytes ? ClosestMatch(a, names) : std::string();
  return MakeError(ErrorCode::kNotFound, std::string(field), "unknown model " + Excerpt(a),
                   best.empty() ? "run `gpuplan models` for the presets, or pass a config.json path"
                                : "did you mean \"" + best + "\"? (`gpuplan models` lists all)");
}

}  // namespace gpuplan
