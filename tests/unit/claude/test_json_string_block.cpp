#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>

#include "claude/json_string_block.hpp"

namespace ctxkit::claude::json_block {
namespace {

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

TEST(JsonStringBlock, EveryByteValueLandsInTheRightMasks) {
  for (int first = 0; first < 256; first += static_cast<int>(kBlock)) {
    Block b;
    for (size_t i = 0; i < kBlock; ++i) b[i] = static_cast<char>(first + static_cast<int>(i));
    expect_same_masks(b);
  }
}

TEST(JsonStringBlock, PlainBlockIsWholeAndStopsAreFound) {
  EXPECT_EQ(prefix(block_of("")), 64u);
  EXPECT_EQ(prefix(block_of("abc\"def")), 3u);
  EXPECT_EQ(prefix(block_of("abc\tdef")), 3u);
  EXPECT_EQ(prefix(block_of(std::string(63, 'a') + "\"")), 63u);
}

TEST(JsonStringBlock, EscapesAreSteppedOverWhole) {
  EXPECT_EQ(prefix(block_of(R"(a\"b\\c\/d\be\ff\ng\rh\ti\u00e9j)")), 64u);
  EXPECT_EQ(prefix(block_of(R"(\\")")), 2u);     // an escaped backslash, then the closing quote
  EXPECT_EQ(prefix(block_of(R"(\\\"x")")), 5u);  // \\ and \" are content; the quote after x ends it
  EXPECT_EQ(prefix(block_of(R"(\u12AbZ)")), 64u);
}

TEST(JsonStringBlock, IllFormedEscapesStopAtTheirBackslash) {
  EXPECT_EQ(prefix(block_of(R"(ab\x)")), 2u);
  EXPECT_EQ(prefix(block_of(R"(ab\\\x)")), 4u);
  EXPECT_EQ(prefix(block_of(R"(ab\u12G4)")), 2u);
  EXPECT_EQ(prefix(block_of("ab\\u1\"34")), 2u);
  EXPECT_EQ(prefix(block_of("ab\\\n")), 2u);
}

TEST(JsonStringBlock, EscapesCutByTheBlockEndStopAtTheirBackslash) {
  EXPECT_EQ(prefix(block_of(std::string(63, 'a') + "\\")), 63u);
  EXPECT_EQ(prefix(block_of(std::string(62, 'a') + "\\\\")), 64u);  // a whole escaped backslash
  EXPECT_EQ(prefix(block_of(std::string(61, 'a') + "\\\\\\")), 63u);
  EXPECT_EQ(prefix(block_of(std::string(59, 'a') + "\\u12a")), 59u);
  EXPECT_EQ(prefix(block_of(std::string(58, 'a') + "\\u12ab")), 64u);
  EXPECT_EQ(prefix(block_of(std::string(64, '\\'))), 64u);
}

// Random blocks over the bytes that matter, against the byte-by-byte reference.
TEST(JsonStringBlock, AgreesWithTheReferenceOnRandomBlocks) {
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

}  // namespace
}  // namespace ctxkit::claude::json_block
