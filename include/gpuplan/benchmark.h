// Training benchmarks run to a quality target (MLPerf Training): the data a run must process to
// reach the target, so that a time-to-train follows from predicted throughput. Table:
// data/benchmarks.csv.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.h"

namespace gpuplan {

struct TrainBenchmark {
  std::string id;                    // "mlperf/resnet"
  std::vector<std::string> aliases;  // result-directory names ("resnet")
  std::string dataset;
  double samples_per_epoch = 0;
  std::string target;
  double samples_to_target = 0;  // mean at ref_global_batch
  int ref_global_batch = 0;
  double batch_exponent = 0;      // samples x (batch / ref)^exponent above the reference
  double eval_every_samples = 0;  // 0 = no evaluation cost modelled
  double eval_samples = 0;
  std::optional<double> gflops_per_sample;  // the benchmark model's forward FLOPs per sample
  std::string source, as_of, notes;

  // Training samples to the target at `global_batch` (0 = the reference batch).
  double SamplesToTarget(int global_batch) const;
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

}  // namespace gpuplan
