// Pricing over the catalog: the cheapest way per cloud to rent N accelerators. Used by `memory`
// and the HTTP API (one copy of the rule). The CPU vs GPU serving TCO is in tco.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"

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

}  // namespace gpuplan
