#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "unit/temp_dir.hpp"
#include "workflow/workflow_template.hpp"

namespace ctxkit::workflow {
namespace {

std::string error_of(const std::string& yaml, const std::string& source = "w.yaml") {
  auto r = parse_template(yaml, source);
  EXPECT_FALSE(r.has_value()) << yaml;
  return r ? std::string() : r.error().message;
}

TEST(WorkflowTemplate, LoadsLanesFormatWithLoopsAgentsAndContext) {
  auto t = parse_template(R"(
name: context-example
description: Example
agents:
  coder:
    description: Writes code
    tools: [Read, Edit]
    cannot: [push]
steps:
  - id: brainstorm
    type: action
    context: clear
    instructions: Brainstorm.
  - id: implement_loop
    type: loop
    context: compact
  - id: refine
    type: ralph
    n: 3
    agent: coder
    instructions: Refine.
loops:
  implement_loop:
    - id: code
      agent: coder
      context: clear
      on_fail: retry
      instructions: "Implement {task.title}"
)");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->name, "context-example");
  ASSERT_EQ(t->steps.size(), 3u);
  EXPECT_EQ(t->steps[0].context, ContextAction::Clear);
  EXPECT_EQ(t->steps[1].type, StepType::Loop);
  EXPECT_EQ(t->steps[1].context, ContextAction::Compact);
  EXPECT_EQ(t->steps[2].n, 3);
  ASSERT_NE(t->loop("implement_loop"), nullptr);
  EXPECT_EQ(t->loop("implement_loop")->front().context, ContextAction::Clear);
  EXPECT_EQ(t->loop("implement_loop")->front().on_fail, "retry");
  EXPECT_EQ(t->agents.front().name, "coder");
  // The snapshot keeps the document in its own key order.
  EXPECT_EQ(t->definition.begin().key(), "name");
  EXPECT_EQ(t->definition["steps"][2]["n"], 3);
}

// Plan task 5: the loader rejects an invalid context value and accepts both valid ones.
TEST(WorkflowTemplate, RejectsInvalidStepContextWithExactMessage) {
  EXPECT_EQ(error_of("name: invalid-context\ndescription: A template\nsteps:\n  - id: step1\n    "
                     "type: action\n    context: invalid\n"
                     "    instructions: Do something\n"),
            "w.yaml:6:14: Step 'step1' context must be either 'compact' or 'clear', got: invalid");
}

TEST(WorkflowTemplate, AcceptsContextClear) {
  auto t = parse_template(
      "name: valid-clear\ndescription: A template\nsteps:\n  - id: step1\n    type: action\n    "
      "context: clear\n"
      "    instructions: Do something\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->steps[0].context, ContextAction::Clear);
}

TEST(WorkflowTemplate, AcceptsContextCompact) {
  auto t = parse_template(
      "name: valid-compact\ndescription: A template\nsteps:\n  - id: step1\n    type: action\n    "
      "context: compact\n"
      "    instructions: Do something\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->steps[0].context, ContextAction::Compact);
}

TEST(WorkflowTemplate, RejectsInvalidLoopStepContextWithExactMessage) {
  EXPECT_EQ(error_of("name: n\ndescription: d\nloops:\n  l:\n    - id: sub1\n      instructions: "
                     "x\n      context: wipe\n"
                     "steps:\n  - id: l\n    type: loop\n"),
            "w.yaml:7:16: Loop step 'sub1' context must be either 'compact' or 'clear', got: wipe");
}

TEST(WorkflowTemplate, RejectsNonStringContext) {
  EXPECT_EQ(error_of("name: n\ndescription: d\nsteps:\n  - id: s\n    type: action\n    "
                     "instructions: x\n    context: 3\n"),
            "w.yaml:7:14: Step 's' context must be a string");
  EXPECT_EQ(error_of("name: n\ndescription: d\nloops:\n  l:\n    - id: a\n      instructions: x\n  "
                     "    context: [1]\n"
                     "steps:\n  - id: l\n    type: loop\n"),
            "w.yaml:7:16: Loop step 'a' context must be a string");
}

TEST(WorkflowTemplate, EveryTopLevelMessage) {
  EXPECT_EQ(error_of("- a\n"), "w.yaml:1:1: Template must be an object");
  EXPECT_EQ(error_of("description: d\nsteps: []\n"),
            "w.yaml:1:1: Template must have a 'name' string");
  EXPECT_EQ(error_of("name: 5\ndescription: d\n"),
            "w.yaml:1:7: Template must have a 'name' string");
  EXPECT_EQ(error_of("name: n\n"), "w.yaml:1:1: Template must have a 'description' string");
  EXPECT_EQ(error_of("name: n\ndescription: d\nagents: [a]\n"),
            "w.yaml:3:9: 'agents' must be an object if provided");
  EXPECT_EQ(error_of("name: n\ndescription: d\nloops: 4\n"),
            "w.yaml:3:8: 'loops' must be an object if provided");
  EXPECT_EQ(error_of("name: n\ndescription: d\n"),
            "w.yaml:1:1: Template must have a 'steps' array");
  EXPECT_EQ(error_of("name: n\ndescription: d\nsteps: []\n"),
            "w.yaml:3:8: Template must have at least one step");
}

TEST(WorkflowTemplate, EmptyDocumentIsNotAnObject) {
  auto r = parse_template("", "w.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "w.yaml: Template must be an object");
}

TEST(WorkflowTemplate, AgentMessages) {
  const std::string head = "name: n\ndescription: d\n";
  EXPECT_EQ(error_of(head + "agents:\n  a: 1\n"), "w.yaml:4:6: Agent 'a' must be an object");
  EXPECT_EQ(error_of(head + "agents:\n  a:\n    tools: []\n"),
            "w.yaml:5:5: Agent 'a' must have a 'description' string");
  EXPECT_EQ(error_of(head + "agents:\n  a:\n    description: x\n    tools: Read\n"),
            "w.yaml:6:12: Agent 'a' tools must be an array if provided");
  EXPECT_EQ(error_of(head + "agents:\n  a:\n    description: x\n    tools: [1]\n"),
            "w.yaml:6:13: Agent 'a' tools must be strings");
  EXPECT_EQ(error_of(head + "agents:\n  a:\n    description: x\n    cannot: no\n"),
            "w.yaml:6:13: Agent 'a' cannot must be an array if provided");
  EXPECT_EQ(error_of(head + "agents:\n  a:\n    description: x\n    cannot: [true]\n"),
            "w.yaml:6:14: Agent 'a' cannot restrictions must be strings");
}

TEST(WorkflowTemplate, LoopMessages) {
  const std::string head = "name: n\ndescription: d\nloops:\n  l:\n";
  EXPECT_EQ(error_of("name: n\ndescription: d\nloops:\n  l: 3\n"),
            "w.yaml:4:6: Loop 'l' must be an array of steps");
  EXPECT_EQ(error_of(head + "    - 3\n"), "w.yaml:5:7: Loop 'l' step 0 must be an object");
  EXPECT_EQ(error_of(head + "    - instructions: x\n"),
            "w.yaml:5:7: Loop 'l' step 0 must have an 'id' string");
  EXPECT_EQ(error_of(head + "    - id: a\n"),
            "w.yaml:5:7: Loop 'l' step 'a' must have an 'instructions' string");
  EXPECT_EQ(error_of(head + "    - id: a\n      instructions: x\n      agent: 1\n"),
            "w.yaml:7:14: Loop 'l' step 'a' agent must be a string if provided");
  EXPECT_EQ(error_of(head + "    - id: a\n      instructions: x\n      on_fail: later\n"),
            "w.yaml:7:16: Loop 'l' step 'a' on_fail must be one of: retry, skip, abort");
  EXPECT_EQ(
      error_of(head + "    - id: a\n      instructions: x\n    - id: a\n      instructions: y\n"),
      "w.yaml:7:11: Loop 'l' step 'a' is defined more than once");
}

TEST(WorkflowTemplate, StepMessages) {
  const std::string head = "name: n\ndescription: d\nsteps:\n";
  EXPECT_EQ(error_of(head + "  - 1\n"), "w.yaml:4:5: Step 0 must be an object");
  EXPECT_EQ(error_of(head + "  - type: action\n"), "w.yaml:4:5: Step 0 must have an 'id' string");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: task\n"),
            "w.yaml:5:11: Step 's' must have a 'type' of 'action', 'loop', or 'ralph'");
  EXPECT_EQ(error_of(head + "  - id: s\n"),
            "w.yaml:4:5: Step 's' must have a 'type' of 'action', 'loop', or 'ralph'");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: action\n    agent: [x]\n    instructions: i\n"),
            "w.yaml:6:12: Step 's' agent must be a string if provided");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: action\n"),
            "w.yaml:4:5: Action step 's' must have an 'instructions' string");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: ralph\n    n: 2\n"),
            "w.yaml:4:5: Ralph step 's' must have an 'instructions' string");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: ralph\n    instructions: i\n"),
            "w.yaml:4:5: Ralph step 's' must have an 'n' field with a positive integer value");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: ralph\n    instructions: i\n    n: 0\n"),
            "w.yaml:7:8: Ralph step 's' must have an 'n' field with a positive integer value");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: ralph\n    instructions: i\n    n: 1.5\n"),
            "w.yaml:7:8: Ralph step 's' must have an 'n' field with a positive integer value");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: ralph\n    instructions: i\n    n: \"3\"\n"),
            "w.yaml:7:8: Ralph step 's' must have an 'n' field with a positive integer value");
  EXPECT_EQ(error_of(head + "  - id: s\n    type: action\n    instructions: i\n  - id: s\n    "
                            "type: action\n    instructions: j\n"),
            "w.yaml:7:9: Step 's' is defined more than once");
}

TEST(WorkflowTemplate, CrossReferenceMessages) {
  EXPECT_EQ(error_of("name: n\ndescription: d\nsteps:\n  - id: s\n    type: action\n    agent: "
                     "ghost\n    instructions: i\n"),
            "w.yaml:6:12: Step 's' references unknown agent 'ghost'");
  EXPECT_EQ(error_of("name: n\ndescription: d\nloops:\n  s:\n    - id: a\n      agent: ghost\n     "
                     " instructions: i\n"
                     "steps:\n  - id: s\n    type: loop\n"),
            "w.yaml:6:14: Loop 's' step 'a' references unknown agent 'ghost'");
  EXPECT_EQ(error_of("name: n\ndescription: d\nsteps:\n  - id: work\n    type: loop\n"),
            "w.yaml:4:5: Loop step 'work' references unknown loop definition");
}

TEST(WorkflowTemplate, YamlSyntaxErrorNamesFileAndPosition) {
  const auto msg = error_of("name: [unclosed\ndescription: d\n");
  EXPECT_EQ(msg.rfind("w.yaml:", 0), 0u) << msg;
  EXPECT_NE(msg.find("Invalid YAML syntax: "), std::string::npos) << msg;
}

TEST(WorkflowTemplate, UnknownKeysAndExtensionsAreAccepted) {
  auto t = parse_template(R"(
name: n
description: d
version: 7
steps:
  - id: s
    type: action
    instructions: i
    context: compact
    compact_focus: keep the plan
    context_min_percent: 40
    colour: blue
)");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->steps[0].compact_focus, "keep the plan");
  EXPECT_EQ(t->steps[0].context_min_percent, 40.0);
  EXPECT_EQ(t->definition["steps"][0]["colour"], "blue");
}

TEST(WorkflowTemplate, ExtensionMessages) {
  const std::string head =
      "name: n\ndescription: d\nsteps:\n  - id: s\n    type: action\n    instructions: i\n";
  EXPECT_EQ(error_of(head + "    compact_focus: [a]\n"),
            "w.yaml:7:20: Step 's' compact_focus must be a string");
  EXPECT_EQ(error_of(head + "    context_min_percent: 120\n"),
            "w.yaml:7:26: Step 's' context_min_percent must be a number from 0 to 100");
  EXPECT_EQ(error_of(head + "    context_min_percent: lots\n"),
            "w.yaml:7:26: Step 's' context_min_percent must be a number from 0 to 100");
}

TEST(WorkflowTemplate, ScalarsResolveByTheYaml12CoreSchema) {
  auto t = parse_template(
      "name: n\ndescription: d\nsteps:\n  - id: s\n    type: ralph\n    instructions: i\n    n: "
      "0x3\n    "
      "artefacts: yes\n    flag: true\n    nothing: ~\n    quoted: \"true\"\n");
  ASSERT_TRUE(t) << t.error().message;
  const auto& s = t->definition["steps"][0];
  EXPECT_EQ(s["n"], 3);
  EXPECT_EQ(s["artefacts"], "yes");
  EXPECT_EQ(s["flag"], true);
  EXPECT_TRUE(s["nothing"].is_null());
  EXPECT_EQ(s["quoted"], "true");
}

TEST(WorkflowTemplate, NumbersAndNearMissesResolveLikeTheCoreSchema) {
  const std::vector<std::pair<std::string, nlohmann::ordered_json>> cases = {
      {"12", 12},     {"+12", 12},      {"-7", -7},       {"0o17", 15},     {"0x1F", 31},
      {"0xff", 255},  {"1.5", 1.5},     {"1.", 1},        {".5", 0.5},      {"-.5", -0.5},
      {"1e3", 1000},  {"2.5E-1", 0.25}, {"+1.0e+2", 100}, {"0o8", "0o8"},   {"0x", "0x"},
      {"0xg", "0xg"}, {"1e", "1e"},     {".", "."},       {"+", "+"},       {"1.2.3", "1.2.3"},
      {"e3", "e3"},   {"12a", "12a"},   {"+-1", "+-1"},   {"0O17", "0O17"}, {"1_000", "1_000"}};
  for (const auto& [text, want] : cases) {
    auto t = parse_template(
        "name: n\ndescription: d\nsteps:\n  - id: s\n    type: ralph\n    n: 1\n    instructions: "
        "i\n    v: " +
        text + "\n");
    ASSERT_TRUE(t) << text << ": " << t.error().message;
    EXPECT_EQ(t->definition["steps"][0]["v"], want) << text;
  }
}

TEST(WorkflowTemplate, WithoutSourceTheMessageHasOnlyThePosition) {
  auto r = parse_template("name: n\ndescription: d\nsteps: []\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "3:8: Template must have at least one step");
}

TEST(WorkflowTemplate, FromJsonValidatesTheSnapshot) {
  auto ok = template_from_json(nlohmann::ordered_json::parse(
      R"({"name":"n","description":"d","steps":[{"id":"a","type":"action","instructions":"x"}]})"));
  ASSERT_TRUE(ok);
  auto bad = template_from_json(nlohmann::ordered_json::parse(
      R"({"name":"n","description":"d","steps":[{"id":"a","type":"x"}]})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "workflow_definition: Step 'a' must have a 'type' of 'action', 'loop', or 'ralph'");
}

TEST(WorkflowTemplate, DuplicateKeysAreAYamlError) {
  EXPECT_EQ(error_of("name: n\ndescription: d\nname: again\n"),
            "w.yaml:3:1: Invalid YAML syntax: Map keys must be unique");
}

// Every template the reference server was given, with the message it answered: ours is the same
// after the "file:line:col: " prefix, except where ctxkit differs on purpose.
// Aliases expand each time they are used: ten of the line before, eight lines deep, are 10^8
// nodes from 500 bytes. Refused in one line, fast, whatever the aliases multiply to.
std::string alias_bomb(const std::string& head) {
  std::string y = head + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    y += "]\n";
  }
  return y;
}

TEST(WorkflowTemplate, AnAliasBombIsRefusedInOneLine) {
  const std::string bomb =
      alias_bomb("name: n\ndescription: d\nsteps:\n  - {id: s, type: action, instructions: i}\n");
  ASSERT_LT(bomb.size(), 600u);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = error_of(bomb);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_NE(e.find("w.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("expands to more than 100000 nodes"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  // One alias of a long text, used many times: bounded by its size.
  std::string text =
      "name: n\ndescription: d\nsteps:\n  - {id: s, type: action, instructions: i}\nbig: &b " +
      std::string(1 << 20, 'x') + "\nmany: [";
  for (int i = 0; i < 40; ++i) text += std::string(i ? ", " : "") + "*b";
  EXPECT_NE(error_of(text + "]\n").find("expands to more than 16 MiB of text"), std::string::npos);
  // Nesting stops at 64 levels.
  EXPECT_NE(error_of("name: n\ndescription: d\nsteps: " + std::string(80, '[') +
                     std::string(80, ']') + "\n")
                .find("nested deeper than 64 levels"),
            std::string::npos);
  // Aliases that stay small are fine.
  EXPECT_TRUE(parse_template(
      "name: n\ndescription: d\ni: &i Do it.\nsteps:\n  - {id: a, type: action, instructions: *i}\n"
      "  - {id: b, type: action, instructions: *i}\n"));
}

TEST(WorkflowTemplate, AnAliasIntoItsOwnNodeIsAnErrorNotACrash) {
  EXPECT_EQ(error_of("name: n\ndescription: d\nsteps: &a [ *a ]\n"),
            "w.yaml:3:8: Invalid YAML: an alias refers to a node that contains it (the document "
            "would never end)");
  EXPECT_NE(error_of("name: n\ndescription: d\nsteps:\n  - &m {id: s, type: action, instructions: "
                     "i, more: *m}\n")
                .find("an alias refers to a node that contains it"),
            std::string::npos);
}

TEST(WorkflowTemplate, SameMessagesAsTheReferenceForEveryRecordedTemplate) {
  const auto cases = nlohmann::json::parse(
      test::read_file(test::fixtures().parent_path() / "lanes" / "validation.json"));
  const std::map<std::string, std::string> differs = {
      // The design's wording for sub-steps (the reference says "Loop 'l' step 'a' ...").
      {"22-loop-step-context-number", "Loop step 'a' context must be a string"},
      {"23-loop-step-context-bad",
       "Loop step 'a' context must be either 'compact' or 'clear', got: reset"},
      {"24-loop-step-context-null", "Loop step 'a' context must be a string"},
      // Duplicate step ids are rejected (the reference loads them and cannot leave the first).
      {"60-ok-duplicate-step-ids", "Step 's' is defined more than once"}};
  int checked = 0;
  for (const auto& c : cases) {
    if (!c.contains("yaml")) continue;
    const std::string name = c["template"];
    auto r = parse_template(c["yaml"].get<std::string>(), "t.yaml");
    std::string got;
    if (!r) {
      got = r.error().message.substr(std::string("t.yaml:").size());  // "L:C: msg" or " msg"
      got = got[0] == ' ' ? got.substr(1) : got.substr(got.find(": ") + 2);
    }
    std::string want;
    if (c["start"]["isError"].get<bool>())
      want = nlohmann::json::parse(c["start"]["text"].get<std::string>())["error"];
    if (differs.count(name)) want = differs.at(name);
    if (want.rfind("Invalid YAML syntax: ", 0) == 0 &&
        want.find("Map keys must be unique") == std::string::npos) {
      // The parsers' own texts differ; both say it is a syntax error.
      EXPECT_EQ(got.rfind("Invalid YAML syntax: ", 0), 0u) << name << ": " << got;
    } else if (want.rfind("Invalid YAML syntax: Map keys must be unique", 0) == 0) {
      EXPECT_EQ(got, "Invalid YAML syntax: Map keys must be unique") << name;
    } else {
      EXPECT_EQ(got, want) << name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

}  // namespace
}  // namespace ctxkit::workflow
