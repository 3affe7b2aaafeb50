// Benchmarks with public, fixed workloads. Training (MLPerf Training): the data a run must
// process to reach its quality target, so that a time-to-train follows from predicted
// throughput (data/benchmarks.csv). Inference (MLPerf Inference): the request lengths, beam
// width and latency constraints a dataset and the rules fix (data/inference_benchmarks.csv).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/precision.h"
#include "gpuplan/result.h"

namespace gpuplan {

struct TrainBenchmark {
  std::string id;                    // "mlperf/resnet"
  std::vector<std::string> aliases;  // result-directory names ("resnet")
  std::string dataset;
  double samples_per_epoch = 0;  // 0 = not counted (a corpus sampled, not passed over)
  std::string target;
  double samples_to_target = 0;  // mean at ref_global_batch
  int ref_global_batch = 0;
  double batch_exponent = 0;  // samples x (batch / ref)^exponent above the reference (no RCPs)
  // The benchmark's reference convergence points (MLCommons rcp_checker): global batch and the
  // mean samples its reference runs took to the target (olympic mean: fastest and slowest run
  // dropped), ascending in batch. A round's rules may publish new ones: each set applies from
  // its round (MLPerf Training vX.Y as X.Y; 0 = every round) until the next set's. Empty = none
  // published; batch_exponent is used instead.
  struct ConvergencePoint {
    int global_batch = 0;
    double samples = 0;
  };
  struct ConvergenceSet {
    double from_round = 0;
    std::vector<ConvergencePoint> points;
  };
  std::vector<ConvergenceSet> rcp;  // ascending in from_round
  double eval_every_samples = 0;    // 0 = no evaluation cost modelled
  double eval_samples = 0;
  // The built-in preset of the benchmark's network (empty: none; then gflops_per_sample and
  // activation_melems_per_sample describe it): what a case that gives no network shape trains.
  std::string model;
  std::optional<double> gflops_per_sample;  // the benchmark model's forward FLOPs per sample
  // Its forward feature-map elements per sample, millions (ModelSpec's field of that name).
  std::optional<double> activation_melems_per_sample;
  // Mean real (non-padding) tokens per sample where the reference implementations run the
  // samples packed or unpadded (MLPerf BERT); unset = every sample is seq_len tokens.
  std::optional<double> mean_tokens_per_sample;
  // The share of the gradient synchronisation (and of the sharded optimizer's parameter
  // all-gather) NVIDIA's reference implementation hides behind the backward and forward passes,
  // where it differs from its framework's (unset = the framework's):
  // 0 where it reduces the gradients after the backward (MLPerf BERT's DistributedFusedLAMB
  // without --dwu-overlap-reductions; Stable Diffusion's NeMo config ddp_overlap: False, for
  // its whole-iteration CUDA graph). ApplyBenchmarkImplementation.
  std::optional<double> ref_dp_overlap;
  std::string source, as_of, notes;

  // Training samples to the target at `global_batch` (0 = the reference batch) under the rules
  // of MLPerf Training round `round` (4.1 for v4.1; 0 = the latest). With RCPs: the
  // rcp_checker's linear interpolation between the two nearest reference batches, the smallest
  // batch's mean below them and the last segment's slope beyond them; else the power law.
  double SamplesToTarget(int global_batch, double round = 0) const;
  // Tokens a sample costs at sequence length `seq_len`: its mean real tokens where the
  // benchmark's samples run packed, else seq_len (every position computed).
  double TokensPerSample(int seq_len) const;
  // The sequences of `seq_len` tokens one step of `global_batch` samples runs: the benchmark's
  // global batch counts samples, and packed samples share sequences (MLPerf BERT: NVIDIA's
  // reference runs 8 packs of 512 tokens per GPU for a logged global batch of 8192 samples on
  // 512 GPUs, PACKING_FACTOR 2), so a step runs ceil(global_batch / PackingFactor) sequences;
  // unpacked benchmarks run one sequence per sample.
  int SequencesPerStep(int global_batch, int seq_len) const;
  // Whole samples per sequence of `seq_len` tokens (NVIDIA's PACKING_FACTOR): round(seq_len /
  // mean tokens per sample), at least 1; 1 where samples run unpacked.
  int PackingFactor(int seq_len) const;
  // Evaluation time as a fraction of training time: forward passes over the evaluation set
  // every eval_every_samples, a forward being `forward_share` of a training step's work
  // (1/3 for full training, 1/2 for LoRA's frozen weights).
  double EvalOverhead(double forward_share) const;
};

Result<std::vector<TrainBenchmark>> ParseTrainBenchmarks(std::string_view csv,
                                                         std::string_view label);
// The built-in table.
const std::vector<TrainBenchmark>& TrainBenchmarks();
// By id ("mlperf/resnet") or alias ("resnet"), case-insensitive; nullptr when unknown.
const TrainBenchmark* FindTrainBenchmark(std::string_view name);

// An inference benchmark whose requests come from a public dataset (MLPerf Inference). Unknown
// figures are nullopt (not published in the benchmark's repository or rules).
struct InferBenchmark {
  std::string id;                    // "mlperf/llama2-70b-99"
  std::vector<std::string> aliases;  // result-directory / loadgen names ("llama2-70b-99.9")
  std::string task, dataset;
  // The built-in preset of the reference model (empty: none): what a serving request that names
  // the benchmark and no model serves.
  std::string model;
  int samples = 0;  // QSL size (performance_sample_count)
  // Mean tokens a request's forward processes; for encoders the mean REAL length, which a
  // padding-free engine processes (others pad to max_input_tokens).
  std::optional<double> mean_input_tokens, max_input_tokens;
  std::optional<double> mean_output_tokens, min_output_tokens, max_output_tokens;
  std::string stop;  // how generation ends ("eos", "eos (early_stopping)")
  int beams = 1;     // beam width of the reference decoding (1 = greedy)
  // The weight (and KV) format closed-division submissions run on hardware with that format's
  // tensor cores (the accuracy target is met in it); the serving default where a job or case
  // states no precision. nullopt = not checked. docs/model.md section 12.6.
  std::optional<Precision> precision;
  // The 4-bit format (a quant preset name, "nvfp4") NVIDIA's submissions run where the GPU has
  // FP4 tensor cores (Blackwell); empty = `precision` there too, or not checked.
  std::string fp4_quant;
  std::optional<double> server_ttft_p99_ms, server_tpot_p99_ms, server_latency_p99_ms;
  // How NVIDIA's harness hands a Server run's queries to the system's GPUs: "shared" = one
  // queue every GPU's worker takes from (the next free GPU serves the next query: SDXL's
  // SDXLServer sample_queue); empty = per GPU (LWIS deals queries round-robin to the devices,
  // each with its own batcher), the planner's model of independent replicas.
  std::string server_dispatch;
  // Text-to-image benchmarks: the reference pipeline's denoising steps and guidance scale.
  std::optional<int> denoise_steps;
  std::optional<double> guidance_scale;
  std::string source, as_of, notes;
};

Result<std::vector<InferBenchmark>> ParseInferBenchmarks(std::string_view csv,
                                                         std::string_view label);
// The built-in table (data/inference_benchmarks.csv).
const std::vector<InferBenchmark>& InferBenchmarks();
// By id ("mlperf/bert-99"), id without its "mlperf/" prefix, or alias ("bert-99.9"),
// case-insensitive; nullptr when unknown.
const InferBenchmark* FindInferBenchmark(std::string_view name);

// A serving workload's request shape: what a job or case states (nullopt = not stated).
struct ServingShape {
  std::optional<int> input_len, output_len;
  std::optional<int> beams;
  std::optional<double> ttft_p99_ms, tpot_p99_ms, e2e_p99_ms;
  // Each request's generation limit (max_tokens / max_new_tokens): the benchmark's
  // max_output_tokens. What an engine that reserves a request's whole KV up front admits on.
  std::optional<int> max_output_len;
  // Text-to-image: denoising steps per image and the guidance scale (> 1: classifier-free
  // guidance, two UNet forwards per step).
  std::optional<int> denoise_steps;
  std::optional<double> guidance_scale;
};
// Fills what `given` leaves unset from benchmark `b`; stated fields are kept. The input length
// is the benchmark's mean input tokens: a benchmark harness knows every sample's length up front
// and batches by length (NVIDIA's variable-length TensorRT plugins, Intel's length-bucketed CPU
// SUT), so encoders process their real lengths, not the padded maximum. LLMs take
// mean_output_tokens (rounded), the per-request generation limit (max_output_tokens), the beam
// width, a text-to-image benchmark's denoising steps and guidance scale, and the Server
// scenario's p99 latency constraints. Fields the table does not know stay
// unset. docs/model.md section 12.6.
ServingShape FillServingShape(const InferBenchmark& b, ServingShape given);

// A length an LLM request under benchmark `b` still lacks after FillServingShape: the mean
// prompt (or, for a benchmark that generates, the mean output) the table does not publish and
// `filled` does not state. `flag` names the option that supplies it.
struct MissingLength {
  std::string message;  // "<id>: the mean prompt length is not published (...)"
  std::string flag;     // "--input-len" or "--output-len"
};
std::optional<MissingLength> UnpublishedLength(const InferBenchmark& b, const ServingShape& filled);

}  // namespace gpuplan
