#include "apps/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "core/config.hpp"

namespace ctxkit::apps {
namespace {

std::optional<int> parse_cli(CLI::App& app, const std::vector<std::string>& args, AppContext& ctx,
                             const char* tool) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    return exit_code(ExitCode::ok);
  } catch (const CLI::ParseError& e) {
    print_error(ctx.err, tool, std::string(e.what()) + " (see --help)");
    return exit_code(ExitCode::failure);
  }
  return std::nullopt;
}

}  // namespace

CliOption CliOption::required() {
  option_->required();
  return *this;
}

CliOption CliOption::option_text(const std::string& text) {
  option_->option_text(text);
  return *this;
}

template <class T>
CliOption CliOption::range(T min, T max) {
  option_->check(CLI::Range(min, max));
  return *this;
}
template CliOption CliOption::range<int>(int, int);
template CliOption CliOption::range<int64_t>(int64_t, int64_t);
template CliOption CliOption::range<size_t>(size_t, size_t);

CliOption CliOption::one_of(std::initializer_list<const char*> words) {
  option_->check(CLI::IsMember(std::vector<std::string>(words.begin(), words.end())));
  return *this;
}

CliOption CliOption::excludes(CliOption other) {
  option_->excludes(other.option_);
  return *this;
}

CliOption CliOption::one_value_each() {
  option_->allow_extra_args(false);
  return *this;
}

template <class T>
CliOption CliCommand::add_option(const std::string& name, T& into, const std::string& description) {
  return CliOption(app_->add_option(name, into, description));
}
template CliOption CliCommand::add_option(const std::string&, std::string&, const std::string&);
template CliOption CliCommand::add_option(const std::string&, int&, const std::string&);
template CliOption CliCommand::add_option(const std::string&, int64_t&, const std::string&);
template CliOption CliCommand::add_option(const std::string&, size_t&, const std::string&);
template CliOption CliCommand::add_option(const std::string&, double&, const std::string&);
template CliOption CliCommand::add_option(const std::string&, std::optional<std::string>&,
                                          const std::string&);
template CliOption CliCommand::add_option(const std::string&, std::optional<int64_t>&,
                                          const std::string&);
template CliOption CliCommand::add_option(const std::string&, std::optional<double>&,
                                          const std::string&);
template CliOption CliCommand::add_option(const std::string&, std::vector<std::string>&,
                                          const std::string&);
template CliOption CliCommand::add_option(const std::string&, std::vector<int64_t>&,
                                          const std::string&);

CliOption CliCommand::add_flag(const std::string& name, bool& into,
                               const std::string& description) {
  return CliOption(app_->add_flag(name, into, description));
}

CliCommand CliCommand::add_subcommand(const std::string& name, const std::string& description) {
  return CliCommand(app_->add_subcommand(name, description));
}

void CliCommand::require_subcommand(size_t min, size_t max) {
  app_->require_subcommand(min, max);
}

void CliCommand::fallthrough() {
  app_->fallthrough();
}

bool CliCommand::parsed() const {
  return app_->parsed();
}

int ErrorExit::operator()(std::string_view what) const {
  print_error(ctx.err, tool, what);
  return exit_code(ExitCode::failure);
}

ProgramCli::ProgramCli(const char* tool, std::string description, const std::string& usage)
    : tool_(tool), app_(std::make_unique<CLI::App>(std::move(description))) {
  app_->name(usage.empty() ? std::string(tool) : usage);
}

ProgramCli::~ProgramCli() = default;

void ProgramCli::add_version(const std::string& description) {
  app_->add_flag("--version", show_version_, description);
}

void ProgramCli::add_show_config() {
  app_->add_flag("--show-config", show_config_,
                 "print the effective configuration and where each value came from");
}

std::optional<int> ProgramCli::parse(const std::vector<std::string>& args, AppContext& ctx) {
  if (auto rc = parse_cli(*app_, args, ctx, tool_)) return rc;
  if (show_version_) {
    ctx.out << tool_ << ' ' << version() << '\n';
    return exit_code(ExitCode::ok);
  }
  if (show_config_) {
    ctx.out << core::show_config(core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")}),
                                 &ctx.env);
    return exit_code(ExitCode::ok);
  }
  return std::nullopt;
}

}  // namespace ctxkit::apps
