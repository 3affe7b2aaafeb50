// The day/night mix behind `tco --profile`: per hour of a 24-hour load profile, GPU replicas
// of the peak plan or the CPU plan, whichever is cheaper (docs/simulate.md).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include "gpuplan/simulate.h"
#include "simulate/simulate_internal.h"

namespace gpuplan {

using simulate_internal::PricePerReplicaHour;
using simulate_internal::ReplicasFor;

Result<DayNightPlan> PlanDayNight(const ServeJobSpec& job, const Catalog& catalog,
                                  const Calibration& cal, const std::vector<double>& hourly,
                                  std::optional<double> rate) {
  if (hourly.size() != 24) {
    return MakeError(ErrorCode::kInvalidArgument, "--profile",
                     fmt::format("needs 24 hourly loads, got {}", hourly.size()));
  }
  for (double v : hourly) {
    if (!(v >= 0) || !std::isfinite(v)) {
      return MakeError(ErrorCode::kInvalidArgument, "--profile",
                       fmt::format("loads must be >= 0, got {}", v));
    }
  }
  DayNightPlan d;
  const double peak = std::max(*std::max_element(hourly.begin(), hourly.end()), 1e-3);
  ServeJobSpec g = job;
  g.qps = peak;
  g.allow_gpu = true;
  g.allow_cpu = false;
  g.top = 1;
  auto gp = PlanServing(g, catalog, cal, rate);
  if (!gp) return gp.error();
  if (gp->plans.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument, "--model",
        fmt::format("no GPU deployment of {} meets the SLOs at the peak load {:g} req/s",
                    job.model.name, peak),
        "relax the SLOs or allow more GPUs per replica");
  }
  d.gpu_peak = gp->plans.front();
  const double price = PricePerReplicaHour(d.gpu_peak);
  const double max_rps = d.gpu_peak.perf.samples_per_s;
  d.static_gpu_per_day = d.gpu_peak.replicas * price * 24;
  for (double load : hourly) {
    HourPlan h;
    h.load_rps = load;
    h.gpu_replicas = std::max(1, ReplicasFor(load, d.gpu_peak.capacity_qps));
    h.gpu_cost_per_hour = h.gpu_replicas * price;
    h.gpu_utilization = max_rps > 0 ? load / (h.gpu_replicas * max_rps) : 0;
    ServeJobSpec cj = job;
    cj.qps = std::max(load, 1e-3);
    cj.allow_cpu = true;
    cj.allow_gpu = false;
    cj.top = 1;
    auto cp = PlanServing(cj, catalog, cal, rate);
    if (cp && !cp->plans.empty() && cp->plans.front().cost_per_hour) {
      const ServePlan& p = cp->plans.front();
      h.cpu_cost_per_hour = *p.cost_per_hour;
      h.cpu_replicas = p.replicas;
      h.cpu_instance = p.instance->cloud + " " + p.instance->instance_type;
    }
    h.on_cpu = h.cpu_cost_per_hour && *h.cpu_cost_per_hour < h.gpu_cost_per_hour;
    d.autoscaled_gpu_per_day += h.gpu_cost_per_hour;
    d.mixed_per_day += h.on_cpu ? *h.cpu_cost_per_hour : h.gpu_cost_per_hour;
    if (h.on_cpu) ++d.cpu_hours;
    d.hours.push_back(std::move(h));
  }
  d.cpu_saving_per_day = d.autoscaled_gpu_per_day - d.mixed_per_day;
  return d;
}

}  // namespace gpuplan
