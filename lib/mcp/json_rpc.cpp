#include "mcp/json_rpc.hpp"

#include <fmt/core.h>

namespace ctxkit::mcp {

using json = nlohmann::json;

std::size_t json_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > limit) return deepest;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

Result<json> parse_message(std::string_view text, std::size_t max_depth) {
  if (text.find('\0') != std::string_view::npos) return fail("message contains a NUL byte");
  if (json_depth(text, max_depth) > max_depth)
    return fail(fmt::format("message nests deeper than {} levels", max_depth));
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    auto pos = what.find("parse error");
    return fail(pos == std::string::npos ? what : what.substr(pos));
  }
}

json make_result(const json& id, json result) {
  json r = json::object();
  r["jsonrpc"] = "2.0";
  r["id"] = id;
  r["result"] = std::move(result);
  return r;
}

json make_error(const json& id, int code, std::string message) {
  json r = json::object();
  r["jsonrpc"] = "2.0";
  r["id"] = id;
  r["error"] = json{{"code", code}, {"message", std::move(message)}};
  return r;
}

std::string serialize_line(const json& message) {
  std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace);
  line += '\n';
  return line;
}

}  // namespace ctxkit::mcp
