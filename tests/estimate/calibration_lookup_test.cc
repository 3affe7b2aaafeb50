// GetAll (one pass over the calibration table) must give exactly what Calibration::Get gives
// key by key: present keys, absent keys (fallback), duplicate rows (the first wins), repeated
// wanted keys, and more keys than its bucket table holds.
#include "estimate/calibration_lookup.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuplan {
namespace {

std::vector<internal::CalKey> KeysOf(const Calibration& cal) {
  std::vector<internal::CalKey> keys;
  for (const auto& e : cal.entries) keys.push_back({e.key, -1.0});
  return keys;
}

void ExpectSameAsGet(const Calibration& cal, const std::vector<internal::CalKey>& keys) {
  std::vector<double> out(keys.size(), -7.0);
  internal::GetAll(cal, keys.data(), out.data(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(out[i], cal.Get(keys[i].key, keys[i].fallback)) << keys[i].key;
  }
}

TEST(CalibrationLookup, EveryBuiltinKeyMatchesGet) {
  const Calibration& cal = DefaultCalibration();
  ASSERT_GT(cal.entries.size(), 20u);
  auto keys = KeysOf(cal);
  // In chunks (the step constants look up 24 at a time), and all at once (over the bucket
  // table's 64: the plain lookups).
  for (size_t at = 0; at < keys.size(); at += 24) {
    const size_t n = std::min<size_t>(24, keys.size() - at);
    ExpectSameAsGet(cal, std::vector<internal::CalKey>(keys.begin() + static_cast<long>(at),
                                                       keys.begin() + static_cast<long>(at + n)));
  }
  ExpectSameAsGet(cal, keys);
}

TEST(CalibrationLookup, AbsentDuplicateAndRepeatedKeys) {
  Calibration cal;
  cal.entries = {{"hbm_efficiency", 0.7, "a"},
                 {"kernel_overhead_us", 3, "a"},
                 {"hbm_efficiency", 0.5, "later row"},
                 {"", 9, "empty key"}};
  const std::vector<internal::CalKey> keys = {{"hbm_efficiency", 0.8},
                                              {"not_a_key", 42},
                                              {"kernel_overhead_us", 4},
                                              {"hbm_efficiency", 0.1},
                                              {"", 1}};
  std::vector<double> out(keys.size());
  internal::GetAll(cal, keys.data(), out.data(), keys.size());
  EXPECT_EQ(out[0], 0.7);  // the first row of a key wins
  EXPECT_EQ(out[1], 42);   // absent: the fallback
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(out[3], 0.7);  // a key asked twice gets the same row
  EXPECT_EQ(out[4], 9);
  ExpectSameAsGet(cal, keys);
}

}  // namespace
}  // namespace gpuplan
