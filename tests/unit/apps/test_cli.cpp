// The command line every program shares (apps/cli.hpp), and whole programs run in-process over
// an AppContext: their own environment, stdin and output streams.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
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

// The options a program builds through the handles of apps/cli.hpp, as CLI11 checks them.
struct Options {
  int count = 0;
  int64_t big = 0;
  size_t size = 0;
  double ratio = 0;
  std::optional<int64_t> maybe;
  std::string word;
  std::vector<std::string> repeated;
  std::vector<int64_t> ids;
  bool flag = false, sub_flag = false;
  std::string a, b;
  bool sub_given = false;
};

int run_options(const std::vector<std::string>& args, AppContext& ctx, Options& o) {
  ProgramCli cli("ctx-sample", "A sample program.");
  auto app = cli.app();
  app.add_option("--count", o.count, "a count").range(1, 10);
  app.add_option("--big", o.big, "a big one").range(int64_t{0}, int64_t{5'000'000'000});
  app.add_option("--size", o.size, "a size").range(size_t{4}, size_t{8});
  app.add_option("--ratio", o.ratio, "a ratio");
  app.add_option("--maybe", o.maybe, "optional").option_text("COLOUR");
  app.add_option("--word", o.word, "a word").one_of({"red", "green"});
  app.add_option("--arg", o.repeated, "repeatable").one_value_each();
  app.add_flag("--flag", o.flag, "a flag");
  auto a = app.add_option("--a", o.a, "a");
  app.add_option("--b", o.b, "b").excludes(a);
  auto sub = app.add_subcommand("rm", "remove");
  sub.add_option("id", o.ids, "ids").required();
  sub.add_flag("--force", o.sub_flag, "force");
  if (auto rc = cli.parse(args, ctx)) return *rc;
  o.sub_given = sub.parsed();
  return 0;
}

TEST(ProgramCli, OptionsOfEachTypeAreRead) {
  test::TempDir tmp;
  InProcess p(tmp.env());
  Options o;
  EXPECT_EQ(run_options({"--count", "3",   "--big",  "4000000000", "--size", "8", "--ratio", "0.5",
                         "--maybe", "-7",  "--word", "green",      "--arg",  "x", "--arg",   "-y",
                         "--flag",  "--a", "1",      "rm",         "4",      "5", "--force"},
                        p.ctx, o),
            0)
      << p.err.str();
  EXPECT_EQ(o.count, 3);
  EXPECT_EQ(o.big, 4'000'000'000);
  EXPECT_EQ(o.size, 8u);
  EXPECT_EQ(o.ratio, 0.5);
  EXPECT_EQ(o.maybe, -7);
  EXPECT_EQ(o.word, "green");
  EXPECT_EQ(o.repeated, (std::vector<std::string>{"x", "-y"}));
  EXPECT_TRUE(o.flag);
  EXPECT_EQ(o.a, "1");
  EXPECT_TRUE(o.sub_given);
  EXPECT_EQ(o.ids, (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(o.sub_flag);
}

TEST(ProgramCli, ChecksRefuseWithOneLine) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--count", "11"},
                                               {"--count", "0"},
                                               {"--big", "-1"},
                                               {"--size", "3"},
                                               {"--word", "blue"},
                                               {"--a", "1", "--b", "2"},
                                               {"rm"},
                                               {"--ratio", "x"}}) {
    test::TempDir tmp;
    InProcess p(tmp.env());
    Options o;
    EXPECT_EQ(run_options(args, p.ctx, o), exit_code(ExitCode::failure)) << args.front();
    EXPECT_EQ(p.err.str().rfind("ctx-sample: error: ", 0), 0u) << p.err.str();
    EXPECT_EQ(p.err.str().find('\n'), p.err.str().size() - 1) << p.err.str();
  }
}

TEST(ProgramCli, HelpShowsTheChecksAndTheSubcommand) {
  test::TempDir tmp;
  InProcess p(tmp.env());
  Options o;
  EXPECT_EQ(run_options({"--help"}, p.ctx, o), 0);
  const std::string help = p.out.str();
  EXPECT_NE(help.find("INT in [1 - 10]"), std::string::npos) << help;
  EXPECT_NE(help.find("UINT in [4 - 8]"), std::string::npos) << help;
  EXPECT_NE(help.find("COLOUR"), std::string::npos) << help;
  EXPECT_NE(help.find("{red,green}"), std::string::npos) << help;
  EXPECT_NE(help.find("rm"), std::string::npos) << help;
  EXPECT_FALSE(o.sub_given);
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
