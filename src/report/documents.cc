// `memory --json` and `tco --json` documents (include/gpuplan/documents.h).
#include "gpuplan/documents.h"

#include <cmath>

#include "gpuplan/plan_document.h"

namespace gpuplan {

using nlohmann::json;

json MemoryBreakdownJson(const MemoryBreakdown& b) {
  return {{"weights_bytes", b.weights.value()},
          {"master_weights_bytes", b.master_weights.value()},
          {"gradients_bytes", b.gradients.value()},
          {"optimizer_bytes", b.optimizer.value()},
          {"adapter_bytes", b.adapter.value()},
          {"activations_bytes", b.activations.value()},
          {"logits_bytes", b.logits.value()},
          {"kv_cache_bytes", b.kv_cache.value()},
          {"cuda_context_bytes", b.cuda_context.value()},
          {"nccl_buffers_bytes", b.nccl_buffers.value()},
          {"allocator_slack_bytes", b.allocator_slack.value()},
          {"total_bytes", b.Total().value()},
          {"notes", b.notes}};
}

namespace {

json ModelJson(const MemoryAnalysis& a) {
  return {{"name", a.model.name}, {"params", a.params.total}, {"active_params", a.params.active}};
}

// Accelerators an analysis left out because the job cannot run there, with why.
json NoKernelsJson(const std::vector<std::pair<std::string, std::string>>& id_why) {
  json a = json::array();
  for (const auto& [id, why] : id_why) a.push_back({{"accelerator", id}, {"why", why}});
  return a;
}

json TrainSectionJson(const MemoryAnalysis& a, const TrainMemoryAnalysis& t) {
  json j;
  const auto& o = t.options;
  const auto& par = t.reference;
  j["model"] = ModelJson(a);
  j["options"] = {{"method", TrainMethodName(o.method)},
                  {"precision", TrainPrecisionName(o.precision, o.fp4_gemms)},
                  {"master_weights", o.master_weights},
                  {"optimizer", OptimizerName(o.optimizer)},
                  {"micro_batch", o.micro_batch},
                  {"seq_len", o.seq_len},
                  {"recompute", RecomputeName(o.recompute)},
                  {"headroom", t.headroom}};
  j["reference_layout"] = {{"gpus", par.gpus()},
                           {"tp", par.tp},
                           {"pp", par.pp},
                           {"dp", par.dp},
                           {"zero_stage", par.zero_stage}};
  j["memory_per_gpu"] = MemoryBreakdownJson(t.memory);
  j["fits"] = json::array();
  for (const auto& f : t.fits) {
    json fj = {{"accelerator", f.acc->id},
               {"gpus", f.gpus},
               {"tp", f.tp},
               {"pp", f.pp},
               {"dp", f.dp},
               {"zero_stage", f.zero},
               {"recompute", RecomputeName(f.recompute)},
               {"memory_per_gpu_bytes", f.mem.Total().value()},
               {"memory_fraction", f.mem.Total().value() / f.acc->memory.value()},
               {"instances", json::array()}};
    for (const auto& of : f.offers) {
      fj["instances"].push_back({{"cloud", of.inst->cloud},
                                 {"instance_type", of.inst->instance_type},
                                 {"region", of.inst->region},
                                 {"nodes", of.nodes},
                                 {"price_on_demand_per_hour", PriceJson(of.on_demand)},
                                 {"price_spot_per_hour", PriceJson(of.spot)},
                                 {"as_of", of.inst->as_of}});
    }
    j["fits"].push_back(fj);
  }
  j["no_kernels"] = NoKernelsJson(t.no_kernels);
  return j;
}

json InferSectionJson(const MemoryAnalysis& a, const InferMemoryAnalysis& s) {
  json j;
  const auto& o = s.options;
  j["model"] = ModelJson(a);
  j["options"] = {{"weights", s.weights},           {"kv_precision", PrecisionName(o.kv_precision)},
                  {"engine", EngineName(o.engine)}, {"concurrency", o.concurrency},
                  {"context", o.context},           {"memory_fraction", s.memory_fraction}};
  j["reference"] = {{"accelerator", s.reference_acc->id},
                    {"tp", s.reference_tp},
                    {"kv_budget_bytes", s.reference.kv_budget.value()},
                    {"kv_tokens", s.reference.kv_tokens},
                    {"max_concurrency", s.reference.max_concurrency},
                    {"memory_per_gpu", MemoryBreakdownJson(s.reference.breakdown)}};
  j["fits"] = json::array();
  for (const auto& f : s.fits) {
    json fj = {{"accelerator", f.acc->id},
               {"gpus", f.gpus},
               {"tp", f.tp},
               {"pp", f.pp},
               {"weights_per_gpu_bytes", f.mem.weights.value()},
               {"kv_tokens_per_gpu", f.kv_tokens},
               {"max_concurrency", f.max_concurrency},
               {"instances", json::array()}};
    for (const auto& of : f.offers) {
      fj["instances"].push_back({{"cloud", of.inst->cloud},
                                 {"instance_type", of.inst->instance_type},
                                 {"region", of.inst->region},
                                 {"price_on_demand_per_hour", PriceJson(of.on_demand)},
                                 {"price_spot_per_hour", PriceJson(of.spot)},
                                 {"as_of", of.inst->as_of}});
    }
    j["fits"].push_back(fj);
  }
  j["no_kernels"] = NoKernelsJson(s.no_kernels);
  return j;
}

}  // namespace

json MemoryDocument(const MemoryAnalysis& a) {
  json j = {{"schema_version", kPlanSchemaVersion},
            {"catalog_as_of", a.prices_as_of},
            {"currency", CurrencyCode(a.currency)},
            {"cny_per_usd", a.cny_per_usd}};
  if (a.train) j["train"] = TrainSectionJson(a, *a.train);
  if (a.infer) j["infer"] = InferSectionJson(a, *a.infer);
  return j;
}

json TcoDocument(const ServeJobSpec& job, const Catalog& catalog, const TcoRequest& req,
                 const TcoResult& r) {
  const Currency cur = job.currency;
  json j = {{"schema_version", kPlanSchemaVersion},
            {"catalog_as_of", catalog.PricesAsOf()},
            {"currency", CurrencyCode(cur)},
            {"model", job.model.name},
            {"qps", job.qps},
            {"years", req.years},
            {"gpu", r.gpu ? ServePlanJson(*r.gpu, cur) : json(nullptr)},
            {"cpu", r.cpu ? ServePlanJson(*r.cpu, cur) : json(nullptr)},
            {"break_even_qps", r.break_even_qps ? json(*r.break_even_qps) : json(nullptr)},
            {"guide_rule", r.guide_rule},
            {"cpu_notes", r.cpu_notes}};
  if (r.gpu && r.cpu) {
    j["total_gpu"] = r.gpu->cost_per_month * r.months;
    j["total_cpu"] = r.cpu->cost_per_month * r.months;
  }
  if (r.day_night) {
    const DayNightPlan& dn = *r.day_night;
    std::vector<int> cpu_hours;
    for (int h = 0; h < static_cast<int>(dn.hours.size()); ++h) {
      if (dn.hours[static_cast<size_t>(h)].on_cpu) cpu_hours.push_back(h);
    }
    const double saving_day = dn.static_gpu_per_day - dn.mixed_per_day;
    j["profile"] = {{"static_gpu_per_day", dn.static_gpu_per_day},
                    {"autoscaled_gpu_per_day", dn.autoscaled_gpu_per_day},
                    {"mixed_per_day", dn.mixed_per_day},
                    {"saving_per_year", saving_day * 365},
                    {"cpu_hours", cpu_hours},
                    {"cpu_saving_per_day", dn.cpu_saving_per_day},
                    {"cpu_saving_per_year", dn.cpu_saving_per_day * 365}};
  }
  return j;
}

}  // namespace gpuplan
