#pragma once

// CLI11's App and Option, without its help formatter and configuration reader (CLI/CLI.hpp):
// those are defined inline and were compiled again in every program's file (about 5 s of CPU and
// 80 KB of code each at -O3); cli.cpp, where every App is made, includes them once.
#include <CLI/App.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/app.hpp"

namespace ctxkit::apps {

// The one error path of a program: prints "<tool>: error: <what>" and gives the exit code
// `failure`, so that `return error("…");` ends a run.
struct ErrorExit {
  const char* tool;
  AppContext& ctx;
  int operator()(std::string_view what) const;
};

// The command line every program shares: its CLI11 app named after the program, the standard
// flags (--version; --show-config for the programs that read the configuration) and the error
// path. A program adds its own options to app() and calls parse(), which ends the run for
// --help, a usage error, --version and --show-config. A sub-command's command line (`ctx-run
// report`) is one too, named `usage` in its help; its errors still name the program.
class ProgramCli {
 public:
  ProgramCli(const char* tool, std::string description, const std::string& usage = {});

  CLI::App& app() { return app_; }
  const char* tool() const { return tool_; }

  // --version ("<tool> <version>"), added where it is called (the order of --help).
  void add_version(const std::string& description = "print the version");
  // --show-config: the effective configuration (the user's file, the project's .work.toml found
  // from the current folder, the environment) and where each value came from.
  void add_show_config();

  // Parses `args`. Returns an exit code when the run ends here (help printed: 0; a usage error
  // printed as one line "<tool>: error: …": 1; --version, --show-config: 0), else nullopt.
  std::optional<int> parse(const std::vector<std::string>& args, AppContext& ctx);

  // The error path of this program on `ctx`.
  ErrorExit error(AppContext& ctx) const { return ErrorExit{tool_, ctx}; }

 private:
  const char* tool_;
  CLI::App app_;
  bool show_version_ = false;
  bool show_config_ = false;
};

}  // namespace ctxkit::apps
