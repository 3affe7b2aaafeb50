// model.safetensors.index.json (shards absent: the metadata path), resolved as a model.
#include "fuzz_common.h"
#include "gpuplan/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = gpuplan::fuzz::WriteScratch("model.safetensors.index.json", text);
  gpuplan::fuzz::CheckContract(gpuplan::ReadSafetensors(path));
  gpuplan::fuzz::CheckContract(gpuplan::ResolveModel(path, "--model"));
  return 0;
}
