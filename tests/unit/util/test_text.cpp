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

}  // namespace
}  // namespace ctxkit
