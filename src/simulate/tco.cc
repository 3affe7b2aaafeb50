// CPU vs GPU serving TCO: break-even load and the day/night mix (include/gpuplan/tco.h).
#include <fmt/format.h>
#include <sstream>
#include <stdexcept>

#include "gpuplan/tco.h"

namespace gpuplan {

namespace {

// The break-even scan: geometric loads from kScanStartQps, x kScanStep, up to kScanEndQps.
constexpr double kScanStartQps = 0.5;
constexpr double kScanStep = 1.25;
constexpr double kScanEndQps = 100000;

// Cheapest monthly deployment serving `qps` with only GPUs or only CPUs.
// A job the planner refuses (an unknown cloud or GPU) is an error, not "no deployment".
Result<std::optional<ServePlan>> Cheapest(const ServeJobSpec& base, const Catalog& cat, double qps,
                                          bool cpu, std::optional<double> rate,
                                          std::vector<std::string>* why_none = nullptr) {
  ServeJobSpec j = base;
  j.qps = qps;
  j.allow_cpu = cpu;
  j.allow_gpu = !cpu;
  j.top = 1;
  j.with_guide = false;
  auto r = PlanServing(j, cat, DefaultCalibration(), rate);
  if (!r) return r.error();
  if (r->plans.empty()) {
    if (why_none != nullptr) *why_none = r->notes;
    return std::optional<ServePlan>();
  }
  return std::optional<ServePlan>(r->plans.front());
}

}  // namespace

Status CheckTcoYears(double years, std::string_view field) {
  if (!(years > 0 && years <= 10)) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     fmt::format("must be in (0, 10], got {}", years),
                     "give the years to cost over, above 0 and at most 10 (e.g. 3)");
  }
  return {};
}

Result<std::vector<double>> ParseHourlyProfile(std::string_view text, std::string_view field) {
  std::vector<double> profile;
  std::stringstream ss{std::string(text)};
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    try {
      size_t used = 0;
      double v = std::stod(tok, &used);
      if (used != tok.size() || v < 0) throw std::invalid_argument("bad");
      profile.push_back(v);
    } catch (...) {
      return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                       "expected 24 loads (req/s) separated by commas, got \"" + tok + "\"");
    }
  }
  if (profile.size() != 24) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(field),
                     fmt::format("needs 24 hourly loads, got {}", profile.size()));
  }
  return profile;
}

Result<TcoResult> PlanTco(const ServeJobSpec& job, const Catalog& catalog, const TcoRequest& req,
                          std::optional<double> rate) {
  if (auto st = CheckTcoYears(req.years, "--years"); !st) return st.error();
  if (!req.profile.empty() && req.profile.size() != 24) {
    return MakeError(ErrorCode::kInvalidArgument, "--profile",
                     fmt::format("needs 24 hourly loads, got {}", req.profile.size()));
  }
  TcoResult r;
  r.months = req.years * 12;
  GPUPLAN_ASSIGN_OR_RETURN(r.gpu, Cheapest(job, catalog, job.qps, false, rate));
  GPUPLAN_ASSIGN_OR_RETURN(r.cpu, Cheapest(job, catalog, job.qps, true, rate, &r.cpu_notes));
  // Break-even: the load below which the CPU deployment is cheaper.
  for (double q = kScanStartQps; q <= kScanEndQps; q *= kScanStep) {
    std::optional<ServePlan> gq, cq;
    GPUPLAN_ASSIGN_OR_RETURN(gq, Cheapest(job, catalog, q, false, rate));
    GPUPLAN_ASSIGN_OR_RETURN(cq, Cheapest(job, catalog, q, true, rate));
    if (!cq) break;
    if (gq && cq->cost_per_month > gq->cost_per_month) break;
    r.break_even_qps = q;
  }
  // Guide B10: CPUs serve BERT-base more cheaply than GPUs up to ~500 QPS. A text encoder's
  // rule, so it is shown for text encoders only (BERT-class: an encoder with a vocabulary).
  if (job.model.arch == ModelArch::kEncoder && job.model.vocab > 0) {
    constexpr double kGuideB10Qps = 500;
    const double q = r.break_even_qps.value_or(0);
    const bool agrees = q >= kGuideB10Qps / 1.5 && q <= kGuideB10Qps * 1.5;
    r.guide_rule = fmt::format(
        "guide B10: CPUs are cheaper than GPUs below ~{:.0f} QPS for BERT-base; gpuplan: {} "
        "for {} at these lengths and SLOs ({}, by the serving model at current catalog prices)",
        kGuideB10Qps,
        r.break_even_qps ? fmt::format("below ~{:.0f} req/s", q)
                         : std::string("at no load scanned"),
        job.model.name, agrees ? "agrees within 1.5x" : "differs");
  }
  if (!req.profile.empty()) {
    // GPU replicas of the peak deployment follow the hourly load; an hour runs on CPUs only
    // where that is cheaper (also used by `simulate --policy schedule`).
    auto dn = PlanDayNight(job, catalog, DefaultCalibration(), req.profile, rate);
    if (!dn) return dn.error();
    r.day_night = std::move(*dn);
  }
  return r;
}

}  // namespace gpuplan
