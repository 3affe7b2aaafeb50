// Plan JSON as `emit` reads it back: the size/depth-capped parse and the identifier checks.
#include "fuzz_common.h"
#include "io/json_util.h"
#include "io/plan_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = gpuplan::internal::ParseJson(text, "--plan");
  gpuplan::fuzz::CheckContract(doc);
  if (doc) {
    gpuplan::Status st = gpuplan::internal::CheckPlanDocument(*doc);
    if (!st && st.error().field.empty()) std::abort();
  }
  return 0;
}
