#pragma once

#include <cstddef>

#include "mcp/mcp_server.hpp"
#include "util/error.hpp"

namespace ctxkit::mcp {

// Limits and wake-ups of the stdio loop.
struct StdioOptions {
  // A message longer than this is answered with one -32700 error and skipped up to its newline.
  std::size_t max_message_bytes = std::size_t{16} << 20;
  // When >= 0, a readable byte here stops the loop between two messages (see StopSignals).
  int stop_fd = -1;
  // With this, SIGINT or SIGTERM caught by StopSignals while a message is being handled ends the
  // process at once, by the signal's default action, instead of after the answer: for a server
  // whose tools may be cut anywhere (they read, or write in transactions a kill rolls back), so
  // that a tool that takes long or hangs never keeps it from stopping.
  bool stop_within_message = false;
};

// Why serve_stdio returned.
enum class StopReason { EndOfInput, Signal, OutputClosed };

// The stdio transport: reads newline-delimited messages from `in_fd` (a '\r' before the newline
// is dropped; a last line without newline is handled at end of input), hands each to `server`
// and writes each answer as one line to `out_fd`. Messages are handled one at a time, so a stop
// request is honoured only between messages (whatever a tool was writing is finished first),
// unless StdioOptions::stop_within_message says otherwise.
// Errors: a failing read of `in_fd`.
[[nodiscard]] Result<StopReason> serve_stdio(McpServer& server, int in_fd, int out_fd,
                                             const StdioOptions& options);

// SIGINT and SIGTERM turned into a readable pipe (the self-pipe trick), for StdioOptions::stop_fd;
// SIGPIPE is ignored so that a closed stdout is a write error, not a kill. Installs process-wide
// handlers; the old ones are restored by the destructor.
class StopSignals {
 public:
  [[nodiscard]] static Result<StopSignals> install();
  StopSignals(StopSignals&& other) noexcept;
  StopSignals& operator=(StopSignals&&) = delete;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();
  // The read end of the pipe.
  int fd() const { return read_fd_; }

 private:
  StopSignals(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace ctxkit::mcp
