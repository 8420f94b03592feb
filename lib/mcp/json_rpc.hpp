#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/json_depth.hpp"

namespace ctxkit::mcp {

// JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

// Nesting deeper than this is refused before parsing (a message of ours never nests beyond ~10).
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses one message's text. Refuses, as a parse error with a one-line reason: nesting deeper
// than `max_depth` (checked by a byte scan first, so a 100,000-deep input costs one pass and no
// recursion), invalid JSON, invalid UTF-8 and NUL bytes.
[[nodiscard]] Result<nlohmann::json> parse_message(std::string_view text,
                                                   std::size_t max_depth = kMaxJsonDepth);

// The deepest array/object nesting of `text`, stopping as soon as it exceeds `limit`.
using util::json_depth;

// A response object {"jsonrpc":"2.0","id":id,"result":result}.
nlohmann::json make_result(const nlohmann::json& id, nlohmann::json result);

// An error response {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}}.
nlohmann::json make_error(const nlohmann::json& id, int code, std::string message);

// One line of output: the message without embedded newlines (invalid UTF-8 in strings is
// replaced, never thrown on), followed by '\n'.
std::string serialize_line(const nlohmann::json& message);

}  // namespace ctxkit::mcp
