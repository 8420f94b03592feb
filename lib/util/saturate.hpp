#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace ctxkit::util {

// a + b, held at the int64 limits instead of overflowing.
constexpr int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

// a * b, held at the int64 limits instead of overflowing.
constexpr int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max();
  return r;
}

// A double as int64, truncated toward zero, held at the limits (NaN gives 0) instead of the
// undefined behaviour of an out-of-range conversion.
inline int64_t sat_from_double(double d) {
  if (std::isnan(d)) return 0;
  // 2^63 is exactly representable; everything below it converts.
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

// An unsigned count as int64, held at the maximum.
constexpr int64_t sat_from_unsigned(uint64_t v) {
  return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(v);
}

}  // namespace ctxkit::util
