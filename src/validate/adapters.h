// Internal interface of the validation harness (src/validate/): reading a case, the adapters
// that map a case onto the planner's types and call its estimators, and the dispatch. Not part
// of the public API (include/gpuplan/validate.h).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpuplan/benchmark.h"
#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/perf.h"
#include "gpuplan/result.h"
#include "gpuplan/validate.h"
#include "io/json_util.h"

namespace gpuplan::validation {

using internal::Json;

// Explanation sink of the case being explained (null otherwise); set by RunValidation.
extern thread_local Trace* g_trace;

// ---- small JSON accessors (null = absent) ---------------------------------------------------
const Json* Child(const Json& j, const char* key);
std::optional<double> Num(const Json& j, const char* key);
std::optional<int> Int(const Json& j, const char* key);
std::string Str(const Json& j, const char* key);
std::optional<bool> Bool(const Json& j, const char* key);
// Case-insensitive: does `hay` contain any of `needles`?
bool Contains(const std::string& hay, std::initializer_list<const char*> needles);
// The precision a case's text names: a name ParsePrecision reads, else the first format named
// inside a longer text ("BF16 mixed precision", "FP8 (E4M3)"); nullopt when none is.
std::optional<Precision> PrecisionInText(const std::string& text);

// A case the library cannot predict, with the reason (counts against coverage).
struct Unsupported {
  std::string reason;
};
using Predicted = std::variant<double, Unsupported>;

// ---- the case's model, hardware and benchmark ------------------------------------------------
std::variant<ModelSpec, Unsupported> CaseModel(const Json& mj);
std::variant<HardwareView, Unsupported> CaseHardware(const Json& hw, const Catalog& cat);
// The run-to-target benchmark a training case ran (`workload.train.benchmark`, or the MLPerf
// results path in `source`), or null.
const TrainBenchmark* CaseBenchmark(const Json& c, const Json& w);
// The public inference benchmark a serving case ran (`workload.infer.benchmark`, the MLPerf
// Inference results path in `source`, or the case id), or null.
const InferBenchmark* CaseInferBenchmark(const Json& c, const Json& w);

// How a tool reports peak memory: what torch's allocator has handed out (allocated), what it
// holds from the driver (reserved), or everything nvidia-smi sees (device).
enum class MemoryReport { kAllocated, kReserved, kDevice };
// `source`: the case's source, read only for the name of the script that measured.
MemoryReport ReportOf(const std::string& framework, const std::string& source = "");
// The engine a case's free text names; an unstated one is the planner's default, vLLM; text
// naming no LLM engine (OpenVINO, ONNX Runtime, PyTorch) is transformers-like static batching.
Engine EngineOf(const std::string& e);
// Bytes per unit of a metric name's unit token (memory_gib -> 2^30, kv_cache_gb -> 1e9).
double Unit(const std::string& metric);

// Schema checks of one case line; the error names "label:line:field".
Status CheckCase(const Json& c, const std::string& where);
// The publication a case comes from, for leave-one-source-out cross-validation: the repository
// (owner/name, benchmark rounds "x_v4.0" folded into "x") or the first author of a paper,
// lower-case. "github.com/mlcommons/training_results_v4.0 : NVIDIA/..." ->
// "mlcommons/training_results"; "Narayanan et al. 2021 ..." -> "narayanan".
std::string SourceKey(const std::string& source);

// A parsed, checked case line and its result skeleton (id, kind, metric, measured, file,
// source filled; no prediction yet).
struct LoadedCase {
  Json json;
  CaseResult result;
};
Result<std::vector<LoadedCase>> ParseCases(std::string_view text, std::string_view label,
                                           std::string_view kind_filter);
// Predicts one case with the constants `cal` and scores it against its measurement.
CaseResult Score(const LoadedCase& lc, const Catalog& catalog, const Calibration& cal,
                 Trace* trace = nullptr);

// ---- adapters --------------------------------------------------------------------------------
Predicted PredictTrainingMemory(const ModelSpec& m, const Json& w, const Json& hw,
                                const std::string& metric, const Catalog& cat,
                                const std::string& source = "");
Predicted PredictTrainingPerf(ModelSpec m, const Json& w, const Json& hw, const std::string& metric,
                              const Catalog& cat, const Calibration& cal,
                              const TrainBenchmark* bench, const std::string& source = "");
Predicted PredictInferenceMemory(const ModelSpec& m, const Json& w, const Json& hw,
                                 const std::string& metric, const Catalog& cat);
Predicted PredictInferencePerf(const ModelSpec& m, const Json& w, const Json& hw,
                               const std::string& metric, const Catalog& cat,
                               const Calibration& cal, const InferBenchmark* bench = nullptr,
                               const std::string& source = "");

// One case's prediction in the metric's base unit (bytes, seconds, tokens/s, ...), with the
// performance constants `cal` (the shipped DefaultCalibration() unless cross-validating).
Predicted Predict(const Json& c, const Catalog& cat, const Calibration& cal);

}  // namespace gpuplan::validation
