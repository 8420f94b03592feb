#include "util/json_string.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "util/utf8.hpp"

namespace ctxkit::util {

namespace {
// For each byte: 0 copied as it is, 1 beyond ASCII, else the letter of its short escape, or 'u'.
constexpr std::array<char, 256> kClass = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<size_t>(c)] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  for (int c = 0x80; c < 0x100; ++c) t[static_cast<size_t>(c)] = 1;
  return t;
}();

constexpr uint64_t kOnes = 0x0101010101010101ull, kLow7 = 0x7F7F7F7F7F7F7F7Full,
                   kHigh = 0x8080808080808080ull;

// The high bit of each byte set where that byte of `x` is zero, exactly (no borrow between bytes).
uint64_t zero_bytes(uint64_t x) {
  return ~(((x & kLow7) + kLow7) | x) & kHigh;
}

// The high bit of each byte set where that byte must be escaped: a control character, '"' or
// '\\' (bytes beyond ASCII are not flagged: they are copied as they are).
uint64_t escapes(uint64_t x) {
  const uint64_t control = ~((x & kLow7) + kOnes * 0x60) & ~x & kHigh;
  return control | zero_bytes(x ^ (kOnes * '"')) | zero_bytes(x ^ (kOnes * '\\'));
}

bool has_high_byte(std::string_view s) {
  size_t i = 0;
  uint64_t any = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    any |= w;
  }
  for (; i < s.size(); ++i) any |= static_cast<unsigned char>(s[i]);
  return (any & kHigh) != 0;
}

// Writes the escape of `c` (kClass[c] is neither 0 nor 1) at `d`; returns the end.
char* write_escape(char* d, unsigned char c) {
  const char kind = kClass[c];
  *d++ = '\\';
  if (kind != 'u') {
    *d++ = kind;
    return d;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  *d++ = 'u';
  *d++ = '0';
  *d++ = '0';
  *d++ = kHex[c >> 4];
  *d++ = kHex[c & 0xF];
  return d;
}
}  // namespace

bool append_json_string(std::string& out, std::string_view s) {
  if (has_high_byte(s) && !is_valid_utf8(s)) return false;
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  const char* p = s.data();
  const size_t n = s.size();
  // Written a slice at a time into a buffer that holds a slice's worst case (every byte \u00xx,
  // and 8 bytes of slack for whole-word copies), then appended.
  constexpr size_t kSlice = 512;
  char buf[kSlice * 6 + 8];
  for (size_t slice = 0; slice < n; slice += kSlice) {
    const size_t end = slice + kSlice < n ? slice + kSlice : n;
    char* d = buf;
    size_t i = slice;
    if constexpr (std::endian::native == std::endian::little) {
      // 8 bytes at a time: copied whole when none needs escaping, else run by run between the
      // flagged bytes (the lowest flagged bit is the first byte in memory).
      for (; i + 8 <= end; i += 8) {
        char block[16] = {};
        std::memcpy(block, p + i, 8);
        uint64_t w;
        std::memcpy(&w, block, 8);
        uint64_t flagged = escapes(w);
        size_t from = 0;
        while (flagged != 0) {
          const auto at = static_cast<size_t>(std::countr_zero(flagged)) >> 3;
          std::memcpy(d, block + from, 8);  // the run, and bytes the next write covers
          d += at - from;
          d = write_escape(d, static_cast<unsigned char>(block[at]));
          from = at + 1;
          flagged &= flagged - 1;
        }
        std::memcpy(d, block + from, 8);
        d += 8 - from;
      }
    }
    for (; i < end; ++i) {
      const auto c = static_cast<unsigned char>(p[i]);
      if (kClass[c] == 0 || kClass[c] == 1)
        *d++ = static_cast<char>(c);
      else
        d = write_escape(d, c);
    }
    out.append(buf, static_cast<size_t>(d - buf));
  }
  out += '"';
  return true;
}

}  // namespace ctxkit::util
