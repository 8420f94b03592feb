#include "apps/hook_input.hpp"

namespace ctxkit {

std::optional<HookPayload> read_hook_payload(AppContext& ctx, const char* tool) {
  auto input = ctx.read_stdin();
  if (!input) {
    print_error(ctx.err, tool, input.error().message);
    return std::nullopt;
  }
  auto payload = parse_hook_payload(*input);
  if (!payload) {
    print_error(ctx.err, tool, payload.error().message);
    return std::nullopt;
  }
  return std::move(*payload);
}

}  // namespace ctxkit
