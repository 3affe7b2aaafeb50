// `simulate --json` document (include/gpuplan/documents.h).
#include <algorithm>
#include <cmath>

#include "gpuplan/documents.h"
#include "gpuplan/plan_document.h"

namespace gpuplan {

using nlohmann::json;

json SimulationDocument(const ServeJobSpec& job, const LoadTrace& trace,
                        const SimulationResult& res) {
  const Currency cur = job.currency;
  const ServePlan& p = res.plan;
  json j = {{"schema_version", kPlanSchemaVersion},
            {"catalog_as_of", res.prices_as_of},
            {"currency", CurrencyCode(cur)},
            {"model", job.model.name},
            {"trace",
             {{"source", trace.source},
              {"interval_s", trace.interval_s},
              {"intervals", trace.rps.size()},
              {"days", res.days},
              {"peak_rps", res.peak_rps},
              {"mean_rps", res.mean_rps}}},
            {"plan",
             {{"cloud", p.instance->cloud},
              {"instance_type", p.instance->instance_type},
              {"region", p.instance->region},
              {"accelerator", p.instance->accelerator},
              {"gpus_per_replica", p.tp},
              {"batch", p.batch},
              {"capacity_qps_per_replica", p.capacity_qps},
              {"max_qps_per_replica", p.perf.samples_per_s},
              {"static_replicas", res.static_replicas}}},
            {"cold_start_s",
             {{"node", res.cold_start.node_s},
              {"image", res.cold_start.image_s},
              {"weights", res.cold_start.weights_s},
              {"total", res.cold_start.Total()}}},
            {"notes", res.notes},
            {"policies", json::array()}};
  for (const auto& r : res.policies) {
    json hours = json::array();
    for (int h : r.cpu_hours) hours.push_back(h);
    const auto& au = r.autoscaling;
    json beh = json::object();
    for (auto [name, rules] : {std::pair{"scale_up", &au.behavior.scale_up},
                               std::pair{"scale_down", &au.behavior.scale_down}}) {
      json pol = json::array();
      for (const auto& x : rules->policies) {
        pol.push_back({{"type", x.type == HpaPolicyType::kPods ? "Pods" : "Percent"},
                       {"value", x.value},
                       {"period_s", x.period_s}});
      }
      beh[name] = {{"stabilization_window_s", rules->stabilization_window_s},
                   {"select_policy", HpaSelectName(rules->select)},
                   {"policies", pol}};
    }
    // The timeline by hour (means; the per-interval rows are in --csv).
    json hourly = json::array();
    const auto per_hour = static_cast<size_t>(std::max(1.0, std::round(3600.0 / trace.interval_s)));
    for (size_t k = 0; k < r.timeline.size(); k += per_hour) {
      double rps = 0, rg = 0, rc = 0, bg = 0, bc = 0, util = 0, q = 0, ttft = 0, tpot = 0, cost = 0;
      int miss = 0;
      const size_t e = std::min(r.timeline.size(), k + per_hour);
      for (size_t i = k; i < e; ++i) {
        const auto& iv = r.timeline[i];
        rps += iv.rps;
        rg += iv.ready_gpu;
        rc += iv.ready_cpu;
        bg += iv.billed_gpu;
        bc += iv.billed_cpu;
        util += iv.utilization;
        q += iv.queue_delay_s;
        ttft = std::max(ttft, iv.ttft_p99_ms);
        tpot = std::max(tpot, iv.tpot_p99_ms);
        cost += iv.cost;
        miss += iv.slo_violation ? 1 : 0;
      }
      const double n = static_cast<double>(e - k);
      hourly.push_back({{"t_s", r.timeline[k].t_s},
                        {"rps", rps / n},
                        {"ready_gpu", rg / n},
                        {"ready_cpu", rc / n},
                        {"billed_gpu", bg / n},
                        {"billed_cpu", bc / n},
                        {"utilization", util / n},
                        {"queue_delay_s", q / n},
                        {"ttft_p99_ms_max", ttft},
                        {"tpot_p99_ms_max", tpot},
                        {"slo_violation_intervals", miss},
                        {"cost", cost}});
    }
    j["policies"].push_back(
        {{"policy", ScalingPolicyName(r.policy)},
         {"timeline_hourly", hourly},
         {"cost_total", r.cost_total},
         {"cost_per_day", r.cost_per_day},
         {"cost_per_month", r.cost_per_month},
         {"cost_per_1k_requests", r.cost_per_1k_requests},
         {"cost_per_1m_tokens", r.cost_per_1m_tokens},
         {"requests", r.requests},
         {"tokens", r.tokens},
         {"gpu_replica_hours", r.gpu_replica_hours},
         {"cpu_replica_hours", r.cpu_replica_hours},
         {"peak_billed_replicas", r.peak_billed},
         {"slo_violation_intervals", r.slo_violation_intervals},
         {"slo_violation_requests", r.slo_violation_requests},
         {"slo_violation_intervals_while_starting", r.slo_violation_while_starting},
         {"max_queue_delay_s", r.max_queue_delay_s},
         {"scale_ups", r.scale_ups},
         {"scale_downs", r.scale_downs},
         {"saving_vs_static", r.saving_vs_static},
         {"saving_breakdown",
          {{"demand_below_peak", r.saving_scale_down},
           {"over_provisioning", -r.overshoot_cost},
           {"cold_start", -r.cold_start_overhead}}},
         {"cpu_hours", hours},
         {"cpu_saving_per_day", r.cpu_saving_per_day},
         {"autoscaling",
          {{"min_replicas", au.min_replicas},
           {"max_replicas", au.max_replicas},
           {"target_gpu_utilization", au.target_gpu_utilization},
           {"target_requests_per_s_per_pod", au.target_requests_per_s_per_pod},
           {"target_concurrency_per_pod", au.target_concurrency_per_pod},
           {"tolerance", au.tolerance},
           {"sync_period_s", au.sync_period_s},
           {"behavior", beh},
           {"keda", au.keda},
           {"keda_activation_rps", au.keda_activation_rps},
           {"keda_polling_s", au.keda_polling_s},
           {"keda_cooldown_s", au.keda_cooldown_s},
           {"hourly_replicas", au.hourly_replicas},
           {"hourly_on_cpu", au.hourly_on_cpu}}}});
  }
  return j;
}

}  // namespace gpuplan
