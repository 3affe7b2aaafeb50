#include <algorithm>
#include <cmath>

#include "io/embedded.h"
#include "gpuplan/benchmark.h"
#include "gpuplan/quant_preset.h"
#include "io/csv.h"

namespace gpuplan {

double TrainBenchmark::SamplesToTarget(int global_batch, double round) const {
  if (!rcp.empty()) {
    // The set of the case's round (the latest when none is given), then MLPerf's rcp_checker
    // rule for a batch between two published ones: np.interp of their means. Flat below the
    // smallest batch (smaller batches converge in no fewer samples); the last segment's slope
    // above the largest.
    const ConvergenceSet* set = &rcp.back();
    if (round > 0) {
      set = &rcp.front();
      for (const auto& s : rcp) {
        if (s.from_round <= round + 1e-9) set = &s;
      }
    }
    const auto& pts = set->points;
    const double b = global_batch > 0 ? global_batch : ref_global_batch;
    if (pts.size() == 1 || b <= pts.front().global_batch) return pts.front().samples;
    std::size_t hi = 1;
    while (hi + 1 < pts.size() && pts[hi].global_batch < b) ++hi;
    const ConvergencePoint& p = pts[hi - 1];
    const ConvergencePoint& q = pts[hi];
    return p.samples + (q.samples - p.samples) * (b - p.global_batch) /
                           static_cast<double>(q.global_batch - p.global_batch);
  }
  double n = samples_to_target;
  if (global_batch > ref_global_batch && ref_global_batch > 0 && batch_exponent > 0) {
    n *= std::pow(static_cast<double>(global_batch) / ref_global_batch, batch_exponent);
  }
  return n;
}

double TrainBenchmark::TokensPerSample(int seq_len) const {
  return mean_tokens_per_sample.value_or(static_cast<double>(seq_len));
}

int TrainBenchmark::PackingFactor(int seq_len) const {
  if (!mean_tokens_per_sample || *mean_tokens_per_sample <= 0 || seq_len <= 0) return 1;
  // 2 for BERT's 254 real tokens in 512.
  return std::max(1, static_cast<int>(std::lround(seq_len / *mean_tokens_per_sample)));
}

int TrainBenchmark::SequencesPerStep(int global_batch, int seq_len) const {
  const int factor = PackingFactor(seq_len);
  if (global_batch <= 0 || factor <= 1) return global_batch;
  return (global_batch + factor - 1) / factor;
}

double TrainBenchmark::EvalOverhead(double forward_share) const {
  if (eval_every_samples <= 0 || eval_samples <= 0) return 0;
  return eval_samples / eval_every_samples * forward_share;
}

namespace {
// "[vX.Y=]batch:samples|batch:samples|...[;vX.Y=...]": sets ascending in round, each with
// batches strictly ascending and positive sample counts.
Result<std::vector<TrainBenchmark::ConvergenceSet>> ParseConvergenceSets(
    const internal::RowReader& r) {
  std::vector<TrainBenchmark::ConvergenceSet> out;
  const std::string cell = r.Str("rcp");
  if (cell.empty()) return out;
  auto bad = [&](const std::string& item) {
    std::string what = "bad convergence point \"";
    what.append(item).append("\"");
    return MakeError(ErrorCode::kParse, r.Where("rcp"), what,
                     "write batch:samples pairs joined by '|', batches ascending, and start a "
                     "later round's set with ';vX.Y=' (v4.0=512:2560000|1024:2839273)");
  };
  for (std::string group : internal::Split(cell, ';')) {
    TrainBenchmark::ConvergenceSet set;
    if (const auto eq = group.find('='); eq != std::string::npos) {
      const std::string tag = internal::Trim(group.substr(0, eq));
      const auto round = tag.size() > 1 && (tag[0] == 'v' || tag[0] == 'V')
                             ? internal::ParseDouble(tag.substr(1))
                             : std::nullopt;
      if (!round || *round <= 0 || (!out.empty() && *round <= out.back().from_round)) {
        return bad(group);
      }
      set.from_round = *round;
      group = group.substr(eq + 1);
    } else if (!out.empty()) {
      return bad(group);
    }
    for (const auto& item : internal::Split(group, '|')) {
      const auto parts = internal::Split(item, ':');
      const auto batch = parts.size() == 2 ? internal::ParseDouble(parts[0]) : std::nullopt;
      const auto samples = parts.size() == 2 ? internal::ParseDouble(parts[1]) : std::nullopt;
      if (!batch || !samples || *batch < 1 || *batch >= (1 << 30) || *batch != std::floor(*batch) ||
          *samples <= 0) {
        return bad(item);
      }
      TrainBenchmark::ConvergencePoint p{static_cast<int>(*batch), *samples};
      if (!set.points.empty() && p.global_batch <= set.points.back().global_batch) return bad(item);
      set.points.push_back(p);
    }
    out.push_back(std::move(set));
  }
  return out;
}
}  // namespace

Result<std::vector<TrainBenchmark>> ParseTrainBenchmarks(std::string_view csv,
                                                         std::string_view label) {
  auto t = internal::ParseCsv(csv, label, true);
  if (!t) return t.error();
  std::vector<TrainBenchmark> out;
  for (const auto& row : t->rows) {
    internal::RowReader r(*t, row);
    TrainBenchmark b;
    GPUPLAN_ASSIGN_OR_RETURN(b.id, r.RequiredStr("id"));
    for (const auto& a : internal::Split(r.Str("aliases"), '|')) {
      if (!internal::Trim(a).empty()) b.aliases.push_back(internal::ToLower(internal::Trim(a)));
    }
    b.dataset = r.Str("dataset");
    std::optional<double> spe;
    GPUPLAN_ASSIGN_OR_RETURN(spe, r.OptNumber("samples_per_epoch"));
    b.samples_per_epoch = spe.value_or(0);
    b.target = r.Str("target");
    GPUPLAN_ASSIGN_OR_RETURN(b.samples_to_target, r.Number("samples_to_target", 1));
    GPUPLAN_ASSIGN_OR_RETURN(b.ref_global_batch, r.Int("ref_global_batch", 1));
    GPUPLAN_ASSIGN_OR_RETURN(b.batch_exponent, r.Number("batch_exponent", 0));
    GPUPLAN_ASSIGN_OR_RETURN(b.rcp, ParseConvergenceSets(r));
    std::optional<double> v;
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("eval_every_samples"));
    b.eval_every_samples = v.value_or(0);
    GPUPLAN_ASSIGN_OR_RETURN(v, r.OptNumber("eval_samples"));
    b.eval_samples = v.value_or(0);
    b.model = r.Str("model");
    GPUPLAN_ASSIGN_OR_RETURN(b.gflops_per_sample, r.OptNumber("gflops_per_sample"));
    GPUPLAN_ASSIGN_OR_RETURN(b.activation_melems_per_sample,
                             r.OptNumber("activation_melems_per_sample"));
    GPUPLAN_ASSIGN_OR_RETURN(b.mean_tokens_per_sample, r.OptNumber("mean_tokens_per_sample"));
    GPUPLAN_ASSIGN_OR_RETURN(b.ref_dp_overlap, r.OptNumber("ref_dp_overlap"));
    if (b.ref_dp_overlap && (*b.ref_dp_overlap < 0 || *b.ref_dp_overlap > 1)) {
      return MakeError(ErrorCode::kParse, r.Where("ref_dp_overlap"),
                       "must be in [0, 1], got " + r.Str("ref_dp_overlap"));
    }
    GPUPLAN_ASSIGN_OR_RETURN(b.source, r.RequiredStr("source"));
    b.as_of = r.Str("as_of");
    b.notes = r.Str("notes");
    out.push_back(std::move(b));
  }
  return out;
}

namespace {
// An embedded data/ table parsed once by `parse`; empty when absent or unparsable (the
// embedded tables are checked by the tests).
template <class T, class Parse>
std::vector<T> LoadEmbedded(const char* name, Parse parse) {
  const auto* f = internal::FindEmbeddedFile(name);
  if (!f) return {};
  auto t = parse(f->text, f->path);
  return t ? std::move(*t) : std::vector<T>{};
}
}  // namespace

const std::vector<TrainBenchmark>& TrainBenchmarks() {
  static const std::vector<TrainBenchmark> table =
      LoadEmbedded<TrainBenchmark>("benchmarks.csv", ParseTrainBenchmarks);
  return table;
}

const TrainBenchmark* FindTrainBenchmark(std::string_view name) {
  const std::string n = internal::ToLower(internal::Trim(name));
  if (n.empty()) return nullptr;
  for (const auto& b : TrainBenchmarks()) {
    if (internal::ToLower(b.id) == n) return &b;
    if (std::find(b.aliases.begin(), b.aliases.end(), n) != b.aliases.end()) return &b;
  }
  return nullptr;
}

Result<std::vector<InferBenchmark>> ParseInferBenchmarks(std::string_view csv,
                                                         std::string_view label) {
  auto t = internal::ParseCsv(csv, label, true);
  if (!t) return t.error();
  std::vector<InferBenchmark> out;
  for (const auto& row : t->rows) {
    internal::RowReader r(*t, row);
    InferBenchmark b;
    GPUPLAN_ASSIGN_OR_RETURN(b.id, r.RequiredStr("id"));
    for (const auto& a : internal::Split(r.Str("aliases"), '|')) {
      if (!internal::Trim(a).empty()) b.aliases.push_back(internal::ToLower(internal::Trim(a)));
    }
    b.task = r.Str("task");
    b.model = r.Str("model");
    GPUPLAN_ASSIGN_OR_RETURN(b.dataset, r.RequiredStr("dataset"));
    GPUPLAN_ASSIGN_OR_RETURN(b.samples, r.Int("samples", 1));
    GPUPLAN_ASSIGN_OR_RETURN(b.mean_input_tokens, r.OptNumber("mean_input_tokens"));
    GPUPLAN_ASSIGN_OR_RETURN(b.max_input_tokens, r.OptNumber("max_input_tokens"));
    GPUPLAN_ASSIGN_OR_RETURN(b.mean_output_tokens, r.OptNumber("mean_output_tokens"));
    GPUPLAN_ASSIGN_OR_RETURN(b.min_output_tokens, r.OptNumber("min_output_tokens"));
    GPUPLAN_ASSIGN_OR_RETURN(b.max_output_tokens, r.OptNumber("max_output_tokens"));
    b.stop = r.Str("stop");
    GPUPLAN_ASSIGN_OR_RETURN(b.beams, r.Int("beams", 1));
    if (const std::string p = r.Str("precision"); !p.empty()) {
      b.precision = ParsePrecision(p);
      if (!b.precision) {
        return MakeError(ErrorCode::kParse, r.Where("precision"), "unknown precision \"" + p + "\"",
                         "fp8, int8, bf16 or fp16; empty when unknown");
      }
    }
    b.fp4_quant = internal::ToLower(internal::Trim(r.Str("fp4_quant")));
    if (!b.fp4_quant.empty() && !FindQuantPreset(b.fp4_quant)) {
      return MakeError(ErrorCode::kParse, r.Where("fp4_quant"),
                       "unknown quantization format \"" + b.fp4_quant + "\"",
                       "a --quant name such as nvfp4; empty when none");
    }
    GPUPLAN_ASSIGN_OR_RETURN(b.server_ttft_p99_ms, r.OptNumber("server_ttft_p99_ms"));
    GPUPLAN_ASSIGN_OR_RETURN(b.server_tpot_p99_ms, r.OptNumber("server_tpot_p99_ms"));
    GPUPLAN_ASSIGN_OR_RETURN(b.server_latency_p99_ms, r.OptNumber("server_latency_p99_ms"));
    b.server_dispatch = internal::ToLower(internal::Trim(r.Str("server_dispatch")));
    if (!b.server_dispatch.empty() && b.server_dispatch != "shared") {
      return MakeError(ErrorCode::kParse, r.Where("server_dispatch"),
                       "must be \"shared\" or empty, got \"" + r.Str("server_dispatch") + "\"");
    }
    GPUPLAN_ASSIGN_OR_RETURN(b.guidance_scale, r.OptNumber("guidance_scale"));
    if (const std::string st = r.Str("denoise_steps"); !st.empty()) {
      GPUPLAN_ASSIGN_OR_RETURN(b.denoise_steps, r.Int("denoise_steps", 1));
      if (*b.denoise_steps < 1 || *b.denoise_steps > 1000) {
        return MakeError(ErrorCode::kParse, r.Where("denoise_steps"),
                         "denoising steps must be 1..1000 (leave the cell empty when none)");
      }
    }
    for (const auto* v :
         {&b.mean_input_tokens, &b.max_input_tokens, &b.mean_output_tokens, &b.max_output_tokens}) {
      if (*v && !(**v > 0)) {
        return MakeError(ErrorCode::kParse, r.Where("mean_input_tokens"),
                         "token counts must be > 0 (leave the cell empty when unknown)");
      }
    }
    GPUPLAN_ASSIGN_OR_RETURN(b.source, r.RequiredStr("source"));
    b.as_of = r.Str("as_of");
    b.notes = r.Str("notes");
    out.push_back(std::move(b));
  }
  return out;
}

const std::vector<InferBenchmark>& InferBenchmarks() {
  static const std::vector<InferBenchmark> table =
      LoadEmbedded<InferBenchmark>("inference_benchmarks.csv", ParseInferBenchmarks);
  return table;
}

const InferBenchmark* FindInferBenchmark(std::string_view name) {
  const std::string n = internal::ToLower(internal::Trim(name));
  if (n.empty()) return nullptr;
  for (const auto& b : InferBenchmarks()) {
    const std::string id = internal::ToLower(b.id);
    const auto slash = id.find('/');
    if (id == n || (slash != std::string::npos && id.substr(slash + 1) == n)) return &b;
    if (std::find(b.aliases.begin(), b.aliases.end(), n) != b.aliases.end()) return &b;
  }
  return nullptr;
}

std::optional<MissingLength> UnpublishedLength(const InferBenchmark& b,
                                               const ServingShape& filled) {
  auto missing = [&](const char* what, const char* flag) {
    return MissingLength{b.id + ": the mean " + what +
                             " length is not published (empty in data/inference_benchmarks.csv)",
                         flag};
  };
  if (!filled.input_len) return missing("prompt", "--input-len");
  if (!filled.output_len && filled.max_output_len) return missing("output", "--output-len");
  return std::nullopt;
}

ServingShape FillServingShape(const InferBenchmark& b, ServingShape s) {
  const bool generates = b.mean_output_tokens || b.max_output_tokens;
  if (!s.input_len && b.mean_input_tokens) {
    s.input_len = static_cast<int>(std::lround(*b.mean_input_tokens));
  }
  if (generates) {
    if (!s.output_len && b.mean_output_tokens) {
      s.output_len = static_cast<int>(std::lround(*b.mean_output_tokens));
    }
    if (!s.max_output_len && b.max_output_tokens) {
      s.max_output_len = static_cast<int>(std::lround(*b.max_output_tokens));
    }
    if (!s.ttft_p99_ms) s.ttft_p99_ms = b.server_ttft_p99_ms;
    if (!s.tpot_p99_ms) s.tpot_p99_ms = b.server_tpot_p99_ms;
  }
  if (!s.beams) s.beams = b.beams;
  if (!s.denoise_steps) s.denoise_steps = b.denoise_steps;
  if (!s.guidance_scale) s.guidance_scale = b.guidance_scale;
  if (!s.e2e_p99_ms) s.e2e_p99_ms = b.server_latency_p99_ms;
  return s;
}

}  // namespace gpuplan
