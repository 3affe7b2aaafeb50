// `check` setup YAML -> Setup, validated against the built-in catalog, then the rules.
#include "fuzz_common.h"
#include "gpuplan/check.h"
#include "gpuplan/estimate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto setup = gpuplan::ParseSetupYaml(text, "setup.yaml");
  gpuplan::fuzz::CheckContract(setup);
  if (!setup) return 0;
  const auto& cat = gpuplan::fuzz::BuiltinCatalog();
  gpuplan::Status st = gpuplan::ValidateSetup(*setup, cat);
  if (!st) {
    if (st.error().code == gpuplan::ErrorCode::kInternal) std::abort();
    return 0;
  }
  static const gpuplan::Calibration cal = gpuplan::DefaultCalibration();
  volatile auto n = gpuplan::CheckSetup(*setup, cat, cal).size();
  (void)n;
  return 0;
}
