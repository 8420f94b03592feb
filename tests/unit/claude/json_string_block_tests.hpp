// The string-block kernel's tests, included once per instruction set by the test_json_string_block
// files, each built for its own (tests/CMakeLists.txt): CTXKIT_BLOCK_SUITE names the suite and
// CTXKIT_EXPECTED_KERNEL the kernel the file must have been built with.
#pragma once

#include <gtest/gtest.h>

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
// at most an escape's length before the end of its blocks, and hands an ill-formed escape inside
// its blocks to the slow path.
TEST(CTXKIT_BLOCK_SUITE, ARunOfBlocksAgreesWithTheReferenceWalk) {
  const std::string alphabet = std::string("\\\\\\\\\\\\uuu0aF/bnrtxz\"\t") + "\xC3\xA9\xFF";
  std::mt19937_64 rng(7);
#if defined(__AVX2__)
  int careful = 0, stopped = 0, ran_out = 0;
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
      // Mostly escapes and letters, with quotes rare enough that runs reach past a block.
      for (auto& c : s) {
        if (rng() % 64 == 0)
          c = '"';
        else if (rng() % 3 == 0)
          c = alphabet[rng() % alphabet.size()];
      }
    }
    std::vector<char> buf(n + kBlock, '\0');  // the padding a chunk has
    std::copy(s.begin(), s.end(), buf.begin());
    const Walk w = walk(s);
    const RunEnd run = skip_run(buf.data(), buf.data() + n);
#if defined(__AVX2__)
    const size_t whole = n / kBlock * kBlock;
    if (run.careful) {
      ++careful;
      ASSERT_EQ(w.kind, Walk::kIllFormed) << s;
      ASSERT_LT(w.at, whole + 4) << s;
      continue;
    }
    const auto at = static_cast<size_t>(run.at - buf.data());
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
    ASSERT_FALSE(run.careful);
    ASSERT_EQ(run.at, buf.data());
#endif
  }
#if defined(__AVX2__)
  // The rounds reached every way a run ends.
  EXPECT_GT(careful, 1000);
  EXPECT_GT(stopped, 1000);
  EXPECT_GT(ran_out, 1000);
#endif
}

}  // namespace
}  // namespace ctxkit::claude::json_block
