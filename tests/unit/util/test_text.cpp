#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/text.hpp"

namespace ctxkit {
namespace {

TEST(AsciiLower, LowersAsciiLettersOnly) {
  EXPECT_EQ(util::ascii_lower("Tasks.YAML"), "tasks.yaml");
  EXPECT_EQ(util::ascii_lower("MiXeD 123 _-[]"), "mixed 123 _-[]");
  // UTF-8 bytes are kept as they are: "É" stays, "Ä" stays.
  EXPECT_EQ(util::ascii_lower("\xC3\x89t\xC3\x84"), "\xC3\x89t\xC3\x84");
  EXPECT_EQ(util::ascii_lower(""), "");
}

TEST(SplitList, TrimsSpacesAndDropsEmptyItems) {
  EXPECT_EQ(util::split_list("Read, Bash,Grep"),
            (std::vector<std::string>{"Read", "Bash", "Grep"}));
  EXPECT_EQ(util::split_list(" a ,, b ,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(util::split_list(""), std::vector<std::string>{});
  EXPECT_EQ(util::split_list(" , "), std::vector<std::string>{});
  // Only spaces are trimmed: a tab is part of the item.
  EXPECT_EQ(util::split_list("\ta"), std::vector<std::string>{"\ta"});
  EXPECT_EQ(util::split_list("a:b", ':'), (std::vector<std::string>{"a", "b"}));
}

TEST(SplitLines, SplitsAtNewlinesDropsTheCrBeforeThemAndNoPieceAfterTheLast) {
  using Lines = std::vector<std::string_view>;
  EXPECT_EQ(util::split_lines("a\nb"), (Lines{"a", "b"}));
  EXPECT_EQ(util::split_lines("a\r\nb\r\n"), (Lines{"a", "b"}));
  EXPECT_EQ(util::split_lines("a\n\nb\n"), (Lines{"a", "", "b"}));
  EXPECT_EQ(util::split_lines(""), Lines{});
  EXPECT_EQ(util::split_lines("\n"), Lines{""});
  // A '\r' inside a line is text.
  EXPECT_EQ(util::split_lines("a\rb\r"), Lines{"a\rb"});
}

// The hash the handles of archived outputs were made with: changing it would lose them.
TEST(Fnv1a, GivesTheValuesHandlesWereMadeWith) {
  util::Fnv1a empty;
  EXPECT_EQ(empty.value, 1469598103934665603ull);
  util::Fnv1a a;
  a.add("a");
  EXPECT_EQ(a.value, (1469598103934665603ull ^ 'a') * 1099511628211ull);
  util::Fnv1a pieces, whole;
  pieces.add("ab");
  pieces.add("c");
  whole.add("abc");
  EXPECT_EQ(pieces.value, whole.value);
}

}  // namespace
}  // namespace ctxkit
