// Subcommand registration. Each Register* adds a CLI11 subcommand whose callback stores a
// runnable in `run`; main() executes it after parsing, so errors map to exit codes in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "report.h"

namespace gpuplan::cli {

using Runner = std::function<Result<Output>()>;

void RegisterCatalogCommands(CLI::App& app, GlobalOptions& g, Runner& run);
void RegisterMemoryCommand(CLI::App& app, GlobalOptions& g, Runner& run);
void RegisterValidateCommand(CLI::App& app, GlobalOptions& g, Runner& run);
void RegisterPlanCommand(CLI::App& app, GlobalOptions& g, Runner& run);
// `plan infer` (under the plan command) and `tco`. Call after RegisterPlanCommand.
void RegisterInferCommands(CLI::App& app, GlobalOptions& g, Runner& run);
// `plan train -f FILE` / `plan infer -f FILE` (used by `emit --job`).
Result<Output> RunPlanTrainFile(const GlobalOptions& g, const std::string& file);
Result<Output> RunPlanInferFile(const GlobalOptions& g, const std::string& file);
// `plan infer` on the default scenario (guide B16 serving).
Result<Output> RunPlanInferDefault(const GlobalOptions& g);
// `check -f setup.yaml`: the guides' pitfalls in an intended setup (docs/check.md).
void RegisterCheckCommand(CLI::App& app, GlobalOptions& g, Runner& run);
// `emit TARGET --plan plan.json`: deployment files for a plan (docs/emit.md).
void RegisterEmitCommand(CLI::App& app, GlobalOptions& g, Runner& run);
// `plan train` on the default scenario (guide B16).
Result<Output> RunPlanTrainDefault(const GlobalOptions& g);
// `simulate`: a serving plan replayed over a load trace under autoscaling policies (issue #16).
void RegisterSimulateCommand(CLI::App& app, GlobalOptions& g, Runner& run);
// `serve-api`: the HTTP/JSON API and the web page (docs/api.md, issue #17).
void RegisterServeApiCommand(CLI::App& app, GlobalOptions& g, Runner& run);
// The default job when no subcommand is given (the guides' B16 NLP scenario).
Result<Output> RunDefaultScenario(const GlobalOptions& g);

}  // namespace gpuplan::cli
