// A client's stream-json output, as the runner reads it, and the limit classifier over what it
// read. Checks: the output fed whole and line by line reads the same; a limit's message is one
// bounded line and its reset never lies before the clock.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "claude/limit_answer.hpp"
#include "claude/stream_result.hpp"

namespace {
constexpr int64_t kNow = 1'795'663'800;  // 2026-11-26 03:30:00 UTC

void check(const ctxkit::claude::StreamResult& r, std::string_view err) {
  for (int exit_code : {0, 1}) {
    const auto limit = ctxkit::claude::classify_limit(r, err, exit_code, kNow);
    if (!limit) continue;
    if (limit->message.size() > 300) std::abort();
    for (char c : limit->message)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
    if (limit->reset_epoch && (*limit->reset_epoch < kNow || *limit->reset_epoch > 253402300799))
      std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ctxkit::claude::StreamResult whole = ctxkit::claude::parse_stream_json(text);
  ctxkit::claude::StreamResultReader reader;
  std::string_view rest = text;
  while (true) {
    const size_t nl = rest.find('\n');
    reader.feed_line(rest.substr(0, nl));
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  const auto& lines = reader.result();
  if (lines.has_result != whole.has_result || lines.is_error != whole.is_error ||
      lines.text != whole.text || lines.session_id != whole.session_id ||
      !(lines.usage == whole.usage) || lines.last_context != whole.last_context ||
      lines.compacted != whole.compacted || lines.api_error_status != whole.api_error_status)
    std::abort();
  check(whole, text);
  return 0;
}
