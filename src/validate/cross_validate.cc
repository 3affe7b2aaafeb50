// Leave-one-source-out cross-validation of the performance constants (issue #14).
//
// The constants of data/calibration.csv were set by hand from the sources each row cites; no
// tool fits them to the validation cases. Someone reading validation errors while choosing
// them can still tune them to the cases, and the only honest measure of that is an error on
// cases the constants were not chosen on. So this file makes the fit explicit and repeatable:
//  - fit: coordinate descent over the tunable constants (kFitted below), each scaled by a grid
//    of factors around its shipped value (fractions capped at 1), minimising the mean
//    |log(predicted / measured)| of the covered cases;
//  - refit in-sample: the fit on every case, scored on every case;
//  - held out: for each source (SourceKey: one repository or paper), the fit on the cases of
//    every other source, scored on that source's cases only.
// A change that improves the shipped in-sample error but not the held-out one is tuning.
// Memory and formula cases do not read these constants, so their held-out error equals their
// in-sample error by construction (reported, not hidden).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpuplan/input.h"
#include "gpuplan/validate.h"
#include "validate/adapters.h"

namespace gpuplan {

namespace {

using validation::LoadedCase;

// Constants the fit may move: achievable fractions and overheads of the performance model
// (an entry "<prefix>.<arch>" counts as its prefix). Layout, unit and date facts are not fitted.
constexpr const char* kFitted[] = {
    "gemm_efficiency",
    "attention_efficiency",
    "hbm_efficiency",
    "kernel_overhead_us",
    "dp_overlap",
    "zero3_overlap",
    "framework.mcore.tp_comm_overlap",
    "framework.mcore.param_gather_overlap",
    "fp8_gemm_efficiency_factor",
    "production_goodput",
    "cnn_efficiency_factor",
    "decode_overhead_us_per_layer",
    "decode_overhead_us_per_seq",
    "decode_unoverlapped_weight_share",
    "cpu_matrix_efficiency",
    "cpu_vector_efficiency",
    "cpu_memory_efficiency",
    "cpu_op_overhead_us",
    "cpu_stream_serial_fraction",
    "server_scenario_utilization",
    "server_tpot_utilization",
    "link_efficiency",
};
// Multipliers tried around the current value, one coordinate at a time.
constexpr double kGrid[] = {0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4};
constexpr int kPasses = 2;
// Loss of a case the constants leave unpredictable (keeps the fit from trading coverage).
constexpr double kUncoveredLoss = 2.0;

bool IsFitted(const std::string& key) {
  for (const char* k : kFitted) {
    const std::string p(k);
    if (key == p ||
        (key.size() > p.size() && key.compare(0, p.size(), p) == 0 && key[p.size()] == '.')) {
      return true;
    }
  }
  return false;
}

bool IsFraction(const std::string& key) {
  for (const char* w : {"efficiency", "overlap", "goodput", "utilization"}) {
    if (key.find(w) != std::string::npos) return true;
  }
  return false;
}

double Loss(const CaseResult& r) {
  if (!r.ok || !r.predicted || *r.predicted <= 0) return kUncoveredLoss;
  return std::fabs(std::log(*r.predicted / r.measured));
}

struct Fitter {
  const std::vector<LoadedCase>& cases;
  const Catalog& catalog;
  std::vector<size_t> keys;               // indices into the calibration's entries
  std::vector<std::vector<size_t>> deps;  // per fitted key: the cases whose prediction reads it

  // Fits the constants on the cases where `train[i]`; starts from `start`.
  Calibration Fit(const Calibration& start, const std::vector<bool>& train) const {
    Calibration cal = start;
    for (int pass = 0; pass < kPasses; ++pass) {
      bool moved = false;
      for (size_t k = 0; k < keys.size(); ++k) {
        std::vector<size_t> used;
        for (size_t i : deps[k]) {
          if (train[i]) used.push_back(i);
        }
        if (used.empty()) continue;
        auto& e = cal.entries[keys[k]];
        const double v0 = e.value;
        double best_v = v0, best_loss = 0;
        for (size_t i : used) best_loss += Loss(validation::Score(cases[i], catalog, cal));
        for (double f : kGrid) {
          if (f == 1.0) continue;
          double v = v0 * f;
          if (IsFraction(e.key)) v = std::min(v, 1.0);
          if (v == v0) continue;
          e.value = v;
          double loss = 0;
          for (size_t i : used) loss += Loss(validation::Score(cases[i], catalog, cal));
          // Strictly better by a margin: ties keep the shipped value.
          if (loss < best_loss - 1e-9 * static_cast<double>(used.size())) {
            best_loss = loss;
            best_v = v;
          }
        }
        e.value = best_v;
        moved = moved || best_v != v0;
      }
      if (!moved) break;
    }
    return cal;
  }
};

}  // namespace

Result<CrossValidationReport> CrossValidateBySource(const std::vector<CaseFile>& files,
                                                    const Catalog& catalog,
                                                    std::string_view kind_filter) {
  std::vector<LoadedCase> cases;
  for (const auto& f : files) {
    auto c = validation::ParseCases(f.text, f.label, kind_filter);
    if (!c) return c.error();
    for (auto& x : *c) cases.push_back(std::move(x));
  }
  if (cases.empty()) {  // every file holds cases (ParseCases), none of this kind
    return MakeError(ErrorCode::kNotFound, "--kind",
                     "no case of kind " + Excerpt(kind_filter) + " in the file(s)",
                     "drop --kind, or give a file with cases of that kind");
  }
  const Calibration& shipped = DefaultCalibration();
  CrossValidationReport out;
  std::vector<CaseResult> base;
  for (const auto& lc : cases) base.push_back(validation::Score(lc, catalog, shipped));

  // Which cases read which constant: perturb each one and see whose prediction moves.
  Fitter fit{cases, catalog, {}, {}};
  for (size_t k = 0; k < shipped.entries.size(); ++k) {
    const auto& e = shipped.entries[k];
    if (!IsFitted(e.key)) continue;
    Calibration probe = shipped;
    probe.entries[k].value =
        IsFraction(e.key) && e.value * 1.2 > 1.0 ? e.value * 0.8 : e.value * 1.2;
    std::vector<size_t> dep;
    for (size_t i = 0; i < cases.size(); ++i) {
      CaseResult r = validation::Score(cases[i], catalog, probe);
      const bool changed = r.ok != base[i].ok || (r.predicted && base[i].predicted &&
                                                  std::fabs(*r.predicted - *base[i].predicted) >
                                                      1e-9 * std::fabs(*base[i].predicted));
      if (changed) dep.push_back(i);
    }
    if (dep.empty()) continue;
    fit.keys.push_back(k);
    fit.deps.push_back(std::move(dep));
  }

  std::vector<bool> all(cases.size(), true);
  const Calibration refit = fit.Fit(shipped, all);
  for (size_t k : fit.keys) {
    out.constants.push_back(
        {shipped.entries[k].key, shipped.entries[k].value, refit.entries[k].value});
  }

  std::set<std::string> sources;
  for (const auto& lc : cases) sources.insert(lc.result.source);
  out.sources.assign(sources.begin(), sources.end());
  std::vector<CaseResult> held(cases.size());
  for (const std::string& src : out.sources) {
    std::vector<bool> train(cases.size());
    bool reads_constants = false;
    for (size_t i = 0; i < cases.size(); ++i) train[i] = cases[i].result.source != src;
    for (const auto& d : fit.deps) {
      for (size_t i : d) reads_constants = reads_constants || !train[i];
    }
    // A source none of whose cases reads a fitted constant is predicted the same either way.
    const Calibration cal = reads_constants ? fit.Fit(shipped, train) : shipped;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (!train[i])
        held[i] = reads_constants ? validation::Score(cases[i], catalog, cal) : base[i];
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    out.shipped.cases.push_back(base[i]);
    out.refit.cases.push_back(validation::Score(cases[i], catalog, refit));
    out.held_out.cases.push_back(held[i]);
  }
  SummarizeReport(out.shipped);
  SummarizeReport(out.refit);
  SummarizeReport(out.held_out);
  return out;
}

}  // namespace gpuplan
