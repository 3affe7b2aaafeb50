// Serving job YAML -> ServeJobFile.
#include "fuzz_common.h"
#include "gpuplan/serve_planner.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuplan::fuzz::CheckContract(gpuplan::ParseServeJobYaml(text, "serve.yaml"));
  return 0;
}
