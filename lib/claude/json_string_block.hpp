#pragma once

// Skipping the content of a JSON string 64 bytes at a time, for the hook payload scan: a block's
// quotes, backslashes, control characters and escape letters become 64-bit masks (one bit per
// byte), and the escapes are resolved with bit arithmetic instead of one byte at a time. Whole
// runs of blocks go through skip_run, which carries an escape over a block's end; checked_prefix
// looks at one block at a time where a run ends. An `Edit` payload of source code has an escape
// every few bytes, so stopping at each one would cost several times what reading the payload
// does. The content is also checked to be UTF-8 (RFC 8259 8.1): a block without a byte of 0x80 or
// more needs nothing more; one with such bytes is checked whole, with vectors where there are.

#include <cstddef>
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

// Each instruction set's kernel has names of its own, so that files built for different ones (the
// tests build each) never share a definition.
#if defined(__AVX512BW__) && defined(__AVX512VL__)
#define CTXKIT_JSON_BLOCK_ISA avx512
#elif defined(__AVX2__)
#define CTXKIT_JSON_BLOCK_ISA avx2
#elif defined(__SSE2__)
#define CTXKIT_JSON_BLOCK_ISA sse2
#else
#define CTXKIT_JSON_BLOCK_ISA bytewise
#endif

namespace ctxkit::claude::json_block {
inline namespace CTXKIT_JSON_BLOCK_ISA {

inline constexpr size_t kBlock = 64;

// The instruction set this kernel was built for: avx512, avx2, sse2 or bytewise.
#define CTXKIT_JSON_BLOCK_NAME_(isa) #isa
#define CTXKIT_JSON_BLOCK_NAME(isa) CTXKIT_JSON_BLOCK_NAME_(isa)
inline constexpr const char* kKernel = CTXKIT_JSON_BLOCK_NAME(CTXKIT_JSON_BLOCK_ISA);

// One bit per byte of a 64-byte block.
struct Masks {
  uint64_t special = 0;    // '"' or below 0x20: where plain content ends
  uint64_t backslash = 0;  // '\\'
  uint64_t escapable =
      0;           // a letter that may follow a backslash, other than '\\' itself: " / b f n r t u
  uint64_t u = 0;  // 'u'
  uint64_t high = 0;  // 0x80 or more, part of a UTF-8 sequence (the reference's only)
};

// 0-9 a-f A-F, by table (checked four at a time after each \u).
inline constexpr auto kHexDigit = [] {
  struct Table {
    bool hex[256] = {};
  } t;
  for (int c = '0'; c <= '9'; ++c) t.hex[c] = true;
  for (int c = 'a'; c <= 'f'; ++c) t.hex[c] = true;
  for (int c = 'A'; c <= 'F'; ++c) t.hex[c] = true;
  return t;
}();
inline bool is_hex(unsigned char c) {
  return kHexDigit.hex[c];
}
// Whether the four bytes from q are hex digits (those of a \u escape).
inline bool hex4(const char* q) {
  auto h = [&](int k) { return is_hex(static_cast<unsigned char>(q[k])); };
  return h(0) && h(1) && h(2) && h(3);
}
inline bool is_escapable(unsigned char c) {
  return c == '"' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't' ||
         c == 'u';
}

// The masks byte by byte: the reference the vector versions are tested against.
inline Masks masks_scalar(const char* p) {
  Masks m;
  for (size_t i = 0; i < kBlock; ++i) {
    auto c = static_cast<unsigned char>(p[i]);
    uint64_t bit = uint64_t{1} << i;
    if (c == '"' || c < 0x20) m.special |= bit;
    if (c == '\\') m.backslash |= bit;
    if (is_escapable(c)) m.escapable |= bit;
    if (c == 'u') m.u |= bit;
    if (c >= 0x80) m.high |= bit;
  }
  return m;
}

// UTF-8 of string content, checked in order over any number of calls: what the bytes checked so
// far leave unfinished (a lead byte and some of its continuation bytes, at most three bytes).
struct Utf8State {
  uint32_t pending = 0;  // the unfinished sequence's bytes, its first in the low byte
  uint32_t length = 0;   // how many (0: none)
  bool operator==(const Utf8State&) const = default;
};

// The length of the sequence lead byte `c` starts (2-4), or 0 for a byte that starts none (ASCII,
// a continuation byte, C0, C1, F5-FF).
inline uint32_t utf8_sequence_length(unsigned char c) {
  return c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
}

// Whether `b` may follow lead byte `lead` as its first continuation byte: no overlong form (E0,
// F0), no surrogate (ED), nothing past U+10FFFF (F4).
inline bool utf8_second_byte(unsigned char lead, unsigned char b) {
  if (lead == 0xE0) return b >= 0xA0 && b <= 0xBF;
  if (lead == 0xED) return b >= 0x80 && b <= 0x9F;
  if (lead == 0xF0) return b >= 0x90 && b <= 0xBF;
  if (lead == 0xF4) return b >= 0x80 && b <= 0x8F;
  return (b & 0xC0) == 0x80;
}

// Checks p[0, n) as what follows the bytes `s` has seen, byte by byte (eight at a time while they
// are ASCII): returns n when they are well-formed so far, `s` then holding what their end leaves
// unfinished, or the offset of the first byte that makes them ill-formed (`s` is then of no use).
// The reference of the vector check, and the check of short spans.
inline size_t utf8_scalar(const char* p, size_t n, Utf8State& s) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(p[k]); };
  size_t i = 0;
  while (s.length != 0) {  // the sequence an earlier call left unfinished
    if (i == n) return n;
    const auto lead = static_cast<unsigned char>(s.pending & 0xFF);
    const uint32_t need = utf8_sequence_length(lead);
    if (need == 0 || !(s.length == 1 ? utf8_second_byte(lead, at(i)) : (at(i) & 0xC0) == 0x80))
      return i;
    s.pending |= uint32_t{at(i)} << (8 * s.length);
    ++i;
    if (++s.length == need) s = {};
  }
  while (i < n) {
    if (n - i >= 8) {
      uint64_t word;
      __builtin_memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char c = at(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    const uint32_t need = utf8_sequence_length(c);
    if (need == 0) return i;
    uint32_t k = 1;
    for (; k < need && i + k < n; ++k)
      if (!(k == 1 ? utf8_second_byte(c, at(i + k)) : (at(i + k) & 0xC0) == 0x80)) return i + k;
    if (k < need) {  // cut by the end: finished by the next call
      s.length = k;
      s.pending = 0;
      for (uint32_t j = 0; j < k; ++j) s.pending |= uint32_t{at(i + j)} << (8 * j);
      return n;
    }
    i += need;
  }
  return n;
}

// What the well-formed bytes that end at `end` (at least three readable before it) leave
// unfinished: the last lead byte among the last three, unless its sequence ends by `end`.
inline Utf8State utf8_unfinished_before(const char* end) {
  auto at = [&](int k) { return static_cast<uint32_t>(static_cast<unsigned char>(end[k])); };
  if (at(-1) >= 0xC0) return {at(-1), 1};
  if (at(-2) >= 0xE0) return {at(-2) | at(-1) << 8, 2};
  if (at(-3) >= 0xF0) return {at(-3) | at(-2) << 8 | at(-1) << 16, 3};
  return {};
}

#if defined(__AVX2__)
// A byte's classes by nibble lookup: a byte is in a class when the class's bit is set both in the
// row of its low nibble and in the row of its high nibble.
struct NibbleTables {
  __m256i lo, hi;
};
inline __m256i classes_of(__m256i x, NibbleTables t) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(x, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble);
  return _mm256_and_si256(_mm256_shuffle_epi8(t.lo, lo), _mm256_shuffle_epi8(t.hi, hi));
}

// Escape letters: the high nibble picks a group (bit 0, 2: '"' '/'; bit 1, 6: 'b' 'f' 'n'; bit 2,
// 7: 'r' 't' 'u'), the low nibble must belong to it.
inline NibbleTables escape_letter_tables() {
  return {_mm256_setr_epi8(0, 0, 7, 0, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, 2, 1,  //
                           0, 0, 7, 0, 4, 4, 2, 0, 0, 0, 0, 0, 0, 0, 2, 1),
          _mm256_setr_epi8(0, 0, 1, 0, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0,  //
                           0, 0, 1, 0, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0)};
}

// The classes of a run (skip_run): the escape letters as above with bit 3 for '\\' (5), which
// the carried escape state marks as escaped too, and bit 7 for 'u'.
inline NibbleTables run_class_tables() {
  constexpr char U = static_cast<char>(0x80);
  return {_mm256_setr_epi8(0, 0, 7, 0, 4, 4 | U, 2, 0, 0, 0, 0, 0, 8, 0, 2, 1,  //
                           0, 0, 7, 0, 4, 4 | U, 2, 0, 0, 0, 0, 0, 8, 0, 2, 1),
          _mm256_setr_epi8(0, 0, 1, 0, 0, 8, 2, 4 | U, 0, 0, 0, 0, 0, 0, 0, 0,  //
                           0, 0, 1, 0, 0, 8, 2, 4 | U, 0, 0, 0, 0, 0, 0, 0, 0)};
}
#endif

#if defined(__AVX512BW__) && defined(__AVX512VL__)
// AVX-512 on 32-byte vectors: a compare writes its 32 bits straight into a mask register, and two
// such masks become one 64-bit mask in one instruction (no movemask, shift and or per half). On
// 64-byte vectors the same kernel measured slower.
inline __m256i half_at(const char* p, int half) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half));
}
inline uint64_t join_halves(__mmask32 low, __mmask32 high) {
  return _cvtmask64_u64(_mm512_kunpackd(high, low));
}

// special and backslash: what every block needs. '"' (0x22) and the bytes below 0x20 are the
// bytes that x ^ 2 maps to 0x20 or below.
inline Masks plain_masks(const char* p) {
  const __m256i two = _mm256_set1_epi8(2);
  const __m256i space = _mm256_set1_epi8(0x20);
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i low = half_at(p, 0), high = half_at(p, 1);
  Masks m;
  m.special = join_halves(_mm256_cmple_epu8_mask(_mm256_xor_si256(low, two), space),
                          _mm256_cmple_epu8_mask(_mm256_xor_si256(high, two), space));
  m.backslash =
      join_halves(_mm256_cmpeq_epi8_mask(low, backslash), _mm256_cmpeq_epi8_mask(high, backslash));
  return m;
}

// plain_masks for a run (skip_run): `special` also has the bytes of 0x80 or more, at no cost (a
// signed compare), so that a block of ASCII goes by as before and one with such bytes stops to
// have them checked.
inline Masks run_plain_masks(const char* p) {
  const __m256i two = _mm256_set1_epi8(2);
  const __m256i space = _mm256_set1_epi8(0x20);
  const __m256i backslash = _mm256_set1_epi8('\\');
  const __m256i low = half_at(p, 0), high = half_at(p, 1);
  Masks m;
  m.special = join_halves(_mm256_cmple_epi8_mask(_mm256_xor_si256(low, two), space),
                          _mm256_cmple_epi8_mask(_mm256_xor_si256(high, two), space));
  m.backslash =
      join_halves(_mm256_cmpeq_epi8_mask(low, backslash), _mm256_cmpeq_epi8_mask(high, backslash));
  return m;
}

// The bytes of 0x80 or more.
inline uint64_t high_bytes(const char* p) {
  return join_halves(_mm256_movepi8_mask(half_at(p, 0)), _mm256_movepi8_mask(half_at(p, 1)));
}

// escapable and u: only for a block with escapes.
inline void add_escape_masks(const char* p, Masks& m) {
  const NibbleTables tables = escape_letter_tables();
  const __m256i u = _mm256_set1_epi8('u');
  const __m256i low = half_at(p, 0), high = half_at(p, 1);
  const __m256i cl = classes_of(low, tables), ch = classes_of(high, tables);
  m.escapable = join_halves(_mm256_test_epi8_mask(cl, cl), _mm256_test_epi8_mask(ch, ch));
  m.u = join_halves(_mm256_cmpeq_epi8_mask(low, u), _mm256_cmpeq_epi8_mask(high, u));
}
#elif defined(__AVX2__)
// The top bit of each of 32 bytes.
inline uint64_t bits32(__m256i v) {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(v)));
}

// special and backslash of the 32 bytes `x`, at bit `shift`.
inline void add_plain_half(__m256i x, int shift, Masks& m) {
  __m256i quote = _mm256_cmpeq_epi8(x, _mm256_set1_epi8('"'));
  __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, _mm256_set1_epi8(0x1F)), x);
  m.special |= bits32(_mm256_or_si256(quote, control)) << shift;
  m.backslash |= bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\'))) << shift;
}

// special and backslash: what every block needs.
inline Masks plain_masks(const char* p) {
  Masks m;
  for (int half = 0; half < 2; ++half)
    add_plain_half(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half)), 32 * half,
                   m);
  return m;
}

// plain_masks for a run (skip_run): `special` also has the bytes of 0x80 or more, in one signed
// compare (x < 0x20 as a signed byte) where the unsigned one takes two, so that a block of ASCII
// goes by as before and one with such bytes stops to have them checked.
inline Masks run_plain_masks(const char* p) {
  Masks m;
  for (int half = 0; half < 2; ++half) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half));
    const __m256i quote = _mm256_cmpeq_epi8(x, _mm256_set1_epi8('"'));
    const __m256i control_or_high = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), x);
    m.special |= bits32(_mm256_or_si256(quote, control_or_high)) << (32 * half);
    m.backslash |= bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\'))) << (32 * half);
  }
  return m;
}

// The bytes of 0x80 or more.
inline uint64_t high_bytes(const char* p) {
  return bits32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))) |
         bits32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))) << 32;
}

// escapable and u: only for a block with escapes.
inline void add_escape_masks(const char* p, Masks& m) {
  const NibbleTables tables = escape_letter_tables();
  for (int half = 0; half < 2; ++half) {
    __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half));
    const int shift = 32 * half;
    m.u |= bits32(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('u'))) << shift;
    __m256i group = classes_of(x, tables);
    m.escapable |= (~bits32(_mm256_cmpeq_epi8(group, _mm256_setzero_si256())) & 0xFFFFFFFFull)
                   << shift;
  }
}
#elif defined(__SSE2__)
inline Masks plain_masks(const char* p) {
  Masks m;
  for (int part = 0; part < 4; ++part) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
    auto bits = [](__m128i v) {
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(v)));
    };
    const int shift = 16 * part;
    __m128i quote = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
    __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
    m.special |= bits(_mm_or_si128(quote, control)) << shift;
    m.backslash |= bits(_mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))) << shift;
  }
  return m;
}

inline void add_escape_masks(const char* p, Masks& m) {
  for (int part = 0; part < 4; ++part) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
    auto bits = [](__m128i v) {
      return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(v)));
    };
    auto eq = [&](char c) { return _mm_cmpeq_epi8(x, _mm_set1_epi8(c)); };
    const int shift = 16 * part;
    __m128i u = eq('u');
    m.u |= bits(u) << shift;
    __m128i esc =
        _mm_or_si128(_mm_or_si128(_mm_or_si128(eq('"'), eq('/')), _mm_or_si128(eq('b'), eq('f'))),
                     _mm_or_si128(_mm_or_si128(eq('n'), eq('r')), _mm_or_si128(eq('t'), u)));
    m.escapable |= bits(esc) << shift;
  }
}
#else
inline Masks plain_masks(const char* p) {
  return masks_scalar(p);
}
inline void add_escape_masks(const char* p, Masks& m) {
  Masks all = masks_scalar(p);
  m.escapable = all.escapable;
  m.u = all.u;
}
#endif

// Every mask of a block but hex (which checked_prefix reads from the bytes).
inline Masks masks(const char* p) {
  Masks m = plain_masks(p);
  add_escape_masks(p, m);
  return m;
}

// How many bytes from the start of the 64-byte block at `p` are string content that is already
// checked: plain bytes and whole, well-formed escapes (`\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`
// `\uXXXX`). The block must start outside an escape. Below 64 the byte there needs the caller's
// own look: the closing quote, a control character, an ill-formed escape (at its backslash) or
// an escape that does not end inside the block (at its backslash; the result is then at least
// 59, so a caller that starts its next block there always moves on).
inline size_t checked_prefix(const char* p) {
  constexpr uint64_t kEven = 0x5555555555555555ull;
  constexpr uint64_t kOdd = ~kEven;
  Masks m = plain_masks(p);
  uint64_t backslash = m.backslash;
  if (backslash == 0) {
    uint64_t stop = m.special;
    return stop == 0 ? kBlock : static_cast<size_t>(__builtin_ctzll(stop));
  }
  size_t limit = kBlock;
  if (backslash >> 63) {
    // A run of backslashes reaches the block's end: its last one starts an escape whose letter is
    // in the next block when the run is odd.
    uint64_t others = ~backslash;
    size_t start = others == 0 ? 0 : static_cast<size_t>(64 - __builtin_clzll(others));
    if ((kBlock - start) % 2 == 1) limit = kBlock - 1;
  }
  // Runs of backslashes pair up from their start; a run of odd length escapes the byte after it.
  // Adding a run's first bit to the mask carries through the run onto the byte after it.
  uint64_t starts = backslash & ~(backslash << 1);
  uint64_t after_even = (backslash + (starts & kEven)) & ~backslash;
  uint64_t after_odd = (backslash + (starts & kOdd)) & ~backslash;
  uint64_t escaped = (after_even & kOdd) | (after_odd & kEven);
  uint64_t bad = 0;
  if (escaped != 0) {
    add_escape_masks(p, m);
    bad = escaped & ~m.escapable;
    // \u and four hex digits, which must lie in the block; a few per block at most.
    for (uint64_t u = escaped & m.u; u != 0; u &= u - 1) {
      auto at = static_cast<size_t>(__builtin_ctzll(u));
      if (at + 4 >= kBlock) {
        if (at - 1 < limit) limit = at - 1;
        break;
      }
      if (!hex4(p + at + 1)) bad |= uint64_t{1} << at;
    }
  }
  // An escaped quote is content; an escaped control character is an ill-formed escape, which
  // stops at its backslash, before it.
  uint64_t stop = (m.special & ~escaped) | (bad >> 1);
  size_t first = stop == 0 ? kBlock : static_cast<size_t>(__builtin_ctzll(stop));
  return first < limit ? first : limit;
}

// A run of whole blocks, checked with the state an escape leaves at a block's end (its letter in
// the next block) carried over instead of stopping there, and with ill-formed escapes gathered
// into one mask that is looked at when the run ends. The run's UTF-8 is checked as it goes, from
// and into `utf8` (skip_run's last argument): up to where the run ends, that being the string's
// end, or the end of its last block.
struct RunEnd {
  const char* at;  // where the checked content ends, outside any escape
  bool careful;    // an ill-formed escape or ill-formed UTF-8 lies in the run: check it again from
                   // its start, slowly (the UTF-8 state is then the one at its start)
};

#if defined(__AVX512BW__) && defined(__AVX512VL__)
// escapable, with '\\' (which the carried escape state marks as escaped too), and u: only for a
// block in which an escape starts or continues.
inline void add_run_classes(const char* p, Masks& m) {
  const NibbleTables tables = run_class_tables();
  const __m256i letters = _mm256_set1_epi8(0x0F);
  const __m256i cl = classes_of(half_at(p, 0), tables);
  const __m256i ch = classes_of(half_at(p, 1), tables);
  m.escapable = join_halves(_mm256_test_epi8_mask(cl, letters), _mm256_test_epi8_mask(ch, letters));
  m.u = join_halves(_mm256_movepi8_mask(cl), _mm256_movepi8_mask(ch));
}
#elif defined(__AVX2__)
// escapable, with '\\' (which the carried escape state marks as escaped too), and u: only for a
// block in which an escape starts or continues.
inline void add_run_classes(const char* p, Masks& m) {
  const NibbleTables tables = run_class_tables();
  for (int half = 0; half < 2; ++half) {
    __m256i cls =
        classes_of(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * half)), tables);
    const int shift = 32 * half;
    m.u |= bits32(cls) << shift;
    __m256i letter =
        _mm256_cmpeq_epi8(_mm256_and_si256(cls, _mm256_set1_epi8(0x0F)), _mm256_setzero_si256());
    m.escapable |= (~bits32(letter) & 0xFFFFFFFFull) << shift;
  }
}
#endif

#if defined(__AVX2__)
// The UTF-8 check of Keiser and Lemire ("Validating UTF-8 in less than one instruction per byte",
// 2021): each byte's error bits from three 16-entry look-ups on it and the byte before it (the
// high and low nibbles of the byte before, the high nibble of the byte), plus where a third or
// fourth byte of a sequence must be a continuation byte.

// `input` with the last `n` bytes of `before` in front (the 32 bytes from n bytes before it).
template <int n>
inline __m256i bytes_before(__m256i input, __m256i before) {
  return _mm256_alignr_epi8(input, _mm256_permute2x128_si256(before, input, 0x21), 16 - n);
}

inline __m256i high_nibbles(__m256i x) {
  return _mm256_and_si256(_mm256_srli_epi16(x, 4), _mm256_set1_epi8(0x0F));
}

// The error bits of the 32 bytes `input` that follow the 32 bytes `before`; zero when well-formed.
inline __m256i utf8_errors(__m256i input, __m256i before) {
  constexpr int kTooShort = 1 << 0;      // 11______ 0_______ or 11______ 11______
  constexpr int kTooLong = 1 << 1;       // 0_______ 10______
  constexpr int kOverlong3 = 1 << 2;     // 11100000 100_____
  constexpr int kTooLarge = 1 << 3;      // 11110100 1001____ and above: past U+10FFFF
  constexpr int kSurrogate = 1 << 4;     // 11101101 101_____
  constexpr int kOverlong2 = 1 << 5;     // 1100000_ 10______
  constexpr int kTooLarge1000 = 1 << 6;  // 11110101 1000____ and above
  constexpr int kOverlong4 = 1 << 6;     // 11110000 1000____
  constexpr int kTwoConts = 1 << 7;      // 10______ 10______
  constexpr int kCarry = kTooShort | kTooLong | kTwoConts;  // whatever the low nibble before
  constexpr auto B = [](int v) { return static_cast<char>(v); };
  const __m256i prev1 = bytes_before<1>(input, before);
  const __m256i byte_1_high = _mm256_shuffle_epi8(
      _mm256_setr_epi8(
          B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong),
          B(kTooLong), B(kTwoConts), B(kTwoConts), B(kTwoConts), B(kTwoConts),
          B(kTooShort | kOverlong2), B(kTooShort), B(kTooShort | kOverlong3 | kSurrogate),
          B(kTooShort | kTooLarge | kTooLarge1000 | kOverlong4),  //
          B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong), B(kTooLong),
          B(kTooLong), B(kTwoConts), B(kTwoConts), B(kTwoConts), B(kTwoConts),
          B(kTooShort | kOverlong2), B(kTooShort), B(kTooShort | kOverlong3 | kSurrogate),
          B(kTooShort | kTooLarge | kTooLarge1000 | kOverlong4)),
      high_nibbles(prev1));
  constexpr int kLarge = kCarry | kTooLarge | kTooLarge1000;
  const __m256i byte_1_low = _mm256_shuffle_epi8(
      _mm256_setr_epi8(
          B(kCarry | kOverlong3 | kOverlong2 | kOverlong4), B(kCarry | kOverlong2), B(kCarry),
          B(kCarry), B(kCarry | kTooLarge), B(kLarge), B(kLarge), B(kLarge), B(kLarge), B(kLarge),
          B(kLarge), B(kLarge), B(kLarge), B(kLarge | kSurrogate), B(kLarge), B(kLarge),  //
          B(kCarry | kOverlong3 | kOverlong2 | kOverlong4), B(kCarry | kOverlong2), B(kCarry),
          B(kCarry), B(kCarry | kTooLarge), B(kLarge), B(kLarge), B(kLarge), B(kLarge), B(kLarge),
          B(kLarge), B(kLarge), B(kLarge), B(kLarge | kSurrogate), B(kLarge), B(kLarge)),
      _mm256_and_si256(prev1, _mm256_set1_epi8(0x0F)));
  constexpr int kCont = kTooLong | kOverlong2 | kTwoConts;
  const __m256i byte_2_high = _mm256_shuffle_epi8(
      _mm256_setr_epi8(
          B(kTooShort), B(kTooShort), B(kTooShort), B(kTooShort), B(kTooShort), B(kTooShort),
          B(kTooShort), B(kTooShort), B(kCont | kOverlong3 | kTooLarge1000 | kOverlong4),
          B(kCont | kOverlong3 | kTooLarge), B(kCont | kSurrogate | kTooLarge),
          B(kCont | kSurrogate | kTooLarge), B(kTooShort), B(kTooShort), B(kTooShort),
          B(kTooShort),  //
          B(kTooShort), B(kTooShort), B(kTooShort), B(kTooShort), B(kTooShort), B(kTooShort),
          B(kTooShort), B(kTooShort), B(kCont | kOverlong3 | kTooLarge1000 | kOverlong4),
          B(kCont | kOverlong3 | kTooLarge), B(kCont | kSurrogate | kTooLarge),
          B(kCont | kSurrogate | kTooLarge), B(kTooShort), B(kTooShort), B(kTooShort),
          B(kTooShort)),
      high_nibbles(input));
  const __m256i special = _mm256_and_si256(_mm256_and_si256(byte_1_high, byte_1_low), byte_2_high);
  // A third byte after 111_____ and a fourth after 1111____ must be continuation bytes: their
  // two-continuations bit is then no error, and its absence is one.
  const __m256i third =
      _mm256_subs_epu8(bytes_before<2>(input, before), _mm256_set1_epi8(B(0xE0 - 0x80)));
  const __m256i fourth =
      _mm256_subs_epu8(bytes_before<3>(input, before), _mm256_set1_epi8(B(0xF0 - 0x80)));
  const __m256i must_continue =
      _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8(B(0x80)));
  return _mm256_xor_si256(must_continue, special);
}

// Checks the 64 bytes at p (with vectors) as what follows the bytes `s` has seen: false when they
// are not well-formed, else `s` holds what their end leaves unfinished. Not inlined: the loop over
// blocks of ASCII keeps its registers.
[[gnu::always_inline]] inline bool utf8_block(const char* p, Utf8State& s) {
  // The unfinished bytes as the last ones before the block.
  const long long before_top =
      s.length == 0 ? 0 : static_cast<long long>(uint64_t{s.pending} << (8 * (8 - s.length)));
  const __m256i before = _mm256_set_epi64x(before_top, 0, 0, 0);
  const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  const __m256i errors = _mm256_or_si256(utf8_errors(low, before), utf8_errors(high, low));
  if (!_mm256_testz_si256(errors, errors)) return false;
  s = utf8_unfinished_before(p + kBlock);
  // A last byte that starts no sequence (C0, C1, F5-FF) has no byte after it to be checked with.
  return s.length != 1 || utf8_sequence_length(static_cast<unsigned char>(s.pending)) != 0;
}

// Whole blocks from p while 64 bytes are left before e: up to the first quote or control
// character that no escape covers, or to the end of the last whole block (backed up to the
// backslash of an escape that the end cuts). p must lie outside an escape.
// The UTF-8 of p[0, n), a run's last bytes in the block at p (`high`: its bytes of 0x80 or more).
inline bool utf8_up_to(const char* p, size_t n, uint64_t high, Utf8State& utf8) {
  return ((high & ((uint64_t{1} << n) - 1)) | utf8.length) == 0 || utf8_scalar(p, n, utf8) == n;
}

inline RunEnd skip_run(const char* p, const char* e, Utf8State& utf8) {
  constexpr uint64_t kEven = 0x5555555555555555ull;
  const char* const start = p;
  const Utf8State at_start = utf8;
  auto careful = [&] {
    utf8 = at_start;
    return RunEnd{start, true};
  };
  uint64_t carry = 0;  // 1: the block's first byte is escaped by the last byte before it
  uint64_t bad = 0;
  // 1 when a UTF-8 sequence continues into the block: a stop of its own, so that a block of ASCII
  // costs one test.
  uint64_t unfinished = utf8.length != 0 ? 1 : 0;
  // What the loop below knows of the block it stopped at.
  Masks m;
  uint64_t escaped = 0, block_bad = 0, cut_u = 0;
  bool out = false;
  while (true) {
    // Blocks up to one with a stop or a byte of 0x80 or more, or into which a UTF-8 sequence
    // continues. No call in this loop: its constants stay in vector registers.
    uint64_t stop = 0;
    for (; e - p >= static_cast<ptrdiff_t>(kBlock); p += kBlock) {
      m = run_plain_masks(p);
      // In a run of backslashes the first escapes the second, and so on: a run that starts on an
      // odd byte is moved to start on an even one by adding its first bit (the sum carries
      // through the run), so that escaped bytes are the odd ones after even starts, and the
      // other way.
      uint64_t backslash = m.backslash & ~carry;
      uint64_t follows = (backslash << 1) | carry;
      uint64_t odd_starts = backslash & ~kEven & ~follows;
      uint64_t sum = 0;
      out = __builtin_add_overflow(odd_starts, backslash, &sum);
      escaped = (kEven ^ (sum << 1)) & follows;
      if (escaped != 0) add_run_classes(p, m);
      block_bad = escaped & ~m.escapable;
      // \u and four hex digits, which may lie in the next block; a few per block at most. In the
      // run's last block, a \u whose digits reach past it is cut: the run ends before it.
      const char* digits_end = e - p >= static_cast<ptrdiff_t>(2 * kBlock) ? e : p + kBlock;
      cut_u = 0;
      for (uint64_t u = escaped & m.u; u != 0; u &= u - 1) {
        auto at = static_cast<size_t>(__builtin_ctzll(u));
        if (p + at + 4 >= digits_end) {
          cut_u = uint64_t{1} << at;
          break;
        }
        if (!hex4(p + at + 1)) block_bad |= uint64_t{1} << at;
      }
      // Quotes and control characters, and bytes of 0x80 or more (an escaped one is ill-formed).
      stop = (m.special & ~escaped) | unfinished;
      if (stop != 0) break;
      if (cut_u != 0) {
        // A block of ASCII after complete sequences: no UTF-8 to check.
        if ((bad | (block_bad & (cut_u - 1))) != 0) return careful();
        return {p + __builtin_ctzll(cut_u) - 1, false};
      }
      bad |= block_bad;
      carry = out ? 1 : 0;
    }
    if (stop == 0) break;  // the end of the whole blocks
    // The block's own stops are the others; where it has UTF-8, or one of its sequences
    // continues into it, its UTF-8 is checked up to where the run ends, or whole.
    const uint64_t high = high_bytes(p);
    stop = m.special & ~escaped & ~high;
    // A stop after a cut \u lies among its digits: the slow path reports it.
    if (cut_u != 0 && (stop & (cut_u - 1)) == 0) stop = 0;
    if (stop != 0) {
      // Only what lies up to the stop belongs to the string.
      const auto at = static_cast<size_t>(__builtin_ctzll(stop));
      if ((bad | (block_bad & (stop ^ (stop - 1)))) != 0 || !utf8_up_to(p, at, high, utf8))
        return careful();
      return {p + at, false};
    }
    if (cut_u != 0) {
      // Before the \u's backslash, which the block before holds when the u is its first byte.
      const auto u_at = __builtin_ctzll(cut_u);
      const auto before = u_at == 0 ? size_t{0} : static_cast<size_t>(u_at - 1);
      if ((bad | (block_bad & (cut_u - 1))) != 0 || !utf8_up_to(p, before, high, utf8))
        return careful();
      return {p + u_at - 1, false};
    }
    if (!utf8_block(p, utf8)) return careful();
    unfinished = utf8.length != 0 ? 1 : 0;
    bad |= block_bad;
    carry = out ? 1 : 0;
    p += kBlock;
  }
  if (bad != 0) return careful();
  // An escape whose letter the end cut starts again from its backslash (ASCII: the UTF-8 state
  // after it is the one before it).
  return {p - carry, false};
}
#else
// Without vectors, every block is checked by checked_prefix.
inline RunEnd skip_run(const char* p, const char*, Utf8State&) {
  return {p, false};
}
#endif

// checked_prefix byte by byte: the reference it is tested against.
inline size_t checked_prefix_scalar(const char* p) {
  size_t i = 0;
  while (i < kBlock) {
    auto c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c < 0x20) return i;
    if (c != '\\') {
      ++i;
      continue;
    }
    if (i + 1 >= kBlock) return i;
    auto e = static_cast<unsigned char>(p[i + 1]);
    if (e == '\\' || (is_escapable(e) && e != 'u')) {
      i += 2;
      continue;
    }
    if (e != 'u') return i;
    if (i + 5 >= kBlock) return i;
    for (size_t k = 2; k < 6; ++k)
      if (!is_hex(static_cast<unsigned char>(p[i + k]))) return i;
    i += 6;
  }
  return kBlock;
}

}  // namespace CTXKIT_JSON_BLOCK_ISA
}  // namespace ctxkit::claude::json_block
