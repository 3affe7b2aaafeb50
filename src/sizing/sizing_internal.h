// Private to src/sizing: unit formatting of the rationale lines and the hardware constants
// shared by the policies and instance check (sizing.cc) and the bill of materials (bom.cc).
#pragma once

#include <fmt/format.h>

#include <string>

#include "gpuplan/units.h"

namespace gpuplan::sizing_internal {

// A9: one local NVMe drive reads ~7 GB/s.
inline constexpr BytesPerSec kLocalNvmeDriveBw = GBps(7);
// CheckHost: RAM within 5% below the need is accepted, as RoundRamToDimms rounds (A7).
inline constexpr double kRamTolerance = 0.05;

// `v` with at most `decimals` decimals, trailing zeros dropped: 4.24, 1600, 0.5.
inline std::string Num(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}
inline std::string Mem(Bytes b) { return Num(ToGiB(b), 1) + " GiB"; }
inline std::string Disk(Bytes b) {
  double gb = ToGB(b);
  if (gb >= 1000) return Num(gb / 1000, 2) + " TB";
  return Num(gb, 0) + " GB";
}
inline std::string Bw(BytesPerSec r) { return Num(r.value() / 1e9, 2) + " GB/s"; }
// A read rate in the unit that keeps it readable: KB/s for token streams, GB/s for images.
inline std::string Rate(BytesPerSec r) {
  const double v = r.value();
  if (v >= 1e9) return Num(v / 1e9, 2) + " GB/s";
  if (v >= 1e6) return Num(v / 1e6, 1) + " MB/s";
  return Num(v / 1e3, 1) + " KB/s";
}
inline std::string Net(BitsPerSec r) { return Num(r.value() / 1e9, 0) + " Gbit/s"; }
inline constexpr Bytes TB(double x) { return GB(x * 1000); }

}  // namespace gpuplan::sizing_internal
