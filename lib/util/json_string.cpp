#include "util/json_string.hpp"

#include <array>
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

// Whether any of the 8 bytes of `w` is a control character, '"', '\\' or beyond ASCII (may flag
// a block that holds none when a borrow crosses bytes; then the block is looked at byte by byte).
bool needs_a_look(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t control = (w - kOnes * 0x20) & ~w & kHigh;
  return (control | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) | (w & kHigh)) != 0;
}
}  // namespace

bool append_json_string(std::string& out, std::string_view s) {
  const size_t start = out.size();
  out.reserve(start + s.size() + 2);
  out += '"';
  const char* p = s.data();
  const size_t n = s.size();
  bool utf8_checked = false;
  // Written a slice at a time into a buffer that holds a slice's worst case (every byte \u00xx),
  // then appended: no capacity check per byte, and no output larger than the text needs.
  constexpr size_t kSlice = 512;
  char buf[kSlice * 6];
  for (size_t slice = 0; slice < n; slice += kSlice) {
    const size_t end = slice + kSlice < n ? slice + kSlice : n;
    char* d = buf;
    size_t i = slice;
    while (i < end) {
      if (i + 8 <= end) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        if (!needs_a_look(w)) {
          std::memcpy(d, p + i, 8);
          d += 8;
          i += 8;
          continue;
        }
      }
      const size_t stop = i + 8 <= end ? i + 8 : end;
      for (; i < stop; ++i) {
        const char c = p[i];
        const char kind = kClass[static_cast<unsigned char>(c)];
        if (kind == 0) {
          *d++ = c;
          continue;
        }
        if (kind == 1) {
          if (!utf8_checked) {
            if (!is_valid_utf8(s)) {
              out.resize(start);
              return false;
            }
            utf8_checked = true;
          }
          *d++ = c;
          continue;
        }
        *d++ = '\\';
        if (kind == 'u') {
          static constexpr char kHex[] = "0123456789abcdef";
          const auto u = static_cast<unsigned char>(c);
          *d++ = 'u';
          *d++ = '0';
          *d++ = '0';
          *d++ = kHex[u >> 4];
          *d++ = kHex[u & 0xF];
        } else {
          *d++ = kind;
        }
      }
    }
    out.append(buf, static_cast<size_t>(d - buf));
  }
  out += '"';
  return true;
}

}  // namespace ctxkit::util
