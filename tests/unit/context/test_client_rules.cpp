#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "claude/client_state.hpp"
#include "context/client_rules.hpp"
#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "context/reminder.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::context {
namespace {
namespace fs = std::filesystem;

// One row of tests/fixtures/claude-code-<version>/compaction-points.tsv: where that client
// compacts a model, from the issue's table and the client's code, written independently of
// share/client-rules.json.
struct PointRow {
  std::string version;
  std::string model;
  int64_t window = 0;
  std::optional<int64_t> at;  // nullopt: reactive
  std::string source;
};

std::vector<PointRow> point_rows() {
  std::vector<PointRow> rows;
  for (const auto& dir : test::client_fixture_dirs()) {
    const fs::path file = test::fixture_root() / dir / "compaction-points.tsv";
    if (!fs::exists(file)) continue;
    for (const auto& line : test::file_lines(file)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      PointRow r;
      r.version = dir.substr(std::string("claude-code-").size());
      std::string at;
      std::getline(in, r.model, '\t');
      std::string window;
      std::getline(in, window, '\t');
      r.window = std::stoll(window);
      std::getline(in, at, '\t');
      if (at != "reactive") r.at = std::stoll(at);
      std::getline(in, r.source);
      rows.push_back(r);
    }
  }
  return rows;
}

class ClientTable : public ::testing::TestWithParam<PointRow> {};

// Every recorded version × model of the table: the rules put the point where the client does.
TEST_P(ClientTable, TheRulesCompactWhereTheClientDoes) {
  const PointRow& row = GetParam();
  const CompactionPoint p = compaction_point({}, row.window, row.model, row.version);
  EXPECT_EQ(p.rules_version, row.version);
  EXPECT_FALSE(p.newer_than_recorded);
  EXPECT_TRUE(p.automatic);
  if (row.at) {
    EXPECT_TRUE(p.threshold);
    EXPECT_EQ(p.tokens, *row.at);
  } else {
    EXPECT_FALSE(p.threshold);
    EXPECT_EQ(p.tokens, row.window);
  }
  EXPECT_EQ(source_name(p.source), row.source);
  EXPECT_FALSE(p.origin.empty());
}

// And every reader of the figure counts against that point: the meter, the reminder's figure,
// the status line's words, the percentage of a finished session.
TEST_P(ClientTable, EveryReaderCountsAgainstThatPoint) {
  const PointRow& row = GetParam();
  core::ContextConfig cfg;
  WindowHints hints;
  hints.model = row.model;
  hints.client_version = row.version;
  hints.status_line_window = row.window;
  const int64_t point = row.at.value_or(row.window);
  const ContextFigure f = make_figure(cfg, hints, point / 2);
  EXPECT_EQ(f.usable, point);
  EXPECT_EQ(f.window, row.window);
  EXPECT_EQ(f.percent, 49 + (point % 2 == 0 ? 1 : 0));
  const std::string words = figure_words(f);
  if (row.at) {
    EXPECT_NE(words.find("% until auto-compact"), std::string::npos) << words;
  } else {
    EXPECT_NE(words.find("% of window"), std::string::npos) << words;
  }
  // The urgent reminder comes before the client compacts, never after.
  const ContextFigure urgent = make_figure(cfg, hints, point * cfg.urgent_threshold / 100 + 1);
  EXPECT_EQ(tier_for(urgent.percent, cfg), Tier::Urgent);
  EXPECT_LT(urgent.tokens, point);
  // A finished session's transcript says the same.
  test::TempDir tmp;
  const nlohmann::json line = {{"type", "assistant"},
                               {"version", row.version},
                               {"timestamp", "2026-11-01T10:00:00.000Z"},
                               {"message",
                                {{"id", "msg_1"},
                                 {"model", row.model},
                                 {"usage",
                                  {{"input_tokens", point / 2},
                                   {"cache_creation_input_tokens", 0},
                                   {"cache_read_input_tokens", 0}}}}}};
  tmp.write("t.jsonl", line.dump() + "\n");
  // (The window comes from the model here, not the status line: a 1M row needs the rules' own.)
  if (row.window == model_window({}, row.model, row.version)) {
    EXPECT_EQ(transcript_percent(tmp / "t.jsonl", cfg), f.percent);
  }
}

std::string row_name(const ::testing::TestParamInfo<PointRow>& info) {
  std::string n =
      "v" + info.param.version + "_" + info.param.model + "_" + std::to_string(info.param.window);
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Recorded, ClientTable, ::testing::ValuesIn(point_rows()), row_name);

TEST(ClientRules, EveryRecordedVersionHasRulesAndATable) {
  std::set<std::string> tables;
  for (const auto& r : point_rows()) tables.insert(r.version);
  std::set<std::string> rules;
  for (const auto& r : recorded_client_rules()) rules.insert(r.version);
  EXPECT_GE(tables.size(), 2u);
  EXPECT_EQ(tables, rules);
}

TEST(ClientRules, TheShippedFileIsTheBuiltInOne) {
  const auto parsed = parse_client_rules(test::read_file(
      test::fixture_root().parent_path().parent_path() / "share" / "client-rules.json"));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->size(), recorded_client_rules().size());
  // The built-in table (written at configure time) says what the document says, field by field.
  auto same_model = [](const ModelRule& a, const ModelRule& b, const std::string& where) {
    EXPECT_EQ(a.id, b.id) << where;
    EXPECT_EQ(a.window, b.window) << where;
    EXPECT_EQ(a.native_1m, b.native_1m) << where;
    EXPECT_EQ(a.can_1m, b.can_1m) << where;
    EXPECT_EQ(a.max_output, b.max_output) << where;
    EXPECT_EQ(a.default_window, b.default_window) << where;
    EXPECT_EQ(a.default_window_1m, b.default_window_1m) << where;
    EXPECT_EQ(a.default_is_auto, b.default_is_auto) << where;
    EXPECT_EQ(a.default_1m_is_auto, b.default_1m_is_auto) << where;
  };
  for (size_t i = 0; i < parsed->size(); ++i) {
    const ClientRules& p = (*parsed)[i];
    const ClientRules& b = recorded_client_rules()[i];
    EXPECT_EQ(p.version, b.version);
    EXPECT_EQ(p.reply_reserve_cap, b.reply_reserve_cap) << p.version;
    EXPECT_EQ(p.summary_buffer, b.summary_buffer) << p.version;
    EXPECT_EQ(p.blocking_buffer, b.blocking_buffer) << p.version;
    EXPECT_EQ(p.min_auto_compact_window, b.min_auto_compact_window) << p.version;
    EXPECT_EQ(p.max_auto_compact_window, b.max_auto_compact_window) << p.version;
    EXPECT_EQ(p.model_settings, b.model_settings) << p.version;
    EXPECT_EQ(p.server_windows, b.server_windows) << p.version;
    same_model(p.unknown, b.unknown, p.version + " unknown");
    ASSERT_EQ(p.models.size(), b.models.size()) << p.version;
    for (size_t m = 0; m < p.models.size(); ++m)
      same_model(p.models[m], b.models[m], p.version + " " + p.models[m].id);
  }
}

TEST(ClientRules, ANewerClientUsesTheNewestRulesAndSaysSo) {
  const auto& newest = recorded_client_rules().back().version;
  RulesChoice c = rules_for("9.9.9");
  EXPECT_EQ(c.rules->version, newest);
  EXPECT_TRUE(c.newer_than_recorded);
  c = rules_for("");
  EXPECT_EQ(c.rules->version, newest);
  EXPECT_TRUE(c.newer_than_recorded);
  c = rules_for("2.1.250");  // between the two: the older one's rules
  EXPECT_EQ(c.rules->version, "2.1.197");
  EXPECT_FALSE(c.exact);
  EXPECT_FALSE(c.newer_than_recorded);
  c = rules_for("2.1.332");
  EXPECT_TRUE(c.exact);
  const CompactionPoint p = compaction_point({}, 200000, "claude-sonnet-4-6", "3.0.0");
  EXPECT_TRUE(p.newer_than_recorded);
  EXPECT_EQ(p.rules_version, newest);
}

TEST(ClientRules, ModelsMatchAsTheClientNamesThem) {
  const ClientRules& r = *rules_for("2.1.332").rules;
  auto id = [&](std::string_view m) {
    const ModelRule* rule = find_model(r, m);
    return rule ? rule->id : std::string("-");
  };
  EXPECT_EQ(id("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
  EXPECT_EQ(id("claude-sonnet-4-5@20250929"), "claude-sonnet-4-5");
  EXPECT_EQ(id("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), "claude-sonnet-4-5");
  EXPECT_EQ(id("claude-sonnet-4-6[1m]"), "claude-sonnet-4-6");
  EXPECT_EQ(id("claude-opus-4-20250514"), "claude-opus-4");
  EXPECT_EQ(id("claude-opus-4-1"), "claude-opus-4-1");
  // Another minor version is another model, not a dated form of a shorter id.
  EXPECT_EQ(id("claude-opus-4-9"), "-");
  EXPECT_EQ(id("claude-sonnet-4-7-20260101"), "-");
  EXPECT_EQ(id("gpt-5"), "-");
  // Each model has its own window: a 200k model is not given the unknown model's 1M.
  EXPECT_EQ(model_window({}, "claude-sonnet-4-5", "2.1.332"), 200000);
  EXPECT_EQ(model_window({}, "claude-sonnet-4-6[1m]", "2.1.332"), 1000000);
  EXPECT_EQ(model_window({}, "claude-opus-5-5", "2.1.332"), 1000000);
  EXPECT_EQ(model_window({}, "claude-mystery-9", "2.1.332"), 0);
  CompactionSettings no_1m;
  no_1m.disable_1m = true;
  EXPECT_EQ(model_window(no_1m, "claude-opus-5-5", "2.1.332"), 200000);
  EXPECT_EQ(compaction_point(no_1m, 200000, "claude-opus-5-5", "2.1.332").tokens, 167000);
}

TEST(ClientRules, TheUsersSettingsComeFirstInTheClientsOrder) {
  CompactionSettings s;
  // /autocompact's per-model window (2.1.311 and later) over the model's default.
  s.model_windows["claude-sonnet-4-6"] = 150000;
  s.model_window_origins["claude-sonnet-4-6"] = "/u/.claude/settings.json";
  CompactionPoint p = compaction_point(s, 200000, "claude-sonnet-4-6", "2.1.332");
  EXPECT_EQ(p.source, WindowSource::ModelSettings);
  EXPECT_EQ(p.tokens, 150000 - 33000);
  // 2.1.197 has no per-model setting: the model's default.
  p = compaction_point(s, 200000, "claude-sonnet-4-6", "2.1.197");
  EXPECT_EQ(p.source, WindowSource::ModelDefault);
  EXPECT_EQ(p.tokens, 167000);
  // "auto" in the settings passes on to the next source.
  s.model_windows["claude-sonnet-4-6"] = 0;
  p = compaction_point(s, 200000, "claude-sonnet-4-6", "2.1.332");
  EXPECT_EQ(p.source, WindowSource::ModelDefault);
  // The server's window over the model's default; a reactive model gets a threshold from it.
  s.server.model_windows["claude-sonnet-4-5"] = 120000;
  p = compaction_point(s, 200000, "claude-sonnet-4-5-20250929", "2.1.332");
  EXPECT_EQ(p.source, WindowSource::Server);
  EXPECT_EQ(p.tokens, 120000 - 33000);
  // The environment over everything; the percentage override applies to a threshold.
  s.auto_compact_window = 100000;
  s.window_origin = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
  s.pct_override = 50;
  p = compaction_point(s, 200000, "claude-sonnet-4-5", "2.1.332");
  EXPECT_EQ(p.source, WindowSource::Environment);
  EXPECT_EQ(p.tokens, 40000);
  // 2.1.197 held the environment's window to 1M; 2.1.332 does not.
  CompactionSettings big;
  big.auto_compact_window = 3'000'000;
  big.window_origin = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
  EXPECT_EQ(compaction_point(big, 1'000'000, "claude-opus-4-8", "2.1.197").auto_compact_window,
            1'000'000);
  EXPECT_EQ(compaction_point(big, 1'000'000, "claude-opus-4-8", "2.1.332").auto_compact_window,
            3'000'000);
}

TEST(ClientRules, AutoCompactionOffStopsAtTheBlockingLimit) {
  CompactionSettings s;
  s.enabled_setting = false;
  s.enabled_origin = "/u/.claude/settings.json";
  CompactionPoint p = compaction_point(s, 200000, "claude-sonnet-4-6", "2.1.332");
  EXPECT_FALSE(p.automatic);
  EXPECT_EQ(p.blocking, 177000);
  EXPECT_EQ(p.origin, "autoCompactEnabled: false in /u/.claude/settings.json");
  // The older place: ~/.claude.json, when no settings file says.
  CompactionSettings legacy;
  legacy.server.auto_compact_enabled = false;
  p = compaction_point(legacy, 1'000'000, "claude-opus-5-5", "2.1.332");
  EXPECT_FALSE(p.automatic);
  EXPECT_EQ(p.blocking, 977000);
  // A settings file that says true wins over ~/.claude.json.
  legacy.enabled_setting = true;
  EXPECT_TRUE(compaction_point(legacy, 1'000'000, "claude-opus-5-5", "2.1.332").automatic);
}

TEST(ClientRules, TheSettingsFilesGivePerModelWindowsAndTheToggle) {
  test::TempDir tmp;
  util::Env env;
  env.set("HOME", (tmp / "home").string());
  const fs::path project = tmp / "proj";
  tmp.write("home/.claude/settings.json",
            R"({"modelSettings": {"claude-sonnet-4-6": {"autoCompactWindow": 150000},
                "claude-opus-4-6": {"autoCompactWindow": "auto"}}})");
  auto s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.model_windows.at("claude-sonnet-4-6"), 150000);
  EXPECT_EQ(s.model_windows.at("claude-opus-4-6"), 0);
  EXPECT_FALSE(s.enabled_setting);
  // A project file that sets the window for every model replaces the user's per-model ones.
  tmp.write("proj/.claude/settings.json", R"({"autoCompactWindow": 300000})");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_TRUE(s.model_windows.empty());
  EXPECT_EQ(s.auto_compact_window, 300000);
  tmp.write("proj/.claude/settings.local.json", R"({"autoCompactEnabled": false})");
  s = read_compaction_settings(env, client_settings_files(env, project));
  EXPECT_EQ(s.enabled_setting, false);
}

TEST(ClientState, TheServersWindowsAreReadFromTheClientsStateFile) {
  const std::string text = R"({
    "numStartups": 12, "projects": {"/p": {"history": [1, 2, 3]}},
    "autoCompactEnabled": false,
    "clientDataCacheSlots": {
      "old": {"data": {"rowan_thicket": {"claude-sonnet-4-6": 110000}}, "at": 1},
      "new": {"data": {"rowan_thicket": {"claude-sonnet-4-6": 150000}}, "at": 2}},
    "autoCompactWindowsCache": {"claude-sonnet-4-6": 180000,
                                "claude-opus-4-6": {"default": 160000, "max": 1},
                                "claude-haiku-4-5": "lots"}
  })";
  const claude::ServerHints h = claude::parse_client_state(text);
  EXPECT_EQ(h.auto_compact_enabled, false);
  EXPECT_EQ(h.model_windows.at("claude-sonnet-4-6"), 150000);  // the newest client data first
  EXPECT_EQ(h.model_windows.at("claude-opus-4-6"), 160000);
  EXPECT_FALSE(h.model_windows.contains("claude-haiku-4-5"));
  EXPECT_EQ(claude::hints_from_json(claude::hints_to_json(h)), h);
  // Not JSON, not an object, cut short: no hints.
  EXPECT_EQ(claude::parse_client_state("{\"autoCompactEnabled\": fal"), claude::ServerHints{});
  EXPECT_EQ(claude::parse_client_state("[1,2]"), claude::ServerHints{});
  EXPECT_EQ(claude::parse_client_state(""), claude::ServerHints{});
}

// A finished session whose last usage no window can hold (a transcript written by hand, or
// corrupt) has no percentage, as the status line and the reminders have no reading: lineage and
// trim print none instead of "2147483647%".
TEST(ClientRules, ATranscriptsImpossibleUsageIsNoPercentage) {
  test::TempDir tmp;
  auto line = [](int64_t tokens) {
    return nlohmann::json{{"type", "assistant"},
                          {"version", "2.1.332"},
                          {"timestamp", "2026-11-01T10:00:00.000Z"},
                          {"message",
                           {{"id", "msg_1"},
                            {"model", "claude-sonnet-4-5"},
                            {"usage",
                             {{"input_tokens", tokens},
                              {"cache_creation_input_tokens", 0},
                              {"cache_read_input_tokens", 0}}}}}}
        .dump();
  };
  const core::ContextConfig cfg;
  tmp.write("huge.jsonl", line(INT64_MAX - 5) + "\n");
  EXPECT_EQ(transcript_percent(tmp / "huge.jsonl", cfg), std::nullopt);
  tmp.write("over.jsonl", line(kMaxUsageTokens + 1) + "\n");
  EXPECT_EQ(transcript_percent(tmp / "over.jsonl", cfg), std::nullopt);
  tmp.write("full.jsonl", line(100'000) + "\n");
  EXPECT_EQ(transcript_percent(tmp / "full.jsonl", cfg), 50);
}

// A state file or a settings file nested 100,000 deep is read as giving nothing, without the
// stack of a recursive walk (the hooks read both on every call).
TEST(ClientState, AFileNestedTooDeepGivesNothing) {
  const std::string deep = R"({"autoCompactEnabled": false, "x": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  EXPECT_EQ(claude::parse_client_state(deep), claude::ServerHints{});
  test::TempDir tmp;
  util::Env env;
  env.set("HOME", (tmp / "home").string());
  tmp.write("home/.claude/settings.json",
            R"({"autoCompactEnabled": false, "autoCompactWindow": 150000, "x": )" +
                std::string(100000, '[') + std::string(100000, ']') + "}");
  const auto s = read_compaction_settings(env, client_settings_files(env, tmp / "proj"));
  EXPECT_FALSE(s.enabled_setting);
  EXPECT_FALSE(s.auto_compact_window);
}

TEST(ClientRules, ABrokenDocumentIsAnErrorThatNamesIt) {
  EXPECT_EQ(parse_client_rules("nope").error().message, "client rules: not a JSON object");
  EXPECT_EQ(parse_client_rules(R"({"clients": []})").error().message,
            "client rules: no \"clients\" list");
  EXPECT_EQ(
      parse_client_rules(R"({"clients": [{"version": "1.0.0", "models": [{"id": "m",
                            "auto_compact_window": -5}]}]})")
          .error()
          .message,
      "client rules 1.0.0 model: \"auto_compact_window\" is neither a positive size nor \"auto\"");
}

}  // namespace
}  // namespace ctxkit::context
