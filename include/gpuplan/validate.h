// Validation harness: runs gpuplan's estimators on published measurements (cases in the schema
// of ../shared/validation/SCHEMA.md) and reports the relative error of each prediction. A case
// is turned into the same model/job/layout types the planners use, and the SAME estimator
// functions are called; there is no case-specific arithmetic and no lookup of answers.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"

namespace gpuplan {

struct CaseResult {
  std::string id;
  std::string kind;    // train_throughput, train_time, infer_throughput, infer_latency, memory
  std::string metric;  // memory_gib, kv_cache_tokens, ...
  std::string file;    // the case file's label
  std::string source;  // publication key (repository or first author) for cross-validation
  double measured = 0;
  std::optional<double> predicted;
  std::optional<double> error;  // predicted / measured - 1
  bool ok = false;              // false = unsupported (reason says why)
  std::string reason;
  // Explanation of the prediction (named terms), filled for the case asked to explain.
  std::vector<std::pair<std::string, double>> explain;
};

struct KindSummary {
  int cases = 0;
  int covered = 0;
  double median_abs_err = 0;
  double p90_abs_err = 0;
  double max_abs_err = 0;
  double bias = 0;  // mean signed error
};

struct ValidationReport {
  std::vector<CaseResult> cases;
  std::map<std::string, KindSummary> summary;  // per kind, plus "all"
};

// Parses JSONL `text` (one case per line; blank lines skipped) and evaluates every case whose
// kind matches `kind_filter` (empty = all). A malformed line is an Error naming "label:line"
// and the field.
Result<ValidationReport> RunValidation(std::string_view text, std::string_view label,
                                       const Catalog& catalog, std::string_view kind_filter = {},
                                       std::string_view explain_id = {});

// One case file: its label (path) and its text.
struct CaseFile {
  std::string label;
  std::string text;
};

// A constant of data/calibration.csv that the cross-validation fits, with its shipped value
// and its value when fitted on every case.
struct FittedConstant {
  std::string key;
  double shipped = 0;
  double refit_all = 0;
};

// Leave-one-source-out cross-validation (src/validate/cross_validate.cc). The three reports
// hold the same cases in the same order: `shipped` scores them with data/calibration.csv as
// shipped; `refit` with the performance constants fitted on all cases; `held_out` scores each
// source's cases with the constants fitted on every other source only.
struct CrossValidationReport {
  ValidationReport shipped;
  ValidationReport refit;
  ValidationReport held_out;
  std::vector<FittedConstant> constants;  // the constants some case reads
  std::vector<std::string> sources;       // the folds
};

// Runs the cross-validation over the cases of all `files` together (a source's cases may sit
// in several files). Errors as RunValidation.
Result<CrossValidationReport> CrossValidateBySource(const std::vector<CaseFile>& files,
                                                    const Catalog& catalog,
                                                    std::string_view kind_filter = {});

// Summary statistics over a set of case results (covered cases only for the error terms).
KindSummary Summarize(const std::vector<const CaseResult*>& cases);

// Fills report.summary (per kind and "all") from report.cases, for reports merged from files.
void SummarizeReport(ValidationReport& report);

// The TensorRT-LLM release a source names: a release tag or branch ("tag v0.13.0",
// "release/0.5.0"), or an MLPerf Inference round before v5.1, whose NVIDIA submissions ran the
// 0.x TensorRT-engine runtime (reported as "0.x"). "" when it names none.
std::string TrtLlmVersionFromSource(std::string_view source);

}  // namespace gpuplan
