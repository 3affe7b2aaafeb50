// config.json -> ModelSpec, then the model's parameter count and memory arithmetic.
#include "fuzz_common.h"
#include "gpuplan/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = gpuplan::ParseHfConfig(text, "config.json");
  gpuplan::fuzz::CheckContract(m);
  if (m) {
    volatile auto p = gpuplan::CountParams(*m).total;
    (void)p;
  }
  return 0;
}
