#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "claude/hook_response.hpp"

namespace ctxkit::claude {
namespace {

TEST(HookResponse, PostToolUseCarriesAdditionalContextAndOptionalSystemMessage) {
  auto j = nlohmann::json::parse(post_tool_use_response("Context at 61% \"quoted\""));
  EXPECT_EQ(j["hookSpecificOutput"]["hookEventName"], "PostToolUse");
  EXPECT_EQ(j["hookSpecificOutput"]["additionalContext"], "Context at 61% \"quoted\"");
  EXPECT_FALSE(j.contains("systemMessage"));
  auto both = nlohmann::json::parse(post_tool_use_response("a", "b"));
  EXPECT_EQ(both["systemMessage"], "b");
}

TEST(HookResponse, SessionStartShapeIsExact) {
  EXPECT_EQ(
      session_start_response("Step 2 of 5: write the tests"),
      R"({"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Step 2 of 5: write the tests"}})");
  EXPECT_EQ(
      session_start_response("x", "shown to the human"),
      R"({"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x"},"systemMessage":"shown to the human"})");
}

TEST(HookResponse, InvalidUtf8IsReplacedNotThrown) {
  std::string out =
      additional_context_response(HookEvent::UserPromptSubmit, std::string("ok \xff\xfe end"));
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
  EXPECT_EQ(j["hookSpecificOutput"]["additionalContext"], "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
}

}  // namespace
}  // namespace ctxkit::claude
