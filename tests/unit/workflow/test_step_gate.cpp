#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "workflow/js_compat.hpp"
#include "workflow/step_gate.hpp"

namespace ctxkit::workflow {
namespace {

WorkflowTemplate load(const std::string& yaml) {
  auto t = parse_template(yaml);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : WorkflowTemplate{};
}

const char* kGate = R"(
name: g
description: d
loops:
  work:
    - id: code
      context: compact
      context_min_percent: 50
      instructions: |
        Implement {task.title}.
        Then test it.
    - id: check
      compact_focus: "check {task.id} only"
      instructions: Check
steps:
  - id: plan
    type: action
    context: clear
    context_min_percent: 30
    instructions: Plan it.
  - id: work
    type: loop
    context: compact
)";

TEST(StepGate, HandsOutThePendingActionWhenNoThreshold) {
  auto m = WorkflowMachine::start(
      load("name: n\ndescription: d\nsteps:\n  - id: a\n    type: action\n    context: compact\n   "
           " instructions: |\n      First line\n      second\n"));
  auto d = decide_gate(m, std::nullopt);
  EXPECT_EQ(d.action, ContextAction::Compact);
  EXPECT_EQ(d.focus, "Next workflow step: a - First line");
  m.mark_action_executed();
  EXPECT_EQ(decide_gate(m, std::nullopt).action, ContextAction::None);
}

TEST(StepGate, BelowMinPercentTheActionIsSkipped) {
  auto m = WorkflowMachine::start(load(kGate));
  auto d = decide_gate(m, 12.0);
  EXPECT_EQ(d.action, ContextAction::None);
  EXPECT_EQ(d.skipped, ContextAction::Clear);
  EXPECT_EQ(d.min_percent, 30.0);
}

TEST(StepGate, AtOrAboveMinPercentTheActionIsHandedOut) {
  auto m = WorkflowMachine::start(load(kGate));
  EXPECT_EQ(decide_gate(m, 30.0).action, ContextAction::Clear);
  EXPECT_EQ(decide_gate(m, 80.0).action, ContextAction::Clear);
}

TEST(StepGate, UnknownFigureHandsTheActionOut) {
  auto m = WorkflowMachine::start(load(kGate));
  EXPECT_EQ(decide_gate(m, std::nullopt).action, ContextAction::Clear);
}

TEST(StepGate, SubStepThresholdAndFocusBeatTheStep) {
  auto m = WorkflowMachine::start(load(kGate));
  m.mark_action_executed();
  m.advance("planned");
  ASSERT_TRUE(m.set_tasks("work", {{"t1", "Login", std::nullopt}}));
  auto low = decide_gate(m, 40.0);
  EXPECT_EQ(low.skipped, ContextAction::Compact);  // sub-step's 50 applies, not unset step's
  auto high = decide_gate(m, 60.0);
  EXPECT_EQ(high.action, ContextAction::Compact);
  EXPECT_EQ(high.focus, "Next workflow step: work / code (task t1: Login) - Implement Login.");
  m.mark_action_executed();
  m.advance("coded");
  // `check` has no context: the loop step's compact applies, with the sub-step's focus.
  auto d = decide_gate(m, std::nullopt);
  EXPECT_EQ(d.action, ContextAction::Compact);
  EXPECT_EQ(d.focus, "check t1 only");
}

TEST(StepGate, CommandOfAction) {
  EXPECT_EQ(command_of(ContextAction::Compact), "/compact");
  EXPECT_EQ(command_of(ContextAction::Clear), "/clear");
  EXPECT_EQ(command_of(ContextAction::None), "");
}

TEST(JsCompat, StringifyMatchesJavaScript) {
  using ojson = nlohmann::ordered_json;
  ojson o = ojson::object();
  o["b"] = 1;
  o["gone"] = ojson(ojson::value_t::discarded);
  o["10"] = "ten";
  o["2"] = "two";
  o["f"] = 0.5;
  o["big"] = 1e21;
  o["small"] = 1.5e-7;
  o["e"] = ojson::object();
  o["a"] = ojson::array();
  o["s"] = "tab\there \x01 \xE2\x80\xA8";
  EXPECT_EQ(js::stringify(o, 0),
            "{\"2\":\"two\",\"10\":\"ten\",\"b\":1,\"f\":0.5,\"big\":1e+21,\"small\":1.5e-7,\"e\":{"
            "},\"a\":[],\"s\":\"tab\\there \\u0001 \xE2\x80\xA8\"}");
  ojson n = ojson::object();
  n["x"] = ojson::array({1, 2});
  EXPECT_EQ(js::stringify(n, 2), "{\n  \"x\": [\n    1,\n    2\n  ]\n}");
  EXPECT_EQ(js::stringify(ojson(100.0), 0), "100");
  EXPECT_EQ(js::stringify(ojson(123456.789), 0), "123456.789");
}

// Strings, keys and integers written without the library's serializer give its bytes exactly.
TEST(JsCompat, ScalarsAsTheLibraryWritesThem) {
  using ojson = nlohmann::ordered_json;
  const std::string alphabet = std::string("ab\"\\/\t\n\x01\x1f\x7f ") + std::string(1, '\0') +
                               "\xC3\xA9\xE2\x80\xA8\xFF\xF0\x9F\x98";
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int i = static_cast<int>(rng() % 12); i > 0; --i)
      text += alphabet[rng() % alphabet.size()];
    ojson o = ojson::object();
    o[text] = text;
    ASSERT_EQ(js::stringify(o, 0),
              "{" + ojson(text).dump(-1, ' ', false, ojson::error_handler_t::replace) + ":" +
                  ojson(text).dump(-1, ' ', false, ojson::error_handler_t::replace) + "}");
  }
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, INT64_MIN, INT64_MAX})
    EXPECT_EQ(js::stringify(ojson(v), 0), ojson(v).dump());
  EXPECT_EQ(js::stringify(ojson(UINT64_MAX), 0), "18446744073709551615");
  EXPECT_EQ(js::stringify(ojson(true), 0), "true");
  EXPECT_EQ(js::stringify(ojson(nullptr), 0), "null");
}

TEST(JsCompat, TrimRemovesJavaScriptWhiteSpace) {
  EXPECT_EQ(js::trim("\xC2\xA0 \t x y \n\xE3\x80\x80"), "x y");
  EXPECT_EQ(js::trim("   "), "");
}

TEST(JsCompat, ReplacementIsLiteral) {
  EXPECT_EQ(js::replace_all("a{x}b{x}", "{x}", "[$&|$$]"), "a[$&|$$]b[$&|$$]");
  EXPECT_EQ(js::replace_all("{x}", "", "y"), "{x}");
}

}  // namespace
}  // namespace ctxkit::workflow
