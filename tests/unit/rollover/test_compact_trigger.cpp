// [compact] at: the end of a supervised turn past the threshold hands the supervisor a compaction
// whose focus is the pins.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "pins/pin_scope.hpp"
#include "rollover/compact_trigger.hpp"
#include "store/state_access.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::rollover {
namespace {

std::string usage_line(int64_t tokens, const std::string& model = "claude-sonnet-4-5") {
  nlohmann::json j;
  j["type"] = "assistant";
  j["sessionId"] = "S1";
  j["timestamp"] = "2026-11-21T12:00:00.000Z";
  j["message"] = {{"id", "msg_1"},
                  {"model", model},
                  {"role", "assistant"},
                  {"content", nlohmann::json::array({{{"type", "text"}, {"text", "done"}}})},
                  {"usage",
                   {{"input_tokens", 5},
                    {"cache_creation_input_tokens", 0},
                    {"cache_read_input_tokens", tokens - 5},
                    {"output_tokens", 10}}}};
  return j.dump() + "\n";
}

struct TriggerHome {
  test::TempDir tmp;
  util::Env env = tmp.env();
  core::Config cfg;
  core::Locations loc;
  std::string transcript;
  explicit TriggerHome(int at, int64_t tokens, const std::string& model = "claude-sonnet-4-5") {
    env.set("CTXKIT_SUPERVISOR", "tok");
    cfg = core::load_config(env, {});
    cfg.compact.at = at;
    loc = cfg.locations(env);
    transcript = tmp.write("home/.claude/projects/-p/S1.jsonl", usage_line(tokens, model)).string();
  }
  std::optional<store::PendingRollover> pending() {
    std::string problem;
    auto s = store::open_state(loc, cfg, problem);
    EXPECT_TRUE(s) << problem;
    auto p = s->pending_rollover("tok");
    EXPECT_TRUE(p);
    return p ? *p : std::nullopt;
  }
};

TEST(CompactTrigger, ATurnEndingPastTheThresholdHandsACompactWithThePinsAsFocus) {
  TriggerHome h(50, 150000);  // 75 % of a 200k window
  {
    std::string problem;
    auto s = store::open_state(h.loc, h.cfg, problem);
    ASSERT_TRUE(s);
    auto scope = pins::resolve_pin_scope(*s, "S1", "/p");
    ASSERT_TRUE(scope);
    ASSERT_TRUE(pins::add_pin(*s, *scope, "port 8123", false));
  }
  EXPECT_EQ(request_compaction_if_due(h.cfg, h.loc, h.env, "S1", h.transcript, "/p"), "");
  auto p = h.pending();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->action, "compact");
  EXPECT_EQ(p->session_id, "S1");
  EXPECT_NE(p->focus.find("- port 8123\n"), std::string::npos) << p->focus;
  EXPECT_FALSE(p->ready);
}

TEST(CompactTrigger, BelowTheThresholdOffOrWithoutASupervisorNothing) {
  TriggerHome below(90, 150000);
  EXPECT_EQ(
      request_compaction_if_due(below.cfg, below.loc, below.env, "S1", below.transcript, "/p"), "");
  EXPECT_FALSE(below.pending());
  TriggerHome off(0, 190000);
  EXPECT_EQ(request_compaction_if_due(off.cfg, off.loc, off.env, "S1", off.transcript, "/p"), "");
  EXPECT_FALSE(off.pending());
  TriggerHome alone(50, 190000);
  util::Env no_supervisor = alone.tmp.env();
  EXPECT_EQ(
      request_compaction_if_due(alone.cfg, alone.loc, no_supervisor, "S1", alone.transcript, "/p"),
      "");
  EXPECT_FALSE(alone.pending());
}

// The trigger counts as the reminders count: the window the status line reported for the session
// (here 200k for a "[1m]" id, as the client gives it) wins over the model's own.
TEST(CompactTrigger, CountsAgainstTheWindowTheStatusLineReported) {
  TriggerHome h(50, 120000, "claude-sonnet-4-5[1m]");  // 12 % of 1M
  EXPECT_EQ(request_compaction_if_due(h.cfg, h.loc, h.env, "S1", h.transcript, "/p"), "");
  EXPECT_FALSE(h.pending());
  {
    std::string problem;
    auto meter = store::open_meter(h.loc, h.cfg, problem);
    ASSERT_TRUE(meter) << problem;
    ASSERT_TRUE(meter->record_status("S1", {120000, 200000, 1}));
  }
  EXPECT_EQ(request_compaction_if_due(h.cfg, h.loc, h.env, "S1", h.transcript, "/p"), "");
  auto p = h.pending();  // 60 % of 200k
  ASSERT_TRUE(p);
  EXPECT_EQ(p->action, "compact");
}

// After a turn whose replies came faster than the client's 300 ms status-line delay, the status
// line reports the window only after the turn's end: the trigger waits for it (up to its wait)
// instead of counting the model's default 1M window and deciding nothing is due.
TEST(CompactTrigger, WaitsForAWindowTheStatusLineReportsAfterTheTurnsEnd) {
  TriggerHome h(50, 120000, "claude-opus-4-8");  // 12 % of the rules' 1M, 60 % of 200k
  std::thread status_line([&h] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    std::string problem;
    auto meter = store::open_meter(h.loc, h.cfg, problem);
    ASSERT_TRUE(meter) << problem;
    ASSERT_TRUE(meter->record_status("S1", {120000, 200000, 1}));
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(request_compaction_if_due(h.cfg, h.loc, h.env, "S1", h.transcript, "/p",
                                      std::chrono::seconds(10)),
            "");
  status_line.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  auto p = h.pending();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->action, "compact");
}

// With no status line reporting, the wait ends and nothing is due, as before.
TEST(CompactTrigger, WithoutAStatusLineTheWaitEndsAndNothingIsDue) {
  TriggerHome h(50, 120000, "claude-opus-4-8");
  EXPECT_EQ(request_compaction_if_due(h.cfg, h.loc, h.env, "S1", h.transcript, "/p",
                                      std::chrono::milliseconds(200)),
            "");
  EXPECT_FALSE(h.pending());
}

TEST(CompactTrigger, APendingRolloverGoesFirst) {
  TriggerHome h(50, 150000);
  {
    std::string problem;
    auto s = store::open_state(h.loc, h.cfg, problem);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->put_pending_rollover({"tok", "S1", "S2", "/x.md", "/p", false, "rollover", ""}));
  }
  EXPECT_EQ(request_compaction_if_due(h.cfg, h.loc, h.env, "S1", h.transcript, "/p"), "");
  auto p = h.pending();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->action, "rollover");
}

}  // namespace
}  // namespace ctxkit::rollover
