// vLLM: the `vllm serve` flags that reproduce the planner's KV-cache capacity, and the server
// script (formats.md 6.2; flags checked against tests/emit/fixtures/vllm_args.txt).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "emit/emit_internal.h"
#include "gpuplan/quant_preset.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/serve.h"

namespace gpuplan {

namespace {

void ApplyQuant(const VllmFlags& f, InferMemoryOptions& mo) {
  mo.weight_precision = Precision::kBf16;
  mo.quant.reset();
  if (f.quantization == "fp8") {
    mo.weight_precision = Precision::kFp8;
  } else if (f.quantization == "awq" || f.quantization == "gptq") {
    mo.quant = FindQuantPreset(f.quantization)->Spec();
  } else if (f.quantization == "bitsandbytes") {
    mo.quant = GetQuantPreset(QuantPresetId::kBnbNf4DoubleQuant).Spec();
  } else if (f.quantization == "fbgemm_fp8") {
    // Meta's FP8 checkpoints (vLLM's fbgemm_fp8 method, read from the checkpoint's config).
    mo.weight_precision = Precision::kFp8;
    mo.quant = GetQuantPreset(QuantPresetId::kFbgemmFp8).Spec();
  }
  mo.kv_precision = f.kv_cache_dtype == "fp8" ? Precision::kFp8 : Precision::kBf16;
}

struct VllmMemory {
  InferMemory mem;
  Bytes visible;        // the GPU's memory as vLLM sees it
  int cuda_graphs = 0;  // the graphs whose memory the pinned release estimates
};

Result<VllmMemory> EstimateVllmMemory(const VllmFlags& f, const Catalog& catalog) {
  auto m = ResolveModel(f.model, "job.model");
  if (!m) return m.error();
  const Accelerator* acc = catalog.FindAccelerator(f.accelerator);
  if (!acc) {
    return MakeError(ErrorCode::kNotFound, "accelerator",
                     "unknown accelerator \"" + f.accelerator + "\"",
                     "the plan and the catalog must come from the same gpuplan version");
  }
  if (f.quantization != "" && f.quantization != "fp8" && f.quantization != "awq" &&
      f.quantization != "gptq" && f.quantization != "bitsandbytes" &&
      f.quantization != "fbgemm_fp8") {
    return MakeError(ErrorCode::kInvalidArgument, "--quantization",
                     "unsupported \"" + f.quantization + "\"",
                     "use fp8, awq, gptq, bitsandbytes or fbgemm_fp8");
  }
  InferMemoryOptions mo;
  ApplyQuant(f, mo);
  // A checkpoint that declares its quantization (config.json quantization_config: gpt-oss's
  // MXFP4 experts, AWQ/GPTQ exports) is loaded in it with no --quantization flag.
  if (f.quantization.empty() && m->quant) mo.quant = m->quant;
  mo.engine = Engine::kVllm;
  mo.tp = std::max(1, f.tensor_parallel_size);
  mo.pp = std::max(1, f.pipeline_parallel_size);
  mo.memory_fraction = f.gpu_memory_utilization;
  mo.context = std::max(1, f.max_model_len);
  mo.concurrency = 1;
  mo.max_num_seqs = f.max_num_seqs;
  mo.max_num_batched_tokens = f.max_num_batched_tokens;
  mo.nvls = NvlsAllReduce(*acc);
  // The pinned release charges its CUDA graphs' estimate to the KV budget (docs/model.md 4.3).
  if (VllmEstimatesCudaGraphs(emit::kVllmImageVersion))
    mo.cuda_graph_captures = VllmCudaGraphCaptures(f.max_num_seqs, f.max_num_batched_tokens);
  VllmMemory r;
  r.visible = VisibleMemory(acc->Usable());
  r.mem = EstimateInferenceMemory(*m, mo, r.visible);
  r.cuda_graphs = mo.cuda_graph_captures;
  return r;
}

}  // namespace

Result<std::int64_t> VllmKvCapacityTokens(const VllmFlags& f, const Catalog& catalog) {
  auto r = EstimateVllmMemory(f, catalog);
  if (!r) return r.error();
  return r->mem.kv_tokens;
}

namespace emit {

Status ImageKnowsModel(const ModelSpec& m, const char* image, const char* released) {
  if (m.architecture_released.empty() || m.architecture_released <= released) return {};
  return MakeError(ErrorCode::kUnsupported, "job.model",
                   fmt::format("not yet: the pinned image {} ({}) predates {}'s architecture "
                               "({}), so it cannot load the model",
                               image, released, m.name, m.architecture_released),
                   "the plan's hardware, layout and replica count stand; launch the engine's "
                   "release that supports the model with the plan's flags");
}

// Finds the weight/KV precision the planner used as the one whose KV capacity reproduces the
// plan's `kv_tokens_per_replica` under the planner's settings (the current vLLM's defaults:
// utilisation 0.92, 256 sequences, 8192 batched tokens). Plans that carry their precision narrow
// the search.
Result<VllmConfig> ResolveVllm(const Plan& p, const Catalog& catalog) {
  if (p.kind != Kind::kServe) {
    return MakeError(ErrorCode::kInvalidArgument, "target",
                     "vllm needs a serving plan, got a training plan",
                     "run `gpuplan --json plan infer ...` and emit from its output");
  }
  if (!DecoderLlm(p.arch)) {
    return MakeError(ErrorCode::kInvalidArgument, "job.arch",
                     "vllm serves decoder LLMs; this plan serves " + p.model + " (" + p.arch + ")",
                     p.arch == "diffusion-unet"
                         ? "no deployment files for a text-to-image pipeline yet; the plan's "
                           "hardware and replica count stand"
                     : p.arch == "encoder-decoder"
                         ? "no deployment files for an encoder-decoder model yet; the plan's "
                           "hardware, batch and replica count stand"
                         : "emit k8s or skypilot: they run the plan's own runtime (Triton with "
                           "TensorRT on GPUs, OpenVINO on CPUs)");
  }
  if (p.engine != "vllm") {
    return MakeError(ErrorCode::kInvalidArgument, "job.engine",
                     "the plan was sized for engine \"" + p.engine + "\", not vllm",
                     "re-plan with --engine vllm");
  }
  if (p.accelerator.empty() || p.gpus_per_replica < 1) {
    return MakeError(ErrorCode::kInvalidArgument, p.path + ".accelerator",
                     "a CPU deployment has no vLLM GPU configuration",
                     "pick a GPU plan with --rank");
  }
  auto m = ResolveModel(p.model_ref, "job.model");
  if (!m) return m.error();
  if (Status known = ImageKnowsModel(*m, kVllmImage, kVllmImageReleased); !known) {
    return known.error();
  }
  // The pinned release (>= 0.10) keeps only the window of interleaved sliding-window layers, as
  // the plan counts them (KeepsInterleavedWindowKv; docs/model.md 4.3).
  VllmConfig c;
  c.planner_tokens = p.kv_tokens;
  VllmFlags f;
  f.model = p.model_ref;
  f.accelerator = p.accelerator;
  f.tensor_parallel_size = p.gpus_per_replica;
  // The planner sizes the KV pool with the current vLLM's default utilisation.
  const double planner_utilization = VllmDefaultGpuMemoryUtilization("");
  f.gpu_memory_utilization = planner_utilization;
  f.max_model_len = p.input_len + p.output_len;
  const std::pair<const char*, const char*> kCandidates[] = {
      {"", "auto"},    {"fp8", "fp8"},           {"", "fp8"},    {"fp8", "auto"},
      {"awq", "auto"}, {"bitsandbytes", "auto"}, {"awq", "fp8"}, {"fbgemm_fp8", "auto"}};
  bool found = false;
  for (const auto& [q, kv] : kCandidates) {
    f.quantization = q;
    f.kv_cache_dtype = kv;
    auto t = VllmKvCapacityTokens(f, catalog);
    if (!t) return t.error();
    if (*t == p.kv_tokens) {
      found = true;
      break;
    }
  }
  if (!found) {
    return MakeError(
        ErrorCode::kUnsupported, p.path + ".kv_tokens_per_replica",
        fmt::format("no vLLM precision setting reproduces the planner's {} KV tokens", p.kv_tokens),
        "int8 weights or KV have no vLLM flag here; re-plan with bf16, fp8, awq, gptq or nf4");
  }
  // fbgemm_fp8 (Meta's FP8 checkpoints, named by the flag or declared by the checkpoint) is a
  // deprecated method in the pinned release (DEPRECATED_QUANTIZATION_METHODS: fbgemm_fp8,
  // fp_quant): vLLM refuses to load it without --allow-deprecated-quantization.
  c.deprecated_quantization =
      f.quantization == "fbgemm_fp8" ||
      (f.quantization.empty() && m->quant &&
       (m->quant->method == "fbgemm_fp8" || m->quant->method == "fbgemm-fp8"));
  c.ambiguous_awq_gptq = f.quantization == "awq";
  if (f.quantization == "awq" && p.serve_quant == "gptq") {
    f.quantization = "gptq";
    c.ambiguous_awq_gptq = false;
  } else if (f.quantization == "awq" && p.serve_quant == "awq") {
    c.ambiguous_awq_gptq = false;
  }
  // Cap concurrency at the plan's batch (the largest that met the SLOs). vLLM's profiling
  // run then samples fewer sequences, which frees logits memory the planner (at vLLM's
  // default of 256 sequences) did not give to the KV cache; lower the utilisation by that
  // amount so the KV pool stays the one the plan was sized with.
  auto base = EstimateVllmMemory(f, catalog);
  if (!base) return base.error();
  f.max_num_seqs = p.batch;
  auto capped = EstimateVllmMemory(f, catalog);
  if (!capped) return capped.error();
  const double freed = base->mem.engine_non_kv.value() - capped->mem.engine_non_kv.value();
  if (freed > 0) {
    f.gpu_memory_utilization =
        std::round((planner_utilization - freed / base->visible.value()) * 1e4) / 1e4;
  }
  c.flags = f;
  auto at_flags = EstimateVllmMemory(f, catalog);
  if (!at_flags) return at_flags.error();
  c.flag_tokens = at_flags->mem.kv_tokens;
  c.cuda_graph_gib = at_flags->mem.cuda_graph_estimate.value() / kBytesPerGiB;
  c.cuda_graphs = at_flags->cuda_graphs;
  return c;
}

std::vector<std::string> VllmArgs(const VllmConfig& c) {
  const VllmFlags& f = c.flags;
  std::vector<std::string> a = {
      "--tensor-parallel-size",   std::to_string(f.tensor_parallel_size),
      "--pipeline-parallel-size", std::to_string(f.pipeline_parallel_size),
      "--gpu-memory-utilization", fmt::format("{}", f.gpu_memory_utilization),
      "--max-model-len",          std::to_string(f.max_model_len),
      "--max-num-seqs",           std::to_string(f.max_num_seqs),
      "--max-num-batched-tokens", std::to_string(f.max_num_batched_tokens),
      "--kv-cache-dtype",         f.kv_cache_dtype};
  if (!f.quantization.empty()) {
    a.push_back("--quantization");
    a.push_back(f.quantization);
  }
  if (c.deprecated_quantization) a.push_back("--allow-deprecated-quantization");
  a.push_back("--host");
  a.push_back("0.0.0.0");
  a.push_back("--port");
  a.push_back(std::to_string(kServePort));
  return a;
}

std::vector<EmittedFile> EmitVllm(const Plan& p, const VllmConfig& c) {
  const double diff = c.planner_tokens > 0
                          ? 100.0 * static_cast<double>(c.flag_tokens - c.planner_tokens) /
                                static_cast<double>(c.planner_tokens)
                          : 0.0;
  const std::string model = HfModelId(p.model_ref);
  std::string s = "#!/bin/sh\n" + Header(p, "vLLM server command");
  s += fmt::format(
      "# KV cache per replica: {} tokens with these flags (planner: {} tokens, {:+.2f}%),\n"
      "# i.e. {:.1f} requests of --max-model-len tokens at once; the plan runs up to {} (most "
      "hold\n"
      "# fewer tokens than the maximum while they generate).\n"
      "# Visible GPU memory is taken as {:.0f}% of the {} memory the driver reports; vLLM logs "
      "the\n"
      "# measured value as \"GPU KV cache size: N tokens\" at startup.\n",
      c.flag_tokens, c.planner_tokens, diff,
      static_cast<double>(c.flag_tokens) / std::max(1, c.flags.max_model_len), p.batch,
      100 * kVisibleMemoryFraction, p.accelerator);
  if (c.cuda_graphs > 0) {
    s += fmt::format(
        "# The count is net of the {:.2f} GiB that vLLM estimates for its {} CUDA graphs and takes "
        "off\n# the KV cache (its log: \"Estimated CUDA graph memory\"; docs/model.md 4.3).\n",
        c.cuda_graph_gib, c.cuda_graphs);
  }
  if (c.ambiguous_awq_gptq) {
    s += "# 4-bit weights: awq and gptq checkpoints size alike; use the method your checkpoint "
         "has.\n";
  }
  s += fmt::format(
      "# Planned: {} replica(s) of {} x {}, {:.2f} req/s each at the target utilisation.\n",
      p.replicas, p.gpus_per_replica, p.accelerator, p.capacity_qps);
  s += fmt::format("# Tested flag names: vLLM engine arguments of the image {} (docs/emit.md).\n",
                   kVllmImage);
  s += "set -eu\n";
  s += fmt::format(
      "# Weights are downloaded once into the model cache (override with HF_HOME).\n"
      "export HF_HOME=\"${{HF_HOME:-$HOME/.cache/huggingface}}\"\n");
  if (LocalModel(p.model_ref)) {
    s += "# The model was planned from a local config: serve its directory (weights beside it).\n";
  } else if (GatedModel(model)) {
    s +=
        "# Gated model on the Hugging Face Hub: accept its licence on the model page, then export\n"
        "# HF_TOKEN (a read token of that account); without it the download answers 401.\n"
        ": \"${HF_TOKEN:?set HF_TOKEN to a Hugging Face read token with access to the model}\"\n";
  }
  std::vector<std::string> words = {"exec vllm serve " + ShellQuote(model)};
  // One line per flag with its value; a switch (no value) stands alone.
  auto a = VllmArgs(c);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i + 1 < a.size() && a[i + 1].rfind("--", 0) != 0) {
      words.push_back(a[i] + " " + ShellQuote(a[i + 1]));
      ++i;
    } else {
      words.push_back(a[i]);
    }
  }
  s += ShellJoin(words, " \\\n  ") + "\n";
  return {{"vllm-serve.sh", s}};
}

}  // namespace emit
}  // namespace gpuplan
