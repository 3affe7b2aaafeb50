// `validate` case files (JSON lines), predicted against the built-in catalog.
#include "fuzz_common.h"
#include "gpuplan/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuplan::fuzz::CheckContract(
      gpuplan::RunValidation(text, "cases.jsonl", gpuplan::fuzz::BuiltinCatalog(), "", ""));
  return 0;
}
