// Cheapest offers per cloud (include/gpuplan/cost.h).
#include <algorithm>
#include <map>

#include "gpuplan/cost.h"

namespace gpuplan {

namespace {
// Offers without any price sort last.
constexpr double kNoPrice = 1e300;
double SortKey(const Offer& o) { return o.on_demand.value_or(o.spot.value_or(kNoPrice)); }
}  // namespace

std::vector<Offer> CheapestOffers(const Catalog& cat, const Accelerator& acc, int gpus,
                                  bool allow_multi_node, Currency cur, std::optional<double> rate) {
  std::map<std::string, Offer> best;
  for (const auto& i : cat.instances) {
    if (i.accelerator != acc.id || i.accelerator_count <= 0) continue;
    int nodes = 1;
    if (i.accelerator_count < gpus) {
      // Spanning machines needs a collective fabric (EFA, InfiniBand, RoCE, ...): data-parallel
      // training over plain TCP between single-GPU boxes is not a plan (guides A13, B8).
      if (!allow_multi_node || gpus % i.accelerator_count != 0 ||
          i.inter_node_fabric == InterNodeFabric::kNone) {
        continue;
      }
      nodes = gpus / i.accelerator_count;
    }
    Offer o;
    o.inst = &i;
    o.nodes = nodes;
    if (i.price_on_demand)
      o.on_demand = cat.Convert(*i.price_on_demand, i.currency, cur, rate) * nodes;
    if (i.price_spot) o.spot = cat.Convert(*i.price_spot, i.currency, cur, rate) * nodes;
    const double key = SortKey(o);
    auto it = best.find(i.cloud);
    if (it == best.end()) {
      best[i.cloud] = o;
    } else {
      const double old = SortKey(it->second);
      if (key < old || (key == old && i.instance_type < it->second.inst->instance_type)) {
        it->second = o;
      }
    }
  }
  std::vector<Offer> out;
  for (auto& [c, o] : best) out.push_back(o);
  std::sort(out.begin(), out.end(), [](const Offer& x, const Offer& y) {
    const double a = SortKey(x), b = SortKey(y);
    if (a != b) return a < b;
    return x.inst->cloud < y.inst->cloud;
  });
  return out;
}

std::optional<double> CheapestOnDemand(const std::vector<Offer>& offers) {
  std::optional<double> best;
  for (const auto& o : offers) {
    if (o.on_demand && (!best || *o.on_demand < *best)) best = o.on_demand;
  }
  return best;
}

}  // namespace gpuplan
