// Unit-carrying value types. Every quantity is stored in its SI base unit (bytes, FLOP, seconds,
// USD) inside a distinct type, so that `Bytes + Seconds` does not compile and conversions are
// written once. Zero cost: each type is one double.
#pragma once

#include <string_view>

#include <optional>

#include <compare>
#include <cstdint>

namespace gpuplan {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : v_(v) {}
  constexpr double value() const { return v_; }

  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v_ + b.v_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v_ - b.v_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.v_ / k); }
  // Ratio of two quantities of the same unit is a plain number.
  friend constexpr double operator/(Quantity a, Quantity b) { return a.v_ / b.v_; }
  constexpr Quantity& operator+=(Quantity b) {
    v_ += b.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity b) {
    v_ -= b.v_;
    return *this;
  }
  friend constexpr auto operator<=>(const Quantity&, const Quantity&) = default;

 private:
  double v_ = 0.0;
};

using Bytes = Quantity<struct BytesTag>;
using BytesPerSec = Quantity<struct BytesPerSecTag>;
using Flop = Quantity<struct FlopTag>;
using FlopPerSec = Quantity<struct FlopPerSecTag>;
using Seconds = Quantity<struct SecondsTag>;
using Watts = Quantity<struct WattsTag>;
using BitsPerSec = Quantity<struct BitsPerSecTag>;

static_assert(sizeof(Bytes) == sizeof(double));

constexpr Seconds operator/(Bytes b, BytesPerSec r) { return Seconds(b.value() / r.value()); }
constexpr Seconds operator/(Flop f, FlopPerSec r) { return Seconds(f.value() / r.value()); }
constexpr Bytes operator*(BytesPerSec r, Seconds s) { return Bytes(r.value() * s.value()); }

// Binary and decimal sizes. GiB is not GB: GiB(80) is 85.9 GB.
constexpr double kBytesPerGiB = 1073741824.0;
constexpr double kBytesPerMiB = 1048576.0;
constexpr double kBytesPerGB = 1e9;
constexpr Bytes GiB(double x) { return Bytes(x * kBytesPerGiB); }
constexpr Bytes MiB(double x) { return Bytes(x * kBytesPerMiB); }
constexpr Bytes GB(double x) { return Bytes(x * kBytesPerGB); }
constexpr double ToGiB(Bytes b) { return b.value() / kBytesPerGiB; }
constexpr double ToMiB(Bytes b) { return b.value() / kBytesPerMiB; }
constexpr double ToGB(Bytes b) { return b.value() / kBytesPerGB; }
constexpr BytesPerSec GBps(double x) { return BytesPerSec(x * 1e9); }
constexpr FlopPerSec TFLOPps(double x) { return FlopPerSec(x * 1e12); }
constexpr BitsPerSec Gbps(double x) { return BitsPerSec(x * 1e9); }
constexpr BytesPerSec ToBytesPerSec(BitsPerSec b) { return BytesPerSec(b.value() / 8.0); }

// Money: a price is an amount in a named currency per hour. Amounts of different currencies
// must be converted explicitly (cost/currency), so the currency travels with the number.
enum class Currency : std::uint8_t { kUsd, kCny };
// "USD" or "CNY".
const char* CurrencyCode(Currency c);
// "usd", "$" -> USD; "cny", "rmb", "yuan" -> CNY (case-insensitive, trimmed).
std::optional<Currency> ParseCurrency(std::string_view s);

struct Money {
  double amount = 0.0;
  Currency currency = Currency::kUsd;
};

}  // namespace gpuplan
