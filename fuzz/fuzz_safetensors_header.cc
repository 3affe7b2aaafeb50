// A .safetensors file: the 8-byte length, the JSON header, the data (through the file reader).
#include "fuzz_common.h"
#include "gpuplan/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuplan::fuzz::CheckContract(gpuplan::ParseSafetensorsHeader(text, "model.safetensors"));
  // The whole-file path too: length prefix + header + data.
  const std::string path = gpuplan::fuzz::WriteScratch("model.safetensors", text);
  gpuplan::fuzz::CheckContract(gpuplan::ReadSafetensors(path));
  return 0;
}
