// Hugging Face TrainingArguments and the DeepSpeed config of a training plan (guide A10
// checkpoints). Keys checked against pinned transformers / DeepSpeed sources in CTest
// (tests/emit/fixtures/hf_training_args.txt, deepspeed_keys.txt).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"

namespace gpuplan::emit {

bool UsesFsdp(const Plan& p) { return p.framework == "fsdp" && p.zero_stage >= 2; }

ojson DeepSpeedConfig(const Plan& p) {
  ojson z = {{"stage", p.zero_stage}, {"overlap_comm", true}, {"contiguous_gradients", true}};
  // The plan's offload: its memory was sized with the optimizer states (and, at stage 3, the
  // parameters) in pinned host RAM.
  auto offload = [](bool on) {
    return on ? ojson{{"device", "cpu"}, {"pin_memory", true}} : ojson{{"device", "none"}};
  };
  if (p.zero_stage >= 1) z["offload_optimizer"] = offload(p.optimizer_offload);
  if (p.zero_stage == 3) {
    z["offload_param"] = offload(p.param_offload);
    z["stage3_gather_16bit_weights_on_model_save"] = true;
  }
  ojson ds = {{"train_batch_size", p.micro_batch * p.grad_accum * p.dp},
              {"train_micro_batch_size_per_gpu", p.micro_batch},
              {"gradient_accumulation_steps", p.grad_accum},
              {"gradient_clipping", 1.0}};
  if (p.precision == "fp16") {
    ds["fp16"] = {{"enabled", true}, {"loss_scale", 0}};
  } else if (p.precision != "fp32") {
    ds["bf16"] = {{"enabled", true}};
  }
  ds["zero_optimization"] = z;
  // Tensor parallelism under DeepSpeed is AutoTP training (DeepSpeed >= 0.16.4, transformers >=
  // 4.50.1): the config's tensor_parallel.autotp_size shards the Hugging Face model's linears.
  if (p.tp > 1 && p.framework == "deepspeed") ds["tensor_parallel"] = {{"autotp_size", p.tp}};
  ds["steps_per_print"] = 100;
  return ds;
}

int SaveSteps(const Plan& p) {
  if (!(p.step_time_s > 0) || !(p.checkpoint_interval_h > 0)) return 1000;
  return std::max(1,
                  static_cast<int>(std::lround(p.checkpoint_interval_h * 3600.0 / p.step_time_s)));
}

namespace {

// The Trainer's `optim` (transformers OptimizerNames) for the plan's optimizer, so the launch
// keeps the optimizer states the plan's memory was sized with; "" for AdamW (the Trainer's
// default) and for optimizers the Trainer does not ship (Adam-mini, Muon: the script says so).
std::string HfOptim(const std::string& optimizer) {
  static const std::pair<const char*, const char*> kOptim[] = {
      {"sgd", "sgd"},
      {"lion", "lion_32bit"},
      {"adamw-8bit", "adamw_bnb_8bit"},
      {"adamw-4bit", "adamw_torch_4bit"},
      {"adafactor", "adafactor"},
      {"rmsprop", "rmsprop"},
      {"adagrad", "adagrad"},
      {"lion-8bit", "lion_8bit"},
      {"ademamix", "ademamix"},
  };
  for (const auto& [plan, hf] : kOptim) {
    if (optimizer == plan) return hf;
  }
  return "";
}

bool HfHasOptim(const std::string& optimizer) {
  return optimizer == "adamw" || optimizer == "adam" || !HfOptim(optimizer).empty();
}

}  // namespace

ojson HfTrainingArgs(const Plan& p) {
  ojson a;
  a["output_dir"] = std::string(kNvmeDir) + "/" + Slug(p.model);
  a["per_device_train_batch_size"] = p.micro_batch;
  a["gradient_accumulation_steps"] = p.grad_accum;
  a["bf16"] = p.precision == "bf16" || p.precision == "fp8";
  a["fp16"] = p.precision == "fp16";
  if (std::string o = HfOptim(p.optimizer); !o.empty() || p.paged_optimizer) {
    // The Trainer's paged variants (bitsandbytes): paged_adamw_32bit, paged_adamw_8bit,
    // paged_lion_32bit, paged_lion_8bit.
    if (p.paged_optimizer) {
      if (p.optimizer == "adamw" || p.optimizer == "adam") o = "paged_adamw_32bit";
      if (p.optimizer == "adamw-8bit") o = "paged_adamw_8bit";
      if (p.optimizer == "lion") o = "paged_lion_32bit";
      if (p.optimizer == "lion-8bit") o = "paged_lion_8bit";
    }
    if (!o.empty()) a["optim"] = o;
  }
  a["gradient_checkpointing"] = p.recompute != "none";
  if (p.recompute != "none") a["gradient_checkpointing_kwargs"] = {{"use_reentrant", false}};
  a["save_strategy"] = p.checkpoint_interval_h > 0 ? "steps" : "no";
  if (p.checkpoint_interval_h > 0) {
    a["save_steps"] = SaveSteps(p);
    a["save_total_limit"] = kKeepCheckpoints;
  }
  a["save_safetensors"] = true;
  a["save_on_each_node"] = p.nodes > 1;
  a["logging_steps"] = 10;
  if (UsesFsdp(p)) {
    // PyTorch FSDP through the Trainer (accelerate): FULL_SHARD = ZeRO-3, SHARD_GRAD_OP =
    // ZeRO-2, CPUOffload moving parameters, gradients and optimizer states together; layers
    // wrapped by the model's _no_split_modules.
    a["fsdp"] = std::string(p.zero_stage >= 3 ? "full_shard" : "shard_grad_op") +
                (p.optimizer_offload ? " offload" : "") + " auto_wrap";
  } else if (p.zero_stage > 0) {
    a["deepspeed"] = "ds_config.json";
  }
  return a;
}

namespace {

std::string PyValue(const ojson& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  if (v.is_object()) {
    std::string s = "{";
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (s.size() > 1) s += ", ";
      s += ojson(it.key()).dump() + ": " + PyValue(it.value());
    }
    return s + "}";
  }
  return v.dump();  // JSON strings and numbers are valid Python literals
}

}  // namespace

std::vector<EmittedFile> EmitHf(const Plan& p) {
  const ojson a = HfTrainingArgs(p);
  std::string py = "# " + Header(p, "Hugging Face TrainingArguments").substr(2);
  if (p.checkpoint_interval_h > 0) {
    py += fmt::format(
        "# Checkpoints (guide A10): every {} steps = the job's {:g} h interval{} at {:.2f} s per "
        "step,\n"
        "# keep the last {}, safetensors, on local NVMe (sync to object storage separately).\n",
        SaveSteps(p), p.checkpoint_interval_h,
        p.checkpoint_interval_known ? "" : " (planner default: the plan has none)", p.step_time_s,
        kKeepCheckpoints);
  } else {
    py += "# Checkpoints: the job asked for none (checkpoint_every: 0).\n";
  }
  py +=
      fmt::format("# Global batch {} = {} per device x {} accumulation x {} data-parallel ranks.\n",
                  p.micro_batch * p.grad_accum * p.dp, p.micro_batch, p.grad_accum, p.dp);
  if (p.tp > 1 || p.pp > 1) {
    py += fmt::format(
        "# NOTE: the plan uses tensor parallel {} x pipeline parallel {}; the HF Trainer does\n"
        "# not shard layers that way: use Megatron-LM/NeMo or accept a different layout.\n",
        p.tp, p.pp);
  }
  if (p.method == "lora" || p.method == "qlora") {
    py += "# The plan is " + p.method + ": wrap the model with peft before building the Trainer.\n";
  }
  if (!HfHasOptim(p.optimizer)) {
    py += "# The plan's optimizer " + p.optimizer +
          " is not a Trainer `optim`: pass it as Trainer(optimizers=(opt, None)).\n";
  }
  if (p.precision == "fp8")
    py += "# fp8 training needs Transformer Engine; bf16 is set for the rest.\n";
  py += "from transformers import TrainingArguments\n\nargs = TrainingArguments(\n";
  for (auto it = a.begin(); it != a.end(); ++it) {
    py += "    " + it.key() + "=" + PyValue(it.value()) + ",\n";
  }
  py += ")\n";
  std::vector<EmittedFile> out = {{"training_args.py", py},
                                  {"training_args.json", a.dump(2) + "\n"}};
  if (p.zero_stage > 0 && !UsesFsdp(p))
    out.push_back({"ds_config.json", DeepSpeedConfig(p).dump(2) + "\n"});
  return out;
}

}  // namespace gpuplan::emit
