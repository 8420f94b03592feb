// The command line every program shares (apps/cli.hpp), and whole programs run in-process over
// an AppContext: their own environment, stdin and output streams.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.hpp"
#include "apps/status_app.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::apps {
namespace {

struct InProcess {
  std::ostringstream out, err;
  std::string input;
  AppContext ctx;
  explicit InProcess(util::Env env, std::string stdin_text = "")
      : input(std::move(stdin_text)),
        ctx{std::move(env), [this]() -> Result<std::string> { return input; }, out, err} {}
};

// A program with one option of its own beside the shared ones.
int run_sample(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli("ctx-sample", "A sample program.");
  std::string name;
  cli.app().add_option("--name", name, "a name");
  cli.add_show_config();
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  if (name.empty()) return cli.error(ctx)("no --name given\nsecond line");
  ctx.out << "hello " << name << '\n';
  return 0;
}

TEST(ProgramCli, VersionIsTheProgramAndTheProjectVersion) {
  test::TempDir tmp;
  InProcess p(tmp.env());
  EXPECT_EQ(run_sample({"--version", "--name", "x"}, p.ctx), 0);
  EXPECT_EQ(p.out.str(), std::string("ctx-sample ") + version() + "\n");
  EXPECT_EQ(p.err.str(), "");
}

TEST(ProgramCli, ShowConfigPrintsTheConfigurationAndStops) {
  test::TempDir tmp;
  tmp.write("home/.config/ctxkit/config.toml", "[context]\nwarn_threshold = 42\n");
  InProcess p(tmp.env());
  EXPECT_EQ(run_sample({"--show-config"}, p.ctx), 0);
  EXPECT_NE(p.out.str().find("context.warn_threshold = 42"), std::string::npos) << p.out.str();
  EXPECT_EQ(p.out.str().find("hello"), std::string::npos);
}

TEST(ProgramCli, UsageErrorIsOneLineAndExitsFailure) {
  test::TempDir tmp;
  InProcess p(tmp.env());
  EXPECT_EQ(run_sample({"--nope"}, p.ctx), exit_code(ExitCode::failure));
  EXPECT_EQ(p.out.str(), "");
  EXPECT_EQ(p.err.str().rfind("ctx-sample: error: ", 0), 0u) << p.err.str();
  EXPECT_NE(p.err.str().find("(see --help)"), std::string::npos) << p.err.str();
  EXPECT_EQ(p.err.str().find('\n'), p.err.str().size() - 1);
}

TEST(ProgramCli, HelpListsTheSharedFlagsWhereTheyWereAdded) {
  test::TempDir tmp;
  InProcess p(tmp.env());
  EXPECT_EQ(run_sample({"--help"}, p.ctx), 0);
  const std::string help = p.out.str();
  const auto name = help.find("--name"), show = help.find("--show-config"),
             version = help.find("--version");
  ASSERT_NE(version, std::string::npos) << help;
  EXPECT_LT(name, show);
  EXPECT_LT(show, version);
}

TEST(ProgramCli, ErrorPathPrintsOneLineAndReturnsFailure) {
  test::TempDir tmp;
  InProcess p(tmp.env());
  EXPECT_EQ(run_sample({}, p.ctx), exit_code(ExitCode::failure));
  EXPECT_EQ(p.err.str(), "ctx-sample: error: no --name given\\nsecond line\n");
  EXPECT_EQ(p.out.str(), "");
}

TEST(FailOpenCode, OnlyTheSessionStartGateExitsZero) {
  EXPECT_EQ(fail_open_code("ctx-gate"), ExitCode::ok);
  for (const char* tool : {"ctx-remind", "ctx-session-hook", "ctx-status", "ctx-run", "ctx-trim"}) {
    EXPECT_EQ(fail_open_code(tool), ExitCode::failure) << tool;
    EXPECT_NE(fail_open_code(tool), ExitCode::block) << tool;
  }
}

TEST(InProcessProgram, StatusLineRefusesInputThatIsNotJson) {
  test::TempDir tmp;
  InProcess p(tmp.env(), "{not json");
  EXPECT_EQ(run_status({}, p.ctx), exit_code(ExitCode::failure));
  EXPECT_EQ(p.out.str(), "");
  EXPECT_EQ(p.err.str(), "ctx-status: error: status-line input is not a JSON object\n");
}

}  // namespace
}  // namespace ctxkit::apps
