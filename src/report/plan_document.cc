// The plan document (include/gpuplan/plan_document.h): typed plans -> JSON, one schema.
#include "gpuplan/plan_document.h"

#include <cmath>
#include <filesystem>

#include "gpuplan/sizing.h"

namespace gpuplan {

using nlohmann::json;

json PriceJson(std::optional<double> v) {
  if (!v) return nullptr;
  return std::round(*v * 10000.0) / 10000.0;
}

std::string ModelReference(const std::string& arg, const ModelSpec& model) {
  if (arg.empty()) return model.name;
  // A preset is what ResolveModel picks first; no file-system lookup for it (the HTTP API
  // answers without touching the disk).
  if (FindPreset(arg) != nullptr) return arg;
  std::error_code ec;
  const std::filesystem::path p(arg);
  if (std::filesystem::exists(p, ec)) {
    auto abs = std::filesystem::absolute(p, ec);
    if (!ec) return abs.lexically_normal().string();
  }
  return arg;
}

json FindingJson(const Finding& f) {
  return {{"severity", SeverityName(f.severity)},
          {"rule", f.rule},
          {"message", f.message},
          {"fix", f.fix}};
}

json TrainPlanJson(const TrainPlan& p, Currency cur) {
  const auto& i = *p.instance;
  json host = json::array();
  for (const auto& f : p.host_findings) {
    host.push_back({{"item", f.item},
                    {"needed", f.needed},
                    {"has", f.has},
                    {"unit", f.unit},
                    {"ok", f.ok},
                    {"waived", f.waived},
                    {"text", f.text}});
  }
  json findings = json::array();
  for (const auto& f : p.findings) findings.push_back(FindingJson(f));
  const auto& st = p.eval.step;
  return {{"cloud", i.cloud},
          {"region", i.region},
          {"instance_type", i.instance_type},
          {"accelerator", i.accelerator},
          {"gpus_per_node", i.accelerator_count},
          {"nodes", p.nodes},
          {"gpus", i.accelerator_count * p.nodes},
          {"layout",
           {{"tp", p.par.tp},
            {"pp", p.par.pp},
            {"dp", p.par.dp},
            {"cp", p.par.cp},
            {"vpp", p.par.vpp},
            {"zero_stage", p.par.zero_stage},
            {"sequence_parallel", p.par.sequence_parallel},
            {"micro_batch", p.opt.micro_batch},
            {"num_microbatches", st.num_microbatches},
            {"recompute", RecomputeName(p.opt.recompute)},
            {"recompute_layers", p.opt.recompute_layers},
            {"ep", p.par.ep},
            {"optimizer_offload", p.opt.optimizer_offload},
            {"param_offload", p.opt.param_offload},
            {"framework", TrainFrameworkName(p.framework)},
            {"global_batch", p.global_batch}}},
          {"memory_per_gpu_bytes", p.eval.memory.Total().value()},
          {"memory",
           {{"weights_bytes", p.eval.memory.weights.value()},
            {"master_weights_bytes", p.eval.memory.master_weights.value()},
            {"gradients_bytes", p.eval.memory.gradients.value()},
            {"optimizer_bytes", p.eval.memory.optimizer.value()},
            {"adapter_bytes", p.eval.memory.adapter.value()},
            {"activations_bytes", p.eval.memory.activations.value()},
            {"logits_bytes", p.eval.memory.logits.value()},
            {"runtime_bytes", (p.eval.memory.cuda_context + p.eval.memory.nccl_buffers +
                               p.eval.memory.allocator_slack)
                                  .value()}}},
          {"step_time_s", st.total.value()},
          {"step",
           {{"compute_s", st.compute.value()},
            {"tp_comm_s", st.tp_comm.value()},
            {"dp_comm_s", st.dp_comm.value()},
            {"pp_comm_s", st.pp_comm.value()},
            {"bubble_s", st.bubble.value()},
            {"ep_comm_s", st.ep_comm.value()},
            {"optimizer_s", st.optimizer.value()}}},
          {"tokens_per_s_per_gpu", st.tokens_per_s_per_gpu},
          {"mfu", st.mfu},
          {"job_hours", p.hours},
          {"setup_hours", p.setup_hours},
          {"spot_job_hours", p.spot.hours},
          {"spot",
           {{"interruptions", p.spot.interruptions},
            {"lost_hours", p.spot.lost_hours},
            {"checkpoint_hours", p.spot.checkpoint_hours}}},
          {"currency", CurrencyCode(cur)},
          {"price_per_hour", PriceJson(p.price_per_hour)},
          {"cost_on_demand", PriceJson(p.cost_on_demand)},
          {"cost_spot", PriceJson(p.cost_spot)},
          {"cost_reserved_1y", PriceJson(p.cost_reserved_1y)},
          {"cost_reserved_3y", PriceJson(p.cost_reserved_3y)},
          {"host",
           {{"policy", SizingPolicyName(p.host.policy)},
            {"cpu_cores", p.host.cpu_cores},
            {"ram_bytes", p.host.ram.value()},
            {"system_disk_bytes", p.host.system_disk.value()},
            {"data_disk_bytes", p.host.data_disk.value()},
            {"storage_bw_bytes_per_s", p.host.storage_bw.value()},
            {"network_bits_per_s", p.host.network.value()},
            {"rationale", p.host.rationale},
            {"checks", host}}},
          {"warnings", p.warnings},
          {"findings", findings},
          {"also_regions", p.also_regions},
          {"price_as_of", i.as_of}};
}

json ServePlanJson(const ServePlan& p, Currency cur) {
  const auto& i = *p.instance;
  return {{"cloud", i.cloud},
          {"region", i.region},
          {"instance_type", i.instance_type},
          {"accelerator", i.is_cpu_only() ? json(nullptr) : json(i.accelerator)},
          {"cpu", i.cpu},
          {"gpus_per_replica", p.tp * p.pp},
          {"tensor_parallel", p.tp},
          {"nodes_per_replica", p.pp},
          {"disk_needed_bytes", p.disk_needed.value()},
          {"local_disk_enough", p.local_disk_enough ? json(*p.local_disk_enough) : json(nullptr)},
          {"replicas", p.replicas},
          {"replicas_per_instance", p.replicas_per_instance},
          {"instances", p.instances},
          {"batch", p.batch},
          {"capacity_qps_per_replica", p.capacity_qps},
          {"planned_utilization", p.planned_utilization},
          {"utilization", p.utilization},
          {"ttft_p99_ms", p.ttft_p99_ms},
          {"tpot_p99_ms", p.tpot_p99_ms},
          {"e2e_p99_ms", p.e2e_p99_ms},
          {"throughput_per_replica_output_tokens_per_s", p.perf.output_tokens_per_s},
          {"throughput_per_replica_requests_per_s", p.perf.samples_per_s},
          {"kv_tokens_per_replica", p.perf.kv_tokens},
          {"currency", CurrencyCode(cur)},
          {"cost_per_hour", PriceJson(p.cost_per_hour)},
          {"cost_per_hour_reserved_1y", PriceJson(p.cost_per_hour_reserved)},
          {"cost_per_month", p.cost_per_month},
          {"cost_per_1k_requests", p.cost_per_1k_requests},
          {"cost_per_1m_output_tokens", p.cost_per_1m_output_tokens},
          {"warnings", p.warnings},
          {"runtime", p.runtime},
          {"host_inadequate", p.host_inadequate},
          {"also_regions", p.also_regions},
          {"price_as_of", i.as_of}};
}

json TrainPlanDocument(const TrainJobSpec& job, const TrainPlanResult& res, const Catalog& catalog,
                       const Calibration& cal, bool explain) {
  const Currency cur = job.currency;
  const ParamCounts pc = CountParams(job.model);
  json j = {{"schema_version", kPlanSchemaVersion},
            {"catalog_as_of", res.prices_as_of},
            {"currency", CurrencyCode(cur)},
            {"job",
             {{"model", job.model.name},
              {"model_ref", ModelReference(job.model_arg, job.model)},
              {"params", pc.total},
              {"method", TrainMethodName(job.method)},
              {"precision", TrainPrecisionName(job.precision, job.fp4_gemms)},
              {"optimizer", OptimizerName(job.optimizer)},
              {"tokens", job.TotalTokens()},
              {"seq_len", job.seq_len},
              // An unstated batch grows with the cluster: the top plan's (each plan has its own).
              {"global_batch", job.global_batch > 0 ? job.global_batch
                               : res.plans.empty()  ? DefaultGlobalBatch(job)
                                                    : res.plans[0].global_batch},
              {"objective", ObjectiveName(job.objective)},
              {"spot_allowed", job.spot_allowed},
              {"checkpoint_interval_hours", job.checkpoint_interval_hours},
              {"framework", TrainFrameworkName(job.framework)},
              {"arch", ModelArchName(job.model.arch)}}},
            {"search",
             {{"shapes", res.shapes},
              {"layouts_evaluated", res.evaluated},
              {"instances_considered", res.instances_considered},
              {"exhaustive", res.exhaustive}}},
            {"plans", json::array()},
            {"pareto", json::array()},
            {"notes", res.notes},
            {"nearest_misses", res.nearest_misses},
            {"guide_notes", res.guide_notes},
            {"guide",
             {{"rule", res.guide_rule},
              {"comparison", res.guide_comparison},
              {"plan", res.guide_plans.empty() ? json(nullptr)
                                               : TrainPlanJson(res.guide_plans.front(), cur)}}}};
  // A paged optimizer (its states in managed memory, paged to host RAM) is named only when set.
  if (job.paged_optimizer) j["job"]["paged_optimizer"] = true;
  // A run-to-target benchmark is named; one whose samples run packed says how many share a
  // sequence (its global_batch counts sequences: TrainBenchmark::SequencesPerStep).
  if (!job.benchmark.empty()) j["job"]["benchmark"] = job.benchmark;
  if (const int factor = SamplesPerSequence(job); factor > 1)
    j["job"]["samples_per_sequence"] = factor;
  for (const auto& p : res.plans) j["plans"].push_back(TrainPlanJson(p, cur));
  for (const auto& p : res.pareto) {
    j["pareto"].push_back({{"cloud", p.instance->cloud},
                           {"instance_type", p.instance->instance_type},
                           {"region", p.instance->region},
                           {"nodes", p.nodes},
                           {"hours", p.RankHours()},
                           {"cost", p.RankCost()}});
  }
  if (explain && !res.plans.empty()) {
    Trace t = ExplainTrainPlan(job, res.plans.front(), catalog, cal);
    j["explain"] = json::array();
    for (const auto& term : t.terms) {
      j["explain"].push_back({{"name", term.name},
                              {"formula", term.formula},
                              {"value", term.value},
                              {"unit", term.unit}});
    }
  }
  return j;
}

json ServePlanDocument(const ServeJobSpec& job, const std::string& model_arg,
                       const ServePlanResult& res) {
  json j = {
      {"schema_version", kPlanSchemaVersion},
      {"catalog_as_of", res.prices_as_of},
      {"currency", CurrencyCode(job.currency)},
      {"job",
       {{"model", job.model.name},
        {"model_ref", ModelReference(model_arg, job.model)},
        {"qps", job.qps},
        {"input_len", job.input_len},
        {"output_len", job.output_len},
        {"engine", EngineName(job.engine)},
        {"target_utilization", job.target_utilization},
        {"arch", ModelArchName(job.model.arch)},
        {"precision", PrecisionName(job.weight_precision)},
        {"quant", job.quant ? json(job.quant->method) : json(nullptr)},
        {"kv_precision", PrecisionName(job.kv_precision)}}},
      {"plans", json::array()},
      {"notes", res.notes},
      {"guide",
       {{"rule", res.guide_rule},
        {"comparison", res.guide_comparison},
        {"plan", res.guide_plans.empty() ? json(nullptr)
                                         : ServePlanJson(res.guide_plans.front(), job.currency)}}}};
  if (job.model.arch == ModelArch::kDiffusionUnet) {
    j["job"]["denoise_steps"] = job.diffusion.steps;
    j["job"]["classifier_free_guidance"] = job.diffusion.guidance;
  }
  for (const auto& p : res.plans) j["plans"].push_back(ServePlanJson(p, job.currency));
  return j;
}

}  // namespace gpuplan
