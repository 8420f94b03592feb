#include "apps/hook_input.hpp"

namespace ctxkit {

std::optional<HookPayload> read_hook_payload(AppContext& ctx, const char* tool) {
  auto input = ctx.read_stdin();
  if (!input) {
    ctx.err << tool << ": error: " << input.error().message << '\n';
    return std::nullopt;
  }
  auto payload = parse_hook_payload(*input);
  if (!payload) {
    ctx.err << tool << ": error: " << payload.error().message << '\n';
    return std::nullopt;
  }
  return std::move(*payload);
}

}  // namespace ctxkit
