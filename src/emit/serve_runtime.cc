// The serving engine, image and command of a serving plan: vLLM or TGI for decoder LLMs, Triton
// with a TensorRT engine at the plan's precision for CNN/encoder/ViT models on GPUs, OpenVINO
// Model Server on CPUs. Each runtime names the Prometheus metrics the autoscalers read.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "emit/emit_internal.h"
#include "gpuplan/model.h"
#include "gpuplan/serve.h"

namespace gpuplan::emit {

namespace {

// trtexec precision flags for the plan's weight precision (TensorRT picks the fastest kernel
// among the enabled precisions; int8 keeps fp16 enabled for layers without int8 kernels).
std::vector<std::string> TrtPrecisionFlags(const std::string& precision) {
  if (precision == "int8") return {"--int8", "--fp16"};
  if (precision == "fp8") return {"--fp8", "--fp16"};
  if (precision == "fp16") return {"--fp16"};
  if (precision == "bf16") return {"--bf16"};
  return {};  // fp32
}

// The engine's input shapes for trtexec, per sample (batch dimension added by the caller).
std::string SampleDims(const ModelSpec* m, const Plan& p) {
  if (m && (m->arch == ModelArch::kEncoder || m->arch == ModelArch::kEncoderDecoder)) {
    return fmt::format("{}", std::max(1, p.input_len));
  }
  const int side = m && m->image_size > 0 ? m->image_size : 224;
  const int ch = m && m->channels > 0 ? m->channels : 3;
  return fmt::format("{}x{}x{}", ch, side, side);
}

}  // namespace

Status TgiKnowsModel(const ModelSpec& m) {
  // TGI 3.3.7's ModelType entries (server/text_generation_server/models/__init__.py at v3.3.7).
  static constexpr std::string_view kTypes[] = {
      "deepseek_v2", "deepseek_v3", "idefics2", "idefics3",   "llava_next", "llama",
      "llama4",      "phi3",        "granite",  "gemma",      "paligemma",  "gemma2",
      "gemma3",      "gemma3_text", "cohere",   "dbrx",       "mamba",      "mistral",
      "mixtral",     "gpt_bigcode", "phi",      "phimoe",     "baichuan",   "falcon",
      "starcoder2",  "qwen2",       "qwen2_vl", "qwen2_5_vl", "opt",        "t5",
      "galactica",   "santacoder",  "bloom",    "mpt",        "gpt2",       "gpt_neox",
      "gptj",        "idefics",     "mllama"};
  if (m.model_type.empty() ||
      std::find(std::begin(kTypes), std::end(kTypes), m.model_type) != std::end(kTypes)) {
    return {};
  }
  return MakeError(ErrorCode::kUnsupported, "job.model",
                   fmt::format("not yet: the pinned image {} has no model code for {}'s "
                               "model_type \"{}\"; it would fall back to its transformers "
                               "backend, which the plan's TGI sizing does not describe",
                               kTgiImage, m.name, m.model_type),
                   "re-plan with --engine vllm: the pinned vLLM serves it");
}

Result<ServeRuntime> ResolveServeRuntime(const Plan& p, const Catalog& catalog) {
  ServeRuntime r;
  const bool gpu = !p.accelerator.empty() && p.gpus_per_replica > 0;
  r.gpu = gpu;
  const std::string name = Slug(p.model);
  const bool local = LocalModel(p.model_ref);
  // In a container or VM the model lives in the cache volume: a Hub id is downloaded there, a
  // local model directory is copied there by the user (the notes say so).
  const std::string hf_model = HfModelId(p.model_ref);
  const std::string served_model = local ? std::string(kModelCacheDir) + "/local/" +
                                               std::filesystem::path(hf_model).filename().string()
                                         : hf_model;
  if (local) {
    r.notes.push_back(
        "The model was planned from a local config: copy its directory (config and weights) to " +
        served_model + " in the model cache volume before the first start.");
  }
  if (DecoderLlm(p.arch)) {
    if (!gpu) {
      return MakeError(ErrorCode::kUnsupported, p.path + ".accelerator",
                       "not yet: no CPU serving configuration for a decoder LLM",
                       "pick a GPU plan with --rank, or re-plan without --cpu");
    }
    if (p.engine == "vllm") {
      auto c = ResolveVllm(p, catalog);
      if (!c) return c.error();
      r.engine = "vllm";
      r.image = kVllmImage;
      r.command = {"vllm", "serve", served_model};
      for (const auto& a : VllmArgs(*c)) r.command.push_back(a);
      r.request_counter = "vllm:request_success_total";
      r.queue_gauge = "vllm:num_requests_waiting";
      r.notes.push_back(
          fmt::format("vLLM KV cache per replica: {} tokens with these flags (planner: {}).",
                      c->flag_tokens, c->planner_tokens));
      r.prepare = fmt::format("pip install vllm=={}\n", kVllmImageVersion);
      return r;
    }
    if (p.engine == "tgi") {
      auto m = ResolveModel(p.model_ref, "job.model");
      if (!m) return m.error();
      if (Status known = ImageKnowsModel(*m, kTgiImage, kTgiImageReleased); !known) {
        return known.error();
      }
      if (Status known = TgiKnowsModel(*m); !known) return known.error();
      r.engine = "tgi";
      r.image = kTgiImage;
      r.command = {
          "text-generation-launcher", "--model-id", served_model, "--num-shard",
          std::to_string(p.gpus_per_replica), "--max-concurrent-requests",
          std::to_string(std::max(128, 2 * p.batch)), "--max-batch-size", std::to_string(p.batch),
          "--max-input-tokens", std::to_string(std::max(1, p.input_len)), "--max-total-tokens",
          std::to_string(p.input_len + p.output_len),
          // The warm-up prefill the planner sized the KV cache after (TgiDefaults:
          // 3.x would otherwise pick its own from the card's FLOP/s).
          "--max-batch-prefill-tokens",
          std::to_string(TgiDefaults("", 0, p.input_len + p.output_len, std::max(1, p.input_len))
                             .max_batch_prefill_tokens),
          "--hostname", "0.0.0.0", "--port", std::to_string(kServePort)};
      if (p.serve_quant == "awq" || p.serve_quant == "gptq") {
        r.command.push_back("--quantize");
        r.command.push_back(p.serve_quant);
      } else if (p.serve_precision == "fp8") {
        r.command.push_back("--quantize");
        r.command.push_back("fp8");
      }
      r.request_counter = "tgi_request_success";
      r.queue_gauge = "tgi_queue_size";
      r.prepare = "# TGI runs from its container image; on a VM use docker run " +
                  std::string(kTgiImage) + "\n";
      return r;
    }
    return MakeError(ErrorCode::kUnsupported, "job.engine",
                     "not yet: no deployment files for engine \"" + p.engine + "\"",
                     "re-plan with --engine vllm or --engine tgi");
  }
  if (p.arch == "encoder-decoder") {
    // Whisper / T5 decode token by token after their encoder: neither a Triton engine of one
    // forward nor the decoder-LLM launch lines serve them. The plan's sizing stands
    // (docs/model.md 10.7).
    return MakeError(ErrorCode::kUnsupported, "job.arch",
                     "not yet: no deployment files for an encoder-decoder model (" + p.model + ")",
                     "the plan's hardware, batch and replica count stand; serve it with an "
                     "engine that runs encoder-decoder generation (vLLM's transcription "
                     "endpoint, TensorRT-LLM, CTranslate2) on the planned instances");
  }
  if (p.arch == "diffusion-unet") {
    // A text-to-image service runs the whole pipeline (text encoders, the UNet's sampling loop,
    // the VAE decoder) behind one request; a Triton engine of the UNet alone answers nothing a
    // client can use. The plan's sizing stands (docs/model.md 10.4).
    return MakeError(ErrorCode::kUnsupported, "job.arch",
                     "not yet: no deployment files for a text-to-image pipeline (" + p.model + ")",
                     "the plan's hardware and replica count stand; serve it with a diffusers "
                     "pipeline or a TensorRT diffusion pipeline on the planned instances");
  }
  auto model = ResolveModel(p.model_ref, "job.model");
  const ModelSpec* m = model ? &*model : nullptr;
  const std::string precision = p.serve_precision.empty() ? "fp16" : p.serve_precision;
  const std::string repo = std::string(kModelCacheDir) + "/triton";
  if (gpu) {
    // Triton serving a TensorRT engine built once from the ONNX export at the plan's precision.
    r.engine = "triton-tensorrt";
    r.image = kTritonImage;
    r.health_path = "/v2/health/ready";
    r.metrics_port = 8002;
    r.command = {"tritonserver", "--model-repository=" + repo,
                 "--http-port=" + std::to_string(kServePort), "--metrics-port=8002"};
    r.request_counter = "nv_inference_request_success";
    r.queue_gauge = "nv_inference_pending_request_count";
    const std::string dims = SampleDims(m, p);
    std::string cfg = fmt::format(
        "# Triton model configuration generated by `gpuplan emit` ({} engine at {}).\n"
        "# Inputs and outputs are read from the TensorRT engine (auto-complete config).\n"
        "name: \"{}\"\n"
        "platform: \"tensorrt_plan\"\n"
        "max_batch_size: {}\n"
        "dynamic_batching {{\n"
        "  max_queue_delay_microseconds: 100\n"
        "}}\n"
        "instance_group [\n"
        "  {{\n"
        "    count: 1\n"
        "    kind: KIND_GPU\n"
        "  }}\n"
        "]\n",
        "TensorRT", precision, name, p.batch);
    std::vector<std::string> trt = {
        "trtexec",
        "--onnx=\"$ONNX\"",
        "--saveEngine=\"$PLAN\"",
        "--minShapes=\"$INPUT_NAME\":1x\"$INPUT_DIMS\"",
        fmt::format("--optShapes=\"$INPUT_NAME\":{}x\"$INPUT_DIMS\"", p.batch),
        fmt::format("--maxShapes=\"$INPUT_NAME\":{}x\"$INPUT_DIMS\"", p.batch)};
    for (const auto& f : TrtPrecisionFlags(precision)) trt.push_back(f);
    std::string build = "#!/bin/sh\n" + Header(p, "TensorRT engine build");
    build += fmt::format(
        "# Builds the {} TensorRT engine Triton serves, once, into the model cache. Input: an "
        "ONNX\n"
        "# export of the model with a dynamic batch dimension (torch.onnx.export(..., "
        "dynamic_axes=...)).\n"
        "# The batch range is 1..{} (the plan's batch); INPUT_DIMS is one sample's shape.\n"
        "{}"
        "set -eu\n"
        "PATH=\"$PATH:/usr/src/tensorrt/bin:/opt/tensorrt/bin:/workspace/tensorrt/bin\"\n"
        "ONNX=\"${{ONNX:-{}/onnx/model.onnx}}\"\n"
        "INPUT_NAME=\"${{INPUT_NAME:-input}}\"\n"
        "INPUT_DIMS=\"${{INPUT_DIMS:-{}}}\"\n"
        "PLAN={}/{}/1/model.plan\n"
        "if [ -f \"$PLAN\" ]; then exit 0; fi\n"
        "mkdir -p \"$(dirname \"$PLAN\")\"\n"
        "cp \"$(dirname \"$0\")/config.pbtxt\" {}/{}/config.pbtxt\n",
        precision, p.batch,
        precision == "int8"
            ? "# INT8 without a calibration cache uses TensorRT's default ranges: pass\n"
              "# --calib=CACHE (from your calibration set) for production accuracy.\n"
            : "",
        kModelCacheDir, dims, repo, name, repo, name);
    build += ShellJoin(trt, " \\\n  ") + "\n";
    r.files.push_back({"config.pbtxt", cfg});
    r.files.push_back({"build-engine.sh", build});
    r.prepare = "sh build-engine.sh\n";
    r.notes.push_back(fmt::format(
        "Triton + TensorRT ({}): build-engine.sh turns {}/onnx/model.onnx into the engine "
        "once; the server loads {}.",
        precision, kModelCacheDir, repo));
    return r;
  }
  // CPU: OpenVINO Model Server with the model's OpenVINO IR (int8 from NNCF when planned so).
  r.engine = "openvino";
  r.image = kOpenVinoImage;
  r.health_path = "/v2/health/ready";
  r.command = {"/ovms/bin/ovms",
               "--model_path",
               std::string(kModelCacheDir) + "/openvino/" + name,
               "--model_name",
               name,
               "--rest_port",
               std::to_string(kServePort),
               "--port",
               "9000",
               "--metrics_enable"};
  r.request_counter = "ovms_requests_success";
  r.queue_gauge = "ovms_current_requests";
  r.notes.push_back(fmt::format(
      "OpenVINO Model Server on CPU ({}): put the OpenVINO IR (ovc model.onnx{}) in "
      "{}/openvino/{}/1/.",
      precision, precision == "int8" ? ", quantised with NNCF" : "", kModelCacheDir, name));
  r.prepare =
      "# OpenVINO Model Server runs from its container image " + std::string(kOpenVinoImage) + "\n";
  return r;
}

}  // namespace gpuplan::emit
