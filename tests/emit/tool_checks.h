// Checks of emitted files against the tools' own argument and config lists, kept as fixtures
// extracted from the tools' sources at pinned versions (tests/emit/fixtures/*.txt, source and
// version in each header): `vllm serve` flags and values, Hugging Face TrainingArguments keys
// and `--flags`, DeepSpeed config keys. Each check returns one line per problem (empty = pass).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpuplan::test {

// A fixture: named sections of lines ("[engine]", "[choices --kv-cache-dtype]"); a line is
// "NAME TYPE" or a bare value. Comment lines start with '#'.
struct ArgList {
  std::map<std::string, std::string> types;               // flag/key -> type
  std::map<std::string, std::set<std::string>> choices;   // flag/key -> allowed values
  std::map<std::string, std::set<std::string>> sections;  // section -> names
};
ArgList LoadArgList(const std::string& path);

// POSIX shell words of a command line: quotes removed, backslash-newline joined. Good enough
// for the emitted scripts (no expansions are evaluated: "$X" stays "$X").
std::vector<std::string> ShellWords(const std::string& text);

// `argv` = the words after `vllm serve MODEL`.
std::vector<std::string> CheckVllmArgs(const std::vector<std::string>& argv, const ArgList& vllm);
// A TrainingArguments JSON object (training_args.json).
std::vector<std::string> CheckHfArgsJson(const nlohmann::json& args, const ArgList& hf);
// `--name value` words after the training script in a launch command.
std::vector<std::string> CheckHfFlags(const std::vector<std::string>& argv, const ArgList& hf);
// A DeepSpeed config (ds_config.json).
std::vector<std::string> CheckDeepSpeed(const nlohmann::json& ds, const ArgList& keys);

}  // namespace gpuplan::test
