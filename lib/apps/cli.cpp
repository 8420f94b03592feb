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
    return 0;
  } catch (const CLI::ParseError& e) {
    ctx.err << tool << ": error: " << e.what() << " (see --help)\n";
    return 1;
  }
  return std::nullopt;
}

}  // namespace ctxkit
