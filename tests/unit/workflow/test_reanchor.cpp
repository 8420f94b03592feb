#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "unit/temp_dir.hpp"
#include "workflow/reanchor.hpp"

namespace ctxkit::workflow {
namespace {

TEST(Reanchor, FitsWholeWhenSmall) {
  const std::string a = assemble_anchor(
      "HEAD\n", {{"## One", "first"}, {"## Two", "second\n"}, {"## Empty", ""}}, "TAIL", 1000);
  EXPECT_EQ(a, "HEAD\n## One\nfirst\n## Two\nsecond\nTAIL");
}

TEST(Reanchor, BoundedWithFairSharesAndCutNotes) {
  const std::string small(100, 's'), big1(5000, 'a'), big2(9000, 'b');
  const std::string a =
      assemble_anchor("H\n", {{"## S", small}, {"## A", big1}, {"## B", big2}}, "T", 2000);
  EXPECT_LE(a.size(), 2000u);
  // The short section is whole; the long ones are cut, each saying how much was left out.
  EXPECT_NE(a.find("## S\n" + small + "\n"), std::string::npos);
  EXPECT_NE(a.find("## A\n"), std::string::npos);
  EXPECT_NE(a.find("## B\n"), std::string::npos);
  EXPECT_EQ(std::count(a.begin(), a.end(), '['), 2);
  EXPECT_NE(a.find("more characters]"), std::string::npos);
  EXPECT_TRUE(a.starts_with("H\n"));
  EXPECT_TRUE(a.ends_with("T"));
  // Byte-stable: the same input, the same bytes.
  EXPECT_EQ(a,
            assemble_anchor("H\n", {{"## S", small}, {"## A", big1}, {"## B", big2}}, "T", 2000));
  // The two long sections get about the same room.
  const size_t a_len = a.find("## B") - a.find("## A");
  const size_t b_len = a.find("T", a.find("## B")) - a.find("## B");
  EXPECT_LT(a_len > b_len ? a_len - b_len : b_len - a_len, 10u);
}

TEST(Reanchor, CutsOnUtf8Boundaries) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "\xC3\xA9";  // é
  for (size_t max : {41u, 50u, 51u, 99u, 100u, 3u, 1u}) {
    const std::string cut = bounded_text(text, max);
    EXPECT_LE(cut.size(), max);
    // No dangling lead byte: every é is whole.
    const size_t body = cut.find('\n') == std::string::npos ? cut.size() : cut.find('\n');
    EXPECT_EQ(body % 2, 0u) << max;
  }
}

}  // namespace
}  // namespace ctxkit::workflow
