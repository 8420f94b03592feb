#pragma once

// The command line of every program, over CLI11. CLI11 is a header-only library whose App and
// Option are defined inline: every file that built options on a CLI::App compiled them again at
// -O3 (about 45 % of the code of each program's file, 5 s of CPU each) and ran its validators'
// static initialisers at every start. Here the programs see only small handles; cli.cpp, the one
// file that includes CLI11, makes every App and Option.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/app.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ctxkit::apps {

// The one error path of a program: prints "<tool>: error: <what>" and gives the exit code
// `failure`, so that `return error("…");` ends a run.
struct ErrorExit {
  const char* tool;
  AppContext& ctx;
  int operator()(std::string_view what) const;
};

// One option or flag of a command line; each call refines it and returns it again.
class CliOption {
 public:
  // The command line is refused without it.
  CliOption required();
  // The word shown for its value in --help (FILE, MS).
  CliOption option_text(const std::string& text);
  // Its value must lie in [min, max] (T: int, int64_t or size_t, as the option's own type).
  template <class T>
  CliOption range(T min, T max);
  // Its value must be one of `words`.
  CliOption one_of(std::initializer_list<const char*> words);
  // It cannot be given together with `other`.
  CliOption excludes(CliOption other);
  // A repeated option takes one value per occurrence (`--arg a --arg b`), not the words after it.
  CliOption one_value_each();

 private:
  friend class CliCommand;
  explicit CliOption(CLI::Option* option) : option_(option) {}
  CLI::Option* option_;
};

// A command line or one of its sub-commands (`ctx-pin add`).
class CliCommand {
 public:
  // An option (a name beginning with '-') or a positional argument read into `into`: a
  // std::string, an int, int64_t, size_t or double, a std::optional of std::string, int64_t or
  // double, or a std::vector of std::string or int64_t (cli.cpp instantiates these).
  template <class T>
  CliOption add_option(const std::string& name, T& into, const std::string& description);
  CliOption add_flag(const std::string& name, bool& into, const std::string& description);
  CliCommand add_subcommand(const std::string& name, const std::string& description);
  // Between `min` and `max` sub-commands (0: any number).
  void require_subcommand(size_t min, size_t max);
  // The parent's options are also taken after a sub-command (`status --worktree P`).
  void fallthrough();
  // Whether this sub-command was given.
  bool parsed() const;

 private:
  friend class ProgramCli;
  explicit CliCommand(CLI::App* app) : app_(app) {}
  CLI::App* app_;
};

// The command line every program shares: its CLI11 app named after the program, the standard
// flags (--version; --show-config for the programs that read the configuration) and the error
// path. A program adds its own options to app() and calls parse(), which ends the run for
// --help, a usage error, --version and --show-config. A sub-command's command line (`ctx-run
// report`) is one too, named `usage` in its help; its errors still name the program.
class ProgramCli {
 public:
  ProgramCli(const char* tool, std::string description, const std::string& usage = {});
  ~ProgramCli();
  ProgramCli(const ProgramCli&) = delete;
  ProgramCli& operator=(const ProgramCli&) = delete;

  CliCommand app() { return CliCommand(app_.get()); }
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
  std::unique_ptr<CLI::App> app_;
  bool show_version_ = false;
  bool show_config_ = false;
};

}  // namespace ctxkit::apps
