// The serving flags shared by `plan infer`, `tco` and `simulate` (defined in cmd_infer.cc), and
// the job they describe.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/serve_planner.h"
#include "report.h"

namespace gpuplan::cli {

struct InferArgs {
  std::string file;
  std::string model = "Llama-2-13B";
  std::string precision, quant, kv_precision, engine = "vllm", currency;
  // Flags are optional values: unset is nullopt, never a 0/NaN/-1 sentinel.
  std::optional<double> qps;
  std::optional<double> tokens_per_s;  // load as output tokens/s (converted with output_len)
  std::optional<double> users;         // load as concurrent users (converted with think time)
  double think_s = 10;
  std::optional<int> input_len, output_len;
  std::optional<double> ttft_ms, tpot_ms, e2e_ms;
  double util = 0.6;
  std::vector<std::string> clouds, regions, gpus;
  bool cpu = false, cpu_only = false, reserved = false;
  bool include_suspect = false, by_region = false;
  std::optional<int> top;
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
