// Pins' pure rules (context/pins): the text of a pin, the check against a summary, the lists.
#include <gtest/gtest.h>

#include <string>

#include "context/pins.hpp"

namespace ctxkit::context {
namespace {

TEST(PinText, WhitespaceIsCollapsedAndTrimmed) {
  auto p = normalize_pin("  deploy\ton\n\nfriday \r\n");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(*p, "deploy on friday");
}

TEST(PinText, AtMostFiveHundredCharactersCountingCodePoints) {
  std::string five_hundred_e_acute;
  for (int i = 0; i < 500; ++i) five_hundred_e_acute += "\xc3\xa9";  // 1000 bytes, 500 characters
  EXPECT_TRUE(normalize_pin(five_hundred_e_acute));
  auto big = normalize_pin(std::string(1 << 20, 'x'));
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, "a pin is at most 500 characters (this one has 1048576)");
  EXPECT_EQ(big.error().kind, Error::Kind::Invalid);
}

TEST(PinText, NulIllFormedUtf8AndEmptyAreRefused) {
  auto nul = normalize_pin(std::string("a\0b", 3));
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().message, "a pin cannot hold a NUL character");
  auto bad = normalize_pin("caf\xc3");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "a pin must be UTF-8 text (this one is not)");
  auto empty = normalize_pin(" \n\t ");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "a pin cannot be empty");
}

TEST(PinCheck, TextContainedInTheSummaryIsKeptWhateverCaseAndPunctuation) {
  SummaryText s("## Summary\n- The API listens on PORT 8123; deploys happen on Friday.");
  EXPECT_TRUE(s.keeps("api listens on port 8123"));
  EXPECT_TRUE(s.keeps("Deploys happen on friday!"));
}

TEST(PinCheck, AllSignificantWordsInAnyOrderAreEnough) {
  SummaryText s("We agreed that Friday is the day for the deploy; staging first.");
  EXPECT_TRUE(s.keeps("deploy on Friday"));  // "on" is not significant
  EXPECT_FALSE(s.keeps("deploy on Monday"));
}

TEST(PinCheck, NumbersMustBeThereExactly) {
  SummaryText s("The service port is 8124.");
  EXPECT_FALSE(s.keeps("service port is 8123"));
  EXPECT_TRUE(s.keeps("service port 8124"));
}

TEST(PinCheck, WholeWordsOnly) {
  SummaryText s("The deployment window is open.");
  EXPECT_FALSE(s.keeps("deploy"));  // a prefix of a word is not the word
}

TEST(PinCheck, APinOfCommonWordsOnlyNeedsItsWholeText) {
  SummaryText s("this and that");
  EXPECT_TRUE(s.keeps("this and that"));
  EXPECT_FALSE(s.keeps("that and this"));
}

TEST(PinList, HeadingAndOneLineEach) {
  EXPECT_EQ(render_pin_list("H:", {"a", "b"}, 2, "cmd"), "H:\n- a\n- b\n");
  EXPECT_EQ(render_pin_list("H:", {}, 0, "cmd"), "");
}

TEST(PinList, HeldWithinTheBudgetAndTheRestCounted) {
  std::vector<std::string> pins(100, std::string(400, 'p'));
  size_t shown = 0;
  const std::string out = render_pin_list("H:", pins, 250, "ctx-pin list", &shown);
  EXPECT_LE(out.size(), kPinBudgetBytes + 100);
  EXPECT_EQ(shown, (kPinBudgetBytes - 3) / 403);
  EXPECT_NE(out.find("(" + std::to_string(250 - static_cast<int64_t>(shown)) +
                     " more pins not shown here: ctx-pin list)"),
            std::string::npos)
      << out;
}

TEST(PinList, PreCompactNamesTheFocus) {
  const std::string out = precompact_instructions({"port 8123"}, 1, "the tests of step 2");
  EXPECT_NE(out.find("- port 8123\n"), std::string::npos);
  EXPECT_NE(out.find("Focus of this compaction (the workflow's current step): the tests of step 2"),
            std::string::npos);
  EXPECT_EQ(precompact_instructions({}, 0, ""), "");
}

TEST(PinStatusWords, KeptAndRestored) {
  EXPECT_EQ(pins_status_words(3, 5, 2), "pins 3/5 kept, 2 restored");
  EXPECT_EQ(pins_status_words(5, 5, 0), "pins 5/5 kept");
}

}  // namespace
}  // namespace ctxkit::context
