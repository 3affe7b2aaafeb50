// Emit: every target over a plan JSON; the first byte picks the target and options. Checks that
// no rendered file carries a raw control character other than newline/tab (an injected line).
#include <cstring>

#include "fuzz_common.h"
#include "gpuplan/emit.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto& targets = gpuplan::EmitTargets();
  gpuplan::EmitOptions opt;
  opt.rank = 1 + (data[0] >> 6);
  opt.autoscaler = (data[0] & 0x20) ? "keda" : "hpa";
  const std::string& target = targets[data[0] % targets.size()];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto files = gpuplan::Emit(text, target, opt, gpuplan::fuzz::BuiltinCatalog());
  gpuplan::fuzz::CheckContract(files);
  if (files) {
    for (const auto& f : *files) {
      for (char c : f.contents) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7F) {
          std::fprintf(stderr, "control character 0x%02x in %s\n", u, f.name.c_str());
          std::abort();
        }
      }
    }
  }
  return 0;
}
