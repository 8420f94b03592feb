#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace ctxkit::test {

// A test MCP client: starts a server program with pipes on stdin/stdout (stderr to a file) and
// exchanges newline-delimited JSON-RPC messages with it, as Claude Code does.
class McpClient {
 public:
  McpClient(std::vector<std::string> argv, const util::Env& env,
            const std::filesystem::path& stderr_path);
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  // Writes raw bytes to the server's stdin.
  void write_raw(const std::string& bytes);
  // Sends one message (plus newline).
  void send(const nlohmann::json& message);
  // Reads one line from the server's stdout; nullopt at end of output or after `timeout`.
  std::optional<std::string> read_line(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Sends a request with the next id and returns the parsed answer (null on no answer).
  nlohmann::json request(const std::string& method, nlohmann::json params = nullptr);
  // initialize (2025-11-25) + notifications/initialized; returns the initialize answer.
  nlohmann::json initialize(const std::string& version = "2025-11-25");
  // tools/call; returns the `result` object (null when the answer is an error).
  nlohmann::json call(const std::string& tool, nlohmann::json arguments = nlohmann::json::object());
  // The parsed JSON text of a tools/call result's first text block.
  static nlohmann::json text_json(const nlohmann::json& result);

  // Closes the server's stdin (end of input).
  void close_input();
  // Sends a signal to the server.
  void kill(int signal);
  // Waits for the server to exit; returns its exit code, 128 + signal when killed, or -1 after
  // `timeout` (the server is then killed).
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  int next_id_ = 0;
  std::optional<int> exit_code_;
};

}  // namespace ctxkit::test
