// The CPU vs GPU serving TCO: the cheapest GPU-only and CPU-only deployments, the break-even
// load, and the day/night mix over an hourly profile (guides B10, B14, B15). Used by `tco` and
// the HTTP API's /v1/tco.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/simulate.h"

namespace gpuplan {

// CPU vs GPU serving over a horizon (guides B10, B14, B15).
struct TcoRequest {
  double years = 3;             // horizon, (0, 10]
  std::vector<double> profile;  // empty, or 24 hourly loads (req/s) for the day/night mix
};
struct TcoResult {
  std::optional<ServePlan> gpu, cpu;  // cheapest GPU-only / CPU-only deployment at job.qps
  // Without a CPU deployment, the CPU planner's notes on why (e.g. LLMs are not planned on CPUs).
  std::vector<std::string> cpu_notes;
  std::optional<double> break_even_qps;   // highest scanned load at which CPUs are cheaper
  std::optional<DayNightPlan> day_night;  // with a profile
  double months = 0;
  // Guide B10's break-even rule of thumb (~500 QPS for BERT-base) beside the computed one, with
  // a verdict; only for text encoders (the rule's model class), empty otherwise.
  std::string guide_rule;
};

// "--years" (or `field`) must be in (0, 10].
Status CheckTcoYears(double years, std::string_view field);

// Parses "l0,l1,...,l23" (24 non-negative req/s) into a profile. Errors name `field`.
Result<std::vector<double>> ParseHourlyProfile(std::string_view text, std::string_view field);

// The TCO of serving `job`: the cheapest GPU-only and CPU-only deployments at the job's load,
// the break-even load (a geometric scan from 0.5 req/s in steps of x1.25 up to 1e5; the last
// load at which the CPU deployment meets the SLOs and is not dearer), and with a profile the
// library's day/night plan (PlanDayNight). Errors: "--years" outside (0, 10], a profile that is
// not 24 loads, or what PlanServing/PlanDayNight report.
Result<TcoResult> PlanTco(const ServeJobSpec& job, const Catalog& catalog, const TcoRequest& req,
                          std::optional<double> cny_per_usd);

}  // namespace gpuplan
