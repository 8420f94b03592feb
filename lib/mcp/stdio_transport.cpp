#include "mcp/stdio_transport.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "util/fs.hpp"

namespace ctxkit::mcp {

namespace {

std::atomic<int> g_signal_write_fd{-1};
// A message is being handled by a loop whose options say a stop signal ends it at once.
std::atomic<bool> g_stop_now{false};
struct sigaction g_old_int {
}, g_old_term{}, g_old_pipe{};

extern "C" void on_stop_signal(int sig) {
  int saved = errno;
  if (g_stop_now.load()) {
    // Delivered again once this handler returns (it is blocked meanwhile), by default: the end.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
  int fd = g_signal_write_fd.load();
  if (fd >= 0) {
    char byte = 1;
    [[maybe_unused]] auto n = ::write(fd, &byte, 1);
  }
  errno = saved;
}

bool stop_pending(int stop_fd) {
  if (stop_fd < 0) return false;
  pollfd p{stop_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

}  // namespace

Result<StopReason> serve_stdio(McpServer& server, int in_fd, int out_fd,
                               const StdioOptions& options) {
  std::string pending;      // bytes of the message being read
  bool discarding = false;  // inside a message that exceeded the limit
  std::string chunk(1 << 16, '\0');

  // A stop signal that came before the flag below was set is seen by stop_pending: the message
  // is then left unanswered, as one read after the stop would be.
  struct StopNow {
    explicit StopNow(bool on) : on_(on) {
      if (on_) g_stop_now.store(true);
    }
    ~StopNow() {
      if (on_) g_stop_now.store(false);
    }
    bool on_;
  };
  bool stopped = false;
  auto answer = [&](std::string_view line) -> bool {
    std::optional<std::string> out;
    {
      // Only the handling: a client that has read the answer may send a stop at once, and that
      // one ends the loop as any stop between messages does.
      StopNow now(options.stop_within_message);
      if (options.stop_within_message && stop_pending(options.stop_fd)) {
        stopped = true;
        return true;
      }
      out = server.handle_line(line);
    }
    if (out) return util::write_all(out_fd, *out) == 0;
    return true;
  };

  while (true) {
    pollfd fds[2] = {{in_fd, POLLIN, 0}, {options.stop_fd, POLLIN, 0}};
    int nfds = options.stop_fd >= 0 ? 2 : 1;
    int ready = ::poll(fds, static_cast<nfds_t>(nfds), -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("waiting for input: {}", std::strerror(errno)));
    }
    if (nfds == 2 && (fds[1].revents & (POLLIN | POLLHUP))) return StopReason::Signal;
    ssize_t n = ::read(in_fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return fail(fmt::format("reading stdin: {}", std::strerror(errno)));
    }
    if (n == 0) {
      if (!discarding && !pending.empty() && !answer(pending)) return StopReason::OutputClosed;
      return stopped ? StopReason::Signal : StopReason::EndOfInput;
    }
    std::string_view data(chunk.data(), static_cast<size_t>(n));
    while (!data.empty()) {
      auto nl = data.find('\n');
      if (discarding) {
        if (nl == std::string_view::npos) break;
        discarding = false;
        data.remove_prefix(nl + 1);
        continue;
      }
      if (nl == std::string_view::npos) {
        pending.append(data);
        if (pending.size() > options.max_message_bytes) {
          pending.clear();
          discarding = true;
          if (util::write_all(out_fd, server.oversized_message_error(options.max_message_bytes)) !=
              0)
            return StopReason::OutputClosed;
        }
        break;
      }
      std::string_view line = data.substr(0, nl);
      data.remove_prefix(nl + 1);
      bool ok;
      if (pending.size() + line.size() > options.max_message_bytes) {
        pending.clear();
        ok =
            util::write_all(out_fd, server.oversized_message_error(options.max_message_bytes)) == 0;
      } else if (!pending.empty()) {
        pending.append(line);
        ok = answer(pending);
        pending.clear();
      } else {
        ok = answer(line);
      }
      if (!ok) return StopReason::OutputClosed;
      if (stopped || stop_pending(options.stop_fd)) return StopReason::Signal;
    }
  }
}

Result<StopSignals> StopSignals::install() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return fail(fmt::format("creating the signal pipe: {}", std::strerror(errno)));
  g_signal_write_fd.store(fds[1]);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &g_old_pipe);
  return StopSignals(fds[0], fds[1]);
}

StopSignals::StopSignals(StopSignals&& other) noexcept
    : read_fd_(other.read_fd_), write_fd_(other.write_fd_) {
  other.read_fd_ = other.write_fd_ = -1;
}

StopSignals::~StopSignals() {
  if (write_fd_ < 0) return;
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  ::sigaction(SIGPIPE, &g_old_pipe, nullptr);
  g_signal_write_fd.store(-1);
  ::close(write_fd_);
  ::close(read_fd_);
}

}  // namespace ctxkit::mcp
