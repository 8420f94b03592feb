// What every program shares (apps/cli.hpp, apps/app.hpp): --version names the version of the
// CMake project (its one source), --show-config prints one configuration, and a hook that cannot
// read its payload fails open with the code of the fail-open table.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;

TEST(Version, EveryProgramPrintsTheProjectVersion) {
  size_t checked = 0;
  for (const auto& e : fs::directory_iterator(fs::path(CTXKIT_SOURCE_DIR) / "hooks")) {
    if (e.path().extension() != ".cpp") continue;
    std::string program = e.path().stem().string();
    for (auto& c : program) c = c == '_' ? '-' : c;
    TempDir tmp;
    auto r = run_tool(program, {"--version"}, "", tmp.env());
    EXPECT_EQ(r.exit_code, 0) << program << ": " << r.err;
    EXPECT_EQ(r.out, program + " " + expected_version() + "\n") << program;
    ++checked;
  }
  EXPECT_GE(checked, 11u);
}

TEST(ShowConfig, EveryProgramWithTheFlagPrintsTheSameConfiguration) {
  TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[context]\nwarn_threshold = 42\n");
  auto first = run_tool("ctx-remind", {"--show-config"}, "", tmp.env());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("context.warn_threshold = 42"), std::string::npos) << first.out;
  for (const char* program : {"ctx-status", "ctx-trim", "ctx-rollover"}) {
    auto r = run_tool(program, {"--show-config"}, "", tmp.env());
    EXPECT_EQ(r.exit_code, 0) << program << ": " << r.err;
    EXPECT_EQ(r.out, first.out) << program;
  }
}

TEST(FailOpen, EveryHookExitsWithItsCodeOnAPayloadItCannotRead) {
  struct Hook {
    const char* program;
    std::vector<std::string> args;
    int code;  // docs/troubleshooting.md, "Exit codes"
  };
  const Hook hooks[] = {{"ctx-remind", {}, 1},
                        {"ctx-session-hook", {}, 1},
                        {"ctx-gate", {"--hook"}, 0},
                        {"ctx-status", {}, 1}};
  for (const auto& h : hooks) {
    TempDir tmp;
    auto r = run_tool(h.program, h.args, "{not json", tmp.env());
    EXPECT_EQ(r.exit_code, h.code) << h.program << ": " << r.err;
    EXPECT_EQ(r.out, "") << h.program;
    // One line on stderr, named after the program.
    EXPECT_EQ(r.err.rfind(std::string(h.program) + ": ", 0), 0u) << h.program << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << h.program << ": " << r.err;
  }
}

}  // namespace
}  // namespace ctxkit::test
