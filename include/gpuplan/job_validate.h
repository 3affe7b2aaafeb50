// Job validation: the ranges and combinations every training and serving job must satisfy,
// whatever its source (flags, a job file, an API request). Errors name the flag or the YAML path.
#pragma once

#include <string_view>

#include "gpuplan/input.h"
#include "gpuplan/result.h"

namespace gpuplan {

struct TrainJobSpec;
struct ServeJobSpec;

// The ranges every training job must satisfy, whatever its source: finite numbers, sane upper
// bounds (the constants above; LoRA rank <= hidden size), mutually exclusive and required
// combinations. `label` prefixes YAML paths ("job.yaml: train.max_nodes").
Status ValidateTrainJob(const TrainJobSpec& job, InputSource source, std::string_view label = {});
Status ValidateServeJob(const ServeJobSpec& job, InputSource source, std::string_view label = {});

}  // namespace gpuplan
