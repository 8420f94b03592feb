#include "apps/hook_input.hpp"

#include <unistd.h>

#include "util/chunk_reader.hpp"

namespace ctxkit::apps {

namespace {
bool reads_process_stdin(const AppContext& ctx) {
  auto* reader = ctx.read_stdin.target<Result<std::string> (*)()>();
  return reader != nullptr && *reader == &read_process_stdin;
}
}  // namespace

std::optional<claude::HookPayload> read_hook_payload(AppContext& ctx, const char* tool) {
  Result<claude::HookPayload> payload;
  if (reads_process_stdin(ctx)) {
    // In chunks: a payload of any size costs one chunk of memory, not a copy of itself.
    if (::isatty(0)) {
      print_error(ctx.err, tool, "expected a JSON payload on stdin (stdin is a terminal)");
      return std::nullopt;
    }
    util::ChunkReader reader(0);
    payload = claude::scan_hook_payload_chunks([&reader] { return reader.next(); });
  } else {
    auto input = ctx.read_stdin();
    if (!input) {
      print_error(ctx.err, tool, input.error().message);
      return std::nullopt;
    }
    payload = claude::parse_hook_payload(*input);
  }
  if (!payload) {
    print_error(ctx.err, tool, payload.error().message);
    return std::nullopt;
  }
  return std::move(*payload);
}

}  // namespace ctxkit::apps
