// The hook payload scan: fed whole and in small chunks it must give the same answer, and it must
// agree with a complete JSON parser on what is valid JSON and on the fields it keeps.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "claude/hook_payload.hpp"
#include "util/utf8.hpp"

namespace {
using ctxkit::claude::HookPayload;

bool same(const HookPayload& a, const HookPayload& b) {
  return a.session_id == b.session_id && a.transcript_path == b.transcript_path && a.cwd == b.cwd &&
         a.hook_event_name == b.hook_event_name && a.tool_name == b.tool_name &&
         a.tool_use_id == b.tool_use_id && a.agent_id == b.agent_id &&
         a.agent_type == b.agent_type && a.source == b.source && a.reason == b.reason &&
         a.stop_hook_active == b.stop_hook_active;
}

std::string field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto whole = ctxkit::claude::parse_hook_payload(text);

  size_t chunk = size == 0 ? 1 : data[size / 2] % 7 + 1;
  size_t at = 0;
  ctxkit::claude::ByteSource source = [&](char* buf, size_t cap) -> ctxkit::Result<size_t> {
    size_t n = std::min({chunk, cap, size - at});
    std::copy_n(text.data() + at, n, buf);
    at += n;
    return n;
  };
  auto chunked = ctxkit::claude::scan_hook_payload(source);
  if (whole.has_value() != chunked.has_value()) std::abort();
  if (whole ? !same(*whole, *chunked) : whole.error().message != chunked.error().message)
    std::abort();
  std::string message = whole ? std::string() : whole.error().message;
  if (message.find('\n') != std::string::npos) std::abort();

  // Against nlohmann::json on valid UTF-8 (it refuses the rest, which the scan tolerates).
  if (!ctxkit::util::is_valid_utf8(text)) return 0;
  // nlohmann's reader takes a NUL byte for the end of the input, so `{...}<NUL>more` passes there;
  // the scan refuses what follows the value. Any other place of a NUL is compared.
  if (text.find('\0') != std::string_view::npos &&
      message.find("unexpected data after the payload") != std::string::npos)
    return 0;
  bool syntax_error =
      message.starts_with("payload is not valid JSON") || message.starts_with("no hook payload");
  bool too_long = message.find("is longer than") != std::string::npos;
  nlohmann::json j;
  bool refused = false;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::out_of_range&) {
    return 0;  // a number no double holds (4e422): valid JSON that nlohmann refuses
  } catch (const nlohmann::json::parse_error& e) {
    // A lone UTF-16 surrogate (\uD800): nlohmann refuses it, the scan keeps U+FFFD in its place.
    if (std::string_view(e.what()).find("surrogate") != std::string_view::npos) return 0;
    refused = true;
  } catch (const nlohmann::json::exception&) {
    refused = true;
  }
  if (refused != syntax_error && !too_long) std::abort();
  if (whole && j.is_object()) {
    if (field(j, "session_id") != whole->session_id || field(j, "cwd") != whole->cwd ||
        field(j, "transcript_path") != whole->transcript_path ||
        field(j, "tool_use_id") != whole->tool_use_id ||
        field(j, "hook_event_name") != whole->hook_event_name ||
        field(j, "source") != whole->source)
      std::abort();
    auto s = j.find("stop_hook_active");
    if ((s != j.end() && s->is_boolean() && s->get<bool>()) != whole->stop_hook_active)
      std::abort();
  }
  return 0;
}
