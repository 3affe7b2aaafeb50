// Monitoring (guide B13): Prometheus recording and alert rules and a Grafana dashboard, on the
// DCGM exporter's GPU metrics and the serving engine's own request metrics.
#include <fmt/format.h>

#include "emit/emit_internal.h"

namespace gpuplan::emit {

namespace {

// Alert when p99 latency exceeds the planner's prediction by this factor.
constexpr double kLatencyAlertFactor = 1.5;

ojson Panel(int id, const std::string& type, const std::string& title, int x, int y,
            const std::string& expr, const std::string& unit, const std::string& legend = "") {
  ojson target = {{"refId", "A"}, {"expr", expr}};
  if (!legend.empty()) target["legendFormat"] = legend;
  return {{"id", id},
          {"type", type},
          {"title", title},
          {"gridPos", {{"x", x}, {"y", y}, {"w", 12}, {"h", 8}}},
          {"datasource", {{"type", "prometheus"}, {"uid", "${DS_PROMETHEUS}"}}},
          {"targets", ojson::array({target})},
          {"fieldConfig", {{"defaults", {{"unit", unit}}}, {"overrides", ojson::array()}}}};
}

}  // namespace

std::vector<EmittedFile> EmitMonitoring(const Plan& p, const Catalog& catalog) {
  const std::string name = Slug(p.model);
  const bool serve = p.kind == Kind::kServe;
  const double price = p.price_per_hour.value_or(0);
  const std::string pod = fmt::format("pod=~\"{}-.*\"", name);
  ojson rec = ojson::array();
  auto add = [&](const std::string& r, const std::string& e) {
    rec.push_back({{"record", r}, {"expr", e}});
  };
  add("gpuplan:gpu_util:avg", fmt::format("avg(DCGM_FI_DEV_GPU_UTIL{{{}}})", pod));
  add("gpuplan:gpu_mem_used:ratio",
      fmt::format("sum(DCGM_FI_DEV_FB_USED{{{0}}}) / (sum(DCGM_FI_DEV_FB_USED{{{0}}}) + "
                  "sum(DCGM_FI_DEV_FB_FREE{{{0}}}))",
                  pod));
  add("gpuplan:cost_per_hour", fmt::format("vector({})", price));
  ojson alerts = ojson::array();
  alerts.push_back({{"alert", "GpuplanGpuMemoryHigh"},
                    {"expr", "gpuplan:gpu_mem_used:ratio > 0.95"},
                    {"for", "10m"},
                    {"labels", {{"severity", "warning"}}},
                    {"annotations", {{"summary", "GPU memory above 95% of capacity"}}}});
  if (serve) {
    // The engine's own metrics (serve_runtime.cc); vLLM's when the plan has no runtime here.
    auto rt = ResolveServeRuntime(p, catalog);
    const std::string engine = rt ? rt->engine : "vllm";
    const std::string counter = rt ? rt->request_counter : "vllm:request_success_total";
    add("gpuplan:requests_per_second", fmt::format("sum(rate({}{{{}}}[5m]))", counter, pod));
    if (engine == "vllm") {
      add("gpuplan:latency_p99_seconds",
          fmt::format("histogram_quantile(0.99, sum by (le) "
                      "(rate(vllm:e2e_request_latency_seconds_bucket{{{}}}[5m])))",
                      pod));
    } else if (engine == "tgi") {
      add("gpuplan:latency_p99_seconds",
          fmt::format(
              "histogram_quantile(0.99, sum by (le) (rate(tgi_request_duration_bucket{{{}}}[5m])))",
              pod));
    } else if (engine == "openvino") {
      add("gpuplan:latency_p99_seconds",
          fmt::format("histogram_quantile(0.99, sum by (le) "
                      "(rate(ovms_request_time_us_bucket{{{}}}[5m]))) / 1e6",
                      pod));
    } else {
      // Triton exports cumulative durations, not histograms: the mean stands in for p99.
      add("gpuplan:latency_p99_seconds",
          fmt::format("sum(rate(nv_inference_request_duration_us{{{0}}}[5m])) / "
                      "sum(rate(nv_inference_request_success{{{0}}}[5m])) / 1e6",
                      pod));
    }
    add("gpuplan:error_ratio", fmt::format("sum(rate(http_requests_total{{{0},status=~\"5..\"}}[5m]"
                                           ")) / sum(rate(http_requests_total{{{0}}}[5m]))",
                                           pod));
    if (engine == "vllm")
      add("gpuplan:output_tokens_per_second",
          fmt::format("sum(rate(vllm:generation_tokens_total{{{}}}[5m]))", pod));
    add("gpuplan:cost_per_request", "gpuplan:cost_per_hour / 3600 / gpuplan:requests_per_second");
    alerts.push_back({{"alert", "GpuplanLatencyP99High"},
                      {"expr", fmt::format("gpuplan:latency_p99_seconds > {:.3f}",
                                           kLatencyAlertFactor * p.e2e_p99_ms / 1000)},
                      {"for", "10m"},
                      {"labels", {{"severity", "warning"}}},
                      {"annotations",
                       {{"summary", fmt::format("p99 latency above {:g} x the planned {:.0f} ms",
                                                kLatencyAlertFactor, p.e2e_p99_ms)}}}});
    alerts.push_back({{"alert", "GpuplanErrorRateHigh"},
                      {"expr", "gpuplan:error_ratio > 0.01"},
                      {"for", "5m"},
                      {"labels", {{"severity", "critical"}}},
                      {"annotations", {{"summary", "more than 1% of requests fail"}}}});
    alerts.push_back(
        {{"alert", "GpuplanLoadAbovePlan"},
         {"expr", fmt::format("gpuplan:requests_per_second > {:.3f}", p.qps)},
         {"for", "15m"},
         {"labels", {{"severity", "info"}}},
         {"annotations", {{"summary", fmt::format("load above the planned {:g} req/s", p.qps)}}}});
  } else {
    alerts.push_back(
        {{"alert", "GpuplanGpuUnderused"},
         {"expr", "gpuplan:gpu_util:avg < 70"},
         {"for", "30m"},
         {"labels", {{"severity", "info"}}},
         {"annotations",
          {{"summary", "GPU utilisation under 70%: check data loading (guide B17)"}}}});
    alerts.push_back({{"alert", "GpuplanXidError"},
                      {"expr", fmt::format("max(DCGM_FI_DEV_XID_ERRORS{{{}}}) > 0", pod)},
                      {"for", "1m"},
                      {"labels", {{"severity", "critical"}}},
                      {"annotations", {{"summary", "a GPU reported an XID error"}}}});
  }
  ojson rules = {
      {"groups", ojson::array({{{"name", "gpuplan-" + name + "-recording"}, {"rules", rec}},
                               {{"name", "gpuplan-" + name + "-alerts"}, {"rules", alerts}}})}};
  ojson panels = ojson::array();
  int id = 1;
  auto place = [&](const std::string& type, const std::string& title, const std::string& expr,
                   const std::string& unit, const std::string& legend = "") {
    const int k = id - 1;
    panels.push_back(Panel(id++, type, title, (k % 2) * 12, (k / 2) * 8, expr, unit, legend));
  };
  if (serve) {
    place("timeseries", "p99 latency", "gpuplan:latency_p99_seconds", "s");
    place("timeseries", "Throughput (requests/s)", "gpuplan:requests_per_second", "reqps");
    place("timeseries", "Error rate", "gpuplan:error_ratio", "percentunit");
  }
  place("timeseries", "GPU utilisation",
        fmt::format("avg by (gpu, Hostname) (DCGM_FI_DEV_GPU_UTIL{{{}}})", pod), "percent",
        "{{Hostname}} gpu {{gpu}}");
  place("timeseries", "GPU memory used", fmt::format("DCGM_FI_DEV_FB_USED{{{}}}", pod), "mbytes",
        "{{Hostname}} gpu {{gpu}}");
  place("stat", "Cost per hour", "gpuplan:cost_per_hour", "currencyUSD");
  if (serve) place("stat", "Cost per request", "gpuplan:cost_per_request", "currencyUSD");
  if (!serve)
    place("timeseries", "Tensor pipe active",
          fmt::format("avg(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{}}})", pod), "percentunit");
  ojson dash = {{"__inputs", ojson::array({{{"name", "DS_PROMETHEUS"},
                                            {"label", "Prometheus"},
                                            {"type", "datasource"},
                                            {"pluginId", "prometheus"},
                                            {"pluginName", "Prometheus"}}})},
                {"id", nullptr},
                {"uid", Slug("gpuplan-" + name)},
                {"title", "gpuplan: " + p.model},
                {"tags", ojson::array({"gpuplan", serve ? "serving" : "training"})},
                {"timezone", "utc"},
                {"schemaVersion", 39},
                {"version", 1},
                {"refresh", "30s"},
                {"time", {{"from", "now-6h"}, {"to", "now"}}},
                {"templating", {{"list", ojson::array()}}},
                {"annotations", {{"list", ojson::array()}}},
                {"panels", panels}};
  std::string hdr = Header(p, "Prometheus recording and alert rules");
  hdr += fmt::format("# Cost: {:g} {} per hour from the plan's price{}.\n", price, p.currency,
                     p.price_per_hour ? "" : " (the plan has no public price: 0)");
  return {{"prometheus-rules.yaml", hdr + Yaml(rules)},
          {"grafana-dashboard.json", dash.dump(2) + "\n"}};
}

}  // namespace gpuplan::emit
