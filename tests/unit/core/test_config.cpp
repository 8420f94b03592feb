#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "core/config.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::core {
namespace {

TEST(Config, DefaultsMatchTheDesign) {
  test::TempDir tmp;
  Config c = load_config(tmp.env(), {});
  EXPECT_EQ(c.context.warn_threshold, 60);
  EXPECT_EQ(c.context.recommend_threshold, 75);
  EXPECT_EQ(c.context.urgent_threshold, 85);
  EXPECT_EQ(c.context.check_interval_seconds, 60);
  EXPECT_EQ(c.context.trim_threshold_chars, 500);
  EXPECT_EQ(c.context.trim_target_tools,
            (std::vector<std::string>{"Read", "Bash", "Grep", "Glob"}));
  EXPECT_EQ(c.context.basis, Basis::Usable);
  EXPECT_EQ(c.context.reserved_tokens, 0);
  EXPECT_EQ(c.context.transcript_wait_ms, 500);
  EXPECT_TRUE(c.errors.empty());
  EXPECT_EQ(c.origin("context.warn_threshold"), "default");
}

TEST(Config, NonAsciiOutsideStringsIsAnErrorNotHandedToTheTomlParser) {
  // Found by fuzzing: toml++ 3.3 reaches undefined behaviour on such characters.
  Config c;
  apply_toml_text(c, "[con\xc3\xa9text]\nwarn_threshold = 50\n", "p.toml");
  EXPECT_EQ(c.errors,
            (std::vector<std::string>{
                "p.toml:1:5: a non-ASCII character outside a string or comment (file ignored)"}));
  Config d;
  apply_toml_text(d, "[context]\nbasis = \"x\" \xd0\x8d\n", "p.toml");
  EXPECT_EQ(d.errors,
            (std::vector<std::string>{
                "p.toml:2:13: a non-ASCII character outside a string or comment (file ignored)"}));
  // In strings (basic, literal, multi-line, with escapes) and comments they are fine.
  Config e;
  apply_toml_text(e,
                  "# caf\xc3\xa9\n[context] # \xd0\x8d\nbasis = \"caf\xc3\xa9 \\\" \xc3\xa9\"\n"
                  "x = '\xc3\xa9'\ny = \"\"\"\n\xc3\xa9\n\"\"\"\nz = \'\'\'\xc3\xa9\'\'\'\n",
                  "p.toml");
  for (const auto& err : e.errors) EXPECT_EQ(err.find("non-ASCII"), std::string::npos) << err;
}

TEST(Config, LayersUserFileProjectFileEnvironment) {
  test::TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml",
            "[context]\nwarn_threshold = 50\ncheck_interval_seconds = 30\n");
  tmp.write("proj/.work.toml", "[context]\ncheck_interval_seconds = 10\nbasis = \"window\"\n");
  auto env = tmp.env();
  env.set("CTXKIT_CONTEXT_URGENT_THRESHOLD", "90");
  Config c = load_config(env, {tmp / "proj" / "sub" / "deeper"});
  EXPECT_EQ(c.context.warn_threshold, 50);
  EXPECT_EQ(c.context.check_interval_seconds, 10);
  EXPECT_EQ(c.context.basis, Basis::Window);
  EXPECT_EQ(c.context.urgent_threshold, 90);
  EXPECT_EQ(c.origins.at("context.warn_threshold"),
            (tmp / "home/.config/ctxkit/config.toml").string());
  EXPECT_EQ(c.origins.at("context.check_interval_seconds"), (tmp / "proj/.work.toml").string());
  EXPECT_EQ(c.origins.at("context.urgent_threshold"), "CTXKIT_CONTEXT_URGENT_THRESHOLD");
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
}

TEST(Config, ProjectFileMayNotChooseTheStateDirOrTheClaudeProgram) {
  test::TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[state]\ndir = \"~/mine\"\n");
  tmp.write("proj/.work.toml",
            "[state]\ndir = \"leak\"\nbusy_timeout_ms = 2000\n[rollover]\nclaude_bin = "
            "\"./evil\"\nprint = true\n");
  Config c = load_config(tmp.env(), {tmp / "proj"});
  const std::string f = (tmp / "proj/.work.toml").string();
  EXPECT_EQ(c.state.dir, "~/mine");
  EXPECT_EQ(c.origins.at("state.dir"), (tmp / "home/.config/ctxkit/config.toml").string());
  EXPECT_EQ(c.rollover.claude_bin, "claude");
  EXPECT_EQ(c.origin("rollover.claude_bin"), "default");
  // Other keys of the same sections still apply.
  EXPECT_EQ(c.state.busy_timeout_ms, 2000);
  EXPECT_TRUE(c.rollover.print);
  ASSERT_EQ(c.warnings.size(), 2u);  // in the order toml++ lists the tables (by name)
  EXPECT_EQ(c.warnings[0], f + ":5:1: 'rollover.claude_bin' is ignored in a project file (set it "
                               "in the user's config.toml or as CTXKIT_ROLLOVER_CLAUDE_BIN)");
  EXPECT_EQ(c.warnings[1], f + ":2:1: 'state.dir' is ignored in a project file (set it in the "
                               "user's config.toml or as CTXKIT_STATE_DIR)");
  EXPECT_TRUE(c.errors.empty());
}

TEST(Config, CapKeysComeOnlyFromTheUsersFileAndTheEnvironment) {
  test::TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml",
            "[cap]\nbash_chars = 20000\nskip_tools = [\"mcp__github__*\", \"mcp__x__y\"]\n");
  tmp.write("proj/.work.toml", "[cap]\nenabled = false\nthreshold_chars = 5\n");
  util::Env env = tmp.env();
  env.set("CTXKIT_CAP_MCP_CHARS", "3000");
  Config c = load_config(env, {tmp / "proj"});
  EXPECT_TRUE(c.cap.enabled);
  EXPECT_EQ(c.cap.threshold_chars, 10000);
  EXPECT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.cap.threshold_for("Bash"), 20000);
  EXPECT_EQ(c.cap.threshold_for("mcp__other__tool"), 3000);
  EXPECT_EQ(c.cap.threshold_for("mcp__github__get_file"), std::nullopt);
  EXPECT_EQ(c.cap.threshold_for("mcp__x__y"), std::nullopt);
  EXPECT_EQ(c.cap.threshold_for("mcp__x__yz"), 3000);
  c.cap.enabled = false;
  EXPECT_EQ(c.cap.threshold_for("Bash"), std::nullopt);
}

TEST(Config, UserFileAndEnvironmentMayChooseTheStateDirAndTheClaudeProgram) {
  test::TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[rollover]\nclaude_bin = \"/opt/claude\"\n");
  auto env = tmp.env();
  env.set("CTXKIT_STATE_DIR", "/var/tmp/s");
  Config c = load_config(env, {tmp / "proj"});
  EXPECT_EQ(c.rollover.claude_bin, "/opt/claude");
  EXPECT_EQ(c.state.dir, "/var/tmp/s");
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Config, AFifoAsConfigFileDoesNotBlock) {
  test::TempDir tmp;
  std::filesystem::create_directories(tmp / "proj");
  ASSERT_EQ(::mkfifo((tmp / "proj/.work.toml").c_str(), 0600), 0);
  Config c = load_config(tmp.env(), {tmp / "proj"});  // skipped: not a regular file
  EXPECT_TRUE(c.errors.empty());
}

TEST(Config, WrongTypeIsAnErrorWithLocationAndKeepsTheDefault) {
  Config c;
  c.origins["context.warn_threshold"] = "default";
  apply_toml_text(c, "[context]\nrecommend_threshold = 70\nwarn_threshold = \"sixty\"\n",
                  "/p/.work.toml");
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0], "/p/.work.toml:3:18: context.warn_threshold: expected an integer");
  EXPECT_EQ(c.context.warn_threshold, 60);
  EXPECT_EQ(c.context.recommend_threshold, 70);
}

TEST(Config, OutOfRangeValueIsAnError) {
  Config c;
  apply_toml_text(c, "[context]\nurgent_threshold = 150\n", "f.toml");
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0],
            "f.toml:2:20: context.urgent_threshold: must be between 1 and 100, got 150");
}

TEST(Config, TheRunnersBudgetsAndAutoThresholds) {
  Config d;
  EXPECT_EQ(d.runner.max_tokens, 0);
  EXPECT_EQ(d.runner.max_cost_usd, 0);
  EXPECT_EQ(d.runner.fresh_at, 50);
  EXPECT_EQ(d.runner.compact_at, 75);
  Config c;
  apply_toml_text(c,
                  "[runner]\nmax_tokens = 2000000\nmax_cost_usd = 2.5\nfresh_at = 40\ncompact_at = "
                  "60\nmode = \"auto\"\n",
                  "f.toml");
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  EXPECT_EQ(c.runner.max_tokens, 2000000);
  EXPECT_EQ(c.runner.max_cost_usd, 2.5);
  EXPECT_EQ(c.runner.fresh_at, 40);
  EXPECT_EQ(c.runner.compact_at, 60);
  EXPECT_EQ(c.runner.mode, "auto");
  Config i;
  apply_toml_text(i, "[runner]\nmax_cost_usd = 3\n", "f.toml");  // an integer is a number
  EXPECT_EQ(i.runner.max_cost_usd, 3.0);
  Config bad;
  apply_toml_text(bad, "[runner]\nmax_tokens = -1\nmax_cost_usd = -0.5\nfresh_at = 0\n", "f.toml");
  ASSERT_EQ(bad.errors.size(), 3u);
  auto said = [&](const std::string& what) {
    return std::count_if(bad.errors.begin(), bad.errors.end(),
                         [&](const std::string& e) { return e.find(what) != std::string::npos; });
  };
  EXPECT_EQ(said("runner.max_tokens: must be between 0 and"), 1);
  EXPECT_EQ(said("runner.max_cost_usd: must be a number between 0 and"), 1);
  EXPECT_EQ(said("runner.fresh_at: must be between 1 and 100"), 1);
  EXPECT_EQ(bad.runner.max_tokens, 0);
  EXPECT_EQ(bad.runner.max_cost_usd, 0);
  test::TempDir tmp;
  auto env = tmp.env();
  env.set("CTXKIT_RUNNER_MAX_COST_USD", "0.75");
  EXPECT_EQ(load_config(env, {}).runner.max_cost_usd, 0.75);
  env.set("CTXKIT_RUNNER_MAX_COST_USD", "0.75x");
  EXPECT_FALSE(load_config(env, {}).errors.empty());
}

TEST(Config, UnknownKeyIsAWarning) {
  Config c;
  apply_toml_text(c, "[context]\nwarn_treshold = 50\n[workflow]\nanything = 1\n", "f.toml");
  EXPECT_TRUE(c.errors.empty());
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "f.toml:2:1: unknown key 'context.warn_treshold' (ignored)");
}

TEST(Config, SyntaxErrorSkipsTheFileWithLocation) {
  test::TempDir tmp;
  tmp.write("proj/.work.toml", "[context]\nwarn_threshold = = 5\n");
  Config c = load_config(tmp.env(), {tmp / "proj"});
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_TRUE(c.errors[0].starts_with((tmp / "proj/.work.toml").string() + ":2:")) << c.errors[0];
  EXPECT_NE(c.errors[0].find("(file ignored)"), std::string::npos);
  EXPECT_EQ(c.context.warn_threshold, 60);
}

TEST(Config, ThresholdsMustIncrease) {
  Config c;
  for (const char* k :
       {"context.warn_threshold", "context.recommend_threshold", "context.urgent_threshold"})
    c.origins[k] = "default";
  apply_toml_text(c, "[context]\nwarn_threshold = 80\n", "f.toml");
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.context.warn_threshold, 60);
}

TEST(Config, BadEnvironmentValueIsAnError) {
  test::TempDir tmp;
  auto env = tmp.env();
  env.set("CTXKIT_CONTEXT_CHECK_INTERVAL_SECONDS", "soon");
  Config c = load_config(env, {});
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0], "CTXKIT_CONTEXT_CHECK_INTERVAL_SECONDS: expected an integer, got 'soon'");
  EXPECT_EQ(c.context.check_interval_seconds, 60);
}

TEST(Config, ShowConfigNamesEveryKeyAndOrigin) {
  test::TempDir tmp;
  auto env = tmp.env();
  env.set("CTXKIT_CONTEXT_TRIM_TARGET_TOOLS", "Read, Bash");
  Config c = load_config(env, {});
  std::string shown = show_config(c);
  EXPECT_NE(shown.find("context.trim_target_tools = [\"Read\", \"Bash\"]"), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("# CTXKIT_CONTEXT_TRIM_TARGET_TOOLS"), std::string::npos);
  EXPECT_NE(shown.find("context.warn_threshold = 60"), std::string::npos);
}

TEST(Config, ProjectDirFromEnvironmentWinsOverPayloadCwd) {
  util::Env env;
  env.set("CLAUDE_PROJECT_DIR", "/proj");
  EXPECT_EQ(project_start_dir(env, "/elsewhere"), "/proj");
  EXPECT_EQ(project_start_dir(util::Env{}, "/elsewhere"), "/elsewhere");
}

TEST(Config, StateDirFollowsXdgStateHome) {
  test::TempDir tmp;
  Config c;
  EXPECT_EQ(c.locations(tmp.env()).state_dir, tmp / "home/.local/state/ctxkit");
}

// A user writes the name of the folder; the client names the project -home-me-secretproj.
TEST(Config, ExcludeProjectsTakesAPlainFolderNameAPathOrTheClientsFolderName) {
  ArchiveConfig a;
  a.exclude_projects = {"secretproj"};
  EXPECT_TRUE(a.excludes("-home-me-secretproj"));
  EXPECT_TRUE(a.excludes("-srv-other-secretproj"));  // the folder name cannot tell these apart
  EXPECT_FALSE(a.excludes("-home-me-secretproj2"));
  EXPECT_FALSE(a.excludes("-home-me-notsecretproj"));
  EXPECT_FALSE(a.excludes("secretproj-home"));
  a.exclude_projects = {"/home/me/secretproj"};
  EXPECT_TRUE(a.excludes("-home-me-secretproj"));
  EXPECT_FALSE(a.excludes("-srv-other-secretproj"));
  a.exclude_projects = {"-home-me-secretproj"};
  EXPECT_TRUE(a.excludes("-home-me-secretproj"));
  EXPECT_FALSE(a.excludes("-srv-secretproj"));
  a.exclude_projects = {"my.project"};
  EXPECT_TRUE(a.excludes("-home-me-my-project"));
  a.exclude_projects = {""};
  EXPECT_FALSE(a.excludes("-home-me-x"));
}

TEST(Config, ShowConfigListsTheProjectsExcludeProjectsMatched) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  std::filesystem::create_directories(tmp / "home/.claude/projects/-home-me-secretproj");
  std::filesystem::create_directories(tmp / "home/.claude/projects/-home-me-open");
  std::filesystem::create_directories(tmp / "home/.local/state/ctxkit/archive/-old-secretproj");
  env.set("CTXKIT_ARCHIVE_EXCLUDE_PROJECTS", "secretproj");
  Config c = load_config(env, {});
  ASSERT_EQ(c.archive.exclude_projects, std::vector<std::string>{"secretproj"});
  std::string shown = show_config(c, &env);
  EXPECT_NE(
      shown.find("\narchive.exclude_projects matches: -home-me-secretproj, -old-secretproj\n"),
      std::string::npos)
      << shown;
  env.set("CTXKIT_ARCHIVE_EXCLUDE_PROJECTS", "nothere");
  EXPECT_NE(show_config(load_config(env, {}), &env)
                .find("\narchive.exclude_projects matches no project yet\n"),
            std::string::npos);
  EXPECT_EQ(show_config(load_config(env, {})).find("matches"), std::string::npos);
}

}  // namespace
}  // namespace ctxkit::core
