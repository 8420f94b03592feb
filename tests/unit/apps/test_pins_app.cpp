// ctx-pin run in-process: the command line, and the hooks that keep pins across a compaction.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/pins_app.hpp"
#include "core/config.hpp"
#include "core/locations.hpp"
#include "store/state_access.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::apps {
namespace {

struct PinRun {
  std::ostringstream out, err;
  std::string input;
  AppContext ctx;
  PinRun(util::Env env, std::string stdin_text)
      : input(std::move(stdin_text)),
        ctx{std::move(env), [this]() -> Result<std::string> { return input; }, out, err} {}
};

struct PinResult {
  int code;
  std::string out, err;
};

PinResult pin(const test::TempDir& tmp, std::vector<std::string> args, std::string in = "",
              const std::string& session = "S1") {
  util::Env env = tmp.env();
  if (!session.empty()) env.set("CLAUDE_CODE_SESSION_ID", session);
  env.set("CLAUDE_PROJECT_DIR", (tmp / "proj").string());
  PinRun r(std::move(env), std::move(in));
  const int code = run_pin(args, r.ctx);
  return {code, r.out.str(), r.err.str()};
}

std::string hook_payload(const std::string& event, const std::string& session,
                         nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json j{{"session_id", session},
                   {"transcript_path", "/nowhere/-proj/" + session + ".jsonl"},
                   {"cwd", "/proj"},
                   {"hook_event_name", event}};
  j.update(extra);
  return j.dump();
}

TEST(PinApp, AddListRemove) {
  test::TempDir tmp;
  auto a = pin(tmp, {"add", "the", "API", "port", "is", "8123"});
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, "pinned: pin 1 (line of work)\n");
  auto again = pin(tmp, {"add", "the API port is 8123"});
  EXPECT_EQ(again.out, "already pinned: pin 1 (line of work)\n");
  ASSERT_EQ(pin(tmp, {"add", "--project", "deploys on friday"}).code, 0);
  auto l = pin(tmp, {"list"});
  EXPECT_EQ(l.out, "   1 line    the API port is 8123\n   2 project deploys on friday\n");
  // Another session of the same project sees the project's pin only.
  EXPECT_EQ(pin(tmp, {"list"}, "", "S2").out, "   2 project deploys on friday\n");
  auto rm = pin(tmp, {"rm", "1"});
  EXPECT_EQ(rm.out, "removed pin 1\n");
  auto gone = pin(tmp, {"rm", "1"});
  EXPECT_EQ(gone.code, 1);
  EXPECT_EQ(gone.err, "ctx-pin: error: no pin 1 in this line of work or project\n");
}

TEST(PinApp, BadPinsAreOneErrorLine) {
  test::TempDir tmp;
  auto big = pin(tmp, {"add", std::string(1 << 20, 'x')});
  EXPECT_EQ(big.code, 1);
  EXPECT_EQ(big.err, "ctx-pin: error: a pin is at most 500 characters (this one has 1048576)\n");
  auto none = pin(tmp, {"add", "fact"}, "", "");
  EXPECT_EQ(none.code, 1);
  EXPECT_EQ(none.err,
            "ctx-pin: error: no session: run it inside a Claude Code session, give --session, or "
            "pin to the project with --project\n");
  auto nothing = pin(tmp, {});
  EXPECT_EQ(nothing.err, "ctx-pin: error: give a command: add, list or rm (--help)\n");
}

TEST(PinApp, TrimmedAndRolledOverSessionsKeepTheLinesPins) {
  test::TempDir tmp;
  ASSERT_EQ(pin(tmp, {"add", "keep me"}, "", "A").code, 0);
  {
    core::Config cfg = core::load_config(tmp.env(), {});
    std::string problem;
    auto s = store::open_state(cfg.locations(tmp.env()), cfg, problem);
    ASSERT_TRUE(s) << problem;
    store::SessionRecord a;
    a.session_id = "A";
    store::SessionRecord b;
    b.session_id = "B";
    ASSERT_TRUE(s->record_derivation(a, b, "rollover", 80, std::nullopt, "t"));
  }
  EXPECT_EQ(pin(tmp, {"list"}, "", "B").out, "   1 line    keep me\n");
}

TEST(PinHook, PreCompactPrintsThePinsAsInstructions) {
  test::TempDir tmp;
  ASSERT_EQ(pin(tmp, {"add", "port 8123"}).code, 0);
  auto r = pin(tmp, {"--hook"}, hook_payload("PreCompact", "S1", {{"trigger", "auto"}}));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "Pinned facts: the summary must keep each of these word for word (the user pinned "
            "them; they still hold after this compaction):\n- port 8123\n");
  // No pins: nothing at all.
  EXPECT_EQ(pin(tmp, {"--hook"}, hook_payload("PreCompact", "S9")).out, "");
}

// `/compact <focus>` that already names a pin (the supervisor's focus is the pins): not twice.
TEST(PinHook, PreCompactLeavesOutThePinsTheFocusNames) {
  test::TempDir tmp;
  ASSERT_EQ(pin(tmp, {"add", "port 8123"}).code, 0);
  ASSERT_EQ(pin(tmp, {"add", "deploy on friday"}).code, 0);
  auto r = pin(
      tmp, {"--hook"},
      hook_payload("PreCompact", "S1",
                   {{"trigger", "manual"}, {"custom_instructions", "Keep these:\n- port 8123\n"}}));
  EXPECT_EQ(r.out.find("port 8123"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("- deploy on friday\n"), std::string::npos) << r.out;
}

TEST(PinHook, PostCompactRecordsTheCheckAndTheNextPromptRestoresTheMissingOnce) {
  test::TempDir tmp;
  for (const char* p : {"port 8123", "deploy on friday", "use the staging cluster"})
    ASSERT_EQ(pin(tmp, {"add", p}).code, 0);
  auto post = pin(tmp, {"--hook"},
                  hook_payload("PostCompact", "S1",
                               {{"trigger", "manual"},
                                {"compact_summary", "<summary>The port is 8123.</summary>"}}));
  EXPECT_EQ(post.code, 0) << post.err;
  EXPECT_EQ(post.out, "");
  auto prompt = pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1"));
  EXPECT_EQ(prompt.code, 0) << prompt.err;
  auto j = nlohmann::json::parse(prompt.out);
  EXPECT_EQ(j["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
  EXPECT_EQ(j["hookSpecificOutput"]["additionalContext"],
            "Pinned facts the last compaction's summary left out (re-stated by ctxkit; they still "
            "hold):\n- deploy on friday\n- use the staging cluster\n");
  EXPECT_EQ(pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1")).out, "");
}

// The restore reads no database: the marker PostCompact left holds the text. With the state
// database made unreadable after the check, the next prompt still gets the pins, once; the check
// already counts them as restored (the status line's "2 restored").
TEST(PinHook, TheRestoreNeedsNoDatabaseAndTheCheckCountsWhatItRestores) {
  test::TempDir tmp;
  for (const char* p : {"port 8123", "deploy on friday", "use the staging cluster"})
    ASSERT_EQ(pin(tmp, {"add", p}).code, 0);
  ASSERT_EQ(pin(tmp, {"--hook"},
                hook_payload("PostCompact", "S1",
                             {{"trigger", "auto"}, {"compact_summary", "The port is 8123."}}))
                .code,
            0);
  const auto state = tmp / "home/.local/state/ctxkit";
  {
    std::string problem;
    auto store = store::open_state(core::Locations::resolve(tmp.env()),
                                   core::load_config(tmp.env(), {}), problem);
    ASSERT_TRUE(store) << problem;
    auto check = store->last_pin_check("S1");
    ASSERT_TRUE(check && *check);
    EXPECT_EQ((*check)->kept, 1);
    EXPECT_EQ((*check)->restored, 2);
  }
  for (const char* f : {"state.db", "state.db-wal", "state.db-shm"})
    std::filesystem::remove(state / f);
  std::filesystem::create_directory(state / "state.db");  // not a database at all
  auto prompt = pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1"));
  EXPECT_EQ(prompt.code, 0) << prompt.err;
  EXPECT_EQ(prompt.err, "");
  EXPECT_NE(prompt.out.find("- deploy on friday\\n- use the staging cluster\\n"), std::string::npos)
      << prompt.out;
  EXPECT_EQ(pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1")).out, "");
}

// Prompts of one session at once (the client's hooks of two windows on one session): exactly one
// of them restores the pins.
TEST(PinHook, OfPromptsAtOnceExactlyOneRestores) {
  test::TempDir tmp;
  ASSERT_EQ(pin(tmp, {"add", "deploy on friday"}).code, 0);
  pin(tmp, {"--hook"},
      hook_payload("PostCompact", "S1", {{"trigger", "auto"}, {"compact_summary", "nothing"}}));
  const auto out = tmp / "outs";
  std::filesystem::create_directories(out);
  const auto codes = test::exit_codes_of_children(8, [&](int i) {
    auto r = pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1"));
    tmp.write("outs/" + std::to_string(i), r.out);
    return r.code;
  });
  int restored = 0;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(codes[static_cast<size_t>(i)], 0);
    restored +=
        test::read_file(out / std::to_string(i)).find("deploy on friday") != std::string::npos;
  }
  EXPECT_EQ(restored, 1);
}

// A marker replaced by a link is not followed: one note, no output.
TEST(PinHook, ALinkInThePlaceOfTheMarkerIsNotFollowed) {
  test::TempDir tmp;
  ASSERT_EQ(pin(tmp, {"add", "deploy on friday"}).code, 0);
  pin(tmp, {"--hook"},
      hook_payload("PostCompact", "S1", {{"trigger", "auto"}, {"compact_summary", "nothing"}}));
  const auto marker = tmp / "home/.local/state/ctxkit/pins/S1.restore";
  ASSERT_TRUE(std::filesystem::exists(marker));
  const auto elsewhere = tmp.write("elsewhere.txt", "1\nINJECTED TEXT\n");
  std::filesystem::remove(marker);
  std::filesystem::create_symlink(elsewhere, marker);
  auto prompt = pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1"));
  EXPECT_EQ(prompt.code, 0);
  EXPECT_EQ(prompt.out, "");
  EXPECT_NE(prompt.err.find("ctx-pin:"), std::string::npos) << prompt.err;
}

TEST(PinHook, AllKeptRestoresNothing) {
  test::TempDir tmp;
  ASSERT_EQ(pin(tmp, {"add", "port 8123"}).code, 0);
  pin(tmp, {"--hook"},
      hook_payload("PostCompact", "S1",
                   {{"trigger", "auto"}, {"compact_summary", "the port is 8123"}}));
  EXPECT_EQ(pin(tmp, {"--hook"}, hook_payload("UserPromptSubmit", "S1")).out, "");
}

TEST(PinHook, BadPayloadIsOneLineAndExitsOne) {
  test::TempDir tmp;
  auto r = pin(tmp, {"--hook"}, "not json");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("ctx-pin: error: hook payload is not JSON: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1);
}

TEST(PinHook, ACorruptStoreIsOneNoteAndTheHookGoesOn) {
  test::TempDir tmp;
  core::Config cfg = core::load_config(tmp.env(), {});
  const auto db = cfg.locations(tmp.env()).state_db();
  tmp.write(std::filesystem::relative(db, tmp.path()).string(),
            std::string(4096, 'x'));  // not a database
  auto r = pin(tmp, {"--hook"}, hook_payload("PreCompact", "S1"));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  // Moved aside and started afresh: one line that says so.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("was corrupt; moved it to"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ctxkit::apps
