// Runs the end-to-end cases stored as data under tests/e2e/cases/<tool>/<case>/:
//   stdin       what the program reads ("@DIR@" is replaced by the case's temp directory)
//   args        optional, one argument per line
//   env         optional, KEY=VALUE lines added to the scrubbed environment ("@DIR@" replaced)
//   files/      optional, copied into the temp directory before the run
//   expect.json {"exit": N, "stdout": "...", "stdout_contains": [...], "stdout_empty": true,
//                "stderr": "...", "stderr_contains": [...], "stderr_lines": N}
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e/e2e_support.hpp"

namespace ctxkit::test {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

struct Case {
  std::string tool;
  fs::path dir;
  std::string name() const { return replace_all(tool + "_" + dir.filename().string(), "-", "_"); }
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& tool : fs::directory_iterator(CTXKIT_E2E_CASES)) {
    if (!tool.is_directory()) continue;
    for (const auto& c : fs::directory_iterator(tool.path()))
      if (c.is_directory()) cases.push_back({tool.path().filename().string(), c.path()});
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.dir < b.dir; });
  return cases;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.tool << "/" << c.dir.filename().string();
}

class StoredCase : public ::testing::TestWithParam<Case> {};

TEST_P(StoredCase, Runs) {
  const Case& c = GetParam();
  TempDir tmp;
  const std::string dir = tmp.path().string();
  if (fs::exists(c.dir / "files"))
    fs::copy(c.dir / "files", tmp.path(), fs::copy_options::recursive);
  util::Env env = tmp.env();
  env.set("CTXKIT_CONTEXT_TRANSCRIPT_WAIT_MS", "20");
  if (fs::exists(c.dir / "env")) {
    std::ifstream in(c.dir / "env");
    std::string line;
    while (std::getline(in, line)) {
      auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      env.set(line.substr(0, eq), replace_all(line.substr(eq + 1), "@DIR@", dir));
    }
  }
  std::vector<std::string> args;
  if (fs::exists(c.dir / "args")) {
    std::ifstream in(c.dir / "args");
    std::string line;
    while (std::getline(in, line)) args.push_back(replace_all(line, "@DIR@", dir));
  }
  std::string input =
      fs::exists(c.dir / "stdin") ? replace_all(read_file(c.dir / "stdin"), "@DIR@", dir) : "";
  json expect = json::parse(read_file(c.dir / "expect.json"));
  auto r = run_tool(c.tool, args, input, env);
  SCOPED_TRACE("stdout: " + r.out + "\nstderr: " + r.err);
  EXPECT_EQ(r.exit_code, expect.value("exit", 0));
  if (expect.contains("stdout")) {
    EXPECT_EQ(r.out, replace_all(expect["stdout"].get<std::string>(), "@DIR@", dir));
  }
  if (expect.value("stdout_empty", false)) {
    EXPECT_EQ(r.out, "");
  }
  for (const auto& s : expect.value("stdout_contains", json::array()))
    EXPECT_NE(r.out.find(replace_all(s.get<std::string>(), "@DIR@", dir)), std::string::npos) << s;
  for (const auto& s : expect.value("stdout_lacks", json::array()))
    EXPECT_EQ(r.out.find(s.get<std::string>()), std::string::npos) << s;
  if (expect.contains("stderr")) {
    EXPECT_EQ(r.err, replace_all(expect["stderr"].get<std::string>(), "@DIR@", dir));
  }
  for (const auto& s : expect.value("stderr_contains", json::array()))
    EXPECT_NE(r.err.find(replace_all(s.get<std::string>(), "@DIR@", dir)), std::string::npos) << s;
  if (expect.contains("stderr_lines")) {
    EXPECT_EQ(line_count(r.err), expect["stderr_lines"].get<size_t>());
  }
  EXPECT_NE(r.exit_code, 2) << "a hook must never exit 2 by accident";
  if (!r.out.empty() && c.tool == "ctx-remind" && args.empty()) {
    auto j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout must be one JSON object";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, StoredCase, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return param_info.param.name();
                         });

}  // namespace
}  // namespace ctxkit::test
