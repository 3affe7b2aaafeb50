// gpuplan check -f setup.yaml [--json]: the guides' pitfalls in an intended setup.
// Exit 0 when no finding is an error, 1 otherwise, 2 for bad input.
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "gpuplan/check_document.h"
#include "gpuplan/input.h"
#include "gpuplan/check.h"
#include "gpuplan/perf.h"

namespace gpuplan::cli {

namespace {

struct CheckArgs {
  std::string file;
};

Result<Output> RunCheck(const GlobalOptions& g, const CheckArgs& a) {
  auto text = ReadInputFile(a.file, "-f", kMaxYamlFileBytes);
  if (!text) return text.error();
  auto setup = ParseSetupYaml(*text, a.file);
  if (!setup) return setup.error();
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  if (Status st = ValidateSetup(*setup, *cat); !st) return st.error();
  const std::vector<Finding> findings = CheckSetup(*setup, *cat, DefaultCalibration());
  int errors = 0, warnings = 0, infos = 0;
  for (const auto& f : findings) {
    if (f.severity == Severity::kError) ++errors;
    if (f.severity == Severity::kWarning) ++warnings;
    if (f.severity == Severity::kInfo) ++infos;
  }
  Output out;
  out.exit_code = errors > 0 ? kExitNothingFits : kExitOk;
  if (g.json) {
    nlohmann::json j = CheckDocument(a.file, findings);
    out.text = DumpJson(j) + "\n";
    return out;
  }
  out.text = fmt::format("gpuplan check {}: {} error(s), {} warning(s), {} note(s)\n", a.file,
                         errors, warnings, infos);
  for (const auto& f : findings) {
    out.text += fmt::format("\n{:<7} {}\n  {}\n  fix: {}\n", SeverityName(f.severity), f.rule,
                            f.message, f.fix);
  }
  if (findings.empty()) out.text += "\nno pitfall found\n";
  return out;
}

}  // namespace

void RegisterCheckCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto a = std::make_shared<CheckArgs>();
  auto* c = app.add_subcommand(
      "check", "Check an intended setup against the guides' pitfalls (docs/check.md)");
  c->add_option("-f,--file", a->file, "Setup file (YAML, schema in docs/check.md)")->required();
  c->callback([&g, &run, a] { run = [&g, a] { return RunCheck(g, *a); }; });
}

}  // namespace gpuplan::cli
