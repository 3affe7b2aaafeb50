// Shared pieces of the libFuzzer harnesses (docs/reliability.md): the built-in catalog loaded
// once, a scratch file for readers that take a path, and the contract every harness asserts:
// an Error never has code kInternal (exit 70 on user input) and always names a field.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/catalog.h"
#include "gpuplan/result.h"

namespace gpuplan::fuzz {

inline const Catalog& BuiltinCatalog() {
  static const Catalog* cat = [] {
    auto c = LoadBuiltinCatalog();
    if (!c) std::abort();
    return new Catalog(std::move(*c));
  }();
  return *cat;
}

// The built-in catalog with only a few instance rows per cloud (all of `keep_cloud`'s): what the
// catalog-override harnesses copy per execution. Copying all ~320 rows per input made them the
// slowest harnesses (docs/reliability.md); the override code sees the same accelerators, CPUs,
// rates and row layout.
inline const Catalog& SmallBuiltinCatalog(std::string_view keep_cloud) {
  static const Catalog* cat = [keep_cloud] {
    auto* c = new Catalog(BuiltinCatalog());
    std::vector<InstanceType> kept;
    std::string last;
    int n = 0;
    for (auto& i : c->instances) {
      n = i.cloud == last ? n + 1 : 0;
      last = i.cloud;
      if (i.cloud == keep_cloud || n < 3) kept.push_back(std::move(i));
    }
    c->instances = std::move(kept);
    return c;
  }();
  return *cat;
}

// A per-process scratch directory for harnesses whose reader takes a path: on tmpfs
// (/dev/shm) where there is one, so the per-input write and truncate stay out of the disk's
// journal (~10% of the path-reading harnesses' time on ext4).
inline std::string ScratchDir() {
  static const std::string dir = [] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string d = std::string(base) + "/gpuplan_fuzz_" + std::to_string(getpid());
    std::string cmd = "mkdir -p " + d;
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

inline std::string WriteScratch(const std::string& name, std::string_view data) {
  const std::string path = ScratchDir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!data.empty()) std::fwrite(data.data(), 1, data.size(), f);
  std::fclose(f);
  return path;
}

// The input contract: user input never produces an internal error, and errors name a field.
template <class T>
void CheckContract(const T& r) {
  if (r) return;
  if (r.error().code == ErrorCode::kInternal) {
    std::fprintf(stderr, "internal error on input: %s\n", r.error().ToString().c_str());
    std::abort();
  }
  if (r.error().field.empty()) {
    std::fprintf(stderr, "error without a field: %s\n", r.error().ToString().c_str());
    std::abort();
  }
}

}  // namespace gpuplan::fuzz
