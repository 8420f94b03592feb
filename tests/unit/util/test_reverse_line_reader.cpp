#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/temp_dir.hpp"
#include "util/reverse_line_reader.hpp"

namespace ctxkit {
namespace {

std::vector<std::string> all_backwards(const std::filesystem::path& p, uint64_t budget = 1 << 30) {
  auto r = util::ReverseLineReader::open(p, budget);
  EXPECT_TRUE(r);
  std::vector<std::string> out;
  while (true) {
    auto l = r->prev();
    EXPECT_TRUE(l);
    if (!*l) break;
    out.emplace_back((*l)->text);
  }
  return out;
}

TEST(ReverseLineReader, ReturnsLinesLastFirstSkippingEmptyOnes) {
  test::TempDir tmp;
  auto p = tmp.write("f", "one\ntwo\n\nthree\n");
  EXPECT_EQ(all_backwards(p), (std::vector<std::string>{"three", "two", "one"}));
}

TEST(ReverseLineReader, FinalLineWithoutNewlineIsReturned) {
  test::TempDir tmp;
  auto p = tmp.write("f", "one\ntwo");
  EXPECT_EQ(all_backwards(p), (std::vector<std::string>{"two", "one"}));
}

TEST(ReverseLineReader, LinesLongerThanTheChunkAreAssembled) {
  test::TempDir tmp;
  std::string big(300000, 'b');
  auto p = tmp.write("f", "a\n" + big + "\nc\n");
  auto lines = all_backwards(p);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], big);
  EXPECT_EQ(lines[2], "a");
}

TEST(ReverseLineReader, StopsAtTheBudget) {
  test::TempDir tmp;
  std::string content;
  for (int i = 0; i < 100000; ++i) content += "line " + std::to_string(i) + "\n";
  auto p = tmp.write("f", content);
  auto r = util::ReverseLineReader::open(p, 70000);
  ASSERT_TRUE(r);
  size_t n = 0;
  while (true) {
    auto l = r->prev();
    ASSERT_TRUE(l);
    if (!*l) break;
    ++n;
  }
  EXPECT_TRUE(r->budget_exhausted());
  EXPECT_LT(n, 12000u);
  EXPECT_GT(n, 5000u);
}

TEST(ReverseLineReader, EmptyAndMissingFiles) {
  test::TempDir tmp;
  auto p = tmp.write("empty", "");
  EXPECT_TRUE(all_backwards(p).empty());
  auto missing = util::ReverseLineReader::open(tmp / "missing", 100);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::NotFound);
}

}  // namespace
}  // namespace ctxkit
