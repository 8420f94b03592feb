#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "context/compaction_point.hpp"
#include "context/context_meter.hpp"
#include "e2e/e2e_support.hpp"
#include "store/meter_store.hpp"
#include "unit/json_variants.hpp"
#include "util/time.hpp"
#include "util/utf8.hpp"

namespace ctxkit::test {
namespace {
using json = nlohmann::json;

// Every recorded version and model, the status-line input as recorded and rewritten (keys
// reversed, spaced, unknown keys added at every depth).
struct Recorded {
  std::string set;
  std::optional<JsonVariant> variant;
};

std::vector<Recorded> recorded() {
  std::vector<Recorded> out;
  for (const auto& set : fixture_sets("hooks/StatusLine.json")) {
    out.push_back({set, std::nullopt});
    for (auto v : all_json_variants()) out.push_back({set, v});
  }
  return out;
}

class RecordedStatusInput : public ::testing::TestWithParam<Recorded> {};

// The inputs the client gave after a response: ctx-status records the client's own figure (its
// token count and its window, whatever that is for this version and model) and shows it.
TEST_P(RecordedStatusInput, RecordsAndShowsTheClientsExactFigure) {
  json all = json::parse(read_file(fixture_path(GetParam().set, "hooks/StatusLine.json")));
  int checked = 0;
  for (json p : all["payloads"]) {
    if (!p["context_window"].is_object() || !p["context_window"]["current_usage"].is_object())
      continue;
    TempDir tmp;
    util::Env env = tmp.env();
    env.set("NO_COLOR", "1");
    p["transcript_path"] = (tmp / "t.jsonl").string();
    // Replayed as the client sent it then: a warm prompt cache stays warm (its expiry moved to
    // five minutes from now), so that the line does not depend on the day the test runs.
    if (p.contains("prompt_cache") && p["prompt_cache"].is_object() &&
        p["prompt_cache"].contains("expires_at"))
      p["prompt_cache"]["expires_at"] = util::now_ms() / 1000 + 300;
    auto input = GetParam().variant ? json_variant(p.dump(), *GetParam().variant) : p.dump();
    auto r = run_tool("ctx-status", {}, input, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto store = store::MeterStore::open(tmp / "home/.local/state/ctxkit/meter.db", 1000);
    ASSERT_TRUE(store);
    auto row = store->row(p["session_id"], "");
    ASSERT_TRUE(row);
    const auto& fig = row->status;
    ASSERT_TRUE(fig);
    auto cu = p["context_window"]["current_usage"];
    const int64_t tokens = cu["input_tokens"].get<int64_t>() +
                           cu["cache_creation_input_tokens"].get<int64_t>() +
                           cu["cache_read_input_tokens"].get<int64_t>();
    const int64_t window = p["context_window"]["context_window_size"];
    EXPECT_EQ(fig->tokens, tokens);
    EXPECT_EQ(fig->window, window);
    // No auto-compact window is set: the figure is of where this release compacts this model
    // (the model's default threshold, or the window for a reactive model).
    const auto point =
        context::compaction_point({}, window, p["model"].value("id", ""), p.value("version", ""));
    if (point.threshold) {
      const auto left = std::lround(static_cast<double>(point.tokens - tokens) * 100.0 /
                                    static_cast<double>(point.tokens));
      EXPECT_EQ(r.out, "Context " + std::to_string(tokens * 100 / point.tokens) + "% · " +
                           context::short_tokens(tokens) + " of " +
                           context::short_tokens(point.tokens) + " · " + std::to_string(left) +
                           "% until auto-compact\n");
    } else {
      EXPECT_EQ(r.out, "Context " + std::to_string(tokens * 100 / window) + "% of window · " +
                           context::short_tokens(tokens) + " of " + context::short_tokens(window) +
                           "\n");
    }
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

INSTANTIATE_TEST_SUITE_P(EveryVersion, RecordedStatusInput, ::testing::ValuesIn(recorded()),
                         [](const ::testing::TestParamInfo<Recorded>& p) {
                           return fixture_set_name(p.param.set) + "_" +
                                  (p.param.variant ? variant_name(*p.param.variant) : "Recorded");
                         });

TEST(Status, OneMillionWindowReportedByTheClient) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  json p = {{"session_id", "S"},
            {"transcript_path", (tmp / "t.jsonl").string()},
            {"context_window",
             {{"context_window_size", 1000000},
              {"current_usage",
               {{"input_tokens", 1},
                {"cache_creation_input_tokens", 0},
                {"cache_read_input_tokens", 483499}}}}}};
  auto r = run_tool("ctx-status", {}, p.dump(), env);
  EXPECT_EQ(r.out, "Context 48% of window · 484k of 1M\n");
}

// Where the client compacts decides "usable": an auto-compact window from the client's
// environment or its settings file, or no auto-compaction at all.
TEST(Status, UsableEndsWhereTheClientCompacts) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  json p = {{"session_id", "S"},
            {"transcript_path", (tmp / "t.jsonl").string()},
            {"cwd", (tmp / "proj").string()},
            {"context_window",
             {{"context_window_size", 1000000},
              {"current_usage",
               {{"input_tokens", 1},
                {"cache_creation_input_tokens", 0},
                {"cache_read_input_tokens", 483499}}}}}};
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "1000000");
  EXPECT_EQ(run_tool("ctx-status", {}, p.dump(), env).out,
            "Context 50% · 484k of 967k · 50% until auto-compact\n");
  env.set("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "");
  tmp.write("proj/.claude/settings.json", R"({"autoCompactWindow": "600k"})");
  EXPECT_EQ(run_tool("ctx-status", {}, p.dump(), env).out,
            "Context 85% · 484k of 567k · 15% until auto-compact\n");
  env.set("DISABLE_AUTO_COMPACT", "1");
  EXPECT_EQ(run_tool("ctx-status", {}, p.dump(), env).out,
            "Context 48% of window · 484k of 1M · auto-compact off\n");
}

TEST(Status, ShowConfigAndVersion) {
  TempDir tmp;
  auto r = run_tool("ctx-status", {"--version"}, "", tmp.env());
  EXPECT_EQ(r.out, "ctx-status " + expected_version() + "\n");
  r = run_tool("ctx-status", {"--show-config"}, "", tmp.env());
  EXPECT_NE(r.out.find("context.basis = \"usable\"  "), std::string::npos) << r.out;
}

// A payload of 483,500 tokens in a 1M window of a model no release knows, which the newest
// release compacts at 1M − 20k − 13k = 967k.
json half_full(const TempDir& tmp) {
  return {{"session_id", "S"},
          {"transcript_path", (tmp / "t.jsonl").string()},
          {"model", {{"id", "claude-opus-4-8"}, {"display_name", "Opus 4.8"}}},
          {"cost", {{"total_cost_usd", 0.137045}}},
          {"context_window",
           {{"context_window_size", 1000000},
            {"current_usage",
             {{"input_tokens", 1},
              {"cache_creation_input_tokens", 0},
              {"cache_read_input_tokens", 483499}}}}}};
}
constexpr const char* kOurs = "Context 50% · 484k of 967k · 50% until auto-compact";

// An executable script in the temp dir.
std::string script(const TempDir& tmp, const std::string& name, const std::string& body) {
  auto p = tmp.write(name, "#!/bin/sh\n" + body);
  ::chmod(p.c_str(), 0755);
  return p.string();
}

TEST(Status, WrapShowsTheUsersLineBesideOursFromTheSameInput) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  // Theirs checks it got the same payload, and has a second line.
  std::string theirs = script(tmp, "their line.sh",
                              "in=$(cat)\ncase \"$in\" in *'\"session_id\":\"S\"'*) echo \"theirs: "
                              "$1\";; *) echo wrong input;; esac\n"
                              "echo second line\n");
  auto r = run_tool("ctx-status", {"--wrap", "'" + theirs + "' arg"}, half_full(tmp).dump(), env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("theirs: arg │ ") + kOurs + "\nsecond line\n");
  EXPECT_EQ(r.err, "");
}

TEST(Status, TheConfiguredCommandIsWrappedAndMayNeedAShell) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  tmp.write("home/.config/ctxkit/config.toml", "[status]\ncommand = \"echo mine | tr a-z A-Z\"\n");
  auto r = run_tool("ctx-status", {}, half_full(tmp).dump(), env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("MINE │ ") + kOurs + "\n");
}

TEST(Status, AProjectFileCannotChooseTheWrappedCommand) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  tmp.write("proj/.work.toml", "[status]\ncommand = \"echo injected\"\n");
  json p = half_full(tmp);
  p["cwd"] = (tmp / "proj").string();
  auto r = run_tool("ctx-status", {}, p.dump(), env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kOurs) + "\n");
}

TEST(Status, AWrappedCommandThatHangsIsStoppedAndOursStillShows) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  tmp.write("home/.config/ctxkit/config.toml", "[status]\ntimeout_ms = 300\n");
  std::string theirs = script(tmp, "slow.sh", "sleep 20\necho too late\n");
  auto start = std::chrono::steady_clock::now();
  auto r = run_tool("ctx-status", {"--wrap", theirs}, half_full(tmp).dump(), env);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kOurs) + "\n");
  EXPECT_EQ(r.err, "ctx-status: status command: no answer within 300 ms (stopped)\n");
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(Status, AWrappedCommandThatFailsLeavesOursAlone) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  auto r =
      run_tool("ctx-status", {"--wrap", "sh -c 'echo half; exit 3'"}, half_full(tmp).dump(), env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kOurs) + "\n");
  EXPECT_EQ(r.err, "ctx-status: status command: exit 3\n");
  r = run_tool("ctx-status", {"--wrap", "no-such-status-program"}, half_full(tmp).dump(), env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kOurs) + "\n");
  EXPECT_EQ(r.err,
            "ctx-status: status command: starting no-such-status-program: no-such-status-program "
            "not found in PATH\n");
}

TEST(Status, NoColorOfAnyNonEmptyValueTurnsColoursOff) {
  TempDir tmp;
  util::Env env = tmp.env();
  auto coloured = run_tool("ctx-status", {}, half_full(tmp).dump(), env);
  EXPECT_EQ(coloured.out, "\x1b[32mContext 50%\x1b[0m · 484k of 967k · 50% until auto-compact\n");
  env.set("NO_COLOR", "");
  EXPECT_EQ(run_tool("ctx-status", {}, half_full(tmp).dump(), env).out, coloured.out);
  env.set("NO_COLOR", "yes");
  EXPECT_EQ(run_tool("ctx-status", {}, half_full(tmp).dump(), env).out, std::string(kOurs) + "\n");
}

TEST(Status, AFormatNamesTheFieldsAndTheSessionCost) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  tmp.write("home/.config/ctxkit/config.toml",
            "[status]\nformat = \"{percent}% · {tokens}/{usable} · {window} · {tier} · {model} · "
            "{cost}\"\n");
  auto r = run_tool("ctx-status", {}, half_full(tmp).dump(), env);
  EXPECT_EQ(r.out, "50% · 484k/967k · 1M · ok · Opus 4.8 · $0.14\n");
  json no_cost = half_full(tmp);
  no_cost.erase("cost");
  EXPECT_EQ(run_tool("ctx-status", {}, no_cost.dump(), env).out,
            "50% · 484k/967k · 1M · ok · Opus 4.8 · \n");
  EXPECT_EQ(run_tool("ctx-status", {}, half_full(tmp).dump(), tmp.env()).out,
            "\x1b[32m50% · 484k/967k · 1M · ok · Opus 4.8 · $0.14\x1b[0m\n");
}

// What a terminal would act on in a line: a control character (C0, DEL), a C1 control as UTF-8
// (U+0080-U+009F) or a byte that is not UTF-8 (a raw C1 byte among them). Empty when none.
std::string terminal_controls(const std::string& line) {
  std::string found;
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    const auto next = i + 1 < line.size() ? static_cast<unsigned char>(line[i + 1]) : 0;
    if (c < 0x20 || c == 0x7f || (c == 0xc2 && next >= 0x80 && next < 0xa0))
      found += fmt::format("{:02x}@{} ", c, i);
  }
  if (!util::is_valid_utf8(line)) found += "not UTF-8";
  return found;
}

// The model's name comes from the client's input: escape sequences in it (a window title, the
// clipboard through OSC 52, a cleared screen, a new line, C1 controls) reach the terminal as
// visible text, in colour and without.
TEST(Status, AFormatShowsTheClientsModelNameWithoutItsControlCharacters) {
  TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[status]\nformat = \"{percent}% · {model}\"\n");
  json p = half_full(tmp);
  p["model"]["display_name"] =
      "Opus\x1b]0;title\x07\x1b]52;c;aGVsbG8=\x1b\\\x1b[2J\r\nnext\x7f\xc2\x9b"
      "31mC1\xc2\x85RAW";
  std::string input = p.dump();
  input.replace(input.find("RAW"), 3, "\x9b\xff");  // bytes that are not UTF-8
  util::Env plain = tmp.env();
  plain.set("NO_COLOR", "1");
  for (const auto& env : {plain, tmp.env()}) {
    auto r = run_tool("ctx-status", {}, input, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string line = r.out;
    ASSERT_TRUE(line.ends_with("\n")) << line;
    line.pop_back();
    if (line.starts_with("\x1b[32m") && line.ends_with("\x1b[0m"))
      line = line.substr(5, line.size() - 9);  // our own colour, and only ours
    EXPECT_EQ(terminal_controls(line), "") << line;
    EXPECT_TRUE(line.starts_with("50% · Opus")) << line;
    EXPECT_NE(line.find("title"), std::string::npos) << line;
    EXPECT_NE(line.find("next"), std::string::npos) << line;
  }
}

TEST(Status, AFormatWithAnUnknownFieldKeepsTheDefaultLine) {
  TempDir tmp;
  util::Env env = tmp.env();
  env.set("NO_COLOR", "1");
  tmp.write("home/.config/ctxkit/config.toml", "[status]\nformat = \"{percent}% {price}\"\n");
  auto r = run_tool("ctx-status", {}, half_full(tmp).dump(), env);
  EXPECT_EQ(r.out, std::string(kOurs) + "\n");
  auto show = run_tool("ctx-status", {"--show-config"}, "", env);
  EXPECT_NE(show.out.find("warning: "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("unknown field '{price}'"), std::string::npos) << show.out;
}

}  // namespace
}  // namespace ctxkit::test
