#include "emit/tool_checks.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gpuplan::test {

ArgList LoadArgList(const std::string& path) {
  ArgList a;
  std::ifstream in(path);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    std::istringstream ss(line);
    std::string name, type;
    ss >> name >> type;
    if (section.rfind("choices ", 0) == 0) {
      a.choices[section.substr(8)].insert(name);
    } else {
      a.sections[section].insert(name);
      if (!type.empty()) a.types[name] = type;
    }
  }
  return a;
}

std::vector<std::string> ShellWords(const std::string& text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const std::size_t end = text.find('\'', i + 1);
      cur += text.substr(i + 1, end - i - 1);
      i = end == std::string::npos ? text.size() : end;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        cur += text[i];
      }
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
    } else {
      cur += c;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

namespace {

bool ParsesAs(const std::string& v, const std::string& type) {
  try {
    std::size_t used = 0;
    if (type == "int") {
      (void)std::stoll(v, &used);
      return used == v.size();
    }
    if (type == "float") {
      (void)std::stod(v, &used);
      return used == v.size();
    }
    if (type == "json") return nlohmann::json::accept(v);
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> CheckVllmArgs(const std::vector<std::string>& argv, const ArgList& vllm) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& flag = argv[i];
    auto t = vllm.types.find(flag);
    if (t == vllm.types.end()) {
      problems.push_back("unknown vllm serve flag \"" + flag + "\"");
      continue;
    }
    if (t->second == "bool") continue;
    if (i + 1 >= argv.size()) {
      problems.push_back(flag + " needs a value");
      break;
    }
    const std::string& v = argv[++i];
    if (!ParsesAs(v, t->second))
      problems.push_back(flag + " expects " + t->second + ", got \"" + v + "\"");
    auto c = vllm.choices.find(flag);
    if (c != vllm.choices.end() && !c->second.count(v)) {
      problems.push_back(flag + " value \"" + v + "\" is not one of vLLM's choices");
    }
    auto d = vllm.sections.find("deprecated " + flag);
    if (d != vllm.sections.end() && d->second.count(v) &&
        std::find(argv.begin(), argv.end(), "--allow-deprecated-quantization") == argv.end()) {
      problems.push_back(flag + " value \"" + v +
                         "\" is deprecated: vLLM refuses it without "
                         "--allow-deprecated-quantization");
    }
  }
  return problems;
}

std::vector<std::string> CheckHfArgsJson(const nlohmann::json& args, const ArgList& hf) {
  std::vector<std::string> problems;
  if (!args.is_object()) return {"TrainingArguments JSON is not an object"};
  for (auto it = args.begin(); it != args.end(); ++it) {
    auto t = hf.types.find(it.key());
    if (t == hf.types.end()) {
      problems.push_back("unknown TrainingArguments field \"" + it.key() + "\"");
      continue;
    }
    const auto& v = it.value();
    const std::string& type = t->second;
    const bool ok = (type == "bool" && v.is_boolean()) ||
                    (type == "int" && v.is_number_integer()) ||
                    (type == "float" && v.is_number()) || (type == "str" && v.is_string()) ||
                    (type == "dict" && (v.is_object() || v.is_string()));
    if (!ok) problems.push_back(it.key() + " expects " + type + ", got " + v.dump());
    auto c = hf.choices.find(it.key());
    if (c != hf.choices.end() && v.is_string() && !c->second.count(v.get<std::string>())) {
      problems.push_back(it.key() + " value " + v.dump() + " is not one of its choices");
    }
  }
  return problems;
}

std::vector<std::string> CheckHfFlags(const std::vector<std::string>& argv, const ArgList& hf) {
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].rfind("--", 0) != 0) {
      problems.push_back("stray word \"" + argv[i] + "\"");
      continue;
    }
    const std::string name = argv[i].substr(2);
    auto t = hf.types.find(name);
    if (t == hf.types.end()) {
      problems.push_back("unknown TrainingArguments flag \"" + argv[i] + "\"");
    }
    if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) {
      const std::string& v = argv[++i];
      if (t != hf.types.end()) {
        const std::string& type = t->second;
        const bool ok = type == "bool"   ? (v == "True" || v == "False")
                        : type == "dict" ? nlohmann::json::accept(v)
                                         : ParsesAs(v, type);
        if (!ok) problems.push_back(argv[i - 1] + " expects " + type + ", got \"" + v + "\"");
      }
    }
  }
  return problems;
}

std::vector<std::string> CheckDeepSpeed(const nlohmann::json& ds, const ArgList& keys) {
  std::vector<std::string> problems;
  const auto& top = keys.sections.at("top");
  const auto& zero = keys.sections.at("zero_optimization");
  const auto& off = keys.sections.at("offload");
  if (!ds.is_object()) return {"DeepSpeed config is not an object"};
  for (auto it = ds.begin(); it != ds.end(); ++it) {
    if (!top.count(it.key())) problems.push_back("unknown DeepSpeed key \"" + it.key() + "\"");
    if ((it.key() == "bf16" || it.key() == "fp16") && it.value().is_object()) {
      for (auto s = it.value().begin(); s != it.value().end(); ++s) {
        if (!top.count(s.key()))
          problems.push_back("unknown key \"" + it.key() + "." + s.key() + "\"");
      }
    }
  }
  if (ds.contains("zero_optimization")) {
    const auto& z = ds["zero_optimization"];
    for (auto it = z.begin(); it != z.end(); ++it) {
      if (!zero.count(it.key()))
        problems.push_back("unknown zero_optimization key \"" + it.key() + "\"");
      if ((it.key() == "offload_optimizer" || it.key() == "offload_param") &&
          it.value().is_object()) {
        for (auto s = it.value().begin(); s != it.value().end(); ++s) {
          if (!off.count(s.key()))
            problems.push_back("unknown key \"zero_optimization." + it.key() + "." + s.key() +
                               "\"");
        }
      }
    }
    if (z.contains("stage") &&
        !(z["stage"].is_number_integer() && z["stage"] >= 0 && z["stage"] <= 3)) {
      problems.push_back("zero_optimization.stage must be 0-3, got " + z["stage"].dump());
    }
  }
  if (ds.contains("tensor_parallel")) {
    // AutoTP training (TPTrainingConfig); DeepSpeed 0.16.5's engine asserts ZeRO stage <= 2.
    const auto& tp = ds["tensor_parallel"];
    const auto& tkeys = keys.sections.at("tensor_parallel");
    for (auto it = tp.begin(); it != tp.end(); ++it) {
      if (!tkeys.count(it.key()))
        problems.push_back("unknown tensor_parallel key \"" + it.key() + "\"");
    }
    if (ds.contains("zero_optimization") && ds["zero_optimization"].value("stage", 0) > 2) {
      problems.push_back("tensor_parallel (AutoTP) runs with ZeRO stage 0-2 only");
    }
  }
  for (const char* k :
       {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"}) {
    if (ds.contains(k) && !ds[k].is_number_integer())
      problems.push_back(std::string(k) + " must be an integer");
  }
  return problems;
}

}  // namespace gpuplan::test
