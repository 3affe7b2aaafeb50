// gpuplan::Emit(): reads the plan document once and dispatches to one emitter per target
// (k8s.cc, skypilot.cc, slurm.cc, vllm.cc, hf_deepspeed.cc, monitoring.cc; docs/emit.md).
// Every artifact is built as an ordered JSON tree and rendered as YAML or JSON, and every value
// that reaches a shell line is quoted for the shell (render.cc), so each file is well-formed by
// construction and no plan value can become a live line.
#include "gpuplan/emit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"
#include "gpuplan/model.h"
#include "io/json_util.h"
#include "io/plan_input.h"

namespace gpuplan {

const std::vector<std::string>& EmitTargets() {
  static const std::vector<std::string> kTargets = {"k8s", "skypilot",  "slurm",     "vllm",
                                                    "hf",  "deepspeed", "monitoring"};
  return kTargets;
}

Result<std::vector<EmittedFile>> Emit(std::string_view plan_json, std::string_view target,
                                      const EmitOptions& opt, const Catalog& catalog) {
  using emit::Kind;
  const auto& targets = EmitTargets();
  if (std::find(targets.begin(), targets.end(), target) == targets.end()) {
    return MakeError(ErrorCode::kNotFound, "target",
                     "unknown target \"" + std::string(target) + "\"",
                     "use one of k8s, skypilot, slurm, vllm, hf, deepspeed, monitoring");
  }
  if (opt.autoscaler != "hpa" && opt.autoscaler != "keda") {
    return MakeError(ErrorCode::kInvalidArgument, "--autoscaler",
                     "unknown autoscaler \"" + opt.autoscaler + "\"", "use hpa or keda");
  }
  if (opt.k8s_training != "job" && opt.k8s_training != "pytorchjob") {
    return MakeError(ErrorCode::kInvalidArgument, "--k8s-training",
                     "unknown workload \"" + opt.k8s_training + "\"", "use job or pytorchjob");
  }
  if (!opt.image.empty()) {
    // An OCI image reference: [registry[:port]/]path[:tag][@digest]. Anything else (a space, a
    // quote, a ';') would not pull, and would reach shell scripts (slurm) and YAML as written.
    const bool chars_ok = std::all_of(opt.image.begin(), opt.image.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '.' || ch == '_' ||
             ch == '-' || ch == '/' || ch == ':' || ch == '@';
    });
    const char first = opt.image.front(), last = opt.image.back();
    if (!chars_ok || opt.image.size() > 512 || !std::isalnum(static_cast<unsigned char>(first)) ||
        last == '/' || last == ':' || last == '@' || opt.image.find("//") != std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument, "--image",
                       "is not a container image reference: " + Excerpt(opt.image),
                       "give [registry/]name[:tag][@sha256:digest], e.g. "
                       "nvcr.io/nvidia/pytorch:24.07-py3");
    }
  }
  if (opt.min_replicas < 0 || opt.min_replicas > 100000) {
    return MakeError(ErrorCode::kInvalidArgument, "--min-replicas",
                     "must be in [0, 100000], got " + std::to_string(opt.min_replicas),
                     "0 derives it from --off-peak-qps");
  }
  for (const auto& [field, v] :
       {std::pair{"--off-peak-qps", opt.off_peak_qps}, std::pair{"--peak-qps", opt.peak_qps}}) {
    if (v && !(std::isfinite(*v) && *v >= 0)) {
      return MakeError(ErrorCode::kInvalidArgument, field, "must be a finite load >= 0 requests/s",
                       "give requests per second, e.g. 2.5");
    }
  }
  if (opt.off_peak_qps && opt.peak_qps && *opt.off_peak_qps > *opt.peak_qps) {
    return MakeError(ErrorCode::kInvalidArgument, "--off-peak-qps", "is above --peak-qps",
                     "the off-peak load must not exceed the peak");
  }
  auto parsed = internal::ParseJson(plan_json, "--plan");  // size, depth, every exception
  if (!parsed) {
    return MakeError(parsed.error().code, "--plan", "not valid JSON: " + parsed.error().message,
                     "give the output of `gpuplan --json plan train|infer ...`");
  }
  nlohmann::json doc = std::move(*parsed);
  auto with_hint = [](Error e) {  // a field of the wrong type or missing: not a plan of ours
    if (e.hint.empty() && e.code == ErrorCode::kParse)
      e.hint = "give the output of `gpuplan --json plan train|infer ...`";
    return e;
  };
  if (Status s = internal::CheckPlanDocument(doc); !s) return with_hint(s.error());
  auto read = emit::ReadPlan(doc, opt.rank);
  if (!read) return with_hint(read.error());
  const emit::Plan& p = *read;
  if (p.kind != Kind::kTrain && opt.off_peak_qps && !opt.peak_qps && *opt.off_peak_qps > p.qps) {
    return MakeError(ErrorCode::kInvalidArgument, "--off-peak-qps",
                     fmt::format("{:g} req/s is above the plan's peak load of {:g} req/s",
                                 *opt.off_peak_qps, p.qps),
                     "give the real peak with --peak-qps, or re-plan for the higher load");
  }
  const std::string t(target);
  if (const Accelerator* acc = catalog.FindAccelerator(p.accelerator);
      t != "monitoring" && acc && acc->vendor != "NVIDIA") {
    // The files gpuplan writes are CUDA ones: the vllm/vllm-openai image and nvidia.com/gpu
    // resources for serving, NVIDIA's Megatron-LM, DeepSpeed and Trainer launches for training.
    // AWS Neuron (NxD Training and Inference), ROCm (rocm/vllm images, amd.com/gpu) and Gaudi
    // (habana.ai/gaudi) each need their own.
    const std::string stack =
        acc->AwsNeuron()
            ? (p.kind == Kind::kTrain ? "the AWS Neuron SDK (NeuronX Distributed Training)"
                                      : "vLLM on AWS Neuron (NxD Inference: its own image, "
                                        "aws.amazon.com/neuron resources, a compile step)")
        : acc->vendor == "AMD" ? "ROCm (rocm/vllm or ROCm Megatron-LM images, amd.com/gpu "
                                 "resources)"
                               : acc->vendor + "'s own software stack";
    return MakeError(ErrorCode::kUnsupported, p.path + ".accelerator",
                     "not yet: " + p.accelerator + " runs " + stack +
                         ", and gpuplan writes CUDA deployments and launches",
                     "deploy the plan with the vendor's containers yourself, or pick an NVIDIA "
                     "plan with --rank");
  }
  if (p.kind == Kind::kTrain && t != "monitoring" && emit::UsesFsdp(p) && (p.tp > 1 || p.cp > 1)) {
    // The planner's FSDP layouts may add tensor or context parallelism (FSDP2 + TP, as
    // torchtitan runs it); the Trainer launch gpuplan writes has neither.
    return MakeError(ErrorCode::kUnsupported, p.path + ".layout." + (p.tp > 1 ? "tp" : "cp"),
                     fmt::format("not yet: this FSDP layout has tp {} x cp {}, and gpuplan's "
                                 "Trainer launch runs FSDP without tensor or context parallelism",
                                 p.tp, p.cp),
                     "pick a plan without tp/cp under FSDP with --rank, or re-plan with "
                     "--framework megatron-core or deepspeed");
  }
  if (p.kind == Kind::kTrain && t != "monitoring" && p.vpp > 1) {
    // Interleaving needs a pipeline and, per virtual stage, a layer, the embedding or the loss
    // (LayoutError's rule): a layout string for more stages than that would not launch.
    auto model = ResolveModel(p.model_ref, "job.model");
    const int units = model && model->layers > 0 ? model->layers + 2 : 0;
    if (units > 0 && (p.pp < 2 || static_cast<long long>(p.pp) * p.vpp > units)) {
      return MakeError(
          ErrorCode::kInvalidArgument, p.path + ".layout.vpp",
          fmt::format("vpp {} with pp {} is {} virtual stages for {} layers (at "
                      "most {}: one layer, the embedding or the loss each)",
                      p.vpp, p.pp, static_cast<long long>(p.pp) * p.vpp, units - 2, units),
          "emit the plan gpuplan wrote, or set vpp to 1 or a value with pp x vpp "
          "<= layers + 2 (pp > 1)");
    }
  }
  if (p.kind == Kind::kTrain && t != "monitoring" && p.precision == "fp4" &&
      p.framework.rfind("megatron", 0) != 0) {
    return MakeError(ErrorCode::kUnsupported, "job.precision",
                     "not yet: the NVFP4 (fp4) plan runs under " +
                         (p.framework.empty() ? std::string("its framework") : p.framework) +
                         ", and gpuplan's Trainer/DeepSpeed launches have no FP4 recipe",
                     "re-plan with --framework megatron-core (its launch passes --fp4-format "
                     "e2m1 --fp4-recipe nvfp4), or with --precision fp8");
  }
  if (p.kind == Kind::kTrain && t != "monitoring" && p.framework == "torchtitan") {
    return MakeError(ErrorCode::kUnsupported, p.path + ".layout.framework",
                     "not yet: gpuplan writes no torchtitan launch (a train_configs TOML) yet, "
                     "and its Trainer/DeepSpeed launches do not run torchtitan's layouts",
                     "run the layout with torchtitan's run_train.sh yourself, or re-plan with "
                     "--framework fsdp, megatron-core or deepspeed to get launch files");
  }
  if (p.kind == Kind::kTrain && t != "monitoring" && p.framework == "torchtune") {
    // A torchtune layout's memory is torchtune's (pure bf16, chunked loss): the Trainer and
    // DeepSpeed launches gpuplan writes would need more.
    return MakeError(ErrorCode::kUnsupported, p.path + ".layout.framework",
                     "not yet: gpuplan writes no torchtune launch (`tune run`) yet, and its "
                     "Trainer/DeepSpeed launches keep fp32 master weights the torchtune plan "
                     "does not",
                     "run the layout with `tune run` yourself, or re-plan with --framework "
                     "fsdp or deepspeed to get launch files");
  }
  if (t == "vllm") {
    auto c = emit::ResolveVllm(p, catalog);
    if (!c) return c.error();
    return emit::EmitVllm(p, *c);
  }
  if (t == "slurm" || t == "hf" || t == "deepspeed") {
    if (p.kind != Kind::kTrain) {
      return MakeError(ErrorCode::kInvalidArgument, "target",
                       t + " needs a training plan, got a serving plan",
                       "run `gpuplan --json plan train ...` and emit from its output");
    }
    if (t == "slurm") return emit::EmitSlurm(p);
    if (t == "hf") return emit::EmitHf(p);
    return std::vector<EmittedFile>{{"ds_config.json", emit::DeepSpeedConfig(p).dump(2) + "\n"}};
  }
  if (t == "k8s") return emit::EmitK8s(p, opt, catalog);
  if (t == "skypilot") return emit::EmitSkypilot(p, opt, catalog);
  return emit::EmitMonitoring(p, catalog);
}

}  // namespace gpuplan
