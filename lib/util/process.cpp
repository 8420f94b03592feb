#include "util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/core.h>

extern char** environ;

namespace ctxkit::util {

namespace {
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};
}  // namespace

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) return fail("starting a process: empty argv");
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 ||
      ::pipe2(err.fd, O_CLOEXEC) != 0) {
    return fail(fmt::format("creating pipes: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
  if (spec.cwd) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd->c_str());

  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_store;
  std::vector<char*> envp;
  char** env_ptr = environ;
  if (spec.env) {
    for (const auto& [k, v] : *spec.env) env_store.push_back(k + "=" + v);
    for (auto& s : env_store) envp.push_back(s.data());
    envp.push_back(nullptr);
    env_ptr = envp.data();
  }
  pid_t pid = 0;
  int rc;
  if (spec.env && spec.argv[0].find('/') == std::string::npos) {
    // posix_spawnp searches the PATH of this process; honour the child's PATH instead.
    std::string found = spec.argv[0];
    auto it = spec.env->find("PATH");
    std::string path = it != spec.env->end() ? it->second : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= path.size()) {
      size_t colon = path.find(':', start);
      std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + spec.argv[0];
      if (::access(cand.c_str(), X_OK) == 0) {
        found = cand;
        break;
      }
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    rc = ::posix_spawn(&pid, found.c_str(), &fa, nullptr, argv.data(), env_ptr);
  } else {
    rc = ::posix_spawnp(&pid, spec.argv[0].c_str(), &fa, nullptr, argv.data(), env_ptr);
  }
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return fail(fmt::format("starting {}: {}", spec.argv[0], std::strerror(rc)), Error::Kind::NotFound);
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);

  ProcessResult result;
  size_t written = 0;
  if (spec.stdin_data.empty()) in.close_end(1);
  else ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  auto deadline = spec.timeout ? std::chrono::steady_clock::now() + *spec.timeout
                               : std::chrono::steady_clock::time_point::max();
  ::signal(SIGPIPE, SIG_IGN);
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    pollfd fds[3];
    int n = 0;
    int idx_out = -1, idx_err = -1, idx_in = -1;
    if (out.fd[0] >= 0) { fds[n] = {out.fd[0], POLLIN, 0}; idx_out = n++; }
    if (err.fd[0] >= 0) { fds[n] = {err.fd[0], POLLIN, 0}; idx_err = n++; }
    if (in.fd[1] >= 0) { fds[n] = {in.fd[1], POLLOUT, 0}; idx_in = n++; }
    int wait_ms = -1;
    if (spec.timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        ::kill(pid, SIGKILL);
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left.count());
    }
    int pr = ::poll(fds, static_cast<nfds_t>(n), wait_ms);
    if (pr < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (idx_in >= 0 && (fds[idx_in].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::write(in.fd[1], spec.stdin_data.data() + written, spec.stdin_data.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN) in.close_end(1);
      if (written >= spec.stdin_data.size()) in.close_end(1);
    }
    auto drain = [&](int idx, Pipe& p, std::string& into) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t r = ::read(p.fd[0], buf, sizeof buf);
      if (r > 0) into.append(buf, static_cast<size_t>(r));
      else if (r == 0 || errno != EINTR) p.close_end(0);
    };
    drain(idx_out, out, result.out);
    drain(idx_err, err, result.err);
  }
  in.close_end(1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

void detach(const std::function<void()>& work) {
  pid_t pid = ::fork();
  if (pid < 0) {
    work();
    return;
  }
  if (pid > 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return;
  }
  ::setsid();
  if (::fork() != 0) ::_exit(0);
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (null > 2) ::close(null);
  }
  work();
  ::_exit(0);
}

}  // namespace ctxkit::util
