#include "mcp/json_rpc.hpp"

#include <fmt/core.h>

namespace ctxkit::mcp {

using json = nlohmann::json;

Result<json> parse_message(std::string_view text, std::size_t max_depth) {
  if (text.find('\0') != std::string_view::npos) return fail("message contains a NUL byte");
  if (json_depth(text, max_depth) > max_depth)
    return fail(fmt::format("message nests deeper than {} levels", max_depth));
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // parse_error, or out_of_range for a number past double's range ("id": 1e400): both are
    // input that does not parse.
    std::string what = e.what();
    auto pos = what.find("parse error");
    if (pos == std::string::npos) pos = what.find("] ");
    return fail(pos == std::string::npos ? what : what.substr(what[pos] == ']' ? pos + 2 : pos));
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
