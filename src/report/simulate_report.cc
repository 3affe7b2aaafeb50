// Rendering of a simulation for files: the per-interval timeline as CSV and a small SVG chart of
// load and replicas (reused by the web page). Deterministic text.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "gpuplan/simulate.h"

namespace gpuplan {

std::string SimulationCsv(const SimulationResult& r) {
  std::string s =
      "policy,t_s,minute,rps,ready_gpu,ready_cpu,billed_gpu,billed_cpu,utilization,queue_delay_s,"
      "ttft_p99_ms,"
      "tpot_p99_ms,e2e_p99_ms,slo_violation,cost\n";
  for (const auto& p : r.policies) {
    for (const auto& i : p.timeline) {
      s += fmt::format(
          "{},{:g},{:g},{:.6g},{:.4g},{:.4g},{:.4g},{:.4g},{:.4f},{:.4g},{:.5g},{:.5g},{:.5g},{},{:"
          ".6g}\n",
          ScalingPolicyName(p.policy), i.t_s, i.t_s / 60, i.rps, i.ready_gpu, i.ready_cpu,
          i.billed_gpu, i.billed_cpu, i.utilization, i.queue_delay_s, i.ttft_p99_ms, i.tpot_p99_ms,
          i.e2e_p99_ms, i.slo_violation ? 1 : 0, i.cost);
    }
  }
  return s;
}

std::string SimulationSvg(const SimulationResult& r) {
  constexpr double kW = 960, kH = 360, kL = 60, kR = 60, kT = 30, kB = 40;
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  size_t n = 0;
  double max_rps = 0, max_rep = 1;
  for (const auto& p : r.policies) {
    n = std::max(n, p.timeline.size());
    for (const auto& i : p.timeline) {
      max_rps = std::max(max_rps, i.rps);
      max_rep = std::max(max_rep, i.billed_gpu + i.billed_cpu);
    }
  }
  if (!(max_rps > 0)) max_rps = 1;
  max_rep = std::ceil(max_rep);
  const double span = n > 1 ? static_cast<double>(n - 1) : 1;
  auto x = [&](size_t k) { return kL + pw * static_cast<double>(k) / span; };
  auto y_rps = [&](double v) { return kT + ph * (1 - v / max_rps); };
  auto y_rep = [&](double v) { return kT + ph * (1 - v / max_rep); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" height=\"{:g}\" viewBox=\"0 0 {:g} "
      "{:g}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      kW, kH, kW, kH);
  s += fmt::format(
      "<text x=\"{:g}\" y=\"18\">load (req/s, grey area, left axis) and billed replicas per policy "
      "(right axis)</text>\n",
      kL);
  s += fmt::format("<line x1=\"{0:g}\" y1=\"{1:g}\" x2=\"{0:g}\" y2=\"{2:g}\" stroke=\"black\"/>\n",
                   kL, kT, kT + ph);
  s += fmt::format("<line x1=\"{0:g}\" y1=\"{1:g}\" x2=\"{0:g}\" y2=\"{2:g}\" stroke=\"black\"/>\n",
                   kL + pw, kT, kT + ph);
  s += fmt::format("<line x1=\"{0:g}\" y1=\"{2:g}\" x2=\"{1:g}\" y2=\"{2:g}\" stroke=\"black\"/>\n",
                   kL, kL + pw, kT + ph);
  for (int k = 0; k <= 4; ++k) {
    const double f = k / 4.0;
    s += fmt::format("<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"end\">{:.3g}</text>\n", kL - 4,
                     kT + ph * (1 - f) + 4, max_rps * f);
    s += fmt::format("<text x=\"{:g}\" y=\"{:g}\">{:.3g}</text>\n", kL + pw + 4,
                     kT + ph * (1 - f) + 4, max_rep * f);
  }
  double hours = 0;
  if (!r.policies.empty() && !r.policies.front().timeline.empty()) {
    const auto& tl = r.policies.front().timeline;
    const double step = tl.size() > 1 ? tl[1].t_s - tl[0].t_s : 60;
    hours = (tl.back().t_s + step) / 3600;
  }
  for (int k = 0; k <= 4; ++k) {
    s += fmt::format("<text x=\"{:g}\" y=\"{:g}\" text-anchor=\"middle\">{:.3g} h</text>\n",
                     kL + pw * k / 4.0, kT + ph + 16, hours * k / 4.0);
  }
  if (!r.policies.empty() && !r.policies.front().timeline.empty()) {
    const auto& tl = r.policies.front().timeline;
    std::string pts = fmt::format("{:.1f},{:.1f}", x(0), y_rps(0));
    for (size_t k = 0; k < tl.size(); ++k)
      pts += fmt::format(" {:.1f},{:.1f}", x(k), y_rps(tl[k].rps));
    pts += fmt::format(" {:.1f},{:.1f}", x(tl.size() - 1), y_rps(0));
    s += "<polygon fill=\"#dddddd\" stroke=\"none\" points=\"" + pts + "\"/>\n";
  }
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
  size_t ci = 0;
  for (const auto& p : r.policies) {
    std::string pts;
    for (size_t k = 0; k < p.timeline.size(); ++k) {
      if (!pts.empty()) pts += ' ';
      pts += fmt::format("{:.1f},{:.1f}", x(k),
                         y_rep(p.timeline[k].billed_gpu + p.timeline[k].billed_cpu));
    }
    const char* col = colors[ci % 5];
    s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
                     col, pts);
    s += fmt::format("<text x=\"{:g}\" y=\"{:g}\" fill=\"{}\">{}</text>\n",
                     kL + 10 + 110 * static_cast<double>(ci), kT + 12, col,
                     ScalingPolicyName(p.policy));
    ++ci;
  }
  s += "</svg>\n";
  return s;
}

}  // namespace gpuplan
