// Training job YAML -> TrainJobSpec (and the shared validation).
#include "fuzz_common.h"
#include "gpuplan/input.h"
#include "gpuplan/job_validate.h"
#include "gpuplan/job.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto job = gpuplan::ParseTrainJobYaml(text, "job.yaml");
  gpuplan::fuzz::CheckContract(job);
  if (job && !gpuplan::ValidateTrainJob(*job, gpuplan::InputSource::kYaml, "job.yaml"))
    std::abort();
  return 0;
}
