// `gpuplan check`: a setup resolved against the catalog (instance row or custom hardware) and
// its training shape (layout, batch, accumulation), validated before any rule runs.
#include "check/check_internal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "gpuplan/input.h"
#include "gpuplan/job.h"
#include "gpuplan/plan.h"
#include "io/csv.h"

namespace gpuplan {
namespace check_internal {

using internal::Join;

// ---------------------------------------------------------------------------------------------
// Resolution against the catalog.

std::optional<double> UsdPerHour(const Catalog& cat, const InstanceType& i, bool spot) {
  std::optional<double> p = spot && i.price_spot ? i.price_spot : i.price_on_demand;
  if (!p) return std::nullopt;
  return cat.Convert(*p, i.currency, Currency::kUsd);
}

Result<Resolved> Resolve(const Setup& s, const Catalog& cat) {
  Resolved r;
  const SetupHardware& h = s.hardware;
  if (!h.instance_type.empty()) {
    const InstanceType* found = nullptr;
    std::vector<std::string> types, regions;
    for (const auto& i : cat.instances) {
      types.push_back(i.instance_type);
      if (internal::ToLower(i.instance_type) != internal::ToLower(h.instance_type)) continue;
      regions.push_back(i.region);
      if (!h.region.empty() && internal::ToLower(i.region) != internal::ToLower(h.region)) continue;
      if (found == nullptr) found = &i;
    }
    if (found == nullptr && regions.empty()) {
      const std::string best = ClosestMatch(h.instance_type, types);
      return MakeError(ErrorCode::kNotFound, h.instance_field,
                       "unknown instance type \"" + h.instance_type + "\"",
                       best.empty() ? "`gpuplan instances` lists the catalog"
                                    : "did you mean \"" + best + "\"?");
    }
    if (found == nullptr) {
      const std::string best = ClosestMatch(h.region, regions);
      return MakeError(
          ErrorCode::kNotFound, h.region_field.empty() ? h.instance_field : h.region_field,
          "instance type \"" + h.instance_type + "\" is not in region \"" + h.region + "\"",
          (best.empty() ? std::string() : "did you mean \"" + best + "\"? ") +
              "The catalog has it in: " + Join(regions));
    }
    if (found->is_cpu_only()) {
      return MakeError(ErrorCode::kUnsupported, h.instance_field,
                       "\"" + h.instance_type + "\" has no accelerator",
                       "check covers GPU setups; use `gpuplan tco` for CPU serving");
    }
    r.inst = *found;
    r.acc = cat.FindAccelerator(found->accelerator);
    if (r.acc == nullptr) {
      return MakeError(ErrorCode::kInternal, h.instance_field,
                       "accelerator \"" + found->accelerator +
                           "\" of the instance is not in "
                           "the catalog");
    }
    r.price_usd = UsdPerHour(cat, r.inst, s.spot);
    return r;
  }
  auto acc = cat.ResolveAccelerator(h.accelerator, h.accelerator_field);
  if (!acc) return acc.error();
  r.acc = *acc;
  r.custom = true;
  r.inst.cloud = "custom";
  r.inst.instance_type = "custom";
  r.inst.accelerator = r.acc->id;
  r.inst.accelerator_count = h.gpus_per_node;
  r.inst.vcpus = h.vcpus.value_or(0);
  r.inst.ram = h.ram.value_or(Bytes(0));
  r.inst.network = h.network.value_or(BitsPerSec(0));
  r.inst.intra_node_link = h.intra;
  r.inst.inter_node_fabric = h.inter;
  r.inst.inter_node_bw = h.network;
  if (h.storage == StorageKind::kNvme) r.inst.local_nvme = Bytes(1e18);  // size not a check here
  // A price for custom hardware: the cheapest catalog rental of the same GPU, per GPU.
  for (const auto& i : cat.instances) {
    if (i.accelerator != r.acc->id || i.accelerator_count <= 0) continue;
    if (auto p = UsdPerHour(cat, i, s.spot)) {
      const double per_node = *p / i.accelerator_count * h.gpus_per_node;
      if (!r.price_usd || per_node < *r.price_usd) r.price_usd = per_node;
    }
  }
  return r;
}

std::string DivisorsHint(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return fmt::format("{}", fmt::join(d, ", "));
}

Result<TrainShape> ShapeTraining(const SetupTraining& t, int gpus) {
  TrainShape s;
  const long long mp = static_cast<long long>(t.tp) * t.pp * t.cp;
  if (mp > gpus || gpus % mp != 0) {
    return MakeError(ErrorCode::kInvalidArgument, t.field + ".tp",
                     fmt::format("tp x pp x cp = {} does not divide the {} GPUs", mp, gpus),
                     fmt::format("pick tp, pp and cp whose product divides the {} GPUs ({})", gpus,
                                 DivisorsHint(gpus)));
  }
  s.par.tp = t.tp;
  s.par.pp = t.pp;
  s.par.cp = t.cp;
  s.par.ep = t.ep;
  s.par.dp = static_cast<int>(gpus / mp);
  s.par.zero_stage = t.zero_stage;
  s.par.sequence_parallel = t.tp > 1;
  TrainJobSpec spec;
  spec.model = t.model;
  spec.method = t.method;
  spec.precision = t.precision;
  spec.fp4_gemms = t.fp4_gemms;
  spec.optimizer = t.optimizer;
  spec.paged_optimizer = t.paged_optimizer;
  if (t.lora_rank) spec.lora_rank = *t.lora_rank;
  spec.seq_len = t.seq_len;
  spec.global_batch = t.global_batch.value_or(0);
  // The planner's options for the same job (one home), then the setup's layout choices.
  s.opt = TrainOptionsFor(spec);
  s.opt.notes = true;
  s.opt.micro_batch = t.micro_batch;
  s.opt.recompute = t.recompute;
  const int per_step = t.micro_batch * s.par.dp;
  if (t.global_batch && t.gradient_accumulation &&
      *t.global_batch != per_step * *t.gradient_accumulation) {
    return MakeError(
        ErrorCode::kInvalidArgument, t.field + ".global_batch",
        fmt::format("global_batch {} != micro_batch {} x data-parallel {} x "
                    "gradient_accumulation {}",
                    *t.global_batch, t.micro_batch, s.par.dp, *t.gradient_accumulation),
        "give one of global_batch and gradient_accumulation, or make them agree");
  }
  if (t.gradient_accumulation) {
    s.accumulation = *t.gradient_accumulation;
  } else if (!t.global_batch) {
    // No batch given: the default for this cluster, in whole steps of micro_batch x dp.
    s.accumulation = std::max(1, DefaultGlobalBatch(spec, gpus) / per_step);
  } else {
    const int gb = *t.global_batch;
    if (gb % per_step != 0) {
      return MakeError(ErrorCode::kInvalidArgument, t.field + ".global_batch",
                       fmt::format("global batch {} is not a multiple of micro_batch {} x "
                                   "data-parallel {} = {}",
                                   gb, t.micro_batch, s.par.dp, per_step),
                       "change global_batch or micro_batch");
    }
    s.accumulation = gb / per_step;
  }
  s.opt.num_microbatches = s.accumulation;
  s.job.global_batch = per_step * s.accumulation;
  // The framework that runs this layout, as the planner picks it (Megatron-Core for model
  // parallelism, DDP/FSDP/DeepSpeed for data parallelism), and what it does to memory: the
  // same rule as `plan train`, so a plan checked as a setup gets the same findings.
  if (auto fw = FrameworkFor(t.framework, s.par, s.opt)) ApplyFrameworkMemory(*fw, s.par, s.opt);
  return s;
}

}  // namespace check_internal

Status ValidateSetup(const Setup& setup, const Catalog& catalog) {
  auto r = check_internal::Resolve(setup, catalog);
  if (!r) return r.error();
  if (setup.train) {
    auto s = check_internal::ShapeTraining(*setup.train, r->gpus() * setup.nodes);
    if (!s) return s.error();
  }
  // A replica's tensor-parallel group stays within a node and divides its GPUs.
  if (setup.serve && setup.serve->tp &&
      (*setup.serve->tp > r->gpus() || r->gpus() % *setup.serve->tp != 0)) {
    return MakeError(
        ErrorCode::kInvalidArgument, setup.serve->tp_field,
        fmt::format("tp {} does not divide the node's {} GPUs", *setup.serve->tp, r->gpus()),
        fmt::format("give a tensor-parallel size that divides the node's GPUs ({})",
                    check_internal::DivisorsHint(r->gpus())));
  }
  return {};
}

}  // namespace gpuplan
