// The string-block kernel's tests, included once per instruction set by the test_json_string_block
// files, each built for its own (tests/CMakeLists.txt): CTXKIT_BLOCK_SUITE names the suite and
// CTXKIT_EXPECTED_KERNEL the kernel the file must have been built with.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "claude/json_string_block.hpp"

namespace ctxkit::claude::json_block {
namespace {

TEST(CTXKIT_BLOCK_SUITE, IsBuiltForTheInstructionSetItIsNamedFor) {
  EXPECT_STREQ(kKernel, CTXKIT_EXPECTED_KERNEL);
}

using Block = std::array<char, kBlock>;

Block block_of(const std::string& text, char fill = 'x') {
  Block b;
  b.fill(fill);
  std::memcpy(b.data(), text.data(), std::min(text.size(), kBlock));
  return b;
}

size_t prefix(const Block& b) {
  return checked_prefix(b.data());
}

void expect_same_masks(const Block& b) {
  Masks v = masks(b.data()), s = masks_scalar(b.data());
  ASSERT_EQ(v.special, s.special);
  ASSERT_EQ(v.backslash, s.backslash);
  ASSERT_EQ(v.escapable, s.escapable);
  ASSERT_EQ(v.u, s.u);
#if defined(__AVX2__)
  // A run's masks: its stops include the bytes of 0x80 or more, which high_bytes tells apart.
  Masks r = run_plain_masks(b.data());
  ASSERT_EQ(r.special, s.special | s.high);
  ASSERT_EQ(r.backslash, s.backslash);
  ASSERT_EQ(high_bytes(b.data()), s.high);
#endif
}

TEST(CTXKIT_BLOCK_SUITE, EveryByteValueLandsInTheRightMasks) {
  for (int first = 0; first < 256; first += static_cast<int>(kBlock)) {
    Block b;
    for (size_t i = 0; i < kBlock; ++i) b[i] = static_cast<char>(first + static_cast<int>(i));
    expect_same_masks(b);
  }
}

TEST(CTXKIT_BLOCK_SUITE, PlainBlockIsWholeAndStopsAreFound) {
  EXPECT_EQ(prefix(block_of("")), 64u);
  EXPECT_EQ(prefix(block_of("abc\"def")), 3u);
  EXPECT_EQ(prefix(block_of("abc\tdef")), 3u);
  EXPECT_EQ(prefix(block_of(std::string(63, 'a') + "\"")), 63u);
}

TEST(CTXKIT_BLOCK_SUITE, EscapesAreSteppedOverWhole) {
  EXPECT_EQ(prefix(block_of(R"(a\"b\\c\/d\be\ff\ng\rh\ti\u00e9j)")), 64u);
  EXPECT_EQ(prefix(block_of(R"(\\")")), 2u);     // an escaped backslash, then the closing quote
  EXPECT_EQ(prefix(block_of(R"(\\\"x")")), 5u);  // \\ and \" are content; the quote after x ends it
  EXPECT_EQ(prefix(block_of(R"(\u12AbZ)")), 64u);
}

TEST(CTXKIT_BLOCK_SUITE, IllFormedEscapesStopAtTheirBackslash) {
  EXPECT_EQ(prefix(block_of(R"(ab\x)")), 2u);
  EXPECT_EQ(prefix(block_of(R"(ab\\\x)")), 4u);
  EXPECT_EQ(prefix(block_of(R"(ab\u12G4)")), 2u);
  EXPECT_EQ(prefix(block_of("ab\\u1\"34")), 2u);
  EXPECT_EQ(prefix(block_of("ab\\\n")), 2u);
}

TEST(CTXKIT_BLOCK_SUITE, EscapesCutByTheBlockEndStopAtTheirBackslash) {
  EXPECT_EQ(prefix(block_of(std::string(63, 'a') + "\\")), 63u);
  EXPECT_EQ(prefix(block_of(std::string(62, 'a') + "\\\\")), 64u);  // a whole escaped backslash
  EXPECT_EQ(prefix(block_of(std::string(61, 'a') + "\\\\\\")), 63u);
  EXPECT_EQ(prefix(block_of(std::string(59, 'a') + "\\u12a")), 59u);
  EXPECT_EQ(prefix(block_of(std::string(58, 'a') + "\\u12ab")), 64u);
  EXPECT_EQ(prefix(block_of(std::string(64, '\\'))), 64u);
}

// Random blocks over the bytes that matter, against the byte-by-byte reference.
TEST(CTXKIT_BLOCK_SUITE, AgreesWithTheReferenceOnRandomBlocks) {
  const std::string alphabet = std::string("\"\\\\\\\\uu0aF/bnrtxz\t\n") + "\xC3\xA9\xFF";
  std::mt19937_64 rng(42);
  for (int round = 0; round < 400000; ++round) {
    Block b;
    // Mostly escape-heavy text, sometimes any byte at all.
    bool any = round % 8 == 0;
    for (auto& c : b) c = any ? static_cast<char>(rng() & 0xFF) : alphabet[rng() % alphabet.size()];
    expect_same_masks(b);
    ASSERT_EQ(prefix(b), checked_prefix_scalar(b.data())) << std::string(b.data(), b.size());
  }
}

// What a byte-by-byte walk over string content finds first, and where each token it stepped over
// (a plain byte or a whole escape) starts.
struct Walk {
  enum Kind { kStop, kIllFormed, kCut, kEnd } kind = kEnd;
  size_t at = 0;
  std::set<size_t> starts;
};

Walk walk(const std::string& s) {
  Walk w;
  size_t i = 0;
  auto hex = [&](size_t k) { return k < s.size() && is_hex(static_cast<unsigned char>(s[k])); };
  while (true) {
    w.starts.insert(i);
    w.at = i;
    if (i >= s.size()) {
      w.kind = Walk::kEnd;
      return w;
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c < 0x20) {
      w.kind = Walk::kStop;
      return w;
    }
    if (c != '\\') {
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) {
      w.kind = Walk::kCut;
      return w;
    }
    auto e = static_cast<unsigned char>(s[i + 1]);
    if (e == '\\' || (is_escapable(e) && e != 'u')) {
      i += 2;
      continue;
    }
    if (e != 'u') {
      w.kind = Walk::kIllFormed;
      return w;
    }
    if (i + 5 >= s.size()) {
      // Digits cut by the end, unless one that is there already is not one.
      bool so_far = true;
      for (size_t k = i + 2; k < s.size(); ++k) so_far = so_far && hex(k);
      w.kind = so_far ? Walk::kCut : Walk::kIllFormed;
      return w;
    }
    if (!(hex(i + 2) && hex(i + 3) && hex(i + 4) && hex(i + 5))) {
      w.kind = Walk::kIllFormed;
      return w;
    }
    i += 6;
  }
}

// skip_run on random text of one to five blocks and a tail, against the walk: it ends where the
// walk stops inside its blocks, never past what the walk checked, always at the start of a token,
// at most an escape's length before the end of its blocks, and hands an ill-formed escape or
// ill-formed UTF-8 inside its blocks to the slow path. The UTF-8 state it leaves is the one the
// byte-by-byte check leaves where it ends.
TEST(CTXKIT_BLOCK_SUITE, ARunOfBlocksAgreesWithTheReferenceWalk) {
  const std::string alphabet = "\\\\\\\\\\\\uuu0aF/bnrtxz\"\t";
  const std::string bytes = "\xC3\xA9\xFF\xE2\x82\xAC\xF0\x9F";
  std::mt19937_64 rng(7);
#if defined(__AVX2__)
  int careful = 0, stopped = 0, ran_out = 0, bad_utf8 = 0;
#endif
  for (int round = 0; round < 100000; ++round) {
    size_t n = 64 + rng() % 300;
    std::string s(n, 'x');
    if (round % 2 == 0) {
      // Well-formed content only, so that runs reach their end, cutting escapes there.
      const std::vector<std::string> tokens = {"a",       "bc",      "\\n",      "\\\\", "\\\"",
                                               "\\u00e9", "\\uD83D", "\xC3\xA9", "u",    "\\t"};
      s.clear();
      while (s.size() < n) s += tokens[rng() % tokens.size()];
      s.resize(n);
    } else {
      // Mostly escapes and letters, with quotes rare enough that runs reach past a block; in
      // one round of two, whole UTF-8 sequences, in the other any byte of some (mostly
      // ill-formed).
      const bool whole_sequences = round % 4 == 1;
      for (size_t i = 0; i < n; ++i) {
        if (rng() % 64 == 0) {
          s[i] = '"';
        } else if (rng() % 3 != 0) {
          continue;
        } else if (rng() % 8 != 0) {
          s[i] = alphabet[rng() % alphabet.size()];
        } else if (!whole_sequences) {
          s[i] = bytes[rng() % bytes.size()];
        } else if (i + 3 < n) {
          s.replace(i, 3, "\xE2\x82\xAC");
          i += 2;
        }
      }
    }
    std::vector<char> buf(n + kBlock, '\0');  // the padding a chunk has
    std::copy(s.begin(), s.end(), buf.begin());
    const Walk w = walk(s);
    Utf8State utf8;
    const RunEnd run = skip_run(buf.data(), buf.data() + n, utf8);
    Utf8State reference;
    const size_t first_bad_utf8 = utf8_scalar(s.data(), n, reference);
#if defined(__AVX2__)
    const size_t whole = n / kBlock * kBlock;
    if (run.careful) {
      ++careful;
      ASSERT_EQ(utf8, Utf8State{}) << "the state at the run's start";
      // Ill-formed UTF-8 in the string's content before the end of the run's blocks.
      if (first_bad_utf8 < (w.kind == Walk::kStop ? std::min(w.at, whole) : whole)) {
        ++bad_utf8;
        continue;
      }
      ASSERT_EQ(w.kind, Walk::kIllFormed) << s;
      ASSERT_LT(w.at, whole + 4) << s;
      continue;
    }
    const auto at = static_cast<size_t>(run.at - buf.data());
    Utf8State up_to_the_end;
    ASSERT_EQ(utf8_scalar(s.data(), at, up_to_the_end), at)
        << "ill-formed UTF-8 let through: " << s;
    ASSERT_EQ(utf8, up_to_the_end) << s;
    ASSERT_TRUE(w.starts.count(at))
        << at << " of " << n << ", walk " << w.kind << " at " << w.at << ": " << s;
    ASSERT_LE(at, w.at) << s;
    if (w.kind == Walk::kStop && w.at < whole) {
      ++stopped;
      ASSERT_EQ(at, w.at) << s;
    }
    if (w.kind == Walk::kIllFormed) {
      ASSERT_GE(w.at + 6, whole) << "missed at " << w.at << ": " << s;
    }
    if (w.at >= whole) {
      ++ran_out;
      ASSERT_GE(at + 5, whole) << s;
    }
#else
    (void)first_bad_utf8;
    ASSERT_FALSE(run.careful);
    ASSERT_EQ(run.at, buf.data());
    ASSERT_EQ(utf8, Utf8State{});
#endif
  }
#if defined(__AVX2__)
  // The rounds reached every way a run ends.
  EXPECT_GT(careful, 1000);
  EXPECT_GT(bad_utf8, 1000);
  EXPECT_GT(stopped, 1000);
  EXPECT_GT(ran_out, 1000);
#endif
}

// Whether `s` is well-formed UTF-8, by decoding each sequence and checking its code point (no
// overlong form, no surrogate, nothing past U+10FFFF): the definition the checks must agree with.
bool well_formed_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80                ? 1
                     : c >= 0xC0 && c < 0xE0 ? 2
                     : c >= 0xE0 && c < 0xF0 ? 3
                     : c >= 0xF0 && c < 0xF8 ? 4
                                             : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : c & (0x7Fu >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = cp << 6 | (b & 0x3Fu);
    }
    const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

bool scalar_accepts(const std::string& s) {
  Utf8State st;
  return utf8_scalar(s.data(), s.size(), st) == s.size() && st.length == 0;
}

// Every sequence of one or two bytes, and every three- and four-byte sequence over the bytes
// where the rules change, in one piece and cut anywhere into two calls.
TEST(CTXKIT_BLOCK_SUITE, Utf8ScalarAcceptsExactlyTheWellFormedSequences) {
  const std::vector<int> edges = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                  0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  auto ch = [](int v) { return static_cast<char>(v); };
  std::vector<std::string> cases;
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) cases.push_back({ch(a), ch(b)});
  for (int a = 0xE0; a < 256; ++a)
    for (int b : edges)
      for (int c : edges) {
        cases.push_back({ch(a), ch(b), ch(c)});
        for (int d : {0x41, 0x80, 0xBF, 0xC0}) cases.push_back({ch(a), ch(b), ch(c), ch(d)});
      }
  size_t accepted = 0;
  for (const auto& text : cases) {
    const bool want = well_formed_utf8(text);
    ASSERT_EQ(scalar_accepts(text), want) << testing::PrintToString(text);
    accepted += want ? 1 : 0;
    for (size_t cut = 1; cut < text.size(); ++cut) {
      Utf8State st;
      const bool ok = utf8_scalar(text.data(), cut, st) == cut &&
                      utf8_scalar(text.data() + cut, text.size() - cut, st) == text.size() - cut &&
                      st.length == 0;
      ASSERT_EQ(ok, want) << testing::PrintToString(text) << " cut at " << cut;
    }
  }
  EXPECT_GT(accepted, 1000u);
}

TEST(CTXKIT_BLOCK_SUITE, Utf8ScalarNamesTheFirstByteThatIsNotUtf8) {
  auto first_bad = [](const std::string& s) {
    Utf8State st;
    return utf8_scalar(s.data(), s.size(), st);
  };
  EXPECT_EQ(first_bad("abc\xFF"), 3u);
  EXPECT_EQ(first_bad("ab\xC0\x80"), 2u);          // the overlong two-byte form of NUL
  EXPECT_EQ(first_bad("ab\xE0\x80\x80"), 3u);      // an overlong three-byte form
  EXPECT_EQ(first_bad("ab\xED\xA0\x80"), 3u);      // an encoded surrogate (U+D800)
  EXPECT_EQ(first_bad("ab\xF4\x90\x80\x80"), 3u);  // past U+10FFFF
  EXPECT_EQ(first_bad("ab\xE2\x82x"), 4u);         // cut short by an ASCII byte
  EXPECT_EQ(first_bad("\x80"), 0u);                // a continuation byte alone
  EXPECT_EQ(first_bad("12345678\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80x\xFF"), 18u);
  Utf8State st;
  EXPECT_EQ(utf8_scalar("ab\xF0\x9F", 4, st), 4u);  // cut by the end: unfinished, not wrong
  EXPECT_EQ(st, (Utf8State{0x9FF0, 2}));
}

#if defined(__AVX2__)
// A block checked with vectors agrees with the byte-by-byte check, from every kind of state the
// bytes before it leave, on blocks of valid text, of valid text with one byte changed, and of
// continuation and lead bytes at random.
TEST(CTXKIT_BLOCK_SUITE, Utf8BlockAgreesWithTheByteByByteCheck) {
  const std::vector<std::string> pieces = {"a",
                                           "~",
                                           "\xC3\xA9",
                                           "\xDF\xBF",
                                           "\xE0\xA0\x80",
                                           "\xED\x9F\xBF",
                                           "\xEF\xBF\xBF",
                                           "\xE2\x82\xAC",
                                           "\xF0\x90\x80\x80",
                                           "\xF4\x8F\xBF\xBF",
                                           "\xF3\xBF\xBF\xBF"};
  std::mt19937_64 rng(11);
  int accepted = 0, refused = 0;
  for (int round = 0; round < 300000; ++round) {
    std::string text;
    while (text.size() < 3 + kBlock + 3) text += pieces[rng() % pieces.size()];
    if (round % 3 == 1) text[3 + rng() % kBlock] = static_cast<char>(rng() & 0xFF);
    if (round % 3 == 2)
      for (size_t i = 3; i < 3 + kBlock; ++i)
        if (rng() % 4 == 0) text[i] = static_cast<char>(0x80 + rng() % 0x80);
    // The state the bytes before the block leave (a sequence cut there, or none).
    Utf8State before;
    const size_t start = rng() % 4;
    if (utf8_scalar(text.data() + start, 3 - start, before) != 3 - start) continue;
    Utf8State vector = before, scalar = before;
    const bool v = utf8_block(text.data() + 3, vector);
    const bool s = utf8_scalar(text.data() + 3, kBlock, scalar) == kBlock;
    ASSERT_EQ(v, s) << testing::PrintToString(text) << " from " << start;
    if (v) {
      ASSERT_EQ(vector, scalar) << testing::PrintToString(text);
    }
    (v ? accepted : refused)++;
  }
  EXPECT_GT(accepted, 50000);
  EXPECT_GT(refused, 50000);
}
#endif

}  // namespace
}  // namespace ctxkit::claude::json_block
