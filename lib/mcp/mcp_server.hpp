#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/tool_registry.hpp"

namespace ctxkit::mcp {

// Protocol versions this server speaks, newest first. The client's version is answered when it
// is one of these, else the newest. Only 2025-03-26 allows JSON-RPC batches (added there,
// removed in 2025-06-18).
inline constexpr std::array<std::string_view, 4> kProtocolVersions = {"2025-11-25", "2025-06-18",
                                                                      "2025-03-26", "2024-11-05"};

// Who the server is, for the `initialize` result.
struct ServerInfo {
  std::string name;
  std::string version;
  std::string instructions;  // empty: not sent
};

// An MCP server over JSON-RPC 2.0 messages, without I/O: each input line goes in, the output line
// (if any) comes out. Implements initialize (version negotiation), notifications/initialized,
// ping, tools/list and tools/call over a ToolRegistry; answers -32700 (bad JSON, too deep, NUL
// bytes), -32600 (not a request; a batch unless 2025-03-26 was negotiated), -32601 (unknown
// method) and -32602 (bad params). Notifications and client responses are never answered.
// Requests other than initialize are served before initialization too (lenient, like the
// reference SDK servers).
class McpServer {
 public:
  McpServer(ServerInfo info, ToolRegistry tools);

  // Handles one line (without its newline). Returns the line to write (with its newline), or
  // nullopt when nothing is to be answered. Never throws.
  std::optional<std::string> handle_line(std::string_view line);

  // The answer to a message that was cut because it exceeded the size limit.
  std::string oversized_message_error(std::size_t limit) const;

  // The negotiated protocol version ("" before initialize).
  const std::string& protocol_version() const { return protocol_version_; }
  // True once notifications/initialized arrived.
  bool initialized() const { return initialized_; }

  // Called with one short line per message handled, for a debug log on stderr.
  void set_logger(std::function<void(std::string_view)> log) { log_ = std::move(log); }

 private:
  std::optional<nlohmann::json> handle_message(const nlohmann::json& message, bool in_batch);
  nlohmann::json handle_request(const std::string& method, const nlohmann::json& id,
                                const nlohmann::json* params);
  void log(std::string_view text) const;

  ServerInfo info_;
  ToolRegistry tools_;
  std::string protocol_version_;
  bool initialized_ = false;
  std::function<void(std::string_view)> log_;
};

}  // namespace ctxkit::mcp
