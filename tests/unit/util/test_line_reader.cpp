#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "unit/temp_dir.hpp"
#include "util/line_reader.hpp"

namespace {

using ctxkit::util::LineReader;

struct ReadLine {
  std::string text;
  uint64_t number = 0;
  uint64_t offset = 0;
  bool operator==(const ReadLine&) const = default;
};

struct ReadAll {
  std::vector<ReadLine> lines;
  uint64_t consumed = 0;
  uint64_t fragment = 0;
};

ReadAll read_lines(ctxkit::Result<LineReader> opened) {
  ReadAll out;
  EXPECT_TRUE(opened.has_value());
  if (!opened) return out;
  while (true) {
    auto line = opened->next();
    EXPECT_TRUE(line.has_value());
    if (!line || !*line) break;
    const auto& l = **line;
    // The padding SIMD parsers read past the line must be there (a sanitizer sees it otherwise).
    EXPECT_GE(l.capacity, l.text.size() + LineReader::kPadding);
    volatile char last = l.text.data()[l.text.size() + LineReader::kPadding - 1];
    (void)last;
    out.lines.push_back({std::string(l.text), l.number, l.offset});
  }
  out.consumed = opened->consumed();
  out.fragment = opened->trailing_fragment();
  return out;
}

// Lines of many lengths: empty ones, short ones, and ones longer than several chunks.
std::string line_reader_text() {
  std::string text;
  for (size_t i = 0; i < 400; ++i) {
    size_t len = (i % 7 == 0) ? 0 : (i % 13 == 0) ? 9000 + i * 3 : i % 90;
    for (size_t k = 0; k < len; ++k) text += static_cast<char>('a' + (i + k) % 26);
    text += '\n';
  }
  return text;
}

class LineReaderModes : public ::testing::Test {
 protected:
  ctxkit::test::TempDir dir;
  std::filesystem::path write(const std::string& text) { return dir.write("t.jsonl", text); }
};

TEST_F(LineReaderModes, ReadAheadGivesTheSameLinesNumbersAndOffsets) {
  const std::string text = line_reader_text() + "a final fragment";
  const auto path = write(text);
  for (size_t chunk : {size_t{1024}, size_t{4096}, size_t{1} << 20}) {
    SCOPED_TRACE(chunk);
    ReadAll plain = read_lines(LineReader::open(path, std::nullopt, chunk));
    ReadAll ahead = read_lines(LineReader::open_read_ahead(path, std::nullopt, chunk));
    ASSERT_EQ(plain.lines.size(), 400u);
    EXPECT_TRUE(ahead.lines == plain.lines);
    EXPECT_EQ(ahead.consumed, plain.consumed);
    EXPECT_EQ(ahead.fragment, plain.fragment);
    EXPECT_EQ(ahead.fragment, std::string("a final fragment").size());
    EXPECT_EQ(plain.lines[13].text.size(), 9000u + 13 * 3);
    EXPECT_EQ(plain.lines[13].offset, text.find(plain.lines[13].text));
  }
}

TEST_F(LineReaderModes, ReadAheadStopsAtTheSnapshotLimit) {
  const std::string text = line_reader_text();
  const auto path = write(text);
  const uint64_t limit = text.size() / 2;
  ReadAll plain = read_lines(LineReader::open(path, limit, 2048));
  ReadAll ahead = read_lines(LineReader::open_read_ahead(path, limit, 2048));
  EXPECT_TRUE(ahead.lines == plain.lines);
  EXPECT_LE(ahead.consumed, limit);
  EXPECT_EQ(ahead.consumed + ahead.fragment, limit);
}

// A file of whole pages ends its last mapping: the lines near its end get their padding (a copy).
TEST_F(LineReaderModes, ReadAheadPadsTheLinesThatEndAtAPageEnd) {
  for (size_t size : {size_t{4096}, size_t{8192}}) {
    std::string text;
    while (text.size() + 11 < size) text += "0123456789\n";
    text += std::string(size - text.size() - 1, 'x') + "\n";
    ASSERT_EQ(text.size(), size);
    const auto path = write(text);
    ReadAll plain = read_lines(LineReader::open(path, std::nullopt, 4096));
    ReadAll ahead = read_lines(LineReader::open_read_ahead(path, std::nullopt, 4096));
    EXPECT_TRUE(ahead.lines == plain.lines);
    EXPECT_EQ(ahead.consumed, size);
  }
}

// Reading ahead from a line boundary inside the file (mapped from the page that holds it): the
// lines, numbers and offsets from there on are those of a read from the start.
TEST_F(LineReaderModes, ReadAheadFromALineInsideTheFile) {
  const std::string text = line_reader_text() + "a final fragment";
  const auto path = write(text);
  ReadAll whole = read_lines(LineReader::open(path, std::nullopt, 4096));
  ASSERT_EQ(whole.lines.size(), 400u);
  for (size_t from : {size_t{1}, size_t{14}, size_t{200}, size_t{399}}) {
    SCOPED_TRACE(from);
    const ReadLine& start = whole.lines[from];
    ASSERT_NE(start.offset % 4096, 0u);
    for (size_t chunk : {size_t{4096}, size_t{1} << 20}) {
      ReadAll ahead = read_lines(
          LineReader::open_read_ahead(path, std::nullopt, chunk, start.offset, start.number));
      ASSERT_EQ(ahead.lines.size(), 400u - from);
      EXPECT_TRUE(std::equal(ahead.lines.begin(), ahead.lines.end(),
                             whole.lines.begin() + static_cast<std::ptrdiff_t>(from)));
      EXPECT_EQ(ahead.consumed, whole.consumed);
      EXPECT_EQ(ahead.fragment, whole.fragment);
    }
  }
  // From the end: nothing but the fragment's absence.
  ReadAll none =
      read_lines(LineReader::open_read_ahead(path, std::nullopt, 4096, text.size(), 401));
  EXPECT_TRUE(none.lines.empty());
}

TEST_F(LineReaderModes, AnEmptyFileHasNoLine) {
  const auto path = write("");
  ReadAll ahead = read_lines(LineReader::open_read_ahead(path));
  EXPECT_TRUE(ahead.lines.empty());
  EXPECT_EQ(ahead.fragment, 0u);
}

}  // namespace
