// The serving flags shared by `plan infer`, `tco` and `simulate` (defined in cmd_infer.cc), and
// the job they describe.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/job_checks.h"
#include "gpuplan/serve_planner.h"
#include "report.h"

namespace gpuplan::cli {

// The serving request (gpuplan/job_checks.h) plus what only the CLI has: the job file to
// merge, --explain, and tco's horizon and profile.
struct InferArgs : ServeRequest {
  std::string file;
  bool explain = false;
  // tco
  double years = 3;
  std::string profile;  // 24 comma-separated hourly loads (req/s)
};

// Fills the fields a flag left unset from the YAML job file `a.file` (flags win; `cmd` null =
// every field from the file).
Status MergeFile(InferArgs& a, const CLI::App* cmd);
// Validates the flags into a serving job (errors name the flag).
Result<ServeJobSpec> BuildServeJob(const InferArgs& a, const GlobalOptions& g);
// Adds the serving flags (--model, --qps, lengths, SLOs, precision, engine, filters) to `c`.
void AddServeOptions(CLI::App* c, InferArgs& a);

}  // namespace gpuplan::cli
