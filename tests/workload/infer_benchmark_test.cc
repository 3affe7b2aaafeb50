// The MLPerf Inference benchmark table (data/inference_benchmarks.csv) and the one rule that
// fills a serving workload's unstated lengths, beams and SLOs from it (FillServingShape), which
// the planner's --benchmark and the validation adapter both call. Expected values are the
// published figures (inference_rules.adoc, mlperf.conf) and the documented rule, not values
// copied from a run.
#include <gtest/gtest.h>

#include <string>

#include "gpuplan/benchmark.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/quant_preset.h"
#include "gpuplan/serve.h"

namespace gpuplan {
namespace {

// A round accelerator for the serving rules below: 400 TFLOPS in every format, 2 TB/s, 80 GiB.
ComputeDevice TestDevice() {
  ComputeDevice dev;
  dev.id = "test";
  dev.peak_fp32 = dev.peak_bf16 = dev.peak_fp16 = dev.peak_fp8 = dev.peak_int8 = 400e12;
  dev.mem_bw = 2e12;
  dev.memory = GiB(80);
  return dev;
}

TEST(InferBenchmarkTable, FindsByIdShortIdAndAliasCaseInsensitively) {
  ASSERT_FALSE(InferBenchmarks().empty());
  const InferBenchmark* l = FindInferBenchmark("mlperf/llama2-70b-99");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(FindInferBenchmark("llama2-70b-99"), l);    // id without the prefix
  EXPECT_EQ(FindInferBenchmark("LLAMA2-70B-99.9"), l);  // result-directory name
  EXPECT_EQ(FindInferBenchmark(" mlperf/Llama2-70B-99 "), l);
  EXPECT_EQ(FindInferBenchmark("bert-99.9"), FindInferBenchmark("mlperf/bert-99"));
  EXPECT_EQ(FindInferBenchmark("gptj-99.9"), FindInferBenchmark("gptj-99"));
  EXPECT_EQ(FindInferBenchmark("no-such-benchmark"), nullptr);
  EXPECT_EQ(FindInferBenchmark(""), nullptr);
  // Training and inference tables are separate: "resnet" there, "resnet50" here.
  EXPECT_NE(FindInferBenchmark("resnet50"), nullptr);
}

TEST(InferBenchmarkTable, RowsCarryThePublishedFigures) {
  const InferBenchmark* l = FindInferBenchmark("llama2-70b");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->samples, 24576);
  ASSERT_TRUE(l->mean_output_tokens);
  EXPECT_DOUBLE_EQ(*l->mean_output_tokens, 294.45);  // rules: tokens_per_sample
  // Mean of the official dataset's per-sample Llama-2 token counts (openshift-psap summary).
  EXPECT_DOUBLE_EQ(l->mean_input_tokens.value_or(0), 222.33);
  EXPECT_EQ(l->precision, Precision::kFp8);  // closed-division submissions: FP8 weights and KV
  EXPECT_EQ(l->beams, 1);
  EXPECT_EQ(l->server_ttft_p99_ms.value_or(0), 2000);
  EXPECT_EQ(l->server_tpot_p99_ms.value_or(0), 200);

  const InferBenchmark* g = FindInferBenchmark("gptj-99");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->beams, 4);
  EXPECT_EQ(g->max_output_tokens.value_or(0), 128);
  EXPECT_EQ(g->server_latency_p99_ms.value_or(0), 20000);
  // No GPT-J token count is published: the Llama-3.1-8B dataset's count of the same 13,368
  // prompts, truncated at GPT-J's 1919 tokens, stands in (a documented proxy).
  EXPECT_DOUBLE_EQ(g->mean_input_tokens.value_or(0), 866.14);

  const InferBenchmark* l8 = FindInferBenchmark("llama3.1-8b");
  ASSERT_NE(l8, nullptr);
  EXPECT_DOUBLE_EQ(l8->mean_input_tokens.value_or(0), 870.73);
  // The generation limit: the reference run's outputs (611 characters each) fill it.
  EXPECT_DOUBLE_EQ(l8->mean_output_tokens.value_or(0), 128);
  // A benchmark row without a mean output length makes a job state it.
  InferBenchmark bare = *l8;
  bare.mean_output_tokens.reset();
  const ServingShape filled = FillServingShape(bare, ServingShape{});
  auto miss = UnpublishedLength(bare, filled);
  ASSERT_TRUE(miss);
  EXPECT_EQ(miss->flag, "--output-len");
  EXPECT_NE(miss->message.find("mlperf/llama3.1-8b"), std::string::npos) << miss->message;
  ServingShape stated;
  stated.output_len = 100;
  EXPECT_FALSE(UnpublishedLength(bare, FillServingShape(bare, stated)));
  EXPECT_EQ(l8->max_output_tokens.value_or(0), 128);
  EXPECT_EQ(FindInferBenchmark("llama3.1-8b-interactive")->server_tpot_p99_ms.value_or(0), 30);

  const InferBenchmark* r1 = FindInferBenchmark("deepseek-r1");
  ASSERT_NE(r1, nullptr);
  EXPECT_DOUBLE_EQ(r1->mean_input_tokens.value_or(0), 803.79);
  EXPECT_DOUBLE_EQ(r1->mean_output_tokens.value_or(0), 4043.45);
  EXPECT_EQ(r1->max_output_tokens.value_or(0), 20000);
  EXPECT_EQ(r1->server_tpot_p99_ms.value_or(0), 80);
  EXPECT_EQ(r1->model, "DeepSeek-V3");

  const InferBenchmark* m = FindInferBenchmark("mixtral-8x7b");
  ASSERT_NE(m, nullptr);
  EXPECT_DOUBLE_EQ(m->mean_output_tokens.value_or(0), 144.84);
  EXPECT_EQ(m->samples, 15000);
  EXPECT_DOUBLE_EQ(m->mean_input_tokens.value_or(0), 427.39);

  const InferBenchmark* b = FindInferBenchmark("bert-99");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->max_input_tokens.value_or(0), 384);
  // (1 - 0.54 padding share) x 384 real tokens.
  EXPECT_NEAR(b->mean_input_tokens.value_or(0), 0.46 * 384, 0.05);
  EXPECT_FALSE(b->mean_output_tokens);
  EXPECT_FALSE(b->precision);  // not checked: left empty
  for (const auto& row : InferBenchmarks()) EXPECT_FALSE(row.source.empty()) << row.id;
}

// Each benchmark's reference model is a built-in preset of the right kind (what `plan infer
// --benchmark` serves without --model); GPT-J 6B has none.
TEST(InferBenchmarkTable, ReferenceModelsArePresets) {
  for (const InferBenchmark& b : InferBenchmarks()) {
    SCOPED_TRACE(b.id);
    if (b.id == "mlperf/gptj-99") {
      EXPECT_TRUE(b.model.empty());
      continue;
    }
    ASSERT_FALSE(b.model.empty());
    auto m = ResolveModel(b.model, "model");
    ASSERT_TRUE(m.ok()) << m.error().ToString();
    // LLM benchmarks generate (a mean output length, or at least its limit where the mean is
    // not published: Llama-3.1-8B); the others do not.
    EXPECT_EQ(m->is_decoder_llm(), b.mean_output_tokens || b.max_output_tokens);
  }
}

TEST(InferBenchmarkTable, ParserRejectsBadRowsWithTheCell) {
  const std::string head =
      "id,aliases,task,dataset,samples,mean_input_tokens,max_input_tokens,mean_output_tokens,"
      "min_output_tokens,max_output_tokens,stop,beams,server_ttft_p99_ms,server_tpot_p99_ms,"
      "server_latency_p99_ms,source,as_of,notes\n";
  auto ok = ParseInferBenchmarks(head + "x/y,a|B,t,d,10,,,,,,,1,,,,src,,\n", "t.csv");
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].aliases, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE((*ok)[0].mean_input_tokens);

  auto no_source = ParseInferBenchmarks(head + "x/y,,t,d,10,,,,,,,1,,,,,,\n", "t.csv");
  ASSERT_FALSE(no_source);
  EXPECT_NE(no_source.error().field.find("t.csv:"), std::string::npos);
  auto zero_samples = ParseInferBenchmarks(head + "x/y,,t,d,0,,,,,,,1,,,,s,,\n", "t.csv");
  EXPECT_FALSE(zero_samples);
  auto zero_beams = ParseInferBenchmarks(head + "x/y,,t,d,5,,,,,,,0,,,,s,,\n", "t.csv");
  EXPECT_FALSE(zero_beams);
  auto bad_number = ParseInferBenchmarks(head + "x/y,,t,d,5,abc,,,,,,1,,,,s,,\n", "t.csv");
  EXPECT_FALSE(bad_number);
  auto zero_tokens = ParseInferBenchmarks(head + "x/y,,t,d,5,0,,,,,,1,,,,s,,\n", "t.csv");
  EXPECT_FALSE(zero_tokens);
  const std::string with_precision =
      "id,dataset,samples,beams,precision,source\nx/y,d,5,1,fp8,s\nx/z,d,5,1,fp7,s\n";
  auto bad_precision = ParseInferBenchmarks(with_precision, "t.csv");
  ASSERT_FALSE(bad_precision);
  EXPECT_NE(bad_precision.error().field.find("t.csv:3"), std::string::npos)
      << bad_precision.error().field;
  EXPECT_NE(bad_precision.error().message.find("fp7"), std::string::npos);
}

TEST(FillServingShape, FillsOnlyWhatIsUnstated) {
  const InferBenchmark* l = FindInferBenchmark("llama2-70b-99");
  ASSERT_NE(l, nullptr);
  ServingShape s = FillServingShape(*l, {});
  EXPECT_EQ(s.input_len.value_or(0), 222);   // round(222.33)
  EXPECT_EQ(s.output_len.value_or(0), 294);  // round(294.45)
  EXPECT_EQ(s.beams.value_or(0), 1);
  EXPECT_EQ(s.ttft_p99_ms.value_or(0), 2000);
  EXPECT_EQ(s.tpot_p99_ms.value_or(0), 200);
  EXPECT_FALSE(s.e2e_p99_ms);
  EXPECT_EQ(s.max_output_len.value_or(0), 1024);  // each request's generation limit

  ServingShape given;
  given.input_len = 700;
  given.output_len = 10;
  given.ttft_p99_ms = 500;
  ServingShape k = FillServingShape(*l, given);
  EXPECT_EQ(*k.input_len, 700);
  EXPECT_EQ(*k.output_len, 10);
  EXPECT_EQ(*k.ttft_p99_ms, 500);
  EXPECT_EQ(k.tpot_p99_ms.value_or(0), 200);

  const InferBenchmark* g = FindInferBenchmark("gptj-99");
  ASSERT_NE(g, nullptr);
  ServingShape gs = FillServingShape(*g, {});
  EXPECT_EQ(gs.input_len.value_or(0), 866);
  InferBenchmark unknown = *g;  // a row without a published mean: unknown stays unknown
  unknown.mean_input_tokens.reset();
  EXPECT_FALSE(FillServingShape(unknown, {}).input_len);
  EXPECT_EQ(gs.beams.value_or(0), 4);
  EXPECT_EQ(gs.output_len.value_or(0), 69);
  EXPECT_EQ(gs.e2e_p99_ms.value_or(0), 20000);
}

// A benchmark harness batches by length (NVIDIA's variable-length plugins, Intel's
// length-bucketed CPU SUT): encoders process the real lengths on every engine.
TEST(FillServingShape, EncodersTakeTheRealLengths) {
  const InferBenchmark* b = FindInferBenchmark("bert-99");
  ASSERT_NE(b, nullptr);
  ServingShape free = FillServingShape(*b, {});
  EXPECT_EQ(free.input_len.value_or(0), 177);  // round(176.6) real tokens
  EXPECT_FALSE(free.output_len);
  EXPECT_EQ(free.e2e_p99_ms.value_or(0), 130);
  EXPECT_FALSE(free.ttft_p99_ms);
  EXPECT_EQ(b->max_input_tokens.value_or(0), 384);  // the padded maximum is kept as a fact
  // A CNN benchmark has no token lengths at all.
  const InferBenchmark* r = FindInferBenchmark("resnet50");
  ASSERT_NE(r, nullptr);
  ServingShape rs = FillServingShape(*r, {});
  EXPECT_FALSE(rs.input_len);
  EXPECT_FALSE(rs.output_len);
  EXPECT_EQ(rs.e2e_p99_ms.value_or(0), 15);
}

// Beam search (docs/model.md 10.3): a request's prompt is prefilled once; its k beams decode as k
// sequences (the host's per-request work counts the request once). Paged engines keep the
// prompt's KV once per request and k copies of the generated tokens; Transformers tiles the whole
// context k times. So a static batch of b requests with k beams decodes like b*k greedy
// sequences, prefills like b, and the KV-bound batch is the KV over (prompt + k x generation) on
// TensorRT-LLM, over k x (prompt + generation) on Transformers.
TEST(BeamSearch, DecodesKTimesTheSequencesAndSharesThePromptKv) {
  const ModelSpec* m = FindPreset("llama-2-7b");
  ASSERT_NE(m, nullptr);
  ComputeDevice dev = TestDevice();
  const Calibration cal;
  ServeSetup greedy;
  greedy.engine = Engine::kTrtLlm;
  greedy.max_batch = 2048;
  ServeSetup beam = greedy;
  beam.beams = 4;
  const int in = 800, out = 69, b = 8;
  ServePerf g4b = EstimateLlmServing(*m, greedy, dev, in, out, 4 * b, cal);
  ServePerf gb = EstimateLlmServing(*m, greedy, dev, in, out, b, cal);
  ServePerf k = EstimateLlmServing(*m, beam, dev, in, out, b, cal);
  // The step of 4b sequences, but the host's per-request work counts b requests, not 4b beams.
  const double per_request = cal.Get("decode_overhead_us_per_seq", 8) * 1e-6;
  EXPECT_NEAR(k.decode_step.value(), g4b.decode_step.value() - 3 * b * per_request, 1e-12);
  EXPECT_DOUBLE_EQ(k.prefill.value(), gb.prefill.value());
  EXPECT_DOUBLE_EQ(k.ttft.value(), gb.ttft.value());
  // b requests per cycle of (prefill of b prompts + out steps of 4b sequences).
  const double cycle = gb.ttft.value() + out * k.decode_step.value();
  EXPECT_NEAR(k.samples_per_s, b / cycle, 1e-9 * b / cycle);
  // Continuous batching: TensorRT-LLM reserves prompt + generation per request, the generation
  // once per beam (the prompt's blocks are shared: its KV cache manager's
  // getRemainingBlocksToCompletion).
  ServePerf gc = EstimateLlmServing(*m, greedy, dev, in, out, 0, cal);
  ServePerf kc = EstimateLlmServing(*m, beam, dev, in, out, 0, cal);
  EXPECT_EQ(kc.kv_tokens, gc.kv_tokens);
  EXPECT_EQ(gc.batch, static_cast<int>(static_cast<double>(gc.kv_tokens) / (in + out)));
  EXPECT_EQ(kc.batch, static_cast<int>(static_cast<double>(kc.kv_tokens) / (in + 4 * out)));
  // Transformers tiles the prompt's cache over the beams: the batch falls k-fold (+/- rounding).
  ServeSetup hf = greedy, hf_beam = beam;
  hf.engine = hf_beam.engine = Engine::kTransformers;
  ServePerf hc = EstimateLlmServing(*m, hf, dev, in, out, 0, cal);
  ServePerf hkc = EstimateLlmServing(*m, hf_beam, dev, in, out, 0, cal);
  EXPECT_LE(hkc.batch, hc.batch / 4 + 1);
  EXPECT_GE(hkc.batch, hc.batch / 4 - 1);
  // A static batch must hold its KV: 4 beams of a prompt that fills the cache alone do not fit on
  // Transformers, and fit on TensorRT-LLM where the prompt is stored once.
  const int long_in = static_cast<int>(gc.kv_tokens / 2);
  EXPECT_TRUE(EstimateLlmServing(*m, beam, dev, long_in, out, 1, cal).fits);
  EXPECT_FALSE(EstimateLlmServing(*m, hf_beam, dev, long_in, out, 1, cal).fits);

  // The saturated point (no static batch): tokens are one mean step apart, the decode step plus
  // the share of the replacing requests' prompts (cycle / out), and the first token comes one
  // and a half steps plus its own prompt's prefill after arrival (the step carrying it holds one
  // more prompt than the mean). A static batch keeps the bare decode step.
  ServePerf st = EstimateLlmServing(*m, greedy, dev, in, out, gc.batch, cal);
  const double step = (st.ttft.value() + out * st.decode_step.value()) / out;
  EXPECT_NEAR(gc.tpot.value(), step, 1e-9 * step);
  EXPECT_GT(gc.tpot.value(), gc.decode_step.value());
  EXPECT_NEAR(gc.ttft.value(), 1.5 * step + gc.prefill.value(), 1e-9 * step);
  EXPECT_DOUBLE_EQ(st.tpot.value(), st.decode_step.value());
  // Throughput is the same cycle either way: B requests per out mean steps.
  EXPECT_NEAR(gc.samples_per_s, gc.batch / (out * gc.tpot.value()), 1e-9 * gc.samples_per_s);
}

// TensorRT-LLM's GUARANTEED_NO_EVICT scheduler reserves a request's prompt plus its whole
// generation limit (docs/model.md 10.3): a limit above the mean output shrinks the KV-bound batch
// to kv_tokens / (input + limit); vLLM admits on the current context and ignores it; a limit at or
// below the output changes nothing.
TEST(ContinuousBatching, TrtLlmReservesTheGenerationLimit) {
  const ModelSpec* m = FindPreset("llama-2-7b");
  ASSERT_NE(m, nullptr);
  ComputeDevice dev = TestDevice();
  const Calibration cal;
  ServeSetup trt;
  trt.engine = Engine::kTrtLlm;
  trt.max_batch = 100000;  // the KV cache binds, not the engine limit
  const int in = 400, out = 150;
  ServePerf mean = EstimateLlmServing(*m, trt, dev, in, out, 0, cal);
  ServeSetup limited = trt;
  limited.max_new_tokens = 1024;
  ServePerf lim = EstimateLlmServing(*m, limited, dev, in, out, 0, cal);
  EXPECT_EQ(mean.batch, static_cast<int>(mean.kv_tokens / (in + out)));
  EXPECT_EQ(lim.batch, static_cast<int>(lim.kv_tokens / (in + 1024)));
  EXPECT_LT(lim.batch, mean.batch);
  EXPECT_LT(lim.tpot.value(), mean.tpot.value());  // fewer sequences per step
  ServeSetup below = trt;
  below.max_new_tokens = 100;
  EXPECT_EQ(EstimateLlmServing(*m, below, dev, in, out, 0, cal).batch, mean.batch);
  ServeSetup vllm = limited;
  vllm.engine = Engine::kVllm;
  ServeSetup vllm_mean = trt;
  vllm_mean.engine = Engine::kVllm;
  EXPECT_EQ(EstimateLlmServing(*m, vllm, dev, in, out, 0, cal).batch,
            EstimateLlmServing(*m, vllm_mean, dev, in, out, 0, cal).batch);
}

// MLPerf SDXL (text_to_image/backend_pytorch.py: steps=20, guidance=8; mlperf.conf: QSL 5000,
// Server latency 20 s) fills a text-to-image request's sampling; the parser bounds the steps.
TEST(FillServingShape, TextToImageTakesTheReferenceSampling) {
  const InferBenchmark* b = FindInferBenchmark("stable-diffusion-xl");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->samples, 5000);
  EXPECT_EQ(b->model, "Stable-Diffusion-XL-base-1.0 UNet");
  EXPECT_NE(FindPreset(b->model), nullptr);
  ServingShape s = FillServingShape(*b, {});
  EXPECT_EQ(s.denoise_steps.value_or(0), 20);
  EXPECT_EQ(s.guidance_scale.value_or(0), 8.0);
  EXPECT_EQ(s.e2e_p99_ms.value_or(0), 20000);
  EXPECT_FALSE(s.input_len);
  // The LLM rows have no sampling loop.
  EXPECT_FALSE(FillServingShape(*FindInferBenchmark("llama2-70b-99"), {}).denoise_steps);

  const std::string head =
      "id,aliases,task,dataset,samples,mean_input_tokens,max_input_tokens,mean_output_tokens,"
      "min_output_tokens,max_output_tokens,stop,beams,server_ttft_p99_ms,server_tpot_p99_ms,"
      "server_latency_p99_ms,denoise_steps,guidance_scale,source,as_of,notes\n"
      "x/y,,t,d,10,,,,,,,1,,,,";
  auto ok = ParseInferBenchmarks(head + "30,7.5,src,,\n", "t.csv");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ((*ok)[0].denoise_steps.value_or(0), 30);
  EXPECT_EQ((*ok)[0].guidance_scale.value_or(0), 7.5);
  auto zero = ParseInferBenchmarks(head + "0,,src,,\n", "t.csv");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().field.find("denoise_steps"), std::string::npos) << zero.error().field;
}

// A text-to-image request (docs/model.md 10.4) is its sampling loop: `steps` UNet forwards of
// twice the batch under classifier-free guidance, once without; other models are one forward.
// diffusers' pipelines default to 50 steps with guidance on.
TEST(DiffusionServing, AnImageIsStepsGuidedForwards) {
  const ModelSpec* m = FindPreset("sdxl-unet");
  ASSERT_NE(m, nullptr);
  ComputeDevice dev = TestDevice();
  const Calibration cal;
  const DiffusionSampling defaults;
  EXPECT_EQ(defaults.steps, 50);
  EXPECT_TRUE(defaults.guidance);
  for (int b : {1, 4}) {
    const ServePerf fwd = EstimateForward(*m, Precision::kBf16, dev, 2 * b, 1, cal);
    const ServePerf img = EstimateRequest(*m, Precision::kBf16, dev, b, 1, cal, true, defaults);
    EXPECT_NEAR(img.e2e.value(), 50 * fwd.e2e.value(), 1e-9 * img.e2e.value());
    EXPECT_EQ(img.batch, b);
    EXPECT_NEAR(img.samples_per_s, b / img.e2e.value(), 1e-9 * img.samples_per_s);
    const ServePerf unguided =
        EstimateRequest(*m, Precision::kBf16, dev, b, 1, cal, true, {20, false});
    EXPECT_NEAR(unguided.e2e.value(),
                20 * EstimateForward(*m, Precision::kBf16, dev, b, 1, cal).e2e.value(),
                1e-9 * unguided.e2e.value());
  }
  // One SDXL sample (a 1024x1024 step, 6.76 TFLOP) is hundreds of ResNet-50s: batch 1 already
  // fills the GPU, so the guided batch of two costs twice one sample, not the small-batch penalty.
  const double one = EstimateForward(*m, Precision::kBf16, dev, 1, 1, cal).e2e.value();
  const double two = EstimateForward(*m, Precision::kBf16, dev, 2, 1, cal).e2e.value();
  EXPECT_GT(two / one, 1.9);
  // A served ResNet-50 keeps half its large-batch efficiency at cnn_serving_batch_knee (4)
  // images (a training step at cnn_batch_knee, 16: serving engines build kernels per batch).
  const ModelSpec* r = FindPreset("resnet-50");
  ASSERT_NE(r, nullptr);
  dev.kernel_s = 0;  // the launch overhead aside
  const double per_img_4 = EstimateForward(*r, Precision::kBf16, dev, 4, 1, cal).e2e.value() / 4;
  const double per_img_4096 =
      EstimateForward(*r, Precision::kBf16, dev, 4096, 1, cal).e2e.value() / 4096;
  EXPECT_NEAR(per_img_4 / per_img_4096, 2.0 * 4096 / (4096 + 4), 0.05);
  // Encoders and CNNs ignore the sampling.
  EXPECT_DOUBLE_EQ(
      EstimateRequest(*r, Precision::kBf16, dev, 8, 1, cal, true, defaults).e2e.value(),
      EstimateForward(*r, Precision::kBf16, dev, 8, 1, cal).e2e.value());
}

// NVFP4 (TensorRT Model Optimizer checkpoints) quantises the GEMM inputs too: on a device with
// FP4 tensor cores its GEMMs run at the FP4 rate (gpus.csv fp4_tflops), elsewhere it dequantises
// to 16-bit GEMMs like the other 4-bit formats. The weights read are the same 4.5 bits either way.
TEST(Fp4TensorMath, Nvfp4RunsAtTheFp4RateOnlyWhereTheDeviceHasIt) {
  const ModelSpec* m = FindPreset("llama-2-70b");
  ASSERT_NE(m, nullptr);
  const Calibration cal;
  ComputeDevice plain = TestDevice();
  ComputeDevice blackwell = plain;
  blackwell.peak_fp4 = 2 * plain.peak_fp8;
  ServeSetup fp4;
  fp4.engine = Engine::kTrtLlm;
  fp4.weight_precision = Precision::kFp8;
  fp4.quant = GetQuantPreset(QuantPresetId::kNvfp4).Spec();
  ServeSetup int4 = fp4;
  int4.quant = GetQuantPreset(QuantPresetId::kInt4G128).Spec();
  const int in = 2000, out = 2;
  // Prefill is GEMM-bound: twice the FP8 rate (at FP8's achievable fraction) where FP4 exists.
  const ServePerf on = EstimateLlmServing(*m, fp4, blackwell, in, out, 1, cal);
  const ServePerf off = EstimateLlmServing(*m, fp4, plain, in, out, 1, cal);
  EXPECT_LT(on.prefill.value(), 0.75 * off.prefill.value());
  // Without FP4 tensor cores NVFP4 is costed as any 4-bit weight-only format (W4A16).
  const ServePerf w4 = EstimateLlmServing(*m, int4, plain, in, out, 1, cal);
  EXPECT_NEAR(off.prefill.value(), w4.prefill.value(), 0.02 * w4.prefill.value());
  // Other formats ignore the FP4 rate.
  EXPECT_DOUBLE_EQ(EstimateLlmServing(*m, int4, blackwell, in, out, 1, cal).prefill.value(),
                   w4.prefill.value());
}

// The benchmark table names the 4-bit format NVIDIA submits on FP4 hardware: NVFP4 for the Llama
// benchmarks and DeepSeek-R1 (v5.1 blog), none for Mixtral (its B200 rows run FP8).
TEST(InferBenchmarkTable, Fp4FormatOfNvidiaSubmissions) {
  EXPECT_EQ(FindInferBenchmark("llama2-70b-99")->fp4_quant, "nvfp4");
  EXPECT_EQ(FindInferBenchmark("llama3.1-8b")->fp4_quant, "nvfp4");
  EXPECT_EQ(FindInferBenchmark("mixtral-8x7b")->fp4_quant, "");
  EXPECT_EQ(FindInferBenchmark("gptj-99")->fp4_quant, "");
}

}  // namespace
}  // namespace gpuplan
