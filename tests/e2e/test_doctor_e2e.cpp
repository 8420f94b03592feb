#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

// A ctxkit install in a temp HOME: hooks and status line registered by ctx-settings, the workflow
// and archive MCP servers by ctx-workflow-mcp register, a fake `claude` on PATH.
struct Install {
  TempDir tmp;
  util::Env env;
  fs::path settings, claude_json, state;

  explicit Install(bool register_mcp = true,
                   const std::string& claude_version = "2.1.197 (Claude Code)") {
    env = tmp.env();
    fs::path bin = tmp / "bin";
    fs::create_directories(bin);
    if (!claude_version.empty()) {
      auto fake = tmp.write("bin/claude", "#!/bin/sh\necho '" + claude_version + "'\n");
      ::chmod(fake.c_str(), 0755);
    }
    env.set("PATH", bin.string() + ":/usr/local/bin:/usr/bin:/bin");
    settings = tmp / "home/.claude/settings.json";
    claude_json = tmp / "home/.claude.json";
    state = tmp / "home/.local/state/ctxkit";
    auto r =
        run_tool("ctx-settings",
                 {"install", "--settings", settings.string(), "--bin-dir", bin_dir()}, "", env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (register_mcp) {
      r = run_tool("ctx-workflow-mcp", {"register", "--config", claude_json.string()}, "", env);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      r = run_tool("ctx-workflow-mcp",
                   {"register", "--config", claude_json.string(), "--name", "ctxkit-archive",
                    "--command", bin_dir() + "/ctx-archive-mcp"},
                   "", env);
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
  }
  // One hook run: ctx-remind on a PostToolUse payload (it records its run and opens the state).
  void run_a_hook() {
    json p = {{"session_id", "S"},          {"transcript_path", (tmp / "t.jsonl").string()},
              {"cwd", tmp.path().string()}, {"hook_event_name", "PostToolUse"},
              {"tool_name", "Bash"},        {"tool_use_id", "toolu_1"}};
    auto r = run_tool("ctx-remind", {}, p.dump(), env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  util::ProcessResult doctor(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--settings", settings.string(), "--claude-json",
                                     claude_json.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_tool("ctx-doctor", args, "", env, tmp.path());
  }
  json settings_json() const { return json::parse(read_file(settings)); }
  void write_settings(const json& j) const { tmp.write("home/.claude/settings.json", j.dump(2)); }
};

bool has_line(const std::string& out, const std::string& prefix, const std::string& part) {
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    std::string line =
        out.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind(prefix, 0) == 0 && line.find(part) != std::string::npos) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

TEST(Doctor, AHealthyInstallIsHealthy) {
  Install in;
  in.run_a_hook();
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAULT"), std::string::npos) << r.out;
  EXPECT_TRUE(
      has_line(r.out, "ok    programs: ", "programs answer --version (" + expected_version() + ")"))
      << r.out;
  EXPECT_TRUE(
      has_line(r.out, "ok    install: ", "settings.json install (" + in.settings.string() + ")"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    hooks: ", "10 hooks registered in " + in.settings.string()))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    status line: ", "ctx-status (" + bin_dir() + "/ctx-status)"))
      << r.out;
  EXPECT_TRUE(has_line(
      r.out, "ok    mcp: ",
      "MCP server 'ctxkit-workflow' answers initialize (ctxkit-workflow " + expected_version()))
      << r.out;
  EXPECT_TRUE(has_line(
      r.out, "ok    mcp: ",
      "MCP server 'ctxkit-archive' answers initialize (ctxkit-archive " + expected_version()))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    claude: ", "Claude Code 2.1.197")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    state: ", "meter.db: integrity ok, schema version")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    last run: ", "ctx-remind: ")) << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  last run: ", "ctx-session-hook: never")) << r.out;
  EXPECT_TRUE(has_line(r.out, "healthy (", "warnings)")) << r.out;

  auto j = in.doctor({"--json"});
  EXPECT_EQ(j.exit_code, 0);
  json doc = json::parse(j.out);
  EXPECT_EQ(doc["healthy"], true);
  EXPECT_EQ(doc["faults"], 0);
  bool mcp_ok = false;
  for (const auto& f : doc["findings"])
    mcp_ok = mcp_ok || (f["area"] == "mcp" && f["status"] == "ok");
  EXPECT_TRUE(mcp_ok) << j.out;
}

// A home reached through a symbolic link (/home -> /data/home, a dotfile manager, a container):
// a link above ctxkit's own folders is the user's, so every database opens. The reminder keeps
// its rate limit, the archive is indexed, and the doctor finds nothing wrong.
TEST(Doctor, AHomeReachedThroughALinkWorksWhole) {
  Install in;
  fs::rename(in.tmp / "home", in.tmp / "data-home");
  fs::create_directory_symlink(in.tmp / "data-home", in.tmp / "home");
  const std::string sid = "6f1d2c3b-4a5e-4f60-8172-93a4b5c6d7e8";
  const fs::path t = in.tmp / "home/.claude/projects/-proj" / (sid + ".jsonl");
  json assistant = {{"type", "assistant"},
                    {"sessionId", sid},
                    {"uuid", "a-1"},
                    {"timestamp", "2026-11-21T12:00:00.000Z"},
                    {"cwd", "/proj"},
                    {"message",
                     {{"id", "msg_1"},
                      {"model", "claude-sonnet-4-5"},
                      {"role", "assistant"},
                      {"content", json::array({{{"type", "tool_use"},
                                                {"id", "toolu_1"},
                                                {"name", "Bash"},
                                                {"input", {{"command", "ls"}}}}})},
                      {"usage",
                       {{"input_tokens", 5},
                        {"cache_creation_input_tokens", 0},
                        {"cache_read_input_tokens", 130000}}}}}};
  json result = {{"type", "user"},
                 {"sessionId", sid},
                 {"uuid", "u-1"},
                 {"timestamp", "2026-11-21T12:00:01.000Z"},
                 {"cwd", "/proj"},
                 {"message",
                  {{"role", "user"},
                   {"content", json::array({{{"type", "tool_result"},
                                             {"tool_use_id", "toolu_1"},
                                             {"content", "listing PELICAN_AMBER_4417"}}})}}}};
  in.tmp.write("home/.claude/projects/-proj/" + sid + ".jsonl",
               assistant.dump() + "\n" + result.dump() + "\n");
  json start = {{"session_id", sid},
                {"transcript_path", t.string()},
                {"cwd", "/proj"},
                {"hook_event_name", "SessionStart"},
                {"source", "startup"}};
  auto started = run_tool("ctx-session-hook", {"SessionStart"}, start.dump(), in.env);
  EXPECT_EQ(started.exit_code, 0);
  EXPECT_EQ(started.err, "");
  json post = {{"session_id", sid},   {"transcript_path", t.string()},
               {"cwd", "/proj"},      {"hook_event_name", "PostToolUse"},
               {"tool_name", "Bash"}, {"tool_use_id", "toolu_1"}};
  auto first = run_tool("ctx-remind", {}, post.dump(), in.env);
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_EQ(first.err, "");
  EXPECT_NE(first.out.find("Context at "), std::string::npos) << first.out;
  EXPECT_EQ(first.out.find("not rate-limited"), std::string::npos) << first.out;
  auto again = run_tool("ctx-remind", {}, post.dump(), in.env);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.err, "");
  EXPECT_EQ(again.out, "") << "the reminder's rate limit did not hold";

  json end = {{"session_id", sid},
              {"transcript_path", t.string()},
              {"cwd", "/proj"},
              {"hook_event_name", "SessionEnd"},
              {"reason", "exit"}};
  auto ended = run_tool("ctx-session-hook", {"SessionEnd", "--foreground"}, end.dump(), in.env);
  EXPECT_EQ(ended.exit_code, 0);
  EXPECT_EQ(ended.err, "");
  auto search = run_tool("ctx-search", {"PELICAN_AMBER_4417"}, "", in.env);
  EXPECT_EQ(search.exit_code, 0) << search.err;
  EXPECT_EQ(search.out.find("The search index is"), std::string::npos) << search.out;
  EXPECT_NE(search.out.find(sid + ":"), std::string::npos) << search.out;
  auto lineage = run_tool("ctx-lineage", {sid}, "", in.env);
  EXPECT_EQ(lineage.exit_code, 0) << lineage.err;
  EXPECT_NE(lineage.out.find(sid), std::string::npos) << lineage.out;

  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAULT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("migrates"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    state: ", "state.db: integrity ok, schema version")) << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    state: ", "meter.db: integrity ok, schema version")) << r.out;
}

TEST(Doctor, AHookWhoseProgramIsMissingIsAFault) {
  Install in;
  in.run_a_hook();
  json s = in.settings_json();
  s["hooks"]["PostToolUse"][0]["hooks"][0]["command"] = (in.tmp / "gone/ctx-remind").string();
  in.write_settings(s);
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT hooks: ",
                       "PostToolUse[*] hook ctx-remind: " + (in.tmp / "gone/ctx-remind").string() +
                           " does not exist → ctx-settings install --settings"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    hooks: ", "9 hooks registered")) << r.out;
  EXPECT_TRUE(has_line(r.out, "1 faults, ", "")) << r.out;
}

TEST(Doctor, AHookNotRegisteredOrRegisteredTwiceIsAFault) {
  Install in;
  json s = in.settings_json();
  s["hooks"]["Stop"] = json::array();
  s["hooks"]["SessionEnd"].push_back(s["hooks"]["SessionEnd"][0]);
  in.write_settings(s);
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT hooks: ",
                       "Stop hook ctx-session-hook is not registered in " + in.settings.string()))
      << r.out;
  EXPECT_TRUE(
      has_line(r.out, "FAULT hooks: ", "SessionEnd hook ctx-session-hook is registered 2 times"))
      << r.out;
}

TEST(Doctor, ACorruptStateDatabaseIsAFaultAndIsLeftAsItIs) {
  Install in;
  in.run_a_hook();
  const std::string garbage(8192, 'x');
  fs::path db = in.state / "state.db";
  for (const char* side : {"-wal", "-shm"}) fs::remove(db.string() + side);
  in.tmp.write("home/.local/state/ctxkit/state.db", garbage);
  ::chmod(db.c_str(), 0600);
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT state: ", db.string() + " cannot be read: ")) << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT state: ", "mv " + db.string())) << r.out;
  EXPECT_EQ(read_file(db), garbage);
  EXPECT_FALSE(fs::exists(db.string() + "-wal"));
  EXPECT_FALSE(fs::exists(db.string() + "-shm"));
}

TEST(Doctor, AnUnregisteredMcpServerIsAFault) {
  Install in(/*register_mcp=*/false);
  in.run_a_hook();
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT mcp: ",
                       "the workflow MCP server (ctx-workflow-mcp) is not registered in " +
                           in.claude_json.string() + " → ctx-workflow-mcp register --config"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT mcp: ",
                       "the archive's search MCP server (ctx-archive-mcp) is not registered in " +
                           in.claude_json.string() + " → ctx-workflow-mcp register --config"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT mcp: ", " --name ctxkit-archive --command ")) << r.out;
}

TEST(Doctor, AnMcpServerThatDoesNotAnswerIsAFault) {
  Install in;
  auto mute = in.tmp.write("mute/ctx-workflow-mcp", "#!/bin/sh\nexit 0\n");
  ::chmod(mute.c_str(), 0755);
  json c = json::parse(read_file(in.claude_json));
  c["mcpServers"]["ctxkit-workflow"]["command"] = mute.string();
  in.tmp.write("home/.claude.json", c.dump());
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(
      r.out, "FAULT mcp: ",
      "MCP server 'ctxkit-workflow' (" + mute.string() + "): no answer to initialize (exit 0)"))
      << r.out;
}

TEST(Doctor, SettingsAndPluginTogetherRunEveryHookTwice) {
  Install in;
  in.run_a_hook();
  fs::path root = in.tmp / "home/.claude/plugins/cache/local/ctxkit/0.1.0";
  fs::create_directories(root);
  in.tmp.write(
      "home/.claude/plugins/installed_plugins.json",
      json{{"version", 2},
           {"plugins", {{"ctxkit@local", {{{"scope", "user"}, {"installPath", root.string()}}}}}}}
          .dump());
  json s = in.settings_json();
  s["enabledPlugins"] = {{"ctxkit@local", true}};
  in.write_settings(s);
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT install: ",
                       "ctxkit is registered twice, in " + in.settings.string() +
                           " and as plugin ctxkit@local: every hook runs twice"))
      << r.out;
}

TEST(Doctor, HooksThatNeverRanAndNoStateAreWarningsOnly) {
  Install in;
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  state: ", "no state folder yet")) << r.out;
  EXPECT_TRUE(
      has_line(r.out, "WARN  last run: ", "ctx-remind: never (it runs after every tool call)"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "ok    last run: ", "ctx-gate: never")) << r.out;
  EXPECT_FALSE(fs::exists(in.state)) << "the doctor creates nothing";
}

// "oldest" and "newest" of cmake/claude-code-range.txt, the supported Claude Code releases.
std::map<std::string, std::string> claude_range() {
  std::map<std::string, std::string> out;
  std::istringstream in(read_file(fs::path(CTXKIT_SOURCE_DIR) / "cmake/claude-code-range.txt"));
  std::string key, value;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    if (words >> key >> value && (key == "oldest" || key == "newest")) out[key] = value;
  }
  return out;
}

TEST(Doctor, AClientInsideTheSupportedRangeIsSupportedOutsideItUntested) {
  const auto range = claude_range();
  ASSERT_EQ(range.size(), 2u);
  const std::string oldest = range.at("oldest"), newest = range.at("newest");
  const std::string span = "(ctxkit supports " + oldest + " to " + newest + ")";
  // Both ends and a release between them.
  const std::string between = oldest.substr(0, oldest.rfind('.') + 1) +
                              std::to_string(std::stoi(oldest.substr(oldest.rfind('.') + 1)) + 1);
  for (const std::string& v : {oldest, between, newest}) {
    Install in(true, v + " (Claude Code)");
    auto r = in.doctor();
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has_line(r.out, "ok    claude: ", "Claude Code " + v + " (")) << r.out;
    EXPECT_TRUE(has_line(r.out, "ok    claude: ", "): supported " + span)) << r.out;
  }
  Install older(true, "0.9.1 (Claude Code)");
  auto r = older.doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  claude: ", "Claude Code 0.9.1 (")) << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  claude: ",
                       "older than the oldest release ctxkit supports (" + oldest + "): untested"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  claude: ", " → update Claude Code")) << r.out;
}

TEST(Doctor, ClaudeMissingOrNewerIsAWarning) {
  Install newer(true, "99.3.0 (Claude Code)");
  newer.run_a_hook();
  auto r = newer.doctor();
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  claude: ", "Claude Code 99.3.0 (")) << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  claude: ",
                       "newer than the newest release ctxkit was checked against (" +
                           claude_range().at("newest") + "): untested"))
      << r.out;
  Install none(true, "");
  none.env.set("PATH", (none.tmp / "bin").string() + ":/bin");
  none.run_a_hook();
  r = none.doctor();
  EXPECT_TRUE(has_line(r.out, "WARN  claude: ", "claude not found in PATH")) << r.out;
}

TEST(Doctor, AStateFolderOpenToOthersAndConfigErrorsAreFaults) {
  Install in;
  in.run_a_hook();
  ::chmod(in.state.c_str(), 0755);
  in.tmp.write("home/.config/ctxkit/config.toml",
               "[context]\nwarn_threshold = \"high\"\n[status]\nformat = \"{nope}\"\n");
  auto r = in.doctor();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(
      has_line(r.out, "FAULT state: ",
               in.state.string() + " is open to others (mode 0755, should be 0700) → chmod 700"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "FAULT config: ", "context.warn_threshold: expected an integer"))
      << r.out;
  EXPECT_TRUE(has_line(r.out, "WARN  config: ", "status.format: unknown field '{nope}'")) << r.out;
}

}  // namespace
}  // namespace ctxkit::test
