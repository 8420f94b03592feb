// The preview of a capped output: head and tail within their shares, the note line's ranges,
// UTF-8 never cut, NUL and ill-formed bytes kept, chunking that changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "archive/output_preview.hpp"
#include "util/utf8.hpp"

namespace ctxkit::archive {
namespace {

std::string numbered(int n, const std::string& prefix = "line ") {
  std::string out;
  for (int i = 1; i <= n; ++i) out += prefix + std::to_string(i) + "\n";
  return out;
}

std::string preview_of(const std::string& text, PreviewLimits limits, size_t chunk = 0) {
  PreviewBuilder b(limits);
  if (chunk == 0) {
    b.add(text);
  } else {
    for (size_t i = 0; i < text.size(); i += chunk) b.add(std::string_view(text).substr(i, chunk));
  }
  return b.preview("toolu_x");
}

TEST(OutputPreview, KeepsWholeLinesAtBothEndsAndNamesWhatIsLeftOut) {
  const std::string text = numbered(1000);  // "line 1\n" .. "line 1000\n"
  PreviewBuilder b({100, 200});
  b.add(text);
  const std::string p = b.preview("toolu_x");
  EXPECT_TRUE(p.starts_with("line 1\nline 2\n")) << p;
  EXPECT_TRUE(p.ends_with("line 999\nline 1000\n")) << p;
  const auto& f = b.figures();
  EXPECT_EQ(f.lines, 1000u);
  EXPECT_EQ(f.bytes, text.size());
  // The head holds the lines that fit in 100 bytes: "line 1\n".."line 9\n" (63) + "line 10\n".. .
  const std::string head = p.substr(0, p.find("[ctxkit:"));
  EXPECT_LE(head.size(), 100u);
  EXPECT_TRUE(head.ends_with("\n"));
  const uint64_t head_lines = static_cast<uint64_t>(std::count(head.begin(), head.end(), '\n'));
  EXPECT_EQ(f.first_omitted_line, head_lines + 1);
  const std::string tail = p.substr(p.find("]\n") + 2);
  EXPECT_LE(tail.size(), 200u);
  const uint64_t tail_lines = static_cast<uint64_t>(std::count(tail.begin(), tail.end(), '\n'));
  EXPECT_EQ(f.last_omitted_line, 1000u - tail_lines);
  EXPECT_EQ(f.omitted_bytes, text.size() - head.size() - tail.size());
  EXPECT_NE(
      p.find("[ctxkit: lines " + std::to_string(f.first_omitted_line) + "-" +
             std::to_string(f.last_omitted_line) + " of 1000 (" + std::to_string(f.omitted_bytes) +
             " of " + std::to_string(text.size()) + " bytes) left out here"),
      std::string::npos)
      << p;
  // One note line, naming the handle and the range to fetch.
  EXPECT_NE(p.find("archive_show {\"handle\": \"toolu_x\", \"lines\": \"" +
                   std::to_string(f.first_omitted_line) + ":" +
                   std::to_string(f.last_omitted_line) + "\"}"),
            std::string::npos);
  EXPECT_NE(p.find("ctx-search --show toolu_x --lines"), std::string::npos);
}

TEST(OutputPreview, ChunkingChangesNothing) {
  const std::string text = numbered(5000, "row ");
  const std::string whole = preview_of(text, {300, 700});
  for (size_t chunk : {1u, 3u, 7u, 64u, 4096u})
    EXPECT_EQ(preview_of(text, {300, 700}, chunk), whole);
}

TEST(OutputPreview, NeverCutsInsideAUtf8Character) {
  // One long line of 3-byte characters: both shares fall inside characters.
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "\xE2\x82\xAC";  // €
  for (size_t head = 95; head < 101; ++head) {
    for (size_t tail = 195; tail < 201; ++tail) {
      const std::string p = preview_of(text, {head, tail});
      ASSERT_FALSE(p.empty());
      EXPECT_TRUE(util::is_valid_utf8(p)) << head << " " << tail;
    }
  }
  // A 4-byte character at every position relative to the cut.
  for (size_t pad = 0; pad < 4; ++pad) {
    std::string t(pad, 'a');
    for (int i = 0; i < 3000; ++i) t += "\xF0\x9F\x98\x80";
    EXPECT_TRUE(util::is_valid_utf8(preview_of(t, {101, 203})));
  }
}

TEST(OutputPreview, KeepsNulAndIllFormedBytesAsTheyAre) {
  std::string text = numbered(400);
  text[3] = '\0';
  text += std::string("bad \xC3 byte\n");
  text += std::string("tail\0end\n", 9);
  const std::string p = preview_of(text, {100, 100});
  EXPECT_EQ(p[3], '\0');
  EXPECT_NE(p.find(std::string("tail\0end\n", 9)), std::string::npos);
  EXPECT_NE(p.find("bad \xC3 byte"), std::string::npos);
}

TEST(OutputPreview, AnIllFormedByteAtTheCutIsNotTakenForACharacter) {
  // Continuation bytes only (no lead byte): kept, the cut falls where it was asked.
  std::string text(4000, '\x80');
  const std::string p = preview_of(text, {100, 100});
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.substr(0, 100), std::string(100, '\x80'));
}

TEST(OutputPreview, SmallOutputsAreNotWorthCapping) {
  PreviewBuilder b({1000, 2000});
  b.add(numbered(100));
  EXPECT_FALSE(b.worth_capping());
  EXPECT_EQ(b.preview("h"), "");
}

TEST(OutputPreview, TinySharesGiveTheNoteAlone) {
  PreviewBuilder b({0, 0});
  b.add(numbered(100));
  const std::string p = b.preview("h");
  EXPECT_TRUE(p.starts_with("\n[ctxkit: lines 1-100 of 100")) << p;
  EXPECT_EQ(std::count(p.begin(), p.end(), '\n'), 2);
}

TEST(OutputPreview, AnOutputWithoutNewlineCountsOneLine) {
  PreviewBuilder b({100, 100});
  b.add(std::string(10000, 'x'));
  const std::string p = b.preview("h");
  EXPECT_EQ(b.figures().lines, 1u);
  EXPECT_EQ(b.figures().first_omitted_line, 1u);
  EXPECT_EQ(b.figures().last_omitted_line, 1u);
  EXPECT_EQ(b.figures().omitted_bytes, 9800u);
}

TEST(OutputPreview, CutsBeforeAndAfter) {
  const std::string s =
      "a\xE2\x82\xAC"
      "b";  // a € b
  EXPECT_EQ(utf8_cut_before(s, 2), 1u);
  EXPECT_EQ(utf8_cut_before(s, 3), 1u);
  EXPECT_EQ(utf8_cut_before(s, 4), 4u);
  EXPECT_EQ(utf8_cut_before(std::string_view(s).substr(0, 3), 3), 1u);  // the end, a cut €
  EXPECT_EQ(utf8_cut_after(s, 2), 4u);
  EXPECT_EQ(utf8_cut_after(s, 1), 1u);
}

}  // namespace
}  // namespace ctxkit::archive

namespace ctxkit::archive {
namespace {
// The word-at-a-time counts are the byte-at-a-time ones, at every length and alignment.
TEST(OutputPreview, CountsNewlinesAndContinuationBytesExactly) {
  std::string text;
  uint32_t seed = 7;
  for (int i = 0; i < 4096; ++i) {
    seed = seed * 1103515245 + 12345;
    const int pick = static_cast<int>(seed >> 16) % 8;
    text += pick == 0   ? '\n'
            : pick == 1 ? '\x80'
            : pick == 2 ? '\xBF'
            : pick == 3 ? '\xC3'
            : pick == 4 ? '\xFF'
            : pick == 5 ? '\x0B'
            : pick == 6 ? '\0'
                        : 'a';
  }
  for (size_t from = 0; from < 9; ++from) {
    for (size_t len : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 65u, 1000u, 4000u}) {
      const std::string_view part = std::string_view(text).substr(from, len);
      uint64_t newlines = 0, continuations = 0;
      for (char c : part) {
        newlines += c == '\n';
        continuations += (static_cast<unsigned char>(c) & 0xC0) == 0x80;
      }
      const ByteCounts n = count_bytes(part);
      EXPECT_EQ(n.newlines, newlines) << from << " " << len;
      EXPECT_EQ(n.continuations, continuations) << from << " " << len;
    }
  }
}
}  // namespace
}  // namespace ctxkit::archive
