// Pricing over the catalog: the cheapest way per cloud to rent N accelerators, the spot
// interruption rate as a calibration override, and the CPU vs GPU serving TCO (break-even load
// and the day/night mix). Used by `memory`, `tco` and the HTTP API (one copy of the rules).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/perf.h"
#include "gpuplan/result.h"
#include "gpuplan/serve_planner.h"
#include "gpuplan/simulate.h"

namespace gpuplan {

// One way to rent a number of accelerators on one cloud: `nodes` machines of `inst`, priced for
// the whole setup per hour in the display currency (nullopt where the catalog has no price).
struct Offer {
  const InstanceType* inst = nullptr;  // points into the catalog passed to CheapestOffers
  int nodes = 1;
  std::optional<double> on_demand, spot;
};

// The cheapest offer per cloud for `gpus` accelerators of `acc`, cheapest (on-demand, else
// spot) first; ties by cloud, within a cloud by instance type. With `allow_multi_node` the GPUs
// may span machines, but only machines with a collective fabric (EFA, InfiniBand, RoCE):
// data-parallel training over plain TCP between boxes is not a plan (guides A13, B8); the
// count must then be a multiple of the machine's. Serving passes false (a replica stays inside
// one machine). Prices are converted into `cur` with the catalog's rate or `cny_per_usd`.
std::vector<Offer> CheapestOffers(const Catalog& cat, const Accelerator& acc, int gpus,
                                  bool allow_multi_node, Currency cur,
                                  std::optional<double> cny_per_usd);

// The lowest on-demand price among `offers`, or nullopt when none has one.
std::optional<double> CheapestOnDemand(const std::vector<Offer>& offers);

// `cal` with the spot interruption rate (interruptions per node-hour) replaced by `rate`,
// sourced "--spot-rate". Errors: `field` names the input when rate is outside [0, 1].
Result<Calibration> WithSpotRate(Calibration cal, double rate, std::string_view field);

// CPU vs GPU serving over a horizon (guides B10, B14, B15).
struct TcoRequest {
  double years = 3;                // horizon, (0, 10]
  std::vector<double> profile;     // empty, or 24 hourly loads (req/s) for the day/night mix
};
struct TcoResult {
  std::optional<ServePlan> gpu, cpu;   // cheapest GPU-only / CPU-only deployment at job.qps
  std::optional<double> break_even_qps;  // highest scanned load at which CPUs are cheaper
  std::optional<DayNightPlan> day_night;  // with a profile
  double months = 0;
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
