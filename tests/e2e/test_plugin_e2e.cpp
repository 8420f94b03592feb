// The plugin the `plugin` target writes (build/plugin): every program, hooks from the same list
// as the settings install run from ${CLAUDE_PLUGIN_ROOT}/bin, the MCP server, the skills, and the
// data where the programs look for it.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kPlugin = CTXKIT_PLUGIN_DIR;

json parse(const fs::path& p) {
  EXPECT_TRUE(fs::is_regular_file(p)) << p;
  try {
    return json::parse(read_file(p));
  } catch (const json::exception& e) {
    ADD_FAILURE() << p << ": " << e.what();
    return json();
  }
}

TEST(Plugin, BinHoldsEveryProgram) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(CTXKIT_SOURCE_DIR) / "hooks")) {
    if (e.path().extension() != ".cpp") continue;
    std::string program = e.path().stem().string();
    for (auto& c : program) c = c == '_' ? '-' : c;
    fs::path p = kPlugin / "bin" / program;
    EXPECT_TRUE(fs::is_regular_file(p)) << p;
    EXPECT_NE(fs::status(p).permissions() & fs::perms::owner_exec, fs::perms::none) << p;
    ++n;
  }
  EXPECT_GE(n, 11u);
}

TEST(Plugin, ManifestsAreValidJson) {
  json plugin = parse(kPlugin / ".claude-plugin/plugin.json");
  EXPECT_EQ(plugin["name"], "ctxkit");
  EXPECT_EQ(plugin["version"], expected_version());
  json market = parse(kPlugin / ".claude-plugin/marketplace.json");
  EXPECT_EQ(market["name"], "ctxkit");
  ASSERT_EQ(market["plugins"].size(), 1u);
  EXPECT_EQ(market["plugins"][0]["name"], "ctxkit");
  EXPECT_EQ(market["plugins"][0]["source"], "./");
  EXPECT_TRUE(market.contains("description"));  // else the validator warns
}

TEST(Plugin, EveryHookRunsAProgramOfBinThroughThePluginRoot) {
  json hooks = parse(kPlugin / "hooks/hooks.json")["hooks"];
  ASSERT_TRUE(hooks.is_object());
  size_t n = 0;
  const std::string root = "\"${CLAUDE_PLUGIN_ROOT}/bin/";
  for (const auto& [event, groups] : hooks.items()) {
    for (const auto& g : groups) {
      for (const auto& h : g["hooks"]) {
        std::string cmd = h["command"].get<std::string>();
        ASSERT_TRUE(cmd.starts_with(root)) << event << ": " << cmd;
        std::string program = cmd.substr(root.size(), cmd.find('"', root.size()) - root.size());
        EXPECT_TRUE(fs::is_regular_file(kPlugin / "bin" / program)) << cmd;
        EXPECT_EQ(h["type"], "command");
        ++n;
      }
    }
  }
  EXPECT_EQ(n, 10u);
  EXPECT_TRUE(hooks.contains("PostToolUse"));
  EXPECT_TRUE(hooks.contains("SessionStart"));
  json mcp = parse(kPlugin / ".mcp.json");
  EXPECT_EQ(mcp["mcpServers"]["ctxkit-workflow"]["command"],
            "${CLAUDE_PLUGIN_ROOT}/bin/ctx-workflow-mcp");
  EXPECT_TRUE(fs::is_regular_file(kPlugin / "bin/ctx-workflow-mcp"));
  EXPECT_EQ(mcp["mcpServers"]["ctxkit-archive"]["command"],
            "${CLAUDE_PLUGIN_ROOT}/bin/ctx-archive-mcp");
  EXPECT_TRUE(fs::is_regular_file(kPlugin / "bin/ctx-archive-mcp"));
}

TEST(Plugin, SkillsCallTheProgramsByName) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(CTXKIT_SOURCE_DIR) / "skills")) {
    if (!e.is_directory()) continue;
    std::string skill = read_file(kPlugin / "skills" / e.path().filename() / "SKILL.md");
    EXPECT_EQ(skill.find("@CTXKIT_BIN@"), std::string::npos) << e.path().filename();
    EXPECT_NE(skill.find("Bash(ctx-"), std::string::npos) << e.path().filename();
    ++n;
  }
  EXPECT_GE(n, 3u);
}

// The client parses each skill's front matter as YAML; one it cannot parse loads with no name,
// description or allowed-tools (silently), and `claude plugin validate` fails on it.
TEST(Plugin, EverySkillsFrontMatterIsYamlWithNameAndDescription) {
  for (const auto& e : fs::directory_iterator(kPlugin / "skills")) {
    std::string text = read_file(e.path() / "SKILL.md");
    ASSERT_TRUE(text.starts_with("---\n")) << e.path();
    size_t end = text.find("\n---\n", 4);
    ASSERT_NE(end, std::string::npos) << e.path();
    try {
      YAML::Node front = YAML::Load(text.substr(4, end - 4));
      EXPECT_EQ(front["name"].as<std::string>(), e.path().filename().string());
      EXPECT_GT(front["description"].as<std::string>().size(), 40u) << e.path();
      EXPECT_TRUE(front["allowed-tools"].IsDefined()) << e.path();
    } catch (const YAML::Exception& x) {
      ADD_FAILURE() << e.path() << ": " << x.what();
    }
  }
}

TEST(Plugin, ProgramsFindTheirDataBesideThemselves) {
  // ctx-workflow looks in <bin>/../share/ctxkit/workflows: the plugin's layout must make it work.
  TempDir tmp;
  util::ProcessSpec spec;
  spec.argv = {(kPlugin / "bin/ctx-workflow").string(), "list"};
  spec.env = std::map<std::string, std::string>{{"HOME", (tmp / "home").string()},
                                                {"PATH", "/usr/bin:/bin"}};
  spec.cwd = tmp.path();
  spec.timeout = std::chrono::seconds(30);
  auto r = util::run_process(spec);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_NE(r->out.find("feature"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("bugfix"), std::string::npos) << r->out;
}

}  // namespace
}  // namespace ctxkit::test
