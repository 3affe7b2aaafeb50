// A SkyPilot vms.csv imported as --catalog aws=PATH.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = gpuplan::fuzz::WriteScratch("vms.csv", text);
  gpuplan::Catalog cat = gpuplan::fuzz::SmallBuiltinCatalog("aws");
  gpuplan::Status st = gpuplan::ApplyCatalogOverride(cat, "aws=" + path);
  if (!st && st.error().code == gpuplan::ErrorCode::kInternal) std::abort();
  return 0;
}
