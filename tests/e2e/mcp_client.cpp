#include "e2e/mcp_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ctxkit::test {

McpClient::McpClient(std::vector<std::string> argv, const util::Env& env,
                     const std::filesystem::path& stderr_path) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0600);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env.vars()) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    throw std::runtime_error("cannot start " + argv[0]);
  }
  in_fd_ = in[1];
  out_fd_ = out[0];
  ::signal(SIGPIPE, SIG_IGN);
}

McpClient::~McpClient() {
  if (in_fd_ >= 0) ::close(in_fd_);
  if (!exit_code_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
}

void McpClient::write_raw(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(in_fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("writing to the server failed");
    done += static_cast<size_t>(n);
  }
}

void McpClient::send(const nlohmann::json& message) {
  write_raw(message.dump() + "\n");
}

std::optional<std::string> McpClient::read_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char buf[65536];
    ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

nlohmann::json McpClient::request(const std::string& method, nlohmann::json params) {
  nlohmann::json msg = {{"jsonrpc", "2.0"}, {"id", next_id_++}, {"method", method}};
  if (!params.is_null()) msg["params"] = std::move(params);
  send(msg);
  auto line = read_line();
  if (!line) return nullptr;
  return nlohmann::json::parse(*line);
}

nlohmann::json McpClient::initialize(const std::string& version) {
  auto r =
      request("initialize",
              {{"protocolVersion", version},
               {"capabilities",
                {{"roots", nlohmann::json::object()}, {"elicitation", nlohmann::json::object()}}},
               {"clientInfo", {{"name", "e2e"}, {"version", "0"}}}});
  send({{"method", "notifications/initialized"}, {"jsonrpc", "2.0"}});
  return r;
}

nlohmann::json McpClient::call(const std::string& tool, nlohmann::json arguments) {
  auto r = request("tools/call", {{"name", tool}, {"arguments", std::move(arguments)}});
  if (r.is_null() || !r.contains("result")) return nullptr;
  return r["result"];
}

nlohmann::json McpClient::text_json(const nlohmann::json& result) {
  return nlohmann::json::parse(result.at("content").at(0).at("text").get<std::string>());
}

void McpClient::close_input() {
  if (in_fd_ >= 0) ::close(in_fd_);
  in_fd_ = -1;
}

void McpClient::kill(int signal) {
  ::kill(pid_, signal);
}

int McpClient::wait(std::chrono::milliseconds timeout) {
  if (exit_code_) return *exit_code_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return *exit_code_;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      exit_code_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ctxkit::test
