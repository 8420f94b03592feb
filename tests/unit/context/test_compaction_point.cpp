#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::context {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// Every experiment tests/live/record_compaction.py recorded, of every client version.
std::vector<std::string> recorded_cases() {
  std::vector<std::string> out;
  for (const auto& version : test::client_fixture_dirs()) {
    const fs::path dir = test::fixture_root() / version / "compaction";
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json")
        out.push_back(version + "/compaction/" + e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class RecordedCompaction : public ::testing::TestWithParam<std::string> {};

// What the client did under each setting is what the rules say it does.
TEST_P(RecordedCompaction, TheRulesPutThePointWhereTheClientCompacted) {
  const json rec = json::parse(test::read_file(test::fixture_root() / GetParam()));
  test::TempDir tmp;
  util::Env env;
  for (const auto& [k, v] : rec["env"].items()) env.set(k, v.get<std::string>());
  const fs::path project = tmp / "proj";
  tmp.write("proj/.claude/settings.json", rec["settings"].dump());
  const CompactionSettings settings =
      read_compaction_settings(env, client_settings_files(env, project));
  const int64_t window = rec["window"].get<int64_t>();
  const CompactionPoint point = compaction_point(settings, window, rec["model"].get<std::string>(),
                                                 rec["client_version"].get<std::string>());
  const auto& thresholds = rec["client_thresholds"];
  if (!thresholds.empty()) {
    // The client named its threshold, and compacted.
    ASSERT_EQ(thresholds.size(), 1u);
    EXPECT_GT(rec["compactions"].get<int>(), 0);
    EXPECT_TRUE(point.automatic);
    EXPECT_TRUE(point.threshold);
    EXPECT_EQ(point.tokens, thresholds[0].get<int64_t>());
    // It compacted once the reported usage had passed that point, not before.
    EXPECT_GE(rec["compact_after_fill"][0].get<int64_t>() * window / 100, point.tokens - 20'000);
  } else {
    // Usage up to 95 % of the window and no compaction: the point is above what was reached
    // (the window for a reactive model; 967,000 of 1M for a threshold model at 1M).
    EXPECT_EQ(rec["compactions"].get<int>(), 0);
    const int64_t reached = rec["fills"].back().get<int64_t>() * window / 100;
    EXPECT_GT(point.tokens, reached);
    if (!point.threshold) {
      EXPECT_EQ(point.tokens, window);
    }
    const bool disabled =
        rec["env"].contains("DISABLE_AUTO_COMPACT") || rec["env"].contains("DISABLE_COMPACT");
    EXPECT_EQ(point.automatic, !disabled);
  }
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = test::fixture_set_name(info.param.substr(0, info.param.find('/')) + "/" +
                                         fs::path(info.param).stem().string());
  return n;
}

INSTANTIATE_TEST_SUITE_P(Clients, RecordedCompaction, ::testing::ValuesIn(recorded_cases()),
                         case_name);

TEST(CompactionPoint, BothEndsOfTheRangeAreRecorded) {
  std::set<std::string> versions;
  for (const auto& c : recorded_cases()) versions.insert(c.substr(0, c.find('/')));
  EXPECT_GE(versions.size(), 2u);
}

TEST(CompactionPoint, WindowSizesReadAsTheClientReadsThem) {
  EXPECT_EQ(parse_window_size("150000"), 150000);
  EXPECT_EQ(parse_window_size(" 150k "), 150000);
  EXPECT_EQ(parse_window_size("1M"), 1000000);
  EXPECT_EQ(parse_window_size("0.5m"), 500000);
  EXPECT_EQ(parse_window_size(""), std::nullopt);
  EXPECT_EQ(parse_window_size("k"), std::nullopt);
  EXPECT_EQ(parse_window_size("12abc"), std::nullopt);
  EXPECT_EQ(parse_window_size("-5"), std::nullopt);
  EXPECT_EQ(parse_window_size("1e400"), std::nullopt);
}

TEST(CompactionPoint, TheEnvironmentWinsOverSettingsAndLocalOverProject) {
  test::TempDir tmp;
  util::Env env;
  env.set("HOME", (tmp / "home").string());
  const fs::path project = tmp / "proj";
  tmp.write("home/.claude/settings.json", R"({"autoCompactWindow": 300000})");
  auto s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.auto_compact_window, 300000);
  tmp.write("proj/.claude/settings.json", R"({ "env": {}, "autoCompactWindow" : "250k" })");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.auto_compact_window, 250000);
  tmp.write("proj/.claude/settings.local.json", R"({"autoCompactWindow":120000})");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.auto_compact_window, 120000);
  EXPECT_EQ(s.window_origin, (project / ".claude/settings.local.json").string());
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "100k");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.auto_compact_window, 100000);
  EXPECT_EQ(s.window_origin, "CLAUDE_CODE_AUTO_COMPACT_WINDOW");
}

// totalTokensReminder: the variable, else the settings files (later ones win), read also when the
// window comes from the environment; only "countdown" counts the live window.
TEST(CompactionPoint, TotalTokensReminderFromTheEnvironmentElseTheSettings) {
  test::TempDir tmp;
  util::Env env;
  env.set("HOME", (tmp / "home").string());
  const fs::path project = tmp / "proj";
  auto s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.tokens_reminder, "");
  EXPECT_FALSE(s.window_countdown());
  tmp.write("home/.claude/settings.json", R"({"totalTokensReminder": "padded-countdown"})");
  tmp.write("proj/.claude/settings.json", R"({"totalTokensReminder": "countdown"})");
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "100k");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.tokens_reminder, "countdown");
  EXPECT_TRUE(s.window_countdown());
  EXPECT_EQ(s.auto_compact_window, 100000);
  env.set("CLAUDE_CODE_TOTAL_TOKENS_REMINDER", "off");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.tokens_reminder, "off");
  EXPECT_FALSE(s.window_countdown());
}

TEST(CompactionPoint, AProjectInTheHomeFolderListsTheUsersFileOnce) {
  util::Env env;
  env.set("HOME", "/home/u");
  EXPECT_EQ(client_settings_files(env, "/home/u"),
            (std::vector<fs::path>{"/home/u/.claude/settings.json",
                                   "/home/u/.claude/settings.local.json"}));
  EXPECT_EQ(client_settings_files(env, "/home/u/../u/"),
            (std::vector<fs::path>{"/home/u/.claude/settings.json",
                                   "/home/u/../u/.claude/settings.local.json"}));
  EXPECT_EQ(client_settings_files(env, "/srv/p"),
            (std::vector<fs::path>{"/home/u/.claude/settings.json", "/srv/p/.claude/settings.json",
                                   "/srv/p/.claude/settings.local.json"}));
}

TEST(CompactionPoint, BrokenSettingsFilesAreSkipped) {
  test::TempDir tmp;
  util::Env env;
  const fs::path project = tmp / "proj";
  std::string deep = R"({"autoCompactWindow": 100000, "x":)" + std::string(100000, '[');
  tmp.write("proj/.claude/settings.json", deep);
  tmp.write("proj/.claude/settings.local.json", R"({"autoCompactWindow": "lots"})");
  const auto s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_FALSE(s.auto_compact_window);
  EXPECT_EQ(compaction_point(s, 200000).tokens, 200000);
}

TEST(CompactionPoint, AFifoInPlaceOfASettingsFileIsNotWaitedOn) {
  // A project can ship a FIFO as .claude/settings.local.json: reading it must not wait for a
  // writer (the hook would hang). Read in a child, given two seconds.
  test::TempDir tmp;
  util::Env env;
  const fs::path project = tmp / "proj";
  tmp.write("proj/.claude/settings.json", R"({"autoCompactWindow": 300000})");
  ASSERT_EQ(::mkfifo((project / ".claude/settings.local.json").c_str(), 0600), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const auto s = read_compaction_settings(env, client_settings_files(env, project));
    ::_exit(s.auto_compact_window == 300000 ? 0 : 1);
  }
  int status = 0;
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    ended = ::waitpid(child, &status, WNOHANG) == child;
    if (!ended) ::usleep(10'000);
  }
  if (!ended) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  EXPECT_TRUE(ended) << "reading the settings waited on the FIFO";
  EXPECT_TRUE(ended && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(CompactionPoint, DisablingWinsOverAWindow) {
  util::Env env;
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "100000");
  env.set("DISABLE_AUTO_COMPACT", "true");
  const auto s = read_compaction_settings(env, {});
  EXPECT_TRUE(s.disabled);
  EXPECT_EQ(s.disabled_by, "DISABLE_AUTO_COMPACT");
  const auto p = compaction_point(s, 200000);
  EXPECT_FALSE(p.automatic);
  EXPECT_EQ(p.tokens, 200000);
  util::Env off;
  off.set("DISABLE_AUTO_COMPACT", "0");
  EXPECT_FALSE(read_compaction_settings(off, {}).disabled);
}

TEST(CompactionPoint, AWindowLargerThanTheModelsIsTheModels) {
  CompactionSettings s;
  s.auto_compact_window = 300000;
  EXPECT_EQ(compaction_point(s, 200000).tokens, 200000 - 20000 - 13000);
  s.auto_compact_window = 500000;
  EXPECT_EQ(compaction_point(s, 1000000).tokens, 500000 - 20000 - 13000);
}

TEST(CompactionPoint, TheFigureUsesThePointAndAReservedOverride) {
  core::ContextConfig cfg;
  WindowHints hints;
  // No window configured: the client compacts when the API refuses, so usable is the window.
  auto f = make_figure(cfg, hints, 100000);
  EXPECT_EQ(f.window, 200000);
  EXPECT_EQ(f.usable, 200000);
  EXPECT_EQ(f.percent, 50);
  hints.compaction.auto_compact_window = 100000;
  f = make_figure(cfg, hints, 33500);
  EXPECT_EQ(f.usable, 67000);
  EXPECT_EQ(f.percent, 50);
  EXPECT_TRUE(f.auto_compact);
  // reserved_tokens stays an explicit override.
  cfg.reserved_tokens = 40000;
  f = make_figure(cfg, hints, 80000);
  EXPECT_EQ(f.usable, 160000);
  cfg.reserved_tokens = 0;
  hints.compaction.disabled = true;
  f = make_figure(cfg, hints, 100000);
  EXPECT_FALSE(f.auto_compact);
  EXPECT_EQ(f.usable, 200000);
}

TEST(CompactionPoint, TheClientsOwnWindowWins) {
  core::ContextConfig cfg;
  WindowHints hints;
  hints.status_line_window = 1000000;
  EXPECT_EQ(window_size(cfg, hints, 10000), 1000000);
  hints.status_line_window = 500000;
  EXPECT_EQ(window_size(cfg, hints, 10000), 500000);
  // 2.1.197 reported 200,000 on 1M sessions: a reading past it proves the window larger.
  hints.status_line_window = 200000;
  EXPECT_EQ(window_size(cfg, hints, 10000), 200000);
  EXPECT_EQ(window_size(cfg, hints, 250000), 1000000);
  // An explicit configuration wins over everything.
  cfg.window_tokens = 400000;
  EXPECT_EQ(window_size(cfg, hints, 250000), 400000);
  // [1m] means a 1M window unless the client was told not to use one.
  cfg.window_tokens = 0;
  WindowHints m;
  m.model = "claude-sonnet-4-5[1m]";
  EXPECT_EQ(window_size(cfg, m, 1000), 1000000);
  m.compaction.disable_1m = true;
  EXPECT_EQ(window_size(cfg, m, 1000), 200000);
}

}  // namespace
}  // namespace ctxkit::context
