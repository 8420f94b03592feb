// Options of the programs that no other test gives: each test fails if its option stops working.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// An assistant transcript line whose usage puts the context at `tokens`.
std::string reading(int64_t tokens) {
  json j = {
      {"type", "assistant"}, {"isSidechain", false}, {"timestamp", "2026-11-21T12:00:00.000Z"}};
  j["message"] = {{"id", "msg_" + std::to_string(tokens)},
                  {"model", "claude-sonnet-4-5"},
                  {"role", "assistant"},
                  {"content", json::array({{{"type", "text"}, {"text", "ok"}}})},
                  {"usage",
                   {{"input_tokens", 5},
                    {"cache_creation_input_tokens", 0},
                    {"cache_read_input_tokens", tokens - 5}}}};
  return j.dump() + "\n";
}

// --- ctx-status --no-color -----------------------------------------------------------------------

TEST(AppOptions, StatusNoColorPrintsTheSameLineWithoutEscapes) {
  TempDir tmp;
  json p = {{"session_id", "S"},
            {"transcript_path", (tmp / "t.jsonl").string()},
            {"context_window",
             {{"context_window_size", 200000},
              {"current_usage",
               {{"input_tokens", 5},
                {"cache_creation_input_tokens", 0},
                {"cache_read_input_tokens", 83495}}}}}};
  auto coloured = run_tool("ctx-status", {}, p.dump(), tmp.env());
  ASSERT_EQ(coloured.exit_code, 0) << coloured.err;
  EXPECT_NE(coloured.out.find("\x1b["), std::string::npos) << coloured.out;
  auto plain = run_tool("ctx-status", {"--no-color"}, p.dump(), tmp.env());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find('\x1b'), std::string::npos) << plain.out;
  EXPECT_TRUE(plain.out.starts_with("Context 41% of window · ")) << plain.out;  // 83,500 of 200k
  // The coloured line less its escapes is the plain one.
  std::string stripped;
  for (size_t i = 0; i < coloured.out.size(); ++i) {
    if (coloured.out[i] == '\x1b') {
      while (i < coloured.out.size() && coloured.out[i] != 'm') ++i;
      continue;
    }
    stripped += coloured.out[i];
  }
  EXPECT_EQ(stripped, plain.out);
}

// --- ctx-workflow --dir --------------------------------------------------------------------------

TEST(AppOptions, WorkflowDirAddsATemplateFolderThatWins) {
  TempDir tmp;
  const fs::path wt = tmp / "wt";
  fs::create_directories(wt);
  tmp.write("wt/.ctxkit/workflows/demo.yaml",
            "name: demo\ndescription: the project's\nsteps:\n  - id: p\n    type: action\n    "
            "instructions: P.\n");
  tmp.write("extra/demo.yaml",
            "name: demo\ndescription: the extra folder's\nsteps:\n  - id: x\n    type: action\n    "
            "instructions: X.\n");
  tmp.write("extra/only-here.yaml",
            "name: only-here\ndescription: d\nsteps:\n  - id: o\n    type: action\n    "
            "instructions: O.\n");
  const util::Env env = tmp.env();
  auto without = run_tool("ctx-workflow", {"--worktree", wt.string(), "list"}, "", env);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out.find("only-here"), std::string::npos) << without.out;
  auto with =
      run_tool("ctx-workflow",
               {"--worktree", wt.string(), "--dir", (tmp / "extra").string(), "list"}, "", env);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.out.find("only-here"), std::string::npos) << with.out;
  auto start = run_tool(
      "ctx-workflow",
      {"--worktree", wt.string(), "--dir", (tmp / "extra").string(), "start", "demo", "--json"}, "",
      env);
  ASSERT_EQ(start.exit_code, 0) << start.err;
  EXPECT_EQ(json::parse(read_file(wt / "workflow-state.json"))["step"], "x")
      << read_file(wt / "workflow-state.json");
}

// --- ctx-settings --dry-run
// -----------------------------------------------------------------------

TEST(AppOptions, SettingsDryRunPrintsTheResultAndWritesNothing) {
  TempDir tmp;
  const fs::path settings = tmp / "home/.claude/settings.json";
  tmp.write("home/.claude/settings.json", "{\"model\": \"opus\"}\n");
  const std::string before = read_file(settings);
  auto r = run_tool(
      "ctx-settings",
      {"install", "--settings", settings.string(), "--bin-dir", "/opt/ctxkit/bin", "--dry-run"}, "",
      tmp.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(settings), before);
  EXPECT_FALSE(fs::exists(tmp / "home/.local/state/ctxkit/install"));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(settings.parent_path())) ++files;
  EXPECT_EQ(files, 1u);  // no backup either
  EXPECT_NE(r.out.find("/opt/ctxkit/bin/ctx-remind"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"model\""), std::string::npos)
      << r.out;  // the user's keys kept in the result
}

// --manifest-dir: the records of a set-up go there (not under the state folder) and the
// uninstall that is given the same folder finds them and removes exactly what was added.
TEST(AppOptions, SettingsManifestDirKeepsTheRecordsOfTheSetUp) {
  TempDir tmp;
  fs::create_directories(tmp / "data");
  fs::copy(fs::path(CTXKIT_SOURCE_DIR) / "skills", tmp / "data/skills",
           fs::copy_options::recursive);
  fs::create_directories(tmp / "proj/.claude");
  const std::string before = "{\"model\": \"opus\"}\n";
  tmp.write("proj/.claude/settings.json", before);
  const fs::path records = tmp / "records";
  auto args = [&](const std::string& action) {
    return std::vector<std::string>{action,
                                    "--bin-dir",
                                    bin_dir(),
                                    "--data-dir",
                                    (tmp / "data").string(),
                                    "--project",
                                    (tmp / "proj").string(),
                                    "--manifest-dir",
                                    records.string()};
  };
  auto in = run_tool("ctx-settings", args("install"), "", tmp.env());
  ASSERT_EQ(in.exit_code, 0) << in.err;
  EXPECT_NE(read_file(tmp / "proj/.claude/settings.json").find(bin_dir() + "/ctx-remind"),
            std::string::npos);
  size_t manifests = 0;
  for (const auto& e : fs::directory_iterator(records))
    manifests += e.path().filename().string().find("manifest") != std::string::npos;
  EXPECT_GE(manifests, 1u);
  EXPECT_FALSE(fs::exists(tmp / "home/.local/state/ctxkit/install"));
  auto out = run_tool("ctx-settings", args("uninstall"), "", tmp.env());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(json::parse(read_file(tmp / "proj/.claude/settings.json")), json::parse(before));
  EXPECT_FALSE(fs::exists(tmp / "proj/.mcp.json"));
}

// --- ctx-gate --session
// ----------------------------------------------------------------------------

// The session named by --session (not $CLAUDE_CODE_SESSION_ID) decides a context_min_percent gate.
TEST(AppOptions, GateSessionNamesTheSessionWhoseFigureCounts) {
  const std::string sid = "7a1f3c2e-9d4b-4e6a-8f10-2c3d4e5f6a7b";
  for (const auto& [tokens, action] :
       {std::pair<int64_t, std::string>{16700, "none"}, {100200, "compact"}}) {
    TempDir tmp;
    const fs::path wt = tmp / "wt";
    fs::create_directories(wt);
    tmp.write(
        "g.yaml",
        "name: g\ndescription: d\nsteps:\n  - id: plan\n    type: action\n    instructions: Plan.\n"
        "  - id: build\n    type: loop\nloops:\n  build:\n    - id: code\n      context: compact\n"
        "      context_min_percent: 50\n      instructions: Write {task.title}.\n");
    tmp.write("home/.claude/projects/-wt/" + sid + ".jsonl", reading(tokens));
    util::Env env = tmp.env();
    auto wf = [&](std::vector<std::string> args, const std::string& in = "") {
      args.insert(args.begin(), {"--worktree", wt.string()});
      return run_tool("ctx-workflow", args, in, env);
    };
    ASSERT_EQ(wf({"start", (tmp / "g.yaml").string()}).exit_code, 0);
    ASSERT_EQ(wf({"advance", "--output", "planned"}).exit_code, 0);
    ASSERT_EQ(wf({"set-tasks", "build", "-"}, R"([{"id":"t1","title":"Login form"}])").exit_code,
              0);
    auto g = run_tool("ctx-gate", {"--json", "--worktree", wt.string(), "--session", sid}, "", env);
    ASSERT_EQ(g.exit_code, 0) << g.err;
    EXPECT_EQ(json::parse(g.out)["action"], action) << tokens << ": " << g.out;
  }
}

// --- ctx-search --project, --session, --limit
// -----------------------------------------------------

std::string user_line(const std::string& text, int minute) {
  return json{{"type", "user"},
              {"timestamp", "2026-11-20T10:" + std::string(minute < 10 ? "0" : "") +
                                std::to_string(minute) + ":00.000Z"},
              {"message", {{"role", "user"}, {"content", text}}}}
             .dump() +
         "\n";
}

TEST(AppOptions, SearchProjectSessionAndLimitNarrowTheHits) {
  TempDir tmp;
  const std::string a = "aaaaaaaa-1111-4111-8111-111111111111",
                    b = "bbbbbbbb-2222-4222-8222-222222222222";
  // Three messages of session a in project /srv/alpha, two of session b in /srv/beta: each says
  // zebra.
  tmp.write("home/.local/state/ctxkit/archive/-srv-alpha/" + a + ".jsonl",
            user_line("zebra one", 1) + user_line("zebra two", 2) + user_line("zebra three", 3));
  tmp.write("home/.local/state/ctxkit/archive/-srv-beta/" + b + ".jsonl",
            user_line("zebra four", 4) + user_line("zebra five", 5));
  for (const char* d : {"home/.local/state/ctxkit", "home/.local/state/ctxkit/archive",
                        "home/.local/state/ctxkit/archive/-srv-alpha",
                        "home/.local/state/ctxkit/archive/-srv-beta"})
    fs::permissions(tmp / d, fs::perms::owner_all);
  const util::Env env = tmp.env();
  auto hits = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"zebra", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_tool("ctx-search", args, "", env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(j.is_array()) << r.out;
    return j.is_array() ? j : json::array();
  };
  EXPECT_EQ(hits({}).size(), 5u);
  EXPECT_EQ(hits({"--limit", "2"}).size(), 2u);
  const json of_b = hits({"--session", b});
  ASSERT_EQ(of_b.size(), 2u);
  for (const auto& h : of_b) EXPECT_EQ(h["session_id"], b);
  const json of_alpha = hits({"--project", "-srv-alpha"});
  ASSERT_EQ(of_alpha.size(), 3u);
  for (const auto& h : of_alpha) EXPECT_EQ(h["session_id"], a);
  EXPECT_EQ(hits({"--project", "/srv/alpha"}), of_alpha);  // a project's path names its folder
  EXPECT_EQ(hits({"--project", "/srv/alpha", "--session", b}).size(), 0u);
  EXPECT_EQ(hits({"--project", "/srv/alpha", "--limit", "1"}).size(), 1u);
}

// --- ctx-doctor ----------------------------------------------------------------------------------

// "<status> <message>" of a finding of `ctx-doctor --json`.
std::string finding_text(const json& f) {
  const auto text = [&](const char* key) {
    return f[key].is_string() ? f[key].get_ref<const std::string&>() : std::string();
  };
  return text("status") + " " + text("message");
}

// A ctxkit install in a temp HOME (hooks and status line by ctx-settings, the two MCP servers by
// ctx-workflow-mcp register, a `claude` that tells its version) and one hook run.
struct Doctored {
  TempDir tmp;
  util::Env env = tmp.env();
  fs::path settings = tmp / "home/.claude/settings.json", claude_json = tmp / "home/.claude.json";
  fs::path state = tmp / "home/.local/state/ctxkit";
  Doctored() {
    tmp.write("bin/claude", "#!/bin/sh\necho '2.1.197 (Claude Code)'\n");
    fs::permissions(tmp / "bin/claude", fs::perms::owner_all);
    env.set("PATH", (tmp / "bin").string() + ":/usr/local/bin:/usr/bin:/bin");
    EXPECT_EQ(
        run_tool("ctx-settings",
                 {"install", "--settings", settings.string(), "--bin-dir", bin_dir()}, "", env)
            .exit_code,
        0);
    EXPECT_EQ(run_tool("ctx-workflow-mcp", {"register", "--config", claude_json.string()}, "", env)
                  .exit_code,
              0);
    EXPECT_EQ(run_tool("ctx-workflow-mcp",
                       {"register", "--config", claude_json.string(), "--name", "ctxkit-archive",
                        "--command", bin_dir() + "/ctx-archive-mcp"},
                       "", env)
                  .exit_code,
              0);
    json p = {{"session_id", "S"},          {"transcript_path", (tmp / "t.jsonl").string()},
              {"cwd", tmp.path().string()}, {"hook_event_name", "PostToolUse"},
              {"tool_name", "Bash"},        {"tool_use_id", "toolu_1"}};
    EXPECT_EQ(run_tool("ctx-remind", {}, p.dump(), env).exit_code, 0);
    p["hook_event_name"] = "SessionStart";
    p["source"] = "startup";
    // Recorded in this process (the client's run records after its output, detached): the
    // databases are there, and no longer written, when a test changes them.
    EXPECT_EQ(run_tool("ctx-session-hook", {"--foreground"}, p.dump(), env).exit_code, 0);
  }
  // The findings of `area` that name `file`.
  std::vector<std::string> findings_on(const std::string& area, const fs::path& file) {
    std::vector<std::string> out;
    for (auto& f : findings(area))
      if (f.find(file.string()) != std::string::npos) out.push_back(f);
    return out;
  }
  // The findings of `ctx-doctor --json` for `area`: "<status> <text>" each.
  std::vector<std::string> findings(const std::string& area, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--settings", settings.string(), "--claude-json",
                                     claude_json.string(), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_tool("ctx-doctor", args, "", env, tmp.path());
    std::vector<std::string> out;
    const json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    if (j.is_discarded()) return out;
    for (const auto& f : j["findings"])
      if (f.contains("area") && f["area"] == area) out.push_back(finding_text(f));
    return out;
  }
};

void set_user_version(const fs::path& db, int v) {
  // The version is the big-endian 32-bit number at offset 60 of the header.
  std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(60);
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  f.write(bytes, 4);
}

TEST(AppOptions, DoctorTellsANewerAndAnOlderStateSchema) {
  Doctored d;
  const fs::path db = d.state / "state.db";
  ASSERT_TRUE(fs::exists(db));
  set_user_version(db, 99);
  auto newer = d.findings_on("state", db);
  ASSERT_EQ(newer.size(), 1u);
  EXPECT_TRUE(newer[0].starts_with("fault " + db.string() +
                                   " has schema version 99, newer than this ctxkit's"))
      << newer[0];
  set_user_version(db, 1);
  auto older = d.findings_on("state", db);
  ASSERT_EQ(older.size(), 1u);
  EXPECT_TRUE(
      older[0].starts_with("warning " + db.string() + " has schema version 1; this ctxkit's is"))
      << older[0];
}

TEST(AppOptions, DoctorTellsADamagedStateDatabase) {
  Doctored d;
  const fs::path db = d.state / "state.db";
  ASSERT_TRUE(fs::exists(db));
  std::ofstream(db, std::ios::trunc) << std::string(8192, 'x');
  auto f = d.findings_on("state", db);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].starts_with("fault " + db.string())) << f[0];
}

TEST(AppOptions, DoctorsArchiveAreaSaysWhatIsArchivedAndIndexed) {
  Doctored d;
  auto none = d.findings("archive");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0], "ok no session archived yet (sessions are archived when they end)");
  d.tmp.write("home/.local/state/ctxkit/archive/-proj/S.jsonl", reading(1000));
  fs::permissions(d.state / "archive", fs::perms::owner_all);
  fs::permissions(d.state / "archive/-proj", fs::perms::owner_all);
  auto unindexed = d.findings("archive");
  ASSERT_EQ(unindexed.size(), 1u);
  EXPECT_EQ(unindexed[0], "warning 1 sessions archived; no search index yet");
  // ctx-search indexes what is pending before it searches.
  auto s = run_tool("ctx-search", {"anything"}, "", d.env);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto indexed = d.findings("archive");
  ASSERT_EQ(indexed.size(), 1u);
  EXPECT_EQ(indexed[0], "ok 1 sessions archived, the search index is up to date");
}

TEST(AppOptions, DoctorWarnsOfAMissingOrForeignStatusLine) {
  Doctored d;
  json s = json::parse(read_file(d.settings));
  s.erase("statusLine");
  d.tmp.write("home/.claude/settings.json", s.dump(2));
  auto none = d.findings("status line");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].starts_with("warning no status line")) << none[0];
  s["statusLine"] = {{"type", "command"}, {"command", "my-status --fancy"}};
  d.tmp.write("home/.claude/settings.json", s.dump(2));
  auto other = d.findings("status line");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0], "warning the status line runs 'my-status --fancy', not ctx-status");
}

// --timeout-ms bounds the wait for an MCP server that never answers (and says so).
TEST(AppOptions, DoctorTimeoutMsBoundsTheWaitForASilentServer) {
  Doctored d;
  const fs::path silent = d.tmp.write("silent/ctx-workflow-mcp", "#!/bin/sh\nexec sleep 60\n");
  fs::permissions(silent, fs::perms::owner_all);
  json c = json::parse(read_file(d.claude_json));
  c["mcpServers"]["ctxkit-workflow"]["command"] = silent.string();
  d.tmp.write("home/.claude.json", c.dump());
  // Long enough for the real server to answer on a loaded machine or under a sanitizer (the
  // bound applies to both), far below the silent one's minute.
  auto f = d.findings("mcp", {"--timeout-ms", "3000"});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0], "fault MCP server 'ctxkit-workflow' (" + silent.string() +
                      "): no answer to initialize within 3000 ms")
      << f[0];
  EXPECT_TRUE(f[1].starts_with("ok MCP server 'ctxkit-archive' answers initialize")) << f[1];
}

TEST(AppOptions, DoctorFaultsAPluginThatIsEnabledButNotInstalled) {
  Doctored d;
  json s = json::parse(read_file(d.settings));
  s["enabledPlugins"] = {{"ctxkit@local", true}};
  d.tmp.write("home/.claude/settings.json", s.dump(2));
  auto f = d.findings("install");
  EXPECT_NE(std::find(f.begin(), f.end(), "fault plugin ctxkit@local is enabled but not installed"),
            f.end())
      << testing::PrintToString(f);
}

// Installed as a plugin only (no ctxkit hook in settings.json): the plugin is the install, and its
// own hooks.json is what is checked.
TEST(AppOptions, DoctorTakesAPluginOnlyInstallAsTheInstall) {
  Doctored d;
  ASSERT_EQ(
      run_tool("ctx-settings",
               {"uninstall", "--settings", d.settings.string(), "--bin-dir", bin_dir()}, "", d.env)
          .exit_code,
      0);
  json s = json::parse(read_file(d.settings));
  s["enabledPlugins"] = {{"ctxkit@ctxkit", true}};
  d.tmp.write("home/.claude/settings.json", s.dump(2));
  d.tmp.write("home/.claude/plugins/installed_plugins.json",
              json{{"version", 2},
                   {"plugins",
                    {{"ctxkit@ctxkit",
                      json::array({{{"scope", "user"}, {"installPath", CTXKIT_PLUGIN_DIR}}})}}}}
                  .dump());
  const auto f = d.findings("install");
  EXPECT_NE(std::find(f.begin(), f.end(),
                      std::string("ok plugin ctxkit@ctxkit (") + CTXKIT_PLUGIN_DIR + ")"),
            f.end())
      << testing::PrintToString(f);
  for (const auto& x : f) EXPECT_FALSE(x.starts_with("fault")) << x;
  // The plugin's hooks are the ones checked, and none is missing.
  const auto hooks = d.findings("hooks");
  EXPECT_FALSE(hooks.empty());
  for (const auto& x : hooks) EXPECT_FALSE(x.starts_with("fault")) << x;
  // Both MCP servers are found, the archive's in the plugin's .mcp.json alone.
  json c = json::parse(read_file(d.claude_json));
  c["mcpServers"].erase("ctxkit-archive");
  d.tmp.write("home/.claude.json", c.dump());
  const auto mcp = d.findings("mcp");
  EXPECT_NE(
      std::find_if(mcp.begin(), mcp.end(),
                   [](const std::string& x) {
                     return x.starts_with(
                         "ok MCP server 'ctxkit-archive' answers initialize (ctxkit-archive ");
                   }),
      mcp.end())
      << testing::PrintToString(mcp);
  for (const auto& x : mcp) EXPECT_FALSE(x.starts_with("fault")) << x;
}

// The archive's search server missing from the user's MCP configuration (and no plugin carries
// it): a fault that says how to register it.
TEST(AppOptions, DoctorFaultsAnUnregisteredArchiveServer) {
  Doctored d;
  EXPECT_TRUE(d.findings("mcp")[1].starts_with("ok MCP server 'ctxkit-archive' answers initialize"))
      << d.findings("mcp")[1];
  json c = json::parse(read_file(d.claude_json));
  c["mcpServers"].erase("ctxkit-archive");
  d.tmp.write("home/.claude.json", c.dump());
  const auto f = d.findings("mcp");
  ASSERT_EQ(f.size(), 2u) << testing::PrintToString(f);
  EXPECT_TRUE(f[0].starts_with("ok MCP server 'ctxkit-workflow' answers initialize")) << f[0];
  EXPECT_EQ(f[1], "fault the archive's search MCP server (ctx-archive-mcp) is not registered in " +
                      d.claude_json.string())
      << f[1];
}

// The programs beside ctx-doctor: one that never answers --version is a fault once --timeout-ms
// (3 s) has passed, one that answers something else a warning.
TEST(AppOptions, DoctorTellsASilentProgramAndOneOfAnotherVersion) {
  Doctored d;
  const fs::path bin = d.tmp / "install/bin";
  fs::create_directories(bin);
  // ctx-doctor looks beside itself (its real path: a copy, not a link); the others may be links.
  fs::copy_file(fs::path(bin_dir()) / "ctx-doctor", bin / "ctx-doctor");
  for (const char* name :
       {"ctx-remind", "ctx-status", "ctx-session-hook", "ctx-gate", "ctx-settings", "ctx-trim",
        "ctx-rollover", "ctx-workflow", "ctx-workflow-mcp", "ctx-run"})
    fs::create_symlink(fs::path(bin_dir()) / name, bin / name);
  d.tmp.write("install/bin/ctx-search", "#!/bin/sh\nexec sleep 60\n");
  d.tmp.write("install/bin/ctx-lineage", "#!/bin/sh\necho 'ctx-lineage 0.0.1'\n");
  fs::permissions(bin / "ctx-search", fs::perms::owner_all);
  fs::permissions(bin / "ctx-lineage", fs::perms::owner_all);
  util::ProcessSpec spec;
  spec.argv = {(bin / "ctx-doctor").string(),
               "--settings",
               d.settings.string(),
               "--claude-json",
               d.claude_json.string(),
               "--json",
               "--timeout-ms",
               "3000"};  // long enough for the answering ones on a loaded machine
  spec.env = std::map<std::string, std::string>(d.env.vars().begin(), d.env.vars().end());
  spec.cwd = d.tmp.path();
  spec.timeout = std::chrono::seconds(60);
  auto r = util::run_process(spec);
  ASSERT_TRUE(r);
  const json j = json::parse(r->out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r->out << r->err;
  std::vector<std::string> f;
  for (const auto& x : j["findings"])
    if (x.contains("area") && x["area"] == "programs") f.push_back(finding_text(x));
  EXPECT_NE(
      std::find(f.begin(), f.end(),
                "fault " + (bin / "ctx-search").string() + " does not run: no answer to --version"),
      f.end())
      << testing::PrintToString(f);
  EXPECT_NE(std::find(f.begin(), f.end(),
                      "warning " + (bin / "ctx-lineage").string() +
                          " does not answer --version with 'ctx-lineage " + expected_version() +
                          "' (said 'ctx-lineage 0.0.1')"),
            f.end())
      << testing::PrintToString(f);
}

}  // namespace
}  // namespace ctxkit::test
