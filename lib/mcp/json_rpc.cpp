#include "mcp/json_rpc.hpp"

#include <fmt/core.h>

#include <charconv>

#include "util/json_io.hpp"
#include "util/json_string.hpp"

namespace ctxkit::mcp {

using json = nlohmann::json;

Result<json> parse_message(std::string_view text, std::size_t max_depth) {
  if (text.find('\0') != std::string_view::npos) return fail("message contains a NUL byte");
  if (json_depth(text, max_depth) > max_depth)
    return fail(fmt::format("message nests deeper than {} levels", max_depth));
  try {
    return util::parse_json_or_throw(text);
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

namespace {
// What dump(-1, ' ', false, replace) writes, without its byte-by-byte UTF-8 decoding of every
// string (most of an answer's cost when a tool's text is a few kilobytes).
void append_compact(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        util::append_json_text<json>(out, it.key());
        out += ':';
        append_compact(out, it.value());
      }
      out += '}';
      return;
    }
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        append_compact(out, e);
      }
      out += ']';
      return;
    }
    default:  // scalars; floating point, binary, discarded as the library prints them
      if (!util::append_json_scalar(out, v)) out += util::dump_json(v, -1, util::BadUtf8::replace);
      return;
  }
}
}  // namespace

std::string serialize_line(const json& message) {
  std::string line;
  append_compact(line, message);
  line += '\n';
  return line;
}

}  // namespace ctxkit::mcp
