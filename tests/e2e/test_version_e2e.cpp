// Every program's --version names the version of the CMake project (its one source).
#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace
}  // namespace ctxkit::test
