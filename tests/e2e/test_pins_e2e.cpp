// ctx-pin as built: the hooks fed the payloads recorded from each client
// (tests/fixtures/claude-code-<version>/pins/<model>/<kind>/), and hostile input: a pin of 1 MB,
// a NUL, 10,000 pins in the store, a corrupt store.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const char* const kLivePins[] = {
    "LIVEPIN-ALPHA the API listens on port 8123", "LIVEPIN-BRAVO deploys happen on friday",
    "LIVEPIN-CHARLIE the staging cluster is east-2", "LIVEPIN-DELTA the release branch is rel-77",
    "LIVEPIN-ECHO owner of the schema is dana"};

struct PinHome {
  TempDir tmp;
  util::Env env;
  PinHome() : env(tmp.env()) { env.set("CLAUDE_PROJECT_DIR", (tmp / "proj").string()); }
  util::ProcessResult pin(const std::vector<std::string>& args, const std::string& in = "",
                          const std::string& session = "S1") {
    util::Env e = env;
    if (!session.empty()) e.set("CLAUDE_CODE_SESSION_ID", session);
    return run_tool("ctx-pin", args, in, e);
  }
  fs::path state_db() const { return tmp / "home/.local/state/ctxkit/state.db"; }
};

// Every recorded set of pin payloads: "<version dir>/pins/<model>/<kind>".
std::vector<fs::path> recorded_pin_sets() {
  std::vector<fs::path> out;
  for (const auto& version : client_fixture_dirs()) {
    const fs::path pins = fixture_root() / version / "pins";
    std::error_code ec;
    if (!fs::is_directory(pins, ec)) continue;
    for (const auto& model : fs::directory_iterator(pins))
      for (const auto& kind : fs::directory_iterator(model.path()))
        if (fs::is_regular_file(kind.path() / "PostCompact.json")) out.push_back(kind.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string with_home(std::string text, const PinHome& h) {
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"$HOME", (h.tmp / "home").string()},
        {"$PROJECT", (h.tmp / "proj").string()}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
      text.replace(at, from.size(), to), at += to.size();
  }
  return text;
}

// Both ends of the supported range, both models, /compact and the client's own compaction: the
// payloads each client sent. PreCompact prints the five pins; PostCompact checks them against the
// recorded summary (which the fake API wrote to keep three); the next UserPromptSubmit re-injects
// the two it dropped, once.
TEST(PinsE2e, RecordedCompactionPayloadsOfEachClient) {
  const auto sets = recorded_pin_sets();
  ASSERT_GE(sets.size(), 2u) << "no recorded pin payloads under tests/fixtures/*/pins";
  for (const auto& set : sets) {
    SCOPED_TRACE(set.string());
    PinHome h;
    const json post = json::parse(read_file(set / "PostCompact.json"));
    const std::string session = post.at("session_id").get<std::string>();
    for (const char* p : kLivePins) ASSERT_EQ(h.pin({"add", p}, "", session).exit_code, 0);
    auto pre = h.pin({"--hook"}, with_home(read_file(set / "PreCompact.json"), h), "");
    EXPECT_EQ(pre.exit_code, 0) << pre.err;
    EXPECT_EQ(pre.err, "");
    for (const char* p : kLivePins)
      EXPECT_NE(pre.out.find(std::string("- ") + p), std::string::npos);
    auto checked = h.pin({"--hook"}, with_home(read_file(set / "PostCompact.json"), h), "");
    EXPECT_EQ(checked.exit_code, 0) << checked.err;
    EXPECT_EQ(checked.out, "");
    const fs::path prompt_payload = set / "UserPromptSubmit.json";
    ASSERT_TRUE(fs::is_regular_file(prompt_payload));
    auto prompt = h.pin({"--hook"}, with_home(read_file(prompt_payload), h), "");
    ASSERT_EQ(prompt.exit_code, 0) << prompt.err;
    const json answer = json::parse(prompt.out);
    const std::string context = answer["hookSpecificOutput"]["additionalContext"];
    EXPECT_NE(context.find("- LIVEPIN-DELTA the release branch is rel-77\n"), std::string::npos);
    EXPECT_NE(context.find("- LIVEPIN-ECHO owner of the schema is dana\n"), std::string::npos);
    EXPECT_EQ(context.find("ALPHA"), std::string::npos) << context;
    EXPECT_EQ(h.pin({"--hook"}, with_home(read_file(prompt_payload), h), "").out, "");
  }
}

TEST(PinsE2e, APinOfOneMegabyteIsOneLineAndNothingIsStored) {
  PinHome h;
  auto r = h.pin({"add", "-"}, std::string(1 << 20, 'x'));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-pin: error: a pin is at most 500 characters (this one has 1048576)\n");
  EXPECT_EQ(h.pin({"list"}).out, "no pins\n");
}

TEST(PinsE2e, ANulIsRefused) {
  PinHome h;
  auto r = h.pin({"add", "-"}, std::string("port\0 8123", 10));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-pin: error: a pin cannot hold a NUL character\n");
}

// 10,000 pins put in the store behind ctxkit's back: the hooks read 100 and give the summarizer
// what fits the budget, saying how many more there are; the list shows 100.
TEST(PinsE2e, TenThousandPinsInTheStoreStayWithinTheBudget) {
  PinHome h;
  ASSERT_EQ(h.pin({"list"}).exit_code, 0);  // the store made, and no pin's view written yet
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(h.state_db().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO pins(scope_kind, scope, text, created_at_ms) VALUES('line', "
                         "'S1', 'first', 0); "
                         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE "
                         "i<9999) INSERT INTO pins(scope_kind, scope, text, created_at_ms) "
                         "SELECT 'line', 'S1', 'pin number ' || i || ' ' || "
                         "substr(hex(zeroblob(60)), 1, 100), 0 FROM n",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  json payload{{"session_id", "S1"},
               {"transcript_path", "/none/-proj/S1.jsonl"},
               {"cwd", (h.tmp / "proj").string()},
               {"hook_event_name", "PreCompact"},
               {"trigger", "auto"}};
  auto pre = h.pin({"--hook"}, payload.dump(), "");
  EXPECT_EQ(pre.exit_code, 0) << pre.err;
  EXPECT_LT(pre.out.size(), 10000u);
  EXPECT_NE(pre.out.find("- first\n"), std::string::npos);
  EXPECT_NE(pre.out.find("more pins not shown here"), std::string::npos) << pre.out;
  // The second compaction reads the view the first one wrote: the same text.
  EXPECT_TRUE(fs::exists(h.state_db().parent_path() / "pins/S1.view"));
  auto again = h.pin({"--hook"}, payload.dump(), "");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, pre.out);
  auto list = h.pin({"list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_EQ(line_count(list.out), 101u);
  EXPECT_NE(list.out.find("(9900 more not listed)"), std::string::npos);
  // The scope is full: one more is refused with one line.
  auto more = h.pin({"add", "one more"});
  EXPECT_EQ(more.exit_code, 1);
  EXPECT_EQ(more.err,
            "ctx-pin: error: the line of work already holds 100 pins, the most it keeps: remove "
            "one first (ctx-pin rm ID)\n");
}

// PreCompact after the pins changed prints them without opening the store: with the store's
// file overwritten in place (the same file, no longer a database), it still prints every pin and
// says nothing. A change made through ctx-pin (here another session's project pin, and a removal)
// makes the view stale, and the next PreCompact reads the store again.
TEST(PinsE2e, PreCompactReadsTheViewWhileItIsCurrentAndTheStoreAfterAChange) {
  PinHome h;
  ASSERT_EQ(h.pin({"add", "alpha stays"}).exit_code, 0);
  ASSERT_EQ(h.pin({"add", "bravo goes"}).exit_code, 0);
  json payload{{"session_id", "S1"},
               {"transcript_path", "/none/-proj/S1.jsonl"},
               {"cwd", (h.tmp / "proj").string()},
               {"hook_event_name", "PreCompact"},
               {"trigger", "manual"}};
  ASSERT_EQ(h.pin({"add", "--project", "charlie of the project"}, "", "S2").exit_code, 0);
  auto first = h.pin({"--hook"}, payload.dump(), "");
  EXPECT_NE(first.out.find("- bravo goes\n"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("- charlie of the project\n"), std::string::npos) << first.out;
  ASSERT_EQ(h.pin({"rm", "2"}).exit_code, 0);
  auto pre = h.pin({"--hook"}, payload.dump(), "");
  EXPECT_EQ(pre.exit_code, 0) << pre.err;
  EXPECT_NE(pre.out.find("- alpha stays\n"), std::string::npos) << pre.out;
  EXPECT_NE(pre.out.find("- charlie of the project\n"), std::string::npos) << pre.out;
  EXPECT_EQ(pre.out.find("bravo"), std::string::npos) << pre.out;

  {  // The store's own file, overwritten in place: any open of it fails now.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(h.state_db().c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    std::fstream f(h.state_db(), std::ios::in | std::ios::out | std::ios::binary);
    f.write(std::string(100, 'z').data(), 100);
  }
  auto from_view = h.pin({"--hook"}, payload.dump(), "");
  EXPECT_EQ(from_view.exit_code, 0);
  EXPECT_EQ(from_view.out, pre.out);
  EXPECT_EQ(from_view.err, "");
}

// A store that is not a database: the hook prints one line, exits 0 and the session goes on; the
// file is moved aside and a new store started.
TEST(PinsE2e, ACorruptStoreIsOneLineAndTheHookGoesOn) {
  PinHome h;
  fs::create_directories(h.state_db().parent_path());
  {
    std::ofstream f(h.state_db());
    f << std::string(8192, 'z');
  }
  json payload{{"session_id", "S1"},
               {"transcript_path", "/none/-proj/S1.jsonl"},
               {"cwd", "/proj"},
               {"hook_event_name", "PreCompact"},
               {"trigger", "manual"}};
  auto pre = h.pin({"--hook"}, payload.dump(), "");
  EXPECT_EQ(pre.exit_code, 0);
  EXPECT_EQ(pre.out, "");
  EXPECT_EQ(line_count(pre.err), 1u) << pre.err;
  EXPECT_NE(pre.err.find("ctx-pin: "), std::string::npos);
  EXPECT_EQ(h.pin({"add", "after"}).exit_code, 0);
}

TEST(PinsE2e, ABrokenPayloadIsOneLineAndExitOne) {
  PinHome h;
  auto r = h.pin({"--hook"}, std::string(100000, '['), "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "ctx-pin: error: hook payload nests deeper than this hook reads\n");
}

}  // namespace
}  // namespace ctxkit::test
