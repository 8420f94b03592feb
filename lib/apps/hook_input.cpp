#include "apps/hook_input.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ctxkit {

namespace {
// The next chunk of this process's stdin (refuses a terminal, retries on EINTR).
Result<size_t> read_process_stdin_chunk(char* buf, size_t cap) {
  if (::isatty(0))
    return fail("expected a JSON payload on stdin (stdin is a terminal)", Error::Kind::Invalid);
  while (true) {
    ssize_t n = ::read(0, buf, cap);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) return fail(fmt::format("reading stdin: {}", std::strerror(errno)));
  }
}

bool reads_process_stdin(const AppContext& ctx) {
  auto* reader = ctx.read_stdin.target<Result<std::string> (*)()>();
  return reader != nullptr && *reader == &read_process_stdin;
}
}  // namespace

std::optional<HookPayload> read_hook_payload(AppContext& ctx, const char* tool) {
  Result<HookPayload> payload;
  if (reads_process_stdin(ctx)) {
    // In chunks: a payload of any size costs one buffer, not a copy of itself.
    payload = scan_hook_payload(read_process_stdin_chunk);
  } else {
    auto input = ctx.read_stdin();
    if (!input) {
      print_error(ctx.err, tool, input.error().message);
      return std::nullopt;
    }
    payload = parse_hook_payload(*input);
  }
  if (!payload) {
    print_error(ctx.err, tool, payload.error().message);
    return std::nullopt;
  }
  return std::move(*payload);
}

}  // namespace ctxkit
