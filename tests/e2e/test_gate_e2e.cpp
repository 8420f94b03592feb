#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/locations.hpp"
#include "e2e/e2e_support.hpp"
#include "unit/json_variants.hpp"
#include "workflow/workflow_events.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// A recorded version and model, its payloads as recorded or rewritten (keys reversed, spaced,
// unknown keys added at every depth).
struct Recorded {
  std::string set;
  std::optional<JsonVariant> variant;
};

std::vector<Recorded> recorded() {
  std::vector<Recorded> out;
  for (const auto& set : fixture_sets("b_sessionstart/additionalContext/hooks.jsonl")) {
    out.push_back({set, std::nullopt});
    for (auto v : all_json_variants()) out.push_back({set, v});
  }
  return out;
}

// The SessionStart payloads the client sent (one per source), as recorded for the set.
std::map<std::string, std::string> session_start_payloads_of(const Recorded& r) {
  std::map<std::string, std::string> by_source;
  {
    std::ifstream in(fixture_path(r.set, "b_sessionstart/additionalContext/hooks.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      auto rec = json::parse(line, nullptr, false);
      if (rec.is_discarded() || rec.value("event", "") != "SessionStart") continue;
      const std::string raw = rec.value("stdin_raw", "");
      auto payload = json::parse(raw, nullptr, false);
      if (payload.is_discarded()) continue;
      by_source.emplace(payload.value("source", ""),
                        r.variant ? json_variant(raw, *r.variant) : raw);
    }
  }
  return by_source;
}

const char* kTemplate = R"(
name: gate-demo
description: Gate end to end
steps:
  - id: plan
    type: action
    instructions: Plan the work.
  - id: build
    type: loop
    context: compact
loops:
  build:
    - id: code
      instructions: |
        Write {task.title}.
        Keep it small.
    - id: review
      context: clear
      instructions: Review {task.id}.
)";

struct GateBench {
  TempDir tmp;
  fs::path wt;
  util::Env env;
  GateBench() : wt(tmp.path() / "wt"), env(tmp.env()) {
    fs::create_directories(wt);
    env.set("CLAUDE_PROJECT_DIR", wt.string());
    tmp.write("gate-demo.yaml", kTemplate);
  }
  util::ProcessResult wf(std::vector<std::string> args, const std::string& in = "") {
    args.insert(args.begin(), {"--worktree", wt.string()});
    return run_tool("ctx-workflow", args, in, env);
  }
  util::ProcessResult gate(std::vector<std::string> args, const std::string& in = "") {
    return run_tool("ctx-gate", args, in, env);
  }
};

class GateOnRecorded : public ::testing::TestWithParam<Recorded> {
 protected:
  std::map<std::string, std::string> recorded_session_start_payloads() const {
    return session_start_payloads_of(GetParam());
  }
};

TEST_P(GateOnRecorded, RecordedPayloadsForEverySourceArePresent) {
  const auto p = recorded_session_start_payloads();
  for (const char* s : {"startup", "resume", "clear", "compact"}) EXPECT_TRUE(p.count(s)) << s;
}

TEST(GateE2E, CommandAnswersNothingThenCompactWithFocusThenNothingAgain) {
  GateBench b;
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "gate-demo.yaml").string()}).exit_code, 0);
  auto none = b.gate({"--json"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(json::parse(none.out)["action"], "none");
  ASSERT_EQ(b.wf({"advance", "--output", "planned"}).exit_code,
            0);  // at the loop without tasks: compact handed out by advance
  ASSERT_EQ(b.wf({"set-tasks", "build", "-"}, R"([{"id":"t1","title":"Login form"}])").exit_code,
            0);
  // Tasks set at the loop: the first sub-step's compact is pending; the gate hands it out once.
  auto first = b.gate({});
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_EQ(
      first.out,
      "/compact Next workflow step: build / code (task t1: Login form) - Write Login form.\n");
  auto again = b.gate({"--json"});
  EXPECT_EQ(json::parse(again.out)["action"], "none");
  // The state file carries the flag, in the reference format.
  EXPECT_NE(read_file(b.wt / "workflow-state.json").find("\"contextActionExecuted\": true"),
            std::string::npos);
  ASSERT_EQ(b.wf({"advance", "--output", "coded"}).exit_code,
            0);  // review: clear handed out by advance
  EXPECT_EQ(json::parse(b.gate({"--json"}).out)["action"], "none");
}

// Whoever takes the gate (the command, ctx-workflow's advance), an action is handed out once and
// recorded once in the state database, by the one that took it.
TEST(GateE2E, EachActionIsRecordedOnceByWhoeverTookIt) {
  GateBench b;
  const fs::path db = core::Locations::resolve(b.env).state_db();
  auto handed_out = [&] {
    std::vector<std::string> out;
    for (const auto& r : workflow::read_events(db, 1000, b.wt))
      if (r.event.kind == "handed_out") out.push_back(r.event.action + " by " + r.event.by);
    return out;
  };
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "gate-demo.yaml").string()}).exit_code, 0);
  ASSERT_EQ(b.wf({"advance", "--output", "planned"}).exit_code, 0);
  ASSERT_EQ(b.wf({"set-tasks", "build", "-"}, R"([{"id":"t1","title":"Login form"}])").exit_code,
            0);
  const auto before = handed_out();
  ASSERT_EQ(b.gate({}).exit_code, 0);
  ASSERT_EQ(b.gate({"--json"}).exit_code, 0);
  auto after_gate = handed_out();
  ASSERT_EQ(after_gate.size(), before.size() + 1);
  EXPECT_EQ(after_gate.back(), "compact by ctx-gate");
  ASSERT_EQ(b.wf({"advance", "--output", "coded"}).exit_code, 0);
  ASSERT_EQ(b.gate({"--json"}).exit_code, 0);
  auto after_advance = handed_out();
  ASSERT_EQ(after_advance.size(), before.size() + 2);
  EXPECT_EQ(after_advance.back(), "clear by workflow_advance");
}

TEST_P(GateOnRecorded, HookAnswersOnlyForClearAndCompact) {
  GateBench b;
  const auto payloads = recorded_session_start_payloads();
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "gate-demo.yaml").string(), "--summary", "gate demo"})
                .exit_code,
            0);
  for (const char* source : {"startup", "resume"}) {
    auto r = b.gate({"--hook"}, payloads.at(source));
    EXPECT_EQ(r.exit_code, 0) << source;
    EXPECT_EQ(r.out, "") << source;
  }
  for (const char* source : {"clear", "compact"}) {
    auto r = b.gate({"--hook"}, payloads.at(source));
    EXPECT_EQ(r.exit_code, 0) << source << r.err;
    auto out = json::parse(r.out);
    EXPECT_EQ(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    const std::string text = out["hookSpecificOutput"]["additionalContext"];
    EXPECT_NE(text.find("Workflow \"gate-demo\" is in progress"), std::string::npos) << text;
    EXPECT_NE(text.find("Request: gate demo"), std::string::npos);
    EXPECT_NE(text.find("Current step: plan (1 of 2)"), std::string::npos);
    EXPECT_NE(text.find("Plan the work."), std::string::npos);
  }
}

// The re-anchor names the archive's search tool when the session has it, and only then.
TEST_P(GateOnRecorded, HookNamesTheArchiveSearchToolWhenItIsRegistered) {
  GateBench b;
  const auto payloads = recorded_session_start_payloads();
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "gate-demo.yaml").string()}).exit_code, 0);
  auto text_of = [&](const char* source) {
    auto r = b.gate({"--hook"}, payloads.at(source));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["hookSpecificOutput"]["additionalContext"].get<std::string>();
  };
  EXPECT_EQ(text_of("compact").find("archive_search"), std::string::npos);
  b.tmp.write(
      "home/.claude.json",
      R"({"mcpServers":{"ctxkit-archive":{"type":"stdio","command":"/x/ctx-archive-mcp"}}})");
  const std::string sid = json::parse(payloads.at("compact"))["session_id"];
  EXPECT_NE(text_of("compact").find(
                "call mcp__ctxkit-archive__archive_search with the words you remember (session \"" +
                sid + "\""),
            std::string::npos);
  EXPECT_NE(text_of("clear").find(
                "Earlier sessions, the one before this /clear included, are archived and "
                "searchable: when the "
                "work needs a detail from them, call mcp__ctxkit-archive__archive_search"),
            std::string::npos);
}

TEST_P(GateOnRecorded, HookConfirmsTheActionAndReanchorsTheSubStep) {
  GateBench b;
  const auto payloads = recorded_session_start_payloads();
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "gate-demo.yaml").string()}).exit_code, 0);
  ASSERT_EQ(b.wf({"set-tasks", "build", "-"},
                 R"([{"id":"t1","title":"Login form"},{"id":"t2","title":"Logout"}])")
                .exit_code,
            0);
  ASSERT_EQ(b.wf({"advance", "--output", "plan: two tasks"}).exit_code,
            0);  // compact handed out for build/code
  auto r = b.gate({"--hook"}, payloads.at("compact"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = json::parse(r.out)["hookSpecificOutput"]["additionalContext"];
  EXPECT_NE(text.find("sub-step code (1 of 2), task t1: Login form (1 of 2)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Write Login form.\nKeep it small."), std::string::npos) << text;
  EXPECT_NE(text.find("Latest handoff (plan):\nplan: two tasks"), std::string::npos) << text;
  // The confirmation is in the event log and shown by ctx-workflow status.
  auto st = b.wf({"status"});
  EXPECT_NE(st.out.find("Context action (compact): handed out at "), std::string::npos) << st.out;
  EXPECT_NE(st.out.find(" by workflow_advance; confirmed at "), std::string::npos) << st.out;
  EXPECT_NE(st.out.find(" by session-start:"), std::string::npos) << st.out;
}

TEST_P(GateOnRecorded, HookMarksAnActionDoneBeforeAnyoneAskedForIt) {
  GateBench b;
  const auto payloads = recorded_session_start_payloads();
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "gate-demo.yaml").string()}).exit_code, 0);
  ASSERT_EQ(b.wf({"advance", "--output", "p"}).exit_code, 0);
  ASSERT_EQ(b.wf({"set-tasks", "build", "-"}, R"([{"id":"t1","title":"A"}])").exit_code,
            0);  // compact pending, not handed out
  ASSERT_EQ(b.gate({"--hook"}, payloads.at("compact")).exit_code, 0);
  EXPECT_EQ(json::parse(b.gate({"--json"}).out)["action"], "none");  // the compact already happened
}

TEST_P(GateOnRecorded, HookFailsOpenOnBadInputAndMissingState) {
  GateBench b;
  const auto payloads = recorded_session_start_payloads();
  auto no_state = b.gate({"--hook"}, payloads.at("clear"));
  EXPECT_EQ(no_state.exit_code, 0);
  EXPECT_EQ(no_state.out, "");
  auto garbage = b.gate({"--hook"}, "not json");
  EXPECT_EQ(garbage.exit_code, 0);
  EXPECT_EQ(garbage.out, "");
  b.tmp.write("wt/workflow-state.json", "{broken");
  auto broken = b.gate({"--hook"}, payloads.at("compact"));
  EXPECT_EQ(broken.exit_code, 0);
  EXPECT_EQ(broken.out, "");
  EXPECT_NE(broken.err.find("ctx-gate: note: "), std::string::npos);
}

TEST_P(GateOnRecorded, ReanchorIsBounded) {
  GateBench b;
  const auto payloads = recorded_session_start_payloads();
  std::string big =
      "name: big\ndescription: d\nsteps:\n  - id: s\n    type: action\n    instructions: \"";
  for (int i = 0; i < 5000; ++i) big += "word ";
  big += "\"\n";
  b.tmp.write("big.yaml", big);
  ASSERT_EQ(b.wf({"start", (b.tmp.path() / "big.yaml").string()}).exit_code, 0);
  auto r = b.gate({"--hook", "--max-tokens", "500"}, payloads.at("clear"));
  const std::string text = json::parse(r.out)["hookSpecificOutput"]["additionalContext"];
  EXPECT_LE(text.size(), 2000u);
  EXPECT_NE(text.find("[... cut:"), std::string::npos);
  auto dflt = b.gate({"--hook"}, payloads.at("clear"));
  EXPECT_LE(
      json::parse(dflt.out)["hookSpecificOutput"]["additionalContext"].get<std::string>().size(),
      8000u);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, GateOnRecorded, ::testing::ValuesIn(recorded()),
                         [](const ::testing::TestParamInfo<Recorded>& p) {
                           return fixture_set_name(p.param.set) + "_" +
                                  (p.param.variant ? variant_name(*p.param.variant) : "Recorded");
                         });

}  // namespace
}  // namespace ctxkit::test
