// Tests of the serving performance model and the serving planner (issue #5):
//  - EstimateLlmServing properties on catalog devices: the decode step grows with the batch and
//    with the context; output tokens/s grows with the batch up to the KV bound; tensor
//    parallelism lowers the decode step and TTFT of a 70B model; fp8 weights decode faster than
//    bf16 on an H100 at batch 1 (memory-bound: the weight bytes halve); the KV capacity of a
//    70B bf16 model on 2 x A100-80GB (vLLM, gpu_memory_utilization 0.9) is small, and fp8
//    weights or TP 4 multiply it (the "~17k tokens in total" example);
//  - EstimateForward beside the guides' serving figures (../shared/seeds/README.md): B10
//    (BERT-base, T4 1200 req/s at 45 ms vs Xeon 8380 400 req/s at 65 ms), B18 (batching 3-5x
//    throughput), B11 (a detector 80 -> 220 QPS per GPU with INT8);
//  - PlanServing on the built-in catalog: guide A2 (7B at QPS < 10 -> one L40S / 4090-class
//    GPU; 70B at high concurrency -> a multi-GPU replica), cost monotone in the load, cost per
//    1k requests, errors (unknown GPU, qps <= 0), CPU plans, determinism;
//  - `gpuplan tco` and `gpuplan plan infer` through the CLI binary (exit codes, break-even,
//    3-year totals, the JSON shape, the day/night profile of B14).
#include <gtest/gtest.h>

#include "testing/test_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpuplan/catalog.h"
#include "gpuplan/estimate.h"
#include "gpuplan/model.h"
#include "gpuplan/perf.h"
#include "gpuplan/quant_preset.h"
#include "gpuplan/serve.h"
#include "gpuplan/serve_planner.h"
#include "testing/fixtures.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

// ---- fixtures ------------------------------------------------------------------------------

using test::Cat;

const Calibration& Cal() { return DefaultCalibration(); }

using test::Preset;

// A catalog GPU as the serving model sees it (SXM parts on NVLink/NVSwitch, others on PCIe).
ComputeDevice Gpu(std::string_view id, IntraNodeLink link = IntraNodeLink::kNvswitch) {
  const Accelerator* a = Cat().FindAccelerator(id);
  if (a == nullptr) {
    ADD_FAILURE() << "no accelerator " << id;
    return ComputeDevice{};
  }
  return DeviceFromAccelerator(*a, Cal(), link);
}

ComputeDevice CpuDev(std::string_view id, int sockets = 1) {
  const Cpu* c = Cat().FindCpu(id);
  if (c == nullptr) {
    ADD_FAILURE() << "no CPU " << id;
    return ComputeDevice{};
  }
  return DeviceFromCpu(*c, sockets, 0, Cal());
}

ServeSetup LlmSetup(int tp, Precision w = Precision::kBf16, Precision kv = Precision::kBf16) {
  ServeSetup s;
  s.tp = tp;
  s.weight_precision = w;
  s.kv_precision = kv;
  s.engine = Engine::kVllm;
  return s;
}

double Ms(Seconds s) { return s.value() * 1e3; }

using gpuplan::test::Has;

// ---- EstimateLlmServing: monotonicity ------------------------------------------------------

struct LlmDeviceCase {
  std::string model;
  std::string gpu;
  IntraNodeLink link;
};

// Roofline of a decode step (docs/model.md; Pope et al. 2022, "Efficiently Scaling Transformer
// Inference", Sec. 2): every step reads the weights once and every sequence's KV cache, so the
// step time grows with the number of sequences and with their context.
TEST(LlmServing, DecodeStepGrowsWithBatchAndContext) {
  const LlmDeviceCase cases[] = {
      {"llama-2-7b", "H100-SXM5-80GB", IntraNodeLink::kNvswitch},
      {"llama-2-7b", "A100-SXM4-80GB", IntraNodeLink::kNvswitch},
      {"llama-3.1-8b", "L40S", IntraNodeLink::kPcie},
      {"mistral-7b-v0.1", "A10G", IntraNodeLink::kPcie},
      {"llama-2-13b", "H100-SXM5-80GB", IntraNodeLink::kNvswitch},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model + " on " + c.gpu);
    const ComputeDevice dev = Gpu(c.gpu, c.link);
    const ModelSpec& m = Preset(c.model);
    double prev = 0;
    for (int b : {1, 2, 4, 8, 16, 32, 64}) {
      ServePerf r = EstimateLlmServing(m, LlmSetup(1), dev, 512, 128, b, Cal());
      ASSERT_TRUE(r.fits) << r.why;
      EXPECT_EQ(r.batch, b);
      EXPECT_GT(r.decode_step.value(), prev) << "batch " << b;
      EXPECT_DOUBLE_EQ(r.tpot.value(), r.decode_step.value());
      prev = r.decode_step.value();
    }
    prev = 0;
    for (int in : {128, 512, 1024, 2048}) {
      ServePerf r = EstimateLlmServing(m, LlmSetup(1), dev, in, 128, 8, Cal());
      ASSERT_TRUE(r.fits) << r.why;
      EXPECT_GT(r.decode_step.value(), prev) << "input " << in;
      prev = r.decode_step.value();
    }
  }
}

// A skinny decode GEMM's fixed cost is part of its weight stream (a share of weight bytes / HBM
// bandwidth), not a count of padded rows: a batch-1 step is weight-bound on every card, whatever
// its tensor peak per byte. Llama-2-7B in GGUF Q4_K_M on an RTX 3090 Ti (80 dense FP16 TFLOP/s
// with FP32 accumulate over 1008 GB/s) streams its weights once per token; llama.cpp PR 4812
// measures 127 tokens/s for Q4_0 there. With a 128-row tile at the fp16 peak the step was 22 ms
// of math (43 tokens/s).
// Whisper: one request runs the encoder over its 30 s window, then decodes with the decoder
// alone. Its first token costs at least the encoder's forward; a decode step reads the
// decoder's weights (not the encoder's) and every sequence's 1500 cross-attention positions,
// which also fill the KV cache: a static batch whose cross K/V exceeds it does not fit.
TEST(LlmServing, EncoderDecoderRunsTheEncoderOnceAndDecodesWithTheDecoder) {
  const ComputeDevice dev = Gpu("A100-SXM4-80GB");
  const ModelSpec& w = Preset("Whisper-large-v3");
  const EncoderDecoderParts parts = *SplitEncoderDecoder(w);
  const ServeSetup su = LlmSetup(1, Precision::kFp16, Precision::kFp16);
  const ServePerf r = EstimateLlmServing(w, su, dev, 0, 128, 1, Cal());
  ASSERT_TRUE(r.fits) << r.why;
  const double enc_s =
      EstimateForward(parts.encoder, Precision::kFp16, dev, 1, 1500, Cal()).e2e.value();
  EXPECT_GT(r.ttft.value(), enc_s);
  const double dec_read =
      InferenceWeightBytes(parts.decoder, Precision::kFp16, std::nullopt, 1, 1).value() /
      (dev.mem_bw * dev.mem_eff);
  const double all_read = InferenceWeightBytes(w, Precision::kFp16, std::nullopt, 1, 1).value() /
                          (dev.mem_bw * dev.mem_eff);
  EXPECT_GT(r.decode_step.value(), dec_read);
  EXPECT_LT(r.decode_step.value(), all_read + 1.5e-3);
  // The input length does not change the window; the output length adds decode steps.
  EXPECT_DOUBLE_EQ(EstimateLlmServing(w, su, dev, 3000, 128, 1, Cal()).e2e.value(), r.e2e.value());
  EXPECT_GT(EstimateLlmServing(w, su, dev, 0, 256, 1, Cal()).e2e.value(), r.e2e.value());
  // Capacity counts the cross K/V: at most kv_tokens / (1500 + 4 + 128) sequences per batch.
  const ServePerf cap = EstimateLlmServing(w, su, dev, 0, 128, 0, Cal());
  const double per_request = 1500 + 4 + 128;
  const int too_many = static_cast<int>(static_cast<double>(cap.kv_tokens) / per_request) + 1;
  EXPECT_FALSE(EstimateLlmServing(w, su, dev, 0, 128, too_many, Cal()).fits);
  EXPECT_TRUE(EstimateLlmServing(w, su, dev, 0, 128, too_many - 1, Cal()).fits);
}

TEST(LlmServing, BatchOneDecodeIsWeightBoundOnALowBalanceCard) {
  const ComputeDevice dev = Gpu("RTX-3090-Ti", IntraNodeLink::kPcie);
  const ModelSpec& m = Preset("llama-2-7b");
  ServeSetup su = LlmSetup(1, Precision::kInt4, Precision::kFp16);
  su.quant = GetQuantPreset(QuantPresetId::kGgufQ4KM).Spec();
  const ServePerf r = EstimateLlmServing(m, su, dev, 16, 128, 1, Cal());
  ASSERT_TRUE(r.fits) << r.why;
  const double read_s = InferenceWeightBytes(m, Precision::kInt4, su.quant, 1, 1).value() /
                        (dev.mem_bw * dev.mem_eff);
  EXPECT_GT(r.tpot.value(), read_s);
  EXPECT_LT(r.tpot.value(), read_s + 1.5e-3);  // + per-layer launch and attention, not GEMM math
  // Half the tensor peak leaves a weight-bound step where it was.
  ComputeDevice slow = dev;
  slow.peak_fp16 /= 2;
  slow.peak_bf16 /= 2;
  EXPECT_NEAR(EstimateLlmServing(m, su, slow, 16, 128, 1, Cal()).tpot.value(), r.tpot.value(),
              1e-9);
  // At a large batch the math is the bound: the step grows with the batch and the peak matters.
  const ServePerf big = EstimateLlmServing(m, su, dev, 16, 128, 64, Cal());
  const ServePerf big_slow = EstimateLlmServing(m, su, slow, 16, 128, 64, Cal());
  EXPECT_GT(big.tpot.value(), 1.5 * r.tpot.value());
  EXPECT_GT(big_slow.tpot.value(), 1.3 * big.tpot.value());
}

// An engine that overlaps its host work with the GPU's step (TensorRT-LLM's overlap scheduler,
// the PyTorch backend's default since 1.0) hides its per-request host time behind the step: the
// step is shorter by exactly B x decode_overhead_us_per_seq while the GPU's step is the longer,
// and nothing else moves. Where the host work is longer (many short requests on a fast GPU) the
// step is the host's.
TEST(LlmServing, OverlappedHostWorkLeavesOnlyTheLongerOfGpuAndHost) {
  const ComputeDevice dev = Gpu("H100-SXM5-80GB", IntraNodeLink::kNvswitch);
  const ModelSpec& m = Preset("llama-3.1-8b");
  ServeSetup su = LlmSetup(1);
  su.engine = Engine::kTrtLlm;
  const ServePerf serial = EstimateLlmServing(m, su, dev, 512, 128, 64, Cal());
  su.host_overlap = true;
  const ServePerf overlapped = EstimateLlmServing(m, su, dev, 512, 128, 64, Cal());
  EXPECT_NEAR(serial.decode_step.value() - overlapped.decode_step.value(),
              64 * Cal().Get("decode_overhead_us_per_seq", 8) * 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(serial.prefill.value(), overlapped.prefill.value());
  EXPECT_EQ(serial.kv_tokens, overlapped.kv_tokens);
  // 4096 short requests of a 1B model: the GPU step is shorter than the host work (33 ms).
  const ModelSpec& small = Preset("llama-3.2-1b");
  su.max_batch = 4096;
  const ServePerf host_bound = EstimateLlmServing(small, su, dev, 1, 2, 4096, Cal());
  EXPECT_NEAR(host_bound.decode_step.value(),
              4096 * Cal().Get("decode_overhead_us_per_seq", 8) * 1e-6, 1e-12);
  // The releases: TensorRT-LLM 1.x and SGLang 0.4+ (and an unstated, current one) overlap;
  // TensorRT-LLM's 0.x TensorRT-engine runtime, SGLang before 0.4 and vLLM's default scheduler
  // do not.
  EXPECT_TRUE(EngineOverlapsHostWork(Engine::kTrtLlm, ""));
  EXPECT_TRUE(EngineOverlapsHostWork(Engine::kTrtLlm, "1.0.0"));
  EXPECT_FALSE(EngineOverlapsHostWork(Engine::kTrtLlm, "0.13.0"));
  EXPECT_FALSE(EngineOverlapsHostWork(Engine::kTrtLlm, "v0.5.0"));
  EXPECT_FALSE(EngineOverlapsHostWork(Engine::kTrtLlm, "0.x"));
  EXPECT_FALSE(EngineOverlapsHostWork(Engine::kVllm, ""));
  EXPECT_TRUE(EngineOverlapsHostWork(Engine::kSglang, ""));
  EXPECT_TRUE(EngineOverlapsHostWork(Engine::kSglang, "0.4.6"));
  EXPECT_FALSE(EngineOverlapsHostWork(Engine::kSglang, "v0.3.0"));
}

// Continuous batching raises throughput until the KV cache (or the engine's max_num_seqs) is
// full: tokens/s at static batches 1, 2, 4, ... up to the KV-bound batch never falls, and the
// continuous-batching batch is min(max_num_seqs, KV tokens / average context).
TEST(LlmServing, TokensPerSecondGrowsWithBatchUntilKvBound) {
  const LlmDeviceCase cases[] = {
      {"llama-2-7b", "A10G", IntraNodeLink::kPcie},
      {"llama-2-7b", "L4", IntraNodeLink::kPcie},
      {"llama-2-13b", "A100-SXM4-80GB", IntraNodeLink::kNvswitch},
      {"llama-3.1-8b", "H100-SXM5-80GB", IntraNodeLink::kNvswitch},
  };
  const int in = 1000, out = 300;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model + " on " + c.gpu);
    const ComputeDevice dev = Gpu(c.gpu, c.link);
    const ModelSpec& m = Preset(c.model);
    ServeSetup su = LlmSetup(1);
    ServePerf cap = EstimateLlmServing(m, su, dev, in, out, 0, Cal());
    ASSERT_TRUE(cap.fits) << cap.why;
    const double avg_ctx = in + out / 2.0;
    const int by_kv = static_cast<int>(std::floor(static_cast<double>(cap.kv_tokens) / avg_ctx));
    EXPECT_EQ(cap.batch, std::max(1, std::min(su.max_batch, by_kv)))
        << "kv_tokens " << cap.kv_tokens;
    double prev = 0;
    for (int b = 1; b <= cap.batch; b = (b * 2 > cap.batch && b < cap.batch) ? cap.batch : b * 2) {
      ServePerf r = EstimateLlmServing(m, su, dev, in, out, b, Cal());
      EXPECT_GE(r.output_tokens_per_s, prev) << "batch " << b;
      EXPECT_NEAR(r.output_tokens_per_s, r.samples_per_s * out, 1e-9 * r.output_tokens_per_s);
      prev = r.output_tokens_per_s;
      if (b == cap.batch) break;
    }
    ServePerf one = EstimateLlmServing(m, su, dev, in, out, 1, Cal());
    fmt::print(
        "[llm] {} on {}: KV {} tokens -> continuous batch {}; {:.0f} tok/s at batch 1, "
        "{:.0f} tok/s at the KV bound ({:.1f}x)\n",
        c.model, c.gpu, cap.kv_tokens, cap.batch, one.output_tokens_per_s, prev,
        prev / one.output_tokens_per_s);
    EXPECT_GT(prev, 2 * one.output_tokens_per_s);
  }
}

// Tensor parallelism splits the weights and the FLOPs: the decode step of a 70B model falls from
// TP 1 (fp8 weights on an H200, where they fit) to TP 2 and 4, TTFT falls up to TP 8, and bf16
// weights of a 70B model do not fit one 80 GB GPU at all (~141 GB of weights).
TEST(LlmServing, TensorParallelLowersDecodeStepAndTtftOf70B) {
  struct Case {
    std::string gpu;
    Precision w;
    std::vector<int> tps;
  };
  const Case cases[] = {
      {"H200-SXM-141GB", Precision::kFp8, {1, 2, 4, 8}},
      {"H100-SXM5-80GB", Precision::kBf16, {2, 4, 8}},
      {"A100-SXM4-80GB", Precision::kBf16, {2, 4, 8}},
  };
  const ModelSpec& m = Preset("llama-3.1-70b");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.gpu + " " + PrecisionName(c.w));
    const ComputeDevice dev = Gpu(c.gpu);
    double prev_step = std::numeric_limits<double>::infinity();
    double prev_ttft = std::numeric_limits<double>::infinity();
    for (int tp : c.tps) {
      ServePerf r = EstimateLlmServing(m, LlmSetup(tp, c.w, c.w), dev, 1000, 300, 1, Cal());
      ASSERT_TRUE(r.fits) << "tp " << tp << ": " << r.why;
      fmt::print("[tp] Llama-3.1-70B {} on {} x {}: decode step {:.2f} ms, TTFT {:.1f} ms\n",
                 PrecisionName(c.w), tp, c.gpu, Ms(r.decode_step), Ms(r.ttft));
      // TP 8 at batch 1 is latency-bound: the ring all-reduce latency term 2 (n-1) x 5 us per
      // layer can outweigh the halved weight read (fp8 on H200), so the decode step is only
      // required to fall up to TP 4; TTFT (compute-bound) falls all the way.
      if (tp <= 4) {
        EXPECT_LT(r.decode_step.value(), prev_step) << "tp " << tp;
      }
      EXPECT_LT(r.ttft.value(), prev_ttft) << "tp " << tp;
      prev_step = r.decode_step.value();
      prev_ttft = r.ttft.value();
    }
  }
  ServePerf one = EstimateLlmServing(m, LlmSetup(1), Gpu("H100-SXM5-80GB"), 1000, 300, 1, Cal());
  EXPECT_FALSE(one.fits) << "70B bf16 weights (~141 GB) on one 80 GB GPU";
  EXPECT_FALSE(one.why.empty());
}

// At batch 1 a decode step is memory-bound: fp8 weights (1 byte) read in about half the time
// of bf16 (2 bytes) on an H100 (NVIDIA H100 datasheet: 3.35 TB/s; per-layer launch overheads
// keep the ratio above 0.5).
TEST(LlmServing, Fp8DecodesFasterThanBf16OnH100) {
  const ComputeDevice dev = Gpu("H100-SXM5-80GB");
  for (const char* name : {"llama-3.1-8b", "llama-2-13b", "qwen2.5-14b-instruct"}) {
    SCOPED_TRACE(name);
    const ModelSpec& m = Preset(name);
    ServePerf bf = EstimateLlmServing(m, LlmSetup(1), dev, 512, 128, 1, Cal());
    const ServeSetup fp8 = LlmSetup(1, Precision::kFp8, Precision::kFp8);
    ServePerf f8 = EstimateLlmServing(m, fp8, dev, 512, 128, 1, Cal());
    ASSERT_TRUE(bf.fits && f8.fits);
    const double ratio = f8.decode_step.value() / bf.decode_step.value();
    fmt::print("[fp8] {} on H100 batch 1: decode step bf16 {:.2f} ms, fp8 {:.2f} ms ({:.2f}x)\n",
               name, Ms(bf.decode_step), Ms(f8.decode_step), ratio);
    EXPECT_LT(ratio, 0.75);
    EXPECT_GT(ratio, 0.45);  // never better than the byte ratio (plus a little)
    EXPECT_LT(f8.ttft.value(), bf.ttft.value());
    EXPECT_GT(f8.kv_tokens, bf.kv_tokens);  // freed weight memory + 1-byte KV
  }
}

// The example: Llama-70B in bf16 on 2 x A100-80GB with vLLM at
// gpu_memory_utilization 0.9 keeps ~17k tokens of KV cache in total (the weights take ~69 GB of
// each GPU's 72 GB budget), enough for ~13 requests of 1000 + 300 tokens. fp8 weights or TP 4
// leave several times more.
TEST(LlmServing, KvCapacityOf70BOnTwoA100) {
  const ComputeDevice a100 = Gpu("A100-SXM4-80GB");
  for (const char* name : {"llama-2-70b", "llama-3.1-70b"}) {
    SCOPED_TRACE(name);
    const ModelSpec& m = Preset(name);
    auto kv = [&](int tp, Precision w) {
      ServeSetup su = LlmSetup(tp, w, Precision::kBf16);
      su.memory_fraction = 0.9;
      ServePerf r = EstimateLlmServing(m, su, a100, 1000, 300, 0, Cal());
      EXPECT_TRUE(r.fits) << "tp " << tp << " " << PrecisionName(w) << ": " << r.why;
      return r.kv_tokens;
    };
    const std::int64_t base = kv(2, Precision::kBf16);
    const std::int64_t fp8 = kv(2, Precision::kFp8);
    const std::int64_t tp4 = kv(4, Precision::kBf16);
    fmt::print(
        "[kv] {} on 2 x A100-80GB, vLLM 0.9: bf16 TP2 {} tokens (issue: ~17k); "
        "fp8 TP2 {} ({:.1f}x); bf16 TP4 {} ({:.1f}x)\n",
        name, base, fp8, static_cast<double>(fp8) / static_cast<double>(base), tp4,
        static_cast<double>(tp4) / static_cast<double>(base));
    EXPECT_GT(base, 1300);    // at least one request of 1000 + 300 tokens
    EXPECT_LT(base, 100000);  // "well under 100k"
    EXPECT_GE(fp8, 3 * base);
    EXPECT_GE(tp4, 3 * base);
  }
}

// ---- EstimateForward: encoders and CNNs -----------------------------------------------------

// Guide B10: BERT-base on a T4 serves 1200 req/s at 45 ms, on a Xeon 8380 400 req/s at 65 ms.
// Our batch-1 latency (seq 128) and best throughput are printed beside those figures; the GPU
// answers one request faster than one CPU socket.
TEST(Forward, BertBaseT4VersusXeon8380) {
  const ModelSpec& bert = Preset("bert-base-uncased");
  const ComputeDevice t4 = Gpu("T4", IntraNodeLink::kPcie);
  const ComputeDevice xeon = CpuDev("Xeon-Platinum-8380", 1);
  ServePerf g1 = EstimateForward(bert, Precision::kFp16, t4, 1, 128, Cal());
  ServePerf c1 = EstimateForward(bert, Precision::kFp32, xeon, 1, 128, Cal());
  ServePerf gt = EstimateForwardThroughput(bert, Precision::kFp16, t4, 128, 64, Cal());
  ServePerf ct = EstimateForwardThroughput(bert, Precision::kFp32, xeon, 128, 64, Cal());
  fmt::print(
      "[B10] BERT-base seq 128: T4 fp16 batch 1 {:.2f} ms, best {:.0f} req/s at batch {} "
      "({:.1f} ms) | guide: 1200 req/s at 45 ms\n",
      Ms(g1.e2e), gt.samples_per_s, gt.batch, Ms(gt.e2e));
  fmt::print(
      "[B10] BERT-base seq 128: Xeon 8380 (1 socket, fp32) batch 1 {:.2f} ms, best {:.0f} "
      "req/s at batch {} ({:.1f} ms) | guide: 400 req/s at 65 ms\n",
      Ms(c1.e2e), ct.samples_per_s, ct.batch, Ms(ct.e2e));
  const ComputeDevice xeon2 = CpuDev("Xeon-Platinum-8380", 2);
  ServePerf c2 = EstimateForwardThroughput(bert, Precision::kInt8, xeon2, 128, 64, Cal());
  fmt::print(
      "[B10] BERT-base seq 128: Xeon 8380 (2 sockets, int8 VNNI) best {:.0f} req/s at "
      "batch {} ({:.1f} ms)\n",
      c2.samples_per_s, c2.batch, Ms(c2.e2e));
  EXPECT_TRUE(xeon.cpu);
  EXPECT_FALSE(t4.cpu);
  EXPECT_GT(g1.e2e.value(), 0);
  EXPECT_LT(g1.e2e.value(), c1.e2e.value()) << "the T4 should answer one request faster";
  EXPECT_GT(gt.samples_per_s, ct.samples_per_s);
  EXPECT_NEAR(g1.samples_per_s, 1.0 / g1.e2e.value(), 1e-9 * g1.samples_per_s);
}

// A diffusion UNet's group and layer norms cannot fold into its convolutions at inference:
// each forward reads every feature map and writes its normalised copy (2 passes over the
// preset's activation_melems_per_sample, at memory bandwidth). A ResNet's batch norm folds into
// the convolution before it, so its forward has no such term.
TEST(Forward, UnetNormPassesAreTwoPassesOverTheFeatureMaps) {
  const ComputeDevice l40s = Gpu("L40S", IntraNodeLink::kPcie);
  const ModelSpec& sdxl = Preset("sdxl");
  ASSERT_TRUE(sdxl.activation_melems_per_sample.has_value());
  EXPECT_NEAR(*sdxl.activation_melems_per_sample, 1766.3, 1e-9);
  ModelSpec bare = sdxl;
  bare.activation_melems_per_sample = std::nullopt;
  const double passes = Cal().Get("unet_serving_norm_passes", -1);
  ASSERT_EQ(passes, 2);
  for (int b : {1, 2, 4}) {
    const double with = EstimateForward(sdxl, Precision::kFp16, l40s, b, 1, Cal()).e2e.value();
    const double without = EstimateForward(bare, Precision::kFp16, l40s, b, 1, Cal()).e2e.value();
    const double want = passes * 1766.3e6 * b * 2.0 / (l40s.mem_bw * l40s.mem_eff);
    EXPECT_NEAR(with - without, want, want * 1e-9) << b;
  }
  const ModelSpec& resnet = Preset("resnet-50");
  ASSERT_TRUE(resnet.activation_melems_per_sample.has_value());
  ModelSpec resnet_bare = resnet;
  resnet_bare.activation_melems_per_sample = std::nullopt;
  EXPECT_EQ(EstimateForward(resnet, Precision::kFp16, l40s, 8, 1, Cal()).e2e.value(),
            EstimateForward(resnet_bare, Precision::kFp16, l40s, 8, 1, Cal()).e2e.value());
}

// Guide B18: batching raises serving throughput 3-5x. From batch 1 to batch 32 on GPUs we
// require at least 2x (the guide's low end with margin) and print the factor. The exception is
// BERT-base on the 70 W T4: its batched GEMMs hit the board's power ceiling (docs/model.md 5.3),
// and NVIDIA's TensorRT BERT table shows the small gain (1.95 ms at batch 1, 9.09 ms at batch 8
// for 128 tokens: 513 -> 880 sequences/s, 1.7x); the guide's 3-5x does not hold there.
TEST(Forward, BatchingRaisesThroughput) {
  struct Case {
    std::string model, gpu;
    Precision p;
    int seq;
    double min_gain;
  };
  const Case cases[] = {
      {"bert-base-uncased", "T4", Precision::kFp16, 128, 1.5},
      {"bert-base-uncased", "A10G", Precision::kFp16, 128, 2.0},
      {"resnet-50", "T4", Precision::kFp16, 1, 2.0},
      {"resnet-50", "A10G", Precision::kFp16, 1, 2.0},
      {"vit-b-16", "L4", Precision::kFp16, 197, 2.0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.model + " on " + c.gpu);
    const ComputeDevice dev = Gpu(c.gpu, IntraNodeLink::kPcie);
    const ModelSpec& m = Preset(c.model);
    ServePerf b1 = EstimateForward(m, c.p, dev, 1, c.seq, Cal());
    ServePerf b32 = EstimateForward(m, c.p, dev, 32, c.seq, Cal());
    const double gain = b32.samples_per_s / b1.samples_per_s;
    fmt::print(
        "[B18] {} on {}: {:.0f} -> {:.0f} samples/s from batch 1 to 32 ({:.1f}x; guide: "
        "3-5x)\n",
        c.model, c.gpu, b1.samples_per_s, b32.samples_per_s, gain);
    EXPECT_GE(gain, c.min_gain);
    EXPECT_GT(b32.e2e.value(), b1.e2e.value());  // a batch takes longer than one sample
  }
}

// Guide B11: INT8 took a detector from 80 to 220 QPS per GPU (2.75x). ResNet-50 on a T4
// (NVIDIA T4 datasheet: 65 TFLOPS fp16, 130 TOPS int8): int8 throughput >= 1.3x fp16.
TEST(Forward, Int8BeatsFp16OnT4) {
  const ComputeDevice t4 = Gpu("T4", IntraNodeLink::kPcie);
  for (const char* name : {"resnet-50", "resnet-152", "bert-base-uncased"}) {
    SCOPED_TRACE(name);
    const ModelSpec& m = Preset(name);
    const int seq = m.is_transformer() ? 128 : 1;
    ServePerf f16 = EstimateForwardThroughput(m, Precision::kFp16, t4, seq, 64, Cal());
    ServePerf i8 = EstimateForwardThroughput(m, Precision::kInt8, t4, seq, 64, Cal());
    const double gain = i8.samples_per_s / f16.samples_per_s;
    fmt::print(
        "[B11] {} on T4: fp16 {:.0f}/s, int8 {:.0f}/s ({:.2f}x; guide: 80 -> 220 QPS = "
        "2.75x for a detector)\n",
        name, f16.samples_per_s, i8.samples_per_s, gain);
    if (std::string_view(name) != "bert-base-uncased") {
      EXPECT_GE(gain, 1.3);
    } else {
      EXPECT_GT(gain, 1.0);  // attention stays in fp16; the linear layers gain
    }
  }
}

// ---- PlanServing -----------------------------------------------------------------------------

ServeJobSpec LlmJob(std::string_view model, double qps, int in, int out) {
  ServeJobSpec j;
  j.model = Preset(model);
  j.weight_precision = Precision::kBf16;
  j.kv_precision = Precision::kBf16;
  j.qps = qps;
  j.input_len = in;
  j.output_len = out;
  j.engine = Engine::kVllm;
  j.top = 10;
  return j;
}

// When nothing is planned, the note names the cause: a GPU no priced offer rents (the RTX 3090
// Ti is in the accelerator table, not in any cloud's catalog), with the ones that are; an LLM
// on CPUs only; or the SLOs. An unknown cloud is an error naming --clouds.
TEST(PlanServing, SaysWhyNothingWasPlanned) {
  auto notes = [](const ServeJobSpec& j) {
    auto r = PlanServing(j, Cat(), Cal());
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_TRUE(r->plans.empty());
    std::string all;
    for (const auto& n : r->notes) all += n + "\n";
    return all;
  };
  ServeJobSpec gpu = LlmJob("llama-3.1-8b", 1, 512, 128);
  gpu.gpus = {"RTX-3090-Ti"};
  const std::string g = notes(gpu);
  EXPECT_TRUE(Has(g, "no priced catalog offer has RTX-3090-Ti")) << g;
  EXPECT_TRUE(Has(g, "RTX-4090")) << g;  // rented, so listed
  EXPECT_FALSE(Has(g, "SLOs")) << g;
  ServeJobSpec cpu = LlmJob("llama-3.1-8b", 1, 512, 128);
  cpu.allow_cpu = true;
  cpu.allow_gpu = false;
  EXPECT_TRUE(Has(notes(cpu), "LLM serving on CPUs is not planned")) << notes(cpu);
  ServeJobSpec slo = LlmJob("llama-3.1-8b", 1, 512, 128);
  slo.tpot_p99_ms = 0.01;
  EXPECT_TRUE(Has(notes(slo), "no deployment meets the SLOs")) << notes(slo);
  ServeJobSpec cloud = LlmJob("llama-3.1-8b", 1, 512, 128);
  cloud.clouds = {"awss"};
  auto bad = PlanServing(cloud, Cat(), Cal());
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Has(bad.error().field, "--clouds")) << bad.error().field;
  EXPECT_TRUE(Has(bad.error().hint, "did you mean \"aws\"")) << bad.error().hint;
}

// vLLM has no AWQ kernels on Volta (compute capability 7.0 < 7.5) nor on AWS Neuron (int8 and
// FP8 weights only): AWQ plans skip them and say why; pinned to a V100, nothing is planned and
// the note says why, not that the SLOs failed.
TEST(PlanServing, NoPlanWhereVllmHasNoKernelsForTheWeights) {
  ServeJobSpec j = LlmJob("llama-3.1-8b", 1, 512, 128);
  ASSERT_TRUE(ApplyQuantName("awq", "--quant", j.weight_precision, j.quant).ok());
  j.top = 1000;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const ServePlan& p : r->plans) {
    EXPECT_FALSE(Has(p.instance->accelerator, "V100")) << p.instance->instance_type;
    EXPECT_NE(p.instance->accelerator, "Inferentia2") << p.instance->instance_type;
  }
  std::string all;
  for (const auto& n : r->notes) all += n + "\n";
  EXPECT_TRUE(Has(all, "V100-SXM2-32GB")) << all;
  EXPECT_TRUE(Has(all, "compute capability 7.5")) << all;
  EXPECT_TRUE(Has(all, "Inferentia2")) << all;
  // 16-bit weights still run on both.
  ServeJobSpec fp16 = LlmJob("llama-3.1-8b", 1, 512, 128);
  fp16.top = 1000;
  auto r16 = PlanServing(fp16, Cat(), Cal());
  ASSERT_TRUE(r16.ok());
  EXPECT_TRUE(std::any_of(r16->plans.begin(), r16->plans.end(),
                          [](const ServePlan& p) { return Has(p.instance->accelerator, "V100"); }));
  j.gpus = {"V100-SXM2-32GB"};
  auto pinned = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(pinned.ok());
  EXPECT_TRUE(pinned->plans.empty());
  all.clear();
  for (const auto& n : pinned->notes) all += n + "\n";
  EXPECT_TRUE(Has(all, "compute capability 7.5")) << all;
  EXPECT_FALSE(Has(all, "SLOs")) << all;
}

// An Inferentia plan names the stack that runs the engine asked for on Neuron: vLLM through NxD
// Inference, TGI through optimum-neuron.
TEST(PlanServing, NeuronRuntimeFollowsTheEngine) {
  for (const auto& [engine, runtime] :
       {std::pair{Engine::kVllm, "vLLM on AWS Neuron"}, {Engine::kTgi, "TGI on AWS Neuron"}}) {
    ServeJobSpec j = LlmJob("llama-3.1-8b", 1, 512, 128);
    j.engine = engine;
    j.gpus = {"Inferentia2"};
    auto r = PlanServing(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    ASSERT_FALSE(r->plans.empty()) << EngineName(engine);
    EXPECT_TRUE(Has(r->plans.front().runtime, runtime)) << r->plans.front().runtime;
  }
}

// However light the load, a deployment runs at least one replica (1e-9 req/s gave "0 on 0"
// replicas at $0 and an infinite utilisation).
TEST(PlanServing, AnyLoadRunsAtLeastOneReplica) {
  ServeJobSpec j = LlmJob("llama-3.1-8b", 1e-9, 512, 128);
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const ServePlan& p : r->plans) {
    EXPECT_GE(p.replicas, 1) << p.instance->instance_type;
    EXPECT_GE(p.instances, 1) << p.instance->instance_type;
    EXPECT_TRUE(std::isfinite(p.utilization)) << p.instance->instance_type;
    ASSERT_TRUE(p.cost_per_hour.has_value());
    EXPECT_GT(*p.cost_per_hour, 0) << p.instance->instance_type;
  }
}

ServeJobSpec BertJob(double qps) {
  ServeJobSpec j;
  j.model = Preset("bert-base-uncased");
  j.weight_precision = Precision::kFp16;
  j.qps = qps;
  j.input_len = 128;
  j.output_len = 0;
  j.e2e_p99_ms = 100;
  j.top = 10;
  return j;
}

std::string Describe(const ServePlan& p) {
  const auto& i = *p.instance;
  return fmt::format(
      "{} {} {} {} tp {} x{} replicas on {} instances, batch {}, {:.3f}/h, "
      "{:.4f}/1k req",
      i.cloud, i.instance_type, i.region, i.is_cpu_only() ? "CPU " + i.cpu : i.accelerator, p.tp,
      p.replicas, p.instances, p.batch, p.cost_per_hour.value_or(-1), p.cost_per_1k_requests);
}

// Guide A2: "infer 7B at QPS < 10 -> L40S or 4090". With a typical chat SLO (TTFT p99 1 s,
// TPOT p99 50 ms) the cheapest plan is one GPU per replica of a 24-80 GB single-GPU class
// (L40S, RTX 4090, L4, A10G/A10, A100).
TEST(PlanServing, A2SevenBAtLowQpsOnOneMidRangeGpu) {
  const std::vector<std::string> allowed_ids = {
      "L40S",           "RTX-4090",      "L4", "A10G", "A10", "A100-SXM4-40GB", "A100-SXM4-80GB",
      "A100-PCIe-40GB", "A100-PCIe-80GB"};
  for (const auto& id : allowed_ids) {
    EXPECT_NE(Cat().FindAccelerator(id), nullptr) << id << " not in the catalog";
  }
  for (double qps : {1.0, 5.0, 9.0}) {
    SCOPED_TRACE(qps);
    ServeJobSpec j = LlmJob("llama-2-7b", qps, 512, 256);
    j.ttft_p99_ms = 1000;
    j.tpot_p99_ms = 50;
    auto r = PlanServing(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    ASSERT_FALSE(r->plans.empty());
    const ServePlan& top = r->plans.front();
    fmt::print("[A2] Llama-2-7B at {:g} req/s (512/256, TTFT 1 s, TPOT 50 ms): {}\n", qps,
               Describe(top));
    EXPECT_EQ(top.tp, 1);
    EXPECT_NE(std::find(allowed_ids.begin(), allowed_ids.end(), top.instance->accelerator),
              allowed_ids.end())
        << Describe(top);
    EXPECT_LE(top.ttft_p99_ms, 1000);
    EXPECT_LE(top.tpot_p99_ms, 50);
    EXPECT_GE(top.capacity_qps * top.replicas, qps * (1 - 1e-9));
    // The SLO is a p99 over requests: the plan's TPOT is the in-flight mean times
    // tpot_p99_over_mean (1.18, MLPerf Server logs), so the mean it plans sits below 50 ms.
    const double mean =
        InFlightTpot(top.perf.ttft, top.perf.decode_step, j.output_len).value() * 1e3;
    EXPECT_NEAR(top.tpot_p99_ms, 1.18 * mean, 1e-6 * mean);
  }
}

// A static-batch engine (Hugging Face generate) runs a batch from its prompts to its last token;
// a request that arrives meanwhile waits for it. Its plan's p99 end to end is therefore at
// least two batch times (BatchedServeP99), each step decodes the whole batch, and under the
// same SLO it runs smaller batches than a continuous-batching engine on the same GPU.
TEST(PlanServing, StaticBatchEngineWaitsForTheBatchInProgress) {
  ServeJobSpec j = LlmJob("llama-2-7b", 2, 512, 256);
  j.gpus = {"A100-SXM4-80GB"};
  // Eager generate steps take ~40 ms (10.8), so a 256-token batch runs ~10 s: a minute of
  // p99 leaves room for batches.
  j.e2e_p99_ms = 60000;
  j.engine = Engine::kTransformers;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  const ServePlan& top = r->plans.front();
  const double batch_ms = top.batch / top.perf.samples_per_s * 1e3;
  EXPECT_GT(top.batch, 1) << Describe(top);
  EXPECT_GE(top.e2e_p99_ms, 2 * batch_ms * (1 - 1e-9)) << Describe(top);
  EXPECT_LE(top.e2e_p99_ms, 60000);
  EXPECT_NEAR(top.tpot_p99_ms, top.perf.decode_step.value() * 1e3, 1e-9);
  ServeJobSpec cont = j;
  cont.engine = Engine::kVllm;
  auto rc = PlanServing(cont, Cat(), Cal());
  ASSERT_TRUE(rc.ok()) << rc.error().ToString();
  ASSERT_FALSE(rc->plans.empty());
}

// Eager generate (docs/model.md 10.8): PyTorch's gpt-fast baseline, Llama-7B at batch 1 on an
// A100-80GB, 25.5 tokens/s, CPU-bound. A step is the host's 32 x 1.2 ms of launches (the GPU's
// 8 ms weight read hides under it), where a CUDA-graph engine's step is the weight read.
TEST(LlmServing, EagerGenerateIsBoundByTheHostsLaunches) {
  const ComputeDevice dev = Gpu("A100-SXM4-80GB");
  const ModelSpec& m = Preset("llama-2-7b");
  ServeSetup hf = LlmSetup(1);
  hf.engine = Engine::kTransformers;
  hf.eager = true;
  const ServePerf eager = EstimateLlmServing(m, hf, dev, 16, 128, 1, Cal());
  const double launches = 32 * Cal().Get("eager_dispatch_us_per_layer", 0) * 1e-6;
  EXPECT_GE(eager.decode_step.value(), launches);
  EXPECT_LT(eager.decode_step.value(), launches + 1e-3);  // + one request's host work
  EXPECT_NEAR(1.0 / eager.decode_step.value(), 25.5, 2.0);
  const ServePerf graphs = EstimateLlmServing(m, LlmSetup(1), dev, 16, 128, 1, Cal());
  EXPECT_LT(graphs.decode_step.value(), 0.5 * eager.decode_step.value());
  // At a batch whose GPU work outlasts the launches, the GPU time decides.
  hf.max_batch = 1024;
  const ServePerf big = EstimateLlmServing(m, hf, dev, 16, 128, 512, Cal());
  ServeSetup no_eager = hf;
  no_eager.eager = false;
  const ServePerf big_graphs = EstimateLlmServing(m, no_eager, dev, 16, 128, 512, Cal());
  ASSERT_GT(big_graphs.decode_step.value(), launches);
  EXPECT_NEAR(big.decode_step.value(), big_graphs.decode_step.value(), 1e-9);
}

// Guide A2: "infer 70B high concurrency -> 2 x A100 + vLLM/PagedAttention". 20 req/s of
// 1000 in / 300 out needs more than one GPU per replica.
TEST(PlanServing, A2SeventyBHighConcurrencyNeedsMultiGpuReplica) {
  for (const char* name : {"llama-2-70b", "llama-3.1-70b"}) {
    SCOPED_TRACE(name);
    ServeJobSpec j = LlmJob(name, 20, 1000, 300);
    j.ttft_p99_ms = 2000;
    j.tpot_p99_ms = 100;
    auto r = PlanServing(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    ASSERT_FALSE(r->plans.empty());
    const ServePlan& top = r->plans.front();
    fmt::print("[A2] {} at 20 req/s (1000/300): {}; KV {} tokens per replica\n", name,
               Describe(top), top.perf.kv_tokens);
    // 140 GB of bf16 weights need 2+ GPUs per replica unless one GPU holds them (B200: 180 GB).
    const Accelerator* acc = Cat().FindAccelerator(top.instance->accelerator);
    ASSERT_NE(acc, nullptr);
    EXPECT_TRUE(top.tp >= 2 || acc->memory.value() > 150e9) << Describe(top);
    // The guide's own answer (A100s with vLLM) is feasible too.
    ServeJobSpec a100 = j;
    a100.gpus = {"A100-SXM4-80GB"};
    auto ra = PlanServing(a100, Cat(), Cal());
    ASSERT_TRUE(ra.ok()) << ra.error().ToString();
    ASSERT_FALSE(ra->plans.empty());
    fmt::print("[A2] {} at 20 req/s on A100-80GB only: {}\n", name, Describe(ra->plans.front()));
    EXPECT_GE(ra->plans.front().tp, 2);
  }
}

// More load never makes the cheapest deployment cheaper (any plan for the higher load, with
// fewer replicas, carries the lower one).
TEST(PlanServing, MoreQpsNeverLowersCost) {
  std::vector<std::pair<std::string, ServeJobSpec>> jobs;
  {
    ServeJobSpec j = LlmJob("llama-2-7b", 1, 512, 256);
    j.ttft_p99_ms = 1000;
    j.tpot_p99_ms = 50;
    jobs.emplace_back("llama-2-7b", j);
  }
  jobs.emplace_back("bert-base", BertJob(1));
  {
    ServeJobSpec j = BertJob(1);
    j.allow_cpu = true;
    jobs.emplace_back("bert-base with CPUs", j);
  }
  {
    ServeJobSpec j = LlmJob("llama-3.1-70b", 1, 1000, 300);
    j.tpot_p99_ms = 100;
    jobs.emplace_back("llama-3.1-70b", j);
  }
  for (auto& [name, job] : jobs) {
    SCOPED_TRACE(name);
    double prev = 0;
    for (double qps : {0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 300.0, 1000.0}) {
      job.qps = qps;
      auto r = PlanServing(job, Cat(), Cal());
      ASSERT_TRUE(r.ok()) << r.error().ToString();
      ASSERT_FALSE(r->plans.empty()) << "qps " << qps;
      const double c = r->plans.front().cost_per_hour.value_or(-1);
      EXPECT_GE(c, prev * (1 - 1e-12)) << "qps " << qps << ": " << Describe(r->plans.front());
      prev = c;
    }
  }
}

// Cost per 1k requests = cost per hour / (qps x 3600) x 1000 = cost per hour / (qps x 3.6);
// per 1M output tokens = cost per hour / (qps x output_len x 3600) x 1e6; per month = 730 h.
TEST(PlanServing, CostPerThousandRequestsFormula) {
  ServeJobSpec llm = LlmJob("llama-3.1-8b", 7, 512, 256);
  llm.tpot_p99_ms = 50;
  ServeJobSpec bert = BertJob(300);
  bert.allow_cpu = true;
  for (const ServeJobSpec& j : {llm, bert}) {
    auto r = PlanServing(j, Cat(), Cal());
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    ASSERT_FALSE(r->plans.empty());
    for (const auto& p : r->plans) {
      SCOPED_TRACE(Describe(p));
      ASSERT_TRUE(p.cost_per_hour.has_value());
      const double h = *p.cost_per_hour;
      EXPECT_NEAR(p.cost_per_1k_requests, h / (j.qps * 3.6), 1e-9 * h);
      EXPECT_NEAR(p.cost_per_month, h * 730, 1e-9 * h);
      if (j.output_len > 0) {
        EXPECT_NEAR(p.cost_per_1m_output_tokens, h / (j.qps * j.output_len * 3600) * 1e6, 1e-9 * h);
      }
      EXPECT_GE(p.replicas * p.capacity_qps, j.qps * (1 - 1e-9));
      EXPECT_GT(p.utilization, 0);
      EXPECT_LE(p.utilization, j.target_utilization + 1e-9);
      EXPECT_EQ(p.instances, (p.replicas + p.replicas_per_instance - 1) / p.replicas_per_instance);
    }
    for (size_t k = 1; k < r->plans.size(); ++k) {
      EXPECT_LE(r->plans[k - 1].cost_per_month, r->plans[k].cost_per_month);
    }
  }
}

TEST(PlanServing, ErrorsNameTheField) {
  {
    ServeJobSpec j = LlmJob("llama-2-7b", 5, 512, 256);
    j.gpus = {"H100", "NoSuchGPU-9000"};
    auto r = PlanServing(j, Cat(), Cal());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
    EXPECT_TRUE(Has(r.error().field, "--gpus")) << r.error().ToString();
    EXPECT_TRUE(Has(r.error().ToString(), "NoSuchGPU-9000")) << r.error().ToString();
  }
  for (double qps : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    SCOPED_TRACE(qps);
    ServeJobSpec j = LlmJob("llama-2-7b", qps, 512, 256);
    auto r = PlanServing(j, Cat(), Cal());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().field, "--qps");
    EXPECT_FALSE(r.error().message.empty());
  }
}

// Guide B9/B10: a CPU deployment is an option for BERT-base. With GPUs off, every plan is a CPU
// instance that names its CPU, with no GPUs per replica.
// CPU deployments serve BERT in int8 (OpenVINO/IPEX on AMX); in fp16 a CPU never undercuts
// the cheapest GPU at a 100 ms p99 (docs/model.md 10.4).
TEST(PlanServing, CpuPlansForBertBase) {
  ServeJobSpec j = BertJob(300);
  j.weight_precision = Precision::kInt8;
  j.allow_cpu = true;
  j.allow_gpu = false;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const auto& p : r->plans) {
    SCOPED_TRACE(Describe(p));
    EXPECT_TRUE(p.instance->is_cpu_only());
    EXPECT_FALSE(p.instance->cpu.empty());
    EXPECT_NE(Cat().FindCpu(p.instance->cpu), nullptr);
    EXPECT_EQ(p.tp, 0);
    EXPECT_LE(p.e2e_p99_ms, 100);
  }
  fmt::print("[B10] BERT-base 300 req/s, e2e 100 ms, CPU only: {}\n", Describe(r->plans.front()));
  // Both allowed: the top 10 holds at least one plan (GPU or CPU), all meeting the SLO.
  j.allow_gpu = true;
  j.top = 50;
  auto both = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(both.ok());
  bool cpu = false, gpu = false;
  for (const auto& p : both->plans) (p.instance->is_cpu_only() ? cpu : gpu) = true;
  EXPECT_TRUE(cpu && gpu) << "top 50 of a mixed search holds both kinds";
  fmt::print("[B10] BERT-base 300 req/s, e2e 100 ms, GPU or CPU: {}\n",
             Describe(both->plans.front()));
  // LLMs are never planned on CPUs.
  ServeJobSpec llm = LlmJob("llama-2-7b", 1, 512, 128);
  llm.allow_cpu = true;
  llm.allow_gpu = false;
  auto none = PlanServing(llm, Cat(), Cal());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->plans.empty());
  EXPECT_FALSE(none->notes.empty());
}

TEST(PlanServing, Deterministic) {
  auto key = [](const ServePlanResult& r) {
    std::vector<std::tuple<std::string, std::string, std::string, int, int, int, double>> v;
    for (const auto& p : r.plans) {
      v.emplace_back(p.instance->cloud, p.instance->instance_type, p.instance->region, p.tp,
                     p.replicas, p.batch, p.cost_per_month);
    }
    return v;
  };
  ServeJobSpec j = LlmJob("llama-3.1-70b", 20, 1000, 300);
  j.tpot_p99_ms = 100;
  ServeJobSpec b = BertJob(300);
  b.allow_cpu = true;
  for (const ServeJobSpec& job : {j, b}) {
    auto r1 = PlanServing(job, Cat(), Cal());
    auto r2 = PlanServing(job, Cat(), Cal());
    ASSERT_TRUE(r1.ok() && r2.ok());
    EXPECT_EQ(key(*r1), key(*r2));
    EXPECT_EQ(r1->evaluated, r2->evaluated);
    EXPECT_GT(r1->evaluated, 0);
  }
}

// ---- library bugs found while writing these tests (disabled until fixed) --------------------
// Run with --gtest_also_run_disabled_tests to reproduce.

// BUG (src/plan/serve_planner.cc, PlanServing, LLM batch loop): the loop `break`s at the first
// concurrency that misses an SLO, assuming every SLO metric grows with the batch. The planner's
// own TTFT p99 = prefill + QueueP99(prefill, rho, servers = b) falls with b (M/M/c wait
// ~ 1/c), so a TTFT SLO missed at batch 1 but met at batch 4 or 8 is never found. Llama-2-7B,
// 2000 prompt tokens on H100 SXM, TTFT p99 SLO = 3 x one prompt's prefill: batch 1 gives
// 7.9 x prefill (rejected, loop stops); batch 4 gives 2.7 x, batch 8 1.9 x (both meet it).
// Expected: a plan at batch >= 4; got: no plan.
TEST(PlanServingBugs, TtftSloMissedAtBatchOneButMetAtLargerBatch) {
  const ModelSpec& m = Preset("llama-2-7b");
  ServePerf one = EstimateLlmServing(m, LlmSetup(1), Gpu("H100-SXM5-80GB"), 2000, 128, 1, Cal());
  ASSERT_TRUE(one.fits);
  ServeJobSpec j = LlmJob("llama-2-7b", 1, 2000, 128);
  j.gpus = {"H100-SXM5-80GB"};
  j.ttft_p99_ms = 3.0 * Ms(one.prefill);
  j.top = 1000;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  // TP 4/8 replicas prefill fast enough to pass at batch 1; one-GPU replicas must appear too.
  const ServePlan* tp1 = nullptr;
  for (const auto& p : r->plans) {
    if (p.tp == 1 && tp1 == nullptr) tp1 = &p;
  }
  ASSERT_NE(tp1, nullptr) << "prefill " << Ms(one.prefill) << " ms, TTFT SLO " << *j.ttft_p99_ms
                          << " ms: no one-GPU replica, though batch 4 meets the SLO ("
                          << r->plans.size() << " plans, all TP > 1)";
  EXPECT_GE(tp1->batch, 4);
  EXPECT_LE(tp1->ttft_p99_ms, *j.ttft_p99_ms);
}

// LIKELY BUG (src/estimate/serve_perf.cc, EstimateLlmServing, static batch): `fits` is false
// when one request's KV does not fit, but a static batch whose KV need (batch x (input +
// output) tokens) exceeds the replica's KV capacity (`kv_tokens`) still reports fits = true.
// Llama-2-7B bf16 on one A10G (24 GB): ~14.6k KV tokens; batch 64 x 1300 tokens = 83k.
// Expected: fits = false (with a why); got: fits = true. PlanServing never asks for more than
// the KV-bound batch, so only direct callers of the public function see it.
TEST(LlmServingBugs, StaticBatchBeyondKvCapacityDoesNotFit) {
  ServePerf r = EstimateLlmServing(Preset("llama-2-7b"), LlmSetup(1),
                                   Gpu("A10G", IntraNodeLink::kPcie), 1000, 300, 64, Cal());
  ASSERT_LT(r.kv_tokens, 64 * 1300);
  EXPECT_FALSE(r.fits) << "kv_tokens " << r.kv_tokens << " < 64 x 1300";
}

// BUG (src/plan/serve_planner.cc, PlanServing, CPU instances): the device is built as
// DeviceFromCpu(cpu, 1, vcpus / 2): (a) "vCPUs are hardware threads" is false where the CPU
// has no SMT (data/cpus.csv: Graviton2/3/4 and EPYC-9R14 have threads == cores; AWS: "1 vCPU
// = 1 physical core" on Graviton and on *7a instances), so c7g/m7g/c7a... get half their
// cores; (b) one socket only: c7i.48xlarge (192 vCPUs = 2 x 48-core 8488C) is capped at 48
// cores and one socket's DDR bandwidth, the same capacity as c7i.24xlarge at twice the price.
// Expected: per-replica throughput of EstimateForward on DeviceFromCpu(cpu, sockets,
// vcpus x cores / threads) at the plan's batch; got: half of it on those instances.
// Serving sizes the KV cache from the memory the driver exposes: data-centre GDDR6 boards run
// with ECC on, which carves out 1/16 (nvidia-smi: L4 23034 MiB of 24 GiB, T4 15360 of 16);
// HBM parts expose what they are sold with.
TEST(ServingMemory, UsesTheDriversMemoryWhereTheCatalogHasIt) {
  for (const char* id : {"L4", "T4", "A10G", "L40S"}) {
    const Accelerator* a = Cat().FindAccelerator(id);
    ASSERT_NE(a, nullptr) << id;
    ASSERT_TRUE(a->driver_memory.has_value()) << id;
    EXPECT_NEAR(a->driver_memory->value() / a->memory.value(), 15.0 / 16.0, 0.002) << id;
    EXPECT_EQ(Gpu(id, IntraNodeLink::kPcie).memory.value(), a->driver_memory->value()) << id;
  }
  const Accelerator* h100 = Cat().FindAccelerator("H100-SXM5-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(Gpu("H100-SXM5-80GB").memory.value(), h100->memory.value());
}

// trtllm-bench's engine limits (tensorrt_llm/bench/build/tuning.py), as NVIDIA's performance
// tables ran them. Llama-3.1-8B FP8 (FP8 KV) at 128/128 on an 80 GB H100: 0.95 x (79.6 - 8.0)
// GiB / 61 KiB per token / 256 tokens = 4351 requests, capped at 4096; 4096 x 2 = 8192 tokens.
// Llama-3.1-70B FP16 on 8 A100s at 128/2048: 0.95 x (8 x 79.15 - 141.1) GiB / 305 KiB / 2176 =
// 704 requests, rounded up to 768; 748 tokens per step, raised to the 2048 floor.
TEST(TrtllmBench, EngineLimitsFollowItsTuningRule) {
  const TrtllmBenchLimits a = TrtllmBenchSettings(Preset("llama-3.1-8b"), Precision::kFp8, false,
                                                  Precision::kFp8, 1, 1, 128, 128, 79.6);
  EXPECT_EQ(a.max_batch_size, 4096);
  EXPECT_EQ(a.max_num_tokens, 8192);
  const TrtllmBenchLimits b = TrtllmBenchSettings(Preset("llama-3.1-70b"), Precision::kFp16, false,
                                                  Precision::kFp16, 8, 1, 128, 2048, 79.15);
  EXPECT_EQ(b.max_batch_size, 768);
  EXPECT_EQ(b.max_num_tokens, 2048);
  // A small cache keeps the floor of 64.
  const TrtllmBenchLimits c = TrtllmBenchSettings(Preset("llama-3.1-70b"), Precision::kFp16, false,
                                                  Precision::kFp16, 2, 1, 20000, 2000, 79.15);
  EXPECT_EQ(c.max_batch_size, 64);
}

// vLLM V0 profiles one whole max_model_len prompt, except above a 32K context, where (from 0.5.4)
// it turns chunked prefill on and schedules 2048 tokens per step (not for MLA models); V1 keeps
// its own.
TEST(VllmDefaults, V0ChunksPrefillAboveThirtyTwoK) {
  const Accelerator* a100 = Cat().FindAccelerator("A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(VllmDefaults(*a100, "0.6.6 (V0)", 8192).max_num_batched_tokens, 8192);
  EXPECT_EQ(VllmDefaults(*a100, "0.6.6 (V0)", 32768).max_num_batched_tokens, 32768);
  EXPECT_EQ(VllmDefaults(*a100, "0.7.2", 131072).max_num_batched_tokens, 2048);
  EXPECT_EQ(
      VllmDefaults(*a100, "0.7.2", 131072, /*chunked_prefill_ok=*/false).max_num_batched_tokens,
      131072);
  EXPECT_TRUE(VllmDefaults(*a100, "0.7.2", 131072).v0);
  EXPECT_FALSE(VllmDefaults(*a100, "0.10.0", 131072).v0);
  // The default came with PR 6666 (0.5.4): 0.5.0 still profiles a whole 128K prompt.
  EXPECT_EQ(VllmDefaults(*a100, "0.5.0", 131072).max_num_batched_tokens, 131072);
  EXPECT_EQ(VllmDefaults(*a100, "0.5.4", 131072).max_num_batched_tokens, 2048);
}

// vLLM's default --gpu-memory-utilization: 0.9 through 0.19 (V0 included), 0.92 from 0.20 and
// on the current release (PR 38284). The KV pool of an unset utilisation follows the release:
// on an H100 (79.2 GiB visible) the two defaults differ by 0.02 x 79.2 = 1.58 GiB of KV.
TEST(VllmDefaults, GpuMemoryUtilizationFollowsTheRelease) {
  EXPECT_DOUBLE_EQ(VllmDefaultGpuMemoryUtilization(""), 0.92);
  EXPECT_DOUBLE_EQ(VllmDefaultGpuMemoryUtilization("0.20.1"), 0.92);
  EXPECT_DOUBLE_EQ(VllmDefaultGpuMemoryUtilization("v0.29.0"), 0.92);
  EXPECT_DOUBLE_EQ(VllmDefaultGpuMemoryUtilization("0.19.0"), 0.9);
  EXPECT_DOUBLE_EQ(VllmDefaultGpuMemoryUtilization("0.8.5 (V1)"), 0.9);
  EXPECT_DOUBLE_EQ(VllmDefaultGpuMemoryUtilization("~0.6.6 (V0)"), 0.9);
  const Accelerator* h100 = Cat().FindAccelerator("H100-SXM5-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(VllmDefaults(*h100, "0.19.0", 8192).gpu_memory_utilization, 0.9);
  EXPECT_DOUBLE_EQ(VllmDefaults(*h100, "", 8192).gpu_memory_utilization, 0.92);
  const ModelSpec* m = FindPreset("llama-3.1-8b");
  ASSERT_NE(m, nullptr);
  InferMemoryOptions o;
  o.engine = Engine::kVllm;
  const double unset = EstimateInferenceMemory(*m, o, GiB(79.2)).kv_budget.value();
  o.memory_fraction = 0.9;
  const double old = EstimateInferenceMemory(*m, o, GiB(79.2)).kv_budget.value();
  EXPECT_NEAR((unset - old) / kBytesPerGiB, 0.02 * 79.2, 1e-6);
}

// From 0.21 vLLM charges an estimate of its CUDA graphs to the KV budget. The default capture
// list at 256 sequences is 51 piecewise + 35 full graphs, as its log prints ("PIECEWISE=51
// (largest=512), FULL=35 (largest=256)"); 102 at 1024. Each graph costs 0.17 MiB per layer of
// the stage: Qwen3-8B (36 layers) loses 0.51 GiB, what vLLM 0.21.0 logged (0.52 GiB, LMCache
// issue 3430). Releases before 0.21, V0 and --enforce-eager charge nothing.
TEST(VllmDefaults, CudaGraphEstimateFromTwentyOne) {
  EXPECT_EQ(VllmCudaGraphCaptures(256, 8192), 86);
  EXPECT_EQ(VllmCudaGraphCaptures(1024, 8192), 102);
  EXPECT_EQ(VllmCudaGraphCaptures(128, 8192), 35 + 19);  // largest 256; full up to 128
  EXPECT_EQ(VllmCudaGraphCaptures(4, 2048), 4 + 3);      // [1, 2, 4, 8] and [1, 2, 4]
  EXPECT_EQ(VllmCudaGraphCaptures(256, 64), 11 + 11);    // capped by the batched tokens
  EXPECT_TRUE(VllmEstimatesCudaGraphs(""));
  EXPECT_TRUE(VllmEstimatesCudaGraphs("0.21.0 (V1)"));
  EXPECT_TRUE(VllmEstimatesCudaGraphs("v1.0.2"));
  EXPECT_FALSE(VllmEstimatesCudaGraphs("0.20.1"));
  EXPECT_FALSE(VllmEstimatesCudaGraphs("~0.6.6 (V0)"));
  const Accelerator* h100 = Cat().FindAccelerator("H100-SXM5-80GB");
  const Accelerator* l40s = Cat().FindAccelerator("L40S");
  ASSERT_NE(h100, nullptr);
  ASSERT_NE(l40s, nullptr);
  EXPECT_EQ(VllmDefaults(*h100, "", 8192).cuda_graph_captures, 102);
  EXPECT_EQ(VllmDefaults(*l40s, "0.27.0", 8192).cuda_graph_captures, 86);
  EXPECT_EQ(VllmDefaults(*l40s, "0.19.0", 8192).cuda_graph_captures, 0);
  EXPECT_EQ(VllmDefaults(*l40s, "0.7.2", 8192).cuda_graph_captures, 0);
  const ModelSpec* m = FindPreset("qwen3-8b");
  ASSERT_NE(m, nullptr);
  InferMemoryOptions o;
  o.engine = Engine::kVllm;
  o.memory_fraction = 0.9;
  const InferMemory eager = EstimateInferenceMemory(*m, o, GiB(23.6));
  o.cuda_graph_captures = 86;
  const InferMemory graphs = EstimateInferenceMemory(*m, o, GiB(23.6));
  EXPECT_NEAR(graphs.cuda_graph_estimate.value() / kBytesPerGiB, 0.51, 0.01);
  EXPECT_NEAR((eager.kv_budget - graphs.kv_budget).value(), graphs.cuda_graph_estimate.value(),
              1.0);
  EXPECT_EQ(graphs.reported_non_torch.value(), eager.reported_non_torch.value());
  o.pp = 2;  // a stage holds half the layers, so half the graphs' kernels
  EXPECT_NEAR(EstimateInferenceMemory(*m, o, GiB(23.6)).cuda_graph_estimate.value(),
              graphs.cuda_graph_estimate.value() / 2, 1.0);
  o.pp = 1;
  o.engine = Engine::kSglang;  // other engines keep their own rules
  EXPECT_EQ(EstimateInferenceMemory(*m, o, GiB(23.6)).cuda_graph_estimate.value(), 0.0);
}

// V1 before 0.18 samples its profile on the native, sorting top-k/top-p path: ~39 B per
// vocabulary entry per sequence (logs from 0.10.2 to January 2026: 38.4-39.6), where later
// releases (Triton kernels, FlashInfer on by default) and the planner's current release take
// 16. Llama-3.1-8B at V1's 1024 sequences on an H100: 4.76 GiB logged by llm-d's January 2026
// runs, 1.89 by vLLM 0.19.
TEST(VllmDefaults, V1BeforeEighteenSortsInItsSamplerProfile) {
  const Accelerator* h100 = Cat().FindAccelerator("H100-SXM5-80GB");
  ASSERT_NE(h100, nullptr);
  EXPECT_TRUE(VllmDefaults(*h100, "0.10.2", 8192).v1_sort_sampler);
  EXPECT_TRUE(VllmDefaults(*h100, "v0.14.1", 8192).v1_sort_sampler);
  EXPECT_FALSE(VllmDefaults(*h100, "0.19.0", 8192).v1_sort_sampler);
  EXPECT_FALSE(VllmDefaults(*h100, "", 8192).v1_sort_sampler);
  EXPECT_FALSE(VllmDefaults(*h100, "0.6.6 (V0)", 8192).v1_sort_sampler);  // V0's own sampler
  const ModelSpec* m = FindPreset("llama-3.1-8b");
  ASSERT_NE(m, nullptr);
  auto peak = [&](const char* version) {
    const VllmSchedulerDefaults d = VllmDefaults(*h100, version, 8192);
    InferMemoryOptions o;
    o.engine = Engine::kVllm;
    o.max_num_seqs = d.max_num_seqs;
    o.max_num_batched_tokens = d.max_num_batched_tokens;
    o.v1_sort_sampler = d.v1_sort_sampler;
    return EstimateInferenceMemory(*m, o, GiB(79.2)).reported_activation_peak.value() /
           kBytesPerGiB;
  };
  EXPECT_NEAR(peak("0.14.0"), 4.76, 0.05 * 4.76);
  EXPECT_NEAR(peak("0.19.0"), 1.89, 0.05 * 1.89);
}

// ggml (llama.cpp) has no AMX kernel for bf16 weights or MoE experts: on a Xeon 6980P its
// matmuls run on the vector units at twice the fp32 FMA rate, where oneDNN/SGLang use AMX. A
// CPU without a matrix unit keeps its catalog rates. Llama-3.2-3B's 1024-token prefill is then
// several times slower on llama.cpp than on an AMX runtime, as Intel's Xeon 6 comparison
// measures (1.66 s against 0.27 s).
TEST(CpuDevice, GgmlMatmulsRunOnTheVectorUnits) {
  const Cpu* gnr = Cat().FindCpu("Xeon-6980P");
  ASSERT_NE(gnr, nullptr);
  const ComputeDevice amx = DeviceFromCpu(*gnr, 1, 0, Cal());
  ComputeDevice ggml = amx;
  UseGgmlVectorKernels(ggml);
  EXPECT_TRUE(amx.matrix_unit);
  EXPECT_FALSE(ggml.matrix_unit);
  EXPECT_DOUBLE_EQ(ggml.peak_bf16, 2 * amx.peak_fp32);
  EXPECT_DOUBLE_EQ(ggml.peak_int8, 2 * amx.peak_fp32);
  EXPECT_DOUBLE_EQ(ggml.GemmEff(Precision::kBf16), amx.vector_eff);
  EXPECT_DOUBLE_EQ(ggml.GemmKnee(Precision::kInt8), amx.vector_knee);
  const ModelSpec* m = FindPreset("llama-3.2-3b");
  ASSERT_NE(m, nullptr);
  ServeSetup su;
  su.weight_precision = Precision::kBf16;
  const double t_amx = EstimateLlmServing(*m, su, amx, 1024, 1, 1, Cal()).prefill.value();
  const double t_ggml = EstimateLlmServing(*m, su, ggml, 1024, 1, 1, Cal()).prefill.value();
  EXPECT_GT(t_ggml, 3 * t_amx);
  const Cpu* zen5 = Cat().FindCpu("EPYC-9575F");
  ASSERT_NE(zen5, nullptr);
  ComputeDevice epyc = DeviceFromCpu(*zen5, 1, 0, Cal());
  const double bf16 = epyc.peak_bf16, int8 = epyc.peak_int8;
  UseGgmlVectorKernels(epyc);
  EXPECT_DOUBLE_EQ(epyc.peak_bf16, bf16);
  EXPECT_DOUBLE_EQ(epyc.peak_int8, int8);
}

// A few threads stream far more than their share of the sockets' bandwidth: each core reaches
// up to cpu_core_memory_gbps, and the sockets' sustained bandwidth caps the sum.
TEST(CpuDevice, ThreadsStreamUpToTheirCoresBandwidthCappedByTheSockets) {
  const Cpu* g3 = Cat().FindCpu("Graviton3");
  ASSERT_NE(g3, nullptr);
  const double per_core = Cal().Get("cpu_core_memory_gbps", -1) * 1e9;
  const double eff = Cal().Get("cpu_memory_efficiency", -1);
  ASSERT_GT(per_core, 0);
  ASSERT_GT(eff, 0);
  const double socket = g3->memory_bw.value() * eff;
  double last = 0;
  for (int t : {1, 2, 4, 8, 16, 32, 64}) {
    const ComputeDevice d = DeviceFromCpu(*g3, 1, t, Cal());
    const double sustained = d.mem_bw * d.mem_eff;
    EXPECT_NEAR(sustained, std::min(socket, t * per_core), 1e-6 * socket) << t << " threads";
    EXPECT_GE(sustained, last) << t << " threads";
    last = sustained;
  }
  // 8 of Graviton3's 64 cores: 200 GB/s, no longer an eighth-of-the-cores quarter share.
  EXPECT_GT(DeviceFromCpu(*g3, 1, 8, Cal()).mem_bw * eff, 0.25 * g3->memory_bw.value() * eff);
}

// Every stream on a socket reads the same weights in the same order: a model whose weights fit
// in the share of the socket's L3 left beside the activations reads them from there, not from
// DRAM. ResNet-50 in int8 (25 MB) on a 128-core Xeon 6980P (504 MB L3) runs 256 streams, whose
// DRAM share alone (2.4 GB/s each) would bind it; BERT-large (300 MB) does not fit and still
// streams its weights from DRAM.
TEST(CpuDevice, WeightsThatFitTheLastLevelCacheAreNotReadFromDram) {
  const Cpu* gnr = Cat().FindCpu("Xeon-6980P");
  ASSERT_NE(gnr, nullptr);
  ASSERT_TRUE(gnr->l3_mib.has_value());
  const ComputeDevice with_l3 = DeviceFromCpu(*gnr, 2, 0, Cal());
  Cpu no_l3_cpu = *gnr;
  no_l3_cpu.l3_mib.reset();
  const ComputeDevice without_l3 = DeviceFromCpu(no_l3_cpu, 2, 0, Cal());
  EXPECT_EQ(with_l3.llc_bytes, *gnr->l3_mib * 1024 * 1024);
  const int batch = 256;  // one image per core
  const ModelSpec& resnet = Preset("resnet-50");
  const double cached =
      EstimateForward(resnet, Precision::kInt8, with_l3, batch, 0, Cal()).samples_per_s;
  const double dram =
      EstimateForward(resnet, Precision::kInt8, without_l3, batch, 0, Cal()).samples_per_s;
  EXPECT_GT(cached, 1.3 * dram);
  // Without the DRAM bound it is the AMX rate: 8.2 GOP per image on one core each.
  const double per_core_ops = with_l3.Peak(Precision::kInt8) / with_l3.cores *
                              with_l3.GemmEff(Precision::kInt8) * with_l3.conv_factor;
  EXPECT_LT(cached, 256 * per_core_ops / (2 * 4.09e9));
  const ModelSpec& bert_large = Preset("bert-large");
  const double big_cached =
      EstimateForward(bert_large, Precision::kInt8, with_l3, batch, 384, Cal()).samples_per_s;
  const double big_dram =
      EstimateForward(bert_large, Precision::kInt8, without_l3, batch, 384, Cal()).samples_per_s;
  EXPECT_DOUBLE_EQ(big_cached, big_dram);
}

// An MLPerf Server run of a non-LLM: the highest load whose p99 latency (own batch, the batch in
// flight, the M/M/c wait) stays within the bound. The utilisation found puts the p99 on the
// bound; a loose bound approaches the offline throughput, a tight one forces smaller batches.
TEST(BatchedServer, HighestLoadWithinTheBound) {
  const double s = 0.040;                                   // a 40 ms batch of 32
  EXPECT_EQ(MaxUtilizationWithin(0.079, s, 32, false), 0);  // own batch + the one in flight
  const double rho = MaxUtilizationWithin(0.130, s, 32, false);
  ASSERT_GT(rho, 0);
  ASSERT_LT(rho, 0.99);
  EXPECT_NEAR(BatchedServeP99(s, rho, 32, false), 0.130, 1e-9);
  // A CPU's streams run their requests side by side: no batch in flight.
  EXPECT_GT(MaxUtilizationWithin(0.079, s, 32, true), 0);
  // Four replicas fed by one queue wait as 4 x 32 servers: a higher load within the bound, the
  // p99 wait of that pooled queue on it; the default is one queue per replica.
  const double pooled = MaxUtilizationWithin(0.130, s, 32, false, 4);
  EXPECT_GT(pooled, rho);
  EXPECT_NEAR(s + s + ServeQueueP99(s, pooled, 4 * 32), 0.130, 1e-9);
  EXPECT_DOUBLE_EQ(MaxUtilizationWithin(0.130, s, 32, false, 1), rho);
  // BERT-large on one L4 (MLPerf bound 130 ms) and with no practical bound.
  const ModelSpec& bert = Preset("bert-large");
  const ComputeDevice l4 = Gpu("L4", IntraNodeLink::kPcie);
  const double offline =
      EstimateForwardThroughput(bert, Precision::kInt8, l4, 384, 256, Cal()).samples_per_s;
  const ServePerf bound =
      BatchedServerCapacity(bert, Precision::kInt8, l4, 384, 0.130, 256, Cal(), true, {});
  const ServePerf loose =
      BatchedServerCapacity(bert, Precision::kInt8, l4, 384, 1e4, 256, Cal(), true, {});
  EXPECT_LT(bound.samples_per_s, loose.samples_per_s);
  EXPECT_LT(bound.samples_per_s, offline);
  EXPECT_GT(bound.samples_per_s, 0.8 * offline);
  EXPECT_NEAR(loose.samples_per_s, 0.99 * offline, 1e-6 * offline);
  EXPECT_LE(
      BatchedServeP99(bound.e2e.value(), bound.samples_per_s / bound.batch * bound.e2e.value(),
                      bound.batch, false),
      0.130 + 1e-9);
  // A bound below one request's own forward: nothing.
  EXPECT_EQ(BatchedServerCapacity(bert, Precision::kInt8, l4, 384, 1e-4, 256, Cal(), true, {})
                .samples_per_s,
            0);
}

TEST(PlanServingBugs, CpuInstanceCoresFromVcpus) {
  ServeJobSpec j = BertJob(50);
  j.allow_cpu = true;
  j.allow_gpu = false;
  j.clouds = {"aws"};
  j.e2e_p99_ms = 1000;
  j.top = 1000;
  auto r = PlanServing(j, Cat(), Cal());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ASSERT_FALSE(r->plans.empty());
  for (const auto& p : r->plans) {
    const Cpu* cpu = Cat().FindCpu(p.instance->cpu);
    ASSERT_NE(cpu, nullptr);
    const int per_thread = std::max(1, cpu->threads / std::max(1, cpu->cores));
    const int cores = std::max(1, p.instance->vcpus / per_thread);
    const int sockets = (cores + cpu->cores - 1) / cpu->cores;
    const ComputeDevice dev = DeviceFromCpu(*cpu, sockets, cores, Cal());
    ServePerf want = EstimateForward(j.model, j.weight_precision, dev, p.batch, j.input_len, Cal());
    EXPECT_NEAR(p.perf.samples_per_s, want.samples_per_s, 1e-6 * want.samples_per_s)
        << p.instance->instance_type << " (" << p.instance->vcpus << " vCPUs of " << cpu->id << ", "
        << cores << " cores on " << sockets << " socket(s))";
  }
}

// ---- the CLI: tco and plan infer -------------------------------------------------------------

using gpuplan::test::RunCli;
using gpuplan::test::RunResult;
using gpuplan::test::Slurp;

// int8, as CPU deployments of BERT run (see CpuPlansForBertBase).
const std::vector<std::string> kTcoBert = {"tco", "--model",     "bert-base", "--qps",
                                           "300", "--input-len", "128",       "--e2e-ms",
                                           "100", "--precision", "int8"};

std::vector<std::string> With(std::vector<std::string> base, std::vector<std::string> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// Guide B10: below ~500 QPS a CPU deployment of BERT-base saves 72% of the 3-year TCO.
TEST(CliTco, TextShowsBreakEvenAndThreeYearTotal) {
  RunResult r = RunCli(kTcoBert);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(Has(r.out, "break-even")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "3-year total")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "GPU") && Has(r.out, "CPU")) << r.Describe();
  EXPECT_TRUE(r.err.empty()) << r.Describe();
  for (std::string_view line : {std::string_view("break-even"), std::string_view("3-year")}) {
    const size_t at = r.out.find(line);
    if (at != std::string::npos) {
      fmt::print("[B10 tco] {}\n", r.out.substr(at, r.out.find('\n', at) - at));
    }
  }
}

// A ViT is served at its image's tokens (patches + class token: 224/14 -> 257), not 1 token: at
// one token ViT-H/14 came out at 0% utilisation and 12 ms for a batch of 256.
TEST(CliInfer, VitServesItsImageTokens) {
  RunResult r = RunCli({"plan", "infer", "--model", "vit-h-14", "--qps", "50", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(Has(r.out, "224x224 image (257 tokens) each")) << r.Describe();
  const ModelSpec* vit = FindPreset("vit-h-14");
  ASSERT_NE(vit, nullptr);
  EXPECT_EQ(vit->ImageTokens(), 257);
  EXPECT_EQ(FindPreset("bert-base")->ImageTokens(), 0);
}

// Guide B10's ~500 QPS is a BERT-base rule: shown beside gpuplan's break-even with a verdict for
// text encoders, and not at all for other models (it was printed for ResNet-50 too).
TEST(CliTco, GuideB10OnlyForTextEncoders) {
  RunResult bert = RunCli(kTcoBert);
  ASSERT_EQ(bert.exit_code, 0) << bert.Describe();
  EXPECT_TRUE(Has(bert.out, "guide B10: CPUs are cheaper than GPUs below ~500 QPS for BERT-base"))
      << bert.Describe();
  EXPECT_TRUE(Has(bert.out, "agrees within 1.5x") || Has(bert.out, "(differs")) << bert.Describe();
  RunResult cnn = RunCli({"tco", "--model", "resnet-50", "--qps", "200", "--precision", "int8"});
  ASSERT_EQ(cnn.exit_code, 0) << cnn.Describe();
  EXPECT_TRUE(Has(cnn.out, "break-even")) << cnn.Describe();
  EXPECT_FALSE(Has(cnn.out, "B10")) << cnn.Describe();
  RunResult json = RunCli(With(kTcoBert, {"--json"}));
  ASSERT_EQ(json.exit_code, 0) << json.Describe();
  EXPECT_TRUE(Has(nlohmann::json::parse(json.out)["guide_rule"].get<std::string>(), "guide B10"));
}

// An LLM has no CPU deployment (not planned): tco says so, instead of "CPUs are not cheaper at
// any load", and the JSON carries the planner's reason.
TEST(CliTco, LlmSaysWhyThereIsNoCpuDeployment) {
  RunResult r = RunCli({"tco", "--model", "llama-2-7b", "--qps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(Has(r.out, "no CPU deployment was planned")) << r.Describe();
  EXPECT_TRUE(Has(r.out, "note (CPU): LLM serving on CPUs is not planned")) << r.Describe();
  EXPECT_FALSE(Has(r.out, "--cpu-only")) << r.Describe();
  RunResult j = RunCli({"--json", "tco", "--model", "llama-2-7b", "--qps", "2"});
  ASSERT_EQ(j.exit_code, 0) << j.Describe();
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_TRUE(doc["cpu"].is_null());
  ASSERT_FALSE(doc["cpu_notes"].empty()) << doc.dump(2);
  RunResult bert = RunCli(With(kTcoBert, {"--json"}));
  ASSERT_EQ(bert.exit_code, 0) << bert.Describe();
  EXPECT_TRUE(nlohmann::json::parse(bert.out)["cpu_notes"].empty());
}

TEST(CliTco, JsonHasGpuCpuAndBreakEven) {
  RunResult r = RunCli(With(kTcoBert, {"--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.Describe();
  ASSERT_TRUE(j.contains("gpu")) << j.dump(2);
  ASSERT_TRUE(j.contains("cpu")) << j.dump(2);
  ASSERT_TRUE(j.contains("break_even_qps")) << j.dump(2);
  ASSERT_TRUE(j["gpu"].is_object());
  ASSERT_TRUE(j["cpu"].is_object());
  EXPECT_TRUE(j["gpu"]["accelerator"].is_string());
  EXPECT_TRUE(j["cpu"]["accelerator"].is_null());
  EXPECT_FALSE(j["cpu"]["cpu"].get<std::string>().empty());
  EXPECT_TRUE(j["break_even_qps"].is_number() || j["break_even_qps"].is_null());
  EXPECT_DOUBLE_EQ(j["qps"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(j["years"].get<double>(), 3);
  if (j.contains("total_gpu") && j.contains("total_cpu")) {
    EXPECT_NEAR(j["total_gpu"].get<double>(), j["gpu"]["cost_per_month"].get<double>() * 36,
                1e-6 * j["total_gpu"].get<double>());
    EXPECT_NEAR(j["total_cpu"].get<double>(), j["cpu"]["cost_per_month"].get<double>() * 36,
                1e-6 * j["total_cpu"].get<double>());
    fmt::print(
        "[B10 tco] 3-year GPU {:.0f} vs CPU {:.0f} USD, break-even {} (guide: CPU saves "
        "72% below ~500 QPS)\n",
        j["total_gpu"].get<double>(), j["total_cpu"].get<double>(), j["break_even_qps"].dump());
  }
}

// Guide B14: a night-time load well under the peak served on CPUs saves money per day.
TEST(CliTco, DayNightProfileShowsSaving) {
  std::string profile;
  for (int h = 0; h < 24; ++h) {
    const int load = (h >= 8 && h < 20) ? 300 : 10;  // day peak, quiet night
    if (h > 0) profile += ',';
    profile += std::to_string(load);
  }
  RunResult r = RunCli(With(kTcoBert, {"--profile", profile}));
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const size_t at = r.out.find("hourly profile");
  ASSERT_NE(at, std::string::npos) << r.Describe();
  EXPECT_TRUE(Has(r.out, "saving")) << r.Describe();
  fmt::print("[B14 tco] {}\n", r.out.substr(at, r.out.find('\n', at) - at));
  RunResult js = RunCli(With(kTcoBert, {"--profile", profile, "--json"}));
  ASSERT_EQ(js.exit_code, 0) << js.Describe();
  const auto j = nlohmann::json::parse(js.out);
  ASSERT_TRUE(j.contains("profile")) << j.dump(2);
  EXPECT_GE(j["profile"]["static_gpu_per_day"].get<double>(),
            j["profile"]["mixed_per_day"].get<double>());
  EXPECT_GE(j["profile"]["saving_per_year"].get<double>(), 0);
}

struct CliBadCase {
  std::string name;
  std::vector<std::string> args;
  std::string stderr_has;
};

TEST(CliTco, BadInputExitsTwo) {
  const CliBadCase cases[] = {
      {"profile of 3 values", With(kTcoBert, {"--profile", "1,2,3"}), "--profile"},
      {"profile with a word", With(kTcoBert, {"--profile", "1,2,x"}), "--profile"},
      {"plan infer without --qps", {"plan", "infer", "--model", "llama-2-7b"}, "--qps"},
      {"plan infer qps 0", {"plan", "infer", "--model", "llama-2-7b", "--qps", "0"}, "--qps"},
      {"plan infer unknown gpu",
       {"plan", "infer", "--model", "llama-2-7b", "--qps", "1", "--gpus", "NoSuchGPU"},
       "--gpus"},
      {"tco years 0", With(kTcoBert, {"--years", "0"}), "--years"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RunResult r = RunCli(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.Describe();
    EXPECT_TRUE(r.out.empty()) << r.Describe();
    EXPECT_TRUE(Has(r.err, c.stderr_has)) << r.Describe();
  }
}

TEST(CliPlanInfer, SevenBPrintsATopPlan) {
  RunResult r = RunCli({"plan", "infer", "--model", "llama-2-7b", "--qps", "5", "--input-len",
                        "512", "--output-len", "256", "--ttft-ms", "1000", "--tpot-ms", "50"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_TRUE(Has(r.out, "Top:")) << r.Describe();
  RunResult js = RunCli({"plan", "infer", "--model", "llama-2-7b", "--qps", "5", "--json"});
  ASSERT_EQ(js.exit_code, 0) << js.Describe();
  const auto j = nlohmann::json::parse(js.out);
  ASSERT_TRUE(j["plans"].is_array());
  ASSERT_FALSE(j["plans"].empty());
  EXPECT_EQ(j["plans"][0]["gpus_per_replica"].get<int>(), 1);
}

}  // namespace
}  // namespace gpuplan
