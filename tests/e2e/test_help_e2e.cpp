// Every program's --help, pinned: a change of what a program says about itself is a deliberate
// change of tests/e2e/help/<program>.txt. Every program in hooks/ has one.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;

const fs::path kHelp = fs::path(CTXKIT_SOURCE_DIR) / "tests/e2e/help";

TEST(Help, EveryProgramsHelpIsPinned) {
  size_t checked = 0;
  for (const auto& e : fs::directory_iterator(kHelp)) {
    const std::string program = e.path().stem().string();
    TempDir tmp;
    auto r = run_tool(program, {"--help"}, "", tmp.env());
    EXPECT_EQ(r.exit_code, 0) << program;
    EXPECT_EQ(r.err, "") << program;
    EXPECT_EQ(r.out, read_file(e.path()))
        << program << ": update " << e.path().filename() << " if the change is meant";
    ++checked;
  }
  EXPECT_GE(checked, 11u);
}

TEST(Help, EveryProgramHasAPinnedHelp) {
  std::set<std::string> pinned;
  for (const auto& e : fs::directory_iterator(kHelp)) pinned.insert(e.path().stem().string());
  for (const auto& e : fs::directory_iterator(fs::path(CTXKIT_SOURCE_DIR) / "hooks")) {
    if (e.path().extension() != ".cpp") continue;
    std::string program = e.path().stem().string();
    for (auto& c : program) c = c == '_' ? '-' : c;
    EXPECT_TRUE(pinned.count(program)) << program << " has no tests/e2e/help/" << program << ".txt";
  }
}

}  // namespace
}  // namespace ctxkit::test
