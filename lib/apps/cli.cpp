#include "apps/cli.hpp"

#include <algorithm>

namespace ctxkit {

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

}  // namespace ctxkit
