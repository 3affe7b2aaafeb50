// One-pass lookup of many calibration keys: the wanted keys are hashed into 64 buckets by
// length and first and last character, so each table entry is compared with the one or two
// wanted keys of its bucket instead of every key scanning the whole table.
#include "estimate/calibration_lookup.h"

#include <array>

namespace gpuplan::internal {

namespace {

constexpr std::size_t kBuckets = 64;
constexpr std::size_t kMaxKeys = 64;

std::size_t Bucket(std::string_view k) {
  if (k.empty()) return 0;
  return (k.size() * 31 + static_cast<unsigned char>(k.front()) * 7 +
          static_cast<unsigned char>(k.back())) %
         kBuckets;
}

}  // namespace

void GetAll(const Calibration& cal, const CalKey* keys, double* out, std::size_t n) {
  if (n > kMaxKeys) {  // not used by the estimators; the plain lookups give the same values
    for (std::size_t i = 0; i < n; ++i) out[i] = cal.Get(keys[i].key, keys[i].fallback);
    return;
  }
  std::array<int, kBuckets> head;
  head.fill(-1);
  std::array<int, kMaxKeys> next{};
  std::array<bool, kMaxKeys> found{};
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = keys[i].fallback;
    const std::size_t b = Bucket(keys[i].key);
    next[i] = head[b];
    head[b] = static_cast<int>(i);
  }
  std::size_t remaining = n;
  for (const auto& e : cal.entries) {
    if (remaining == 0) break;
    for (int j = head[Bucket(e.key)]; j >= 0; j = next[static_cast<std::size_t>(j)]) {
      const auto u = static_cast<std::size_t>(j);
      if (!found[u] && keys[u].key == e.key) {  // the first entry of a key wins, as in Get
        out[u] = e.value;
        found[u] = true;
        --remaining;
      }
    }
  }
}

}  // namespace gpuplan::internal
