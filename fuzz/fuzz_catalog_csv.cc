// A --catalog override (gpuplan's own CSV tables: the kind is detected from the header).
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = gpuplan::fuzz::WriteScratch("instances.csv", text);
  gpuplan::Catalog cat = gpuplan::fuzz::SmallBuiltinCatalog("");
  gpuplan::Status st = gpuplan::ApplyCatalogOverride(cat, path);
  if (!st && st.error().code == gpuplan::ErrorCode::kInternal) std::abort();
  return 0;
}
