#include "trim/json_text.hpp"

#include <cstdint>
#include <cstring>
#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <nlohmann/json.hpp>

#include "util/json_io.hpp"

namespace ctxkit::trim {

namespace {
// Length of the escape sequence at s[i] ('\\' there), and whether it is a high surrogate
// followed by its low half (one code point in 12 bytes).
size_t escape_length(std::string_view s, size_t i) {
  if (i + 1 >= s.size()) return s.size() - i;
  if (s[i + 1] != 'u') return 2;
  if (i + 6 > s.size()) return s.size() - i;
  auto hex4 = [&](size_t at) {
    unsigned v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      char c = s[k];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
    }
    return v;
  };
  unsigned u = hex4(i + 2);
  if (u >= 0xD800 && u <= 0xDBFF && i + 12 <= s.size() && s[i + 6] == '\\' && s[i + 7] == 'u') {
    unsigned lo = hex4(i + 8);
    if (lo >= 0xDC00 && lo <= 0xDFFF) return 12;
  }
  return 6;
}

size_t utf8_length(uint8_t c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;
}
}  // namespace

size_t json_string_length(std::string_view s) {
  // Code points = bytes that are not UTF-8 continuation bytes, corrected for escapes, whose 2, 6
  // or 12 ASCII bytes are one character. One branch-free loop (the compiler vectorizes it) counts
  // both; when no escaped backslash or \u escape occurs, every backslash starts a 2-byte escape
  // and that count is exact. Otherwise the escapes are walked one by one.
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  if (n == 0) return 0;
  size_t non_continuation = 0, backslashes = 0, special = 0;
  size_t i = 0;
#ifdef __AVX2__
  const __m256i kBackslash = _mm256_set1_epi8('\\'), kU = _mm256_set1_epi8('u');
  const __m256i kTop = _mm256_set1_epi8(static_cast<char>(0xC0)),
                kCont = _mm256_set1_epi8(static_cast<char>(0x80));
  for (; i + 33 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i next = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 1));
    const auto cont = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(v, kTop), kCont)));
    const auto bs = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, kBackslash)));
    const auto after = static_cast<uint32_t>(_mm256_movemask_epi8(
        _mm256_or_si256(_mm256_cmpeq_epi8(next, kBackslash), _mm256_cmpeq_epi8(next, kU))));
    non_continuation += 32 - static_cast<size_t>(__builtin_popcount(cont));
    backslashes += static_cast<size_t>(__builtin_popcount(bs));
    special += static_cast<size_t>(__builtin_popcount(bs & after));
  }
#endif
  for (; i + 1 < n; ++i) {
    const unsigned c = p[i], next = p[i + 1];
    non_continuation += (c & 0xC0) != 0x80;
    backslashes += c == '\\';
    special += (c == '\\') & ((next == '\\') | (next == 'u'));
  }
  non_continuation += (p[n - 1] & 0xC0) != 0x80;
  backslashes += p[n - 1] == '\\';
  if (backslashes == 0) return non_continuation;
  if (special == 0) return non_continuation - backslashes;
  size_t count = non_continuation;
  const char* base = s.data();
  const char* end = base + n;
  for (const char* q = base; q < end;) {
    q = static_cast<const char*>(std::memchr(q, '\\', static_cast<size_t>(end - q)));
    if (q == nullptr) break;
    size_t len = escape_length(s, static_cast<size_t>(q - base));
    count -= len - 1;
    q += len;
  }
  return count;
}

size_t json_string_prefix(std::string_view s, size_t chars) {
  size_t i = 0;
  size_t taken = 0;
  while (i < s.size() && taken < chars) {
    size_t len = s[i] == '\\' ? escape_length(s, i) : utf8_length(static_cast<uint8_t>(s[i]));
    if (i + len > s.size()) break;
    i += len;
    ++taken;
  }
  return i;
}

std::string json_escape(std::string_view text) {
  std::string dumped =
      util::dump_json(nlohmann::json(std::string(text)), -1, util::BadUtf8::replace);
  return dumped.substr(1, dumped.size() - 2);
}

}  // namespace ctxkit::trim
