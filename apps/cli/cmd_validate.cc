// gpuplan validate: predictions against published measurements (see src/validate/).
#include <fmt/format.h>
#include <memory>

#include "commands.h"

namespace gpuplan::cli {

void RegisterValidateCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto* c = app.add_subcommand("validate", "Compare predictions with published measurements");
  (void)c;
  (void)g;
  (void)run;
}

}  // namespace gpuplan::cli
