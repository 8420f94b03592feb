// The compaction settings a hook reads through the meter's cache: what the settings files and
// the client's state file say is kept under a signature of those files, read again whenever one
// of them changed, and never taken from a cache text it does not understand.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "apps/client_hints.hpp"
#include "store/meter_store.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::apps {
namespace {
namespace fs = std::filesystem;

struct Home {
  test::TempDir tmp;
  util::Env env = tmp.env();
  fs::path project = tmp / "proj";
  std::optional<store::MeterStore> store;
  Home() {
    fs::create_directories(project);
    fs::create_directories(tmp / "state");
    auto s = store::MeterStore::open(tmp / "state/meter.db", 1000, tmp / "state/state.db");
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    if (s) store.emplace(std::move(*s));
  }
  context::CompactionSettings read(std::string* problem_out = nullptr) {
    std::string problem;
    auto s = compaction_settings(env, project, &*store, problem);
    if (problem_out) *problem_out = problem;
    return s;
  }
  // The same file written again in place, its times set to `t` seconds after the epoch.
  void rewrite(const fs::path& p, const std::string& text, int64_t t) {
    tmp.write(fs::relative(p, tmp.path()).string(), text);
    struct timespec times[2] = {{t, 0}, {t, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
  }
};

TEST(CompactionInputs, RoundTripKeepsEveryFieldAndAwkwardText) {
  std::vector<context::SettingsFileReading> files(3);
  files[0].path = "/h/.claude/settings.json";
  files[0].window = 400000;
  files[0].enabled = false;
  files[0].tokens_reminder = "count\tdown\nwith \\ and " + std::string(1, '\0');
  files[0].models = {{"claude-sonnet-4-6", 0}, {"model\twith\ntabs\\", 250000}};
  files[1].path = "/p/.claude/settings.json";  // says nothing
  files[2].path = "/p/dir with\nnewline/settings.local.json";
  files[2].enabled = true;
  claude::ServerHints server;
  server.model_windows = {{"claude-opus-4-8", 1000000}, {"x", 1}};
  server.auto_compact_enabled = true;
  const std::string text = encode_compaction_inputs(files, server);
  std::vector<context::SettingsFileReading> back;
  claude::ServerHints back_server;
  ASSERT_TRUE(decode_compaction_inputs(text, back, back_server)) << text;
  EXPECT_EQ(back, files);
  EXPECT_EQ(back_server, server);
}

TEST(CompactionInputs, TextItDidNotWriteIsRefused) {
  std::vector<context::SettingsFileReading> files;
  claude::ServerHints server;
  const std::string good = encode_compaction_inputs({{"/a", 5, {}, {}, {}}}, {});
  ASSERT_TRUE(decode_compaction_inputs(good, files, server));
  for (std::string bad :
       {std::string(), std::string("{\"models\":{}}"), std::string("compaction-inputs 2\ns\n"),
        std::string("compaction-inputs 1\nf\t/a\nw\t-5\ns\n"),
        std::string("compaction-inputs 1\nf\t/a\nw\t99999999999999999999\ns\n"),
        std::string("compaction-inputs 1\nw\t5\ns\n"),         // no file
        std::string("compaction-inputs 1\nf\t/a\\q\ns\n"),     // bad escape
        std::string("compaction-inputs 1\nf\t/a\ne\t2\ns\n"),  // not a flag
        std::string("compaction-inputs 1\nf\t/a\n"),           // cut: no server
        good.substr(0, good.size() - 1),                       // cut mid-line
        good + "zz\t1\n"}) {
    EXPECT_FALSE(decode_compaction_inputs(bad, files, server)) << bad;
  }
}

TEST(CompactionSettingsCache, SameAsReadingTheFilesAndFollowsEveryChange) {
  Home h;
  const fs::path user = h.tmp / "home/.claude/settings.json";
  const fs::path local = h.project / ".claude/settings.local.json";
  const fs::path state = h.tmp / "home/.claude.json";
  h.rewrite(user, R"({"modelSettings":{"claude-sonnet-4-6":{"autoCompactWindow":300000}}})", 1000);
  h.rewrite(state, R"({"autoCompactWindowsCache":{"claude-opus-4-8":500000}})", 1000);
  auto direct = [&] {
    auto s =
        context::read_compaction_settings(h.env, context::client_settings_files(h.env, h.project));
    s.server = claude::parse_client_state(test::read_file(state));
    return s;
  };
  auto same = [&](const context::CompactionSettings& a, const context::CompactionSettings& b) {
    EXPECT_EQ(a.auto_compact_window, b.auto_compact_window);
    EXPECT_EQ(a.window_origin, b.window_origin);
    EXPECT_EQ(a.model_windows, b.model_windows);
    EXPECT_EQ(a.model_window_origins, b.model_window_origins);
    EXPECT_EQ(a.enabled_setting, b.enabled_setting);
    EXPECT_EQ(a.tokens_reminder, b.tokens_reminder);
    EXPECT_EQ(a.server, b.server);
  };
  std::string problem;
  auto first = h.read(&problem);
  EXPECT_EQ(problem, "");
  same(first, direct());
  EXPECT_EQ(first.model_windows.at("claude-sonnet-4-6"), 300000);
  EXPECT_EQ(first.server.model_windows.at("claude-opus-4-8"), 500000);
  same(h.read(), first);  // from the cache

  // A new file below the user's (the project's local settings): its window wins.
  h.rewrite(local, R"({"autoCompactWindow":"150k"})", 1000);
  auto second = h.read();
  same(second, direct());
  EXPECT_EQ(second.auto_compact_window, 150000);

  // The same size, the same time, but another inode (the client replaces files by renaming).
  {
    const fs::path tmpfile = h.tmp / "next.json";
    h.rewrite(tmpfile, R"({"autoCompactWindow":"250k"})", 1000);
    fs::rename(tmpfile, local);
  }
  auto third = h.read();
  EXPECT_EQ(third.auto_compact_window, 250000);

  // The state file rewritten in place with another time.
  h.rewrite(state, R"({"autoCompactWindowsCache":{"claude-opus-4-8":600000}})", 2000);
  EXPECT_EQ(h.read().server.model_windows.at("claude-opus-4-8"), 600000);

  // A file that goes away.
  fs::remove(local);
  auto fourth = h.read();
  same(fourth, direct());
  EXPECT_FALSE(fourth.auto_compact_window);

  // The variables are read at every call, over the cached files.
  h.env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "90k");
  EXPECT_EQ(h.read().auto_compact_window, 90000);
  EXPECT_EQ(h.read().window_origin, "CLAUDE_CODE_AUTO_COMPACT_WINDOW");
}

TEST(CompactionSettingsCache, AnUnreadableCachedTextIsReadAgainFromTheFiles) {
  Home h;
  h.rewrite(h.tmp / "home/.claude/settings.json", R"({"autoCompactWindow":300000})", 1000);
  EXPECT_EQ(h.read().auto_compact_window, 300000);
  // Every cached row made unreadable (a newer ctxkit's text, or damage): the files are read.
  const std::vector<fs::path> inputs = {
      h.tmp / "home/.claude/settings.json", h.project / ".claude/settings.json",
      h.project / ".claude/settings.local.json", h.tmp / "home/.claude.json"};
  std::string key = "settings";
  for (const auto& p : inputs) key += "\n" + p.string();
  auto row = h.store->client_state(key);
  ASSERT_TRUE(row && *row) << "the cache row is kept under the inputs' paths";
  ASSERT_TRUE(h.store->put_client_state(key, {(*row)->size, (*row)->mtime_ns, "garbage"}));
  EXPECT_EQ(h.read().auto_compact_window, 300000);
  // And a readable text under the current signature is what a hook uses.
  ASSERT_TRUE(h.store->put_client_state(
      key, {(*row)->size, (*row)->mtime_ns,
            encode_compaction_inputs({{inputs[0].string(), 123456, {}, {}, {}},
                                      {inputs[1].string(), {}, {}, {}, {}},
                                      {inputs[2].string(), {}, {}, {}, {}}},
                                     {})}));
  EXPECT_EQ(h.read().auto_compact_window, 123456);
}

TEST(CompactionSettingsCache, WithoutAStoreTheFilesAreRead) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  tmp.write("home/.claude/settings.json", R"({"autoCompactEnabled":false})");
  std::string problem;
  auto s = compaction_settings(env, tmp / "proj", nullptr, problem);
  EXPECT_EQ(s.enabled_setting, std::optional<bool>(false));
}

}  // namespace
}  // namespace ctxkit::apps
