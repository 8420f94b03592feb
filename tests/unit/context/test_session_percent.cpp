#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "context/context_meter.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::context {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// An assistant line whose usage says the context holds `tokens` (5 input, the rest cache read).
std::string reading(int64_t tokens) {
  json j;
  j["type"] = "assistant";
  j["isSidechain"] = false;
  j["timestamp"] = "2026-11-21T12:00:00.000Z";
  j["message"] = {{"id", "msg_" + std::to_string(tokens)},
                  {"model", "claude-sonnet-4-5"},
                  {"role", "assistant"},
                  {"content", json::array({{{"type", "text"}, {"text", "hi"}}})},
                  {"usage",
                   {{"input_tokens", 5},
                    {"cache_creation_input_tokens", 0},
                    {"cache_read_input_tokens", tokens - 5}}}};
  return j.dump() + "\n";
}

std::string user_line(const std::string& text) {
  return json{{"type", "user"}, {"message", {{"role", "user"}, {"content", text}}}}.dump() + "\n";
}

constexpr const char* kSid = "0b5e1a52-7c1d-4b8e-9a51-3f1f2b0c9d10";

// The defaults: a 200,000-token window less 33,000 reserved, so 167,000 usable tokens are 100%.
struct SessionBench {
  test::TempDir tmp;
  // The client compacts at 167k of its 200k window (it is told an auto-compact window).
  util::Env env = [this] {
    util::Env e = tmp.env();
    e.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000");
    return e;
  }();
  core::Locations loc = core::Locations::resolve(env);
  core::ContextConfig cfg;
  fs::path transcript(const std::string& project, const std::string& sid) const {
    return tmp / ("home/.claude/projects/" + project + "/" + sid + ".jsonl");
  }
};

TEST(SessionPercent, ASessionFoundByItsIdStandsAtItsNewestReading) {
  SessionBench b;
  b.tmp.write(
      "home/.claude/projects/-proj/" + std::string(kSid) + ".jsonl",
      user_line("start") + reading(16700) + user_line("more") + reading(83500) + user_line("last"));
  auto p = session_percent(kSid, b.env, b.loc, b.cfg);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 50.0);  // 83,500 of 167,000: the newest reading, not the first
  // The window is the basis when configured so: 83,500 of 200,000.
  core::ContextConfig window = b.cfg;
  window.basis = core::Basis::Window;
  EXPECT_EQ(session_percent(kSid, b.env, b.loc, window), std::optional<double>(41.0));
}

TEST(SessionPercent, NoIdNoSessionOrNoReadingIsNoFigure) {
  SessionBench b;
  EXPECT_EQ(session_percent("", b.env, b.loc, b.cfg), std::nullopt);
  EXPECT_EQ(session_percent(kSid, b.env, b.loc, b.cfg), std::nullopt);  // no transcript anywhere
  b.tmp.write("home/.claude/projects/-proj/" + std::string(kSid) + ".jsonl",
              user_line("nothing answered yet"));
  EXPECT_EQ(session_percent(kSid, b.env, b.loc, b.cfg), std::nullopt);
  // Another session's transcript is not this one's.
  b.tmp.write("home/.claude/projects/-proj/other-session-id.jsonl", reading(100000));
  EXPECT_EQ(session_percent(kSid, b.env, b.loc, b.cfg), std::nullopt);
}

}  // namespace
}  // namespace ctxkit::context
