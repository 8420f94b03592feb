#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "mcp/stdio_transport.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::mcp {
namespace {

using json = nlohmann::json;

McpServer echo_server() {
  ToolRegistry tools;
  tools.add({"echo", "", json{{"type", "object"}}, [](const json& a) {
               return ToolResult{a.value("text", std::string()), false};
             }});
  return McpServer{ServerInfo{"t", "0", ""}, std::move(tools)};
}

std::string echo_call(int id, const std::string& text) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tools/call"},
              {"params", {{"name", "echo"}, {"arguments", {{"text", text}}}}}}
      .dump();
}

class StdioTest : public ::testing::Test {
 protected:
  test::TempDir dir;
  // Serves `input` (a file) and returns the output lines.
  std::vector<json> serve(const std::string& input, StdioOptions options = {},
                          StopReason expected = StopReason::EndOfInput) {
    auto in_path = dir.write("in", input);
    int in = ::open(in_path.c_str(), O_RDONLY);
    int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    McpServer server = echo_server();
    auto r = serve_stdio(server, in, out, options);
    ::close(in);
    ::close(out);
    EXPECT_TRUE(r.has_value());
    if (r) {
      EXPECT_EQ(*r, expected);
    }
    std::vector<json> lines;
    for (const auto& l : test::file_lines(dir / "out")) lines.push_back(json::parse(l));
    return lines;
  }
};

TEST_F(StdioTest, AnswersEachLineInOrderAndStopsAtEndOfInput) {
  auto out = serve(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                   "\n"
                   R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                   "\n"
                   "\n" +
                   echo_call(2, "two") + "\r\n" + echo_call(3, "last, no newline"));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0]["id"], 1);
  EXPECT_EQ(out[1]["result"]["content"][0]["text"], "two");
  EXPECT_EQ(out[2]["result"]["content"][0]["text"], "last, no newline");
}

TEST_F(StdioTest, ALongLineAcrossManyReadsIsOneMessage) {
  std::string text(2 << 20, 'x');
  text[12345] = '\t';
  auto out = serve(echo_call(1, text) + "\n" + echo_call(2, "after") + "\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["result"]["content"][0]["text"], text);
  EXPECT_EQ(out[1]["result"]["content"][0]["text"], "after");
}

TEST_F(StdioTest, AnOversizedMessageGetsOneErrorAndTheNextIsServed) {
  StdioOptions options;
  options.max_message_bytes = 1000;
  // Larger than one read (64 KiB) and than the limit; then a small one; then one that ends
  // exactly in the first read's tail.
  auto out = serve(echo_call(1, std::string(200000, 'y')) + "\n" + echo_call(2, "ok") + "\n" +
                       echo_call(3, std::string(2000, 'z')) + "\n" + echo_call(4, "ok too"),
                   options);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["error"]["code"], -32700);
  EXPECT_EQ(out[0]["error"]["message"], "Parse error: message longer than 1000 bytes");
  EXPECT_TRUE(out[0]["id"].is_null());
  EXPECT_EQ(out[1]["id"], 2);
  EXPECT_EQ(out[2]["error"]["code"], -32700);
  EXPECT_EQ(out[3]["result"]["content"][0]["text"], "ok too");
}

TEST_F(StdioTest, GarbageLinesDoNotStopTheLoop) {
  std::string nul_line("{\"a\":\0}", 7);
  auto out = serve(nul_line + "\n\xff\xfe\xfd\n" + std::string(100000, '[') + "\n" +
                   echo_call(9, "alive") + "\n");
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out[i]["error"]["code"], -32700) << i;
  EXPECT_EQ(out[3]["id"], 9);
}

TEST_F(StdioTest, AStopRequestEndsTheLoopWhileInputStaysOpen) {
  int in[2], stop[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(stop), 0);
  std::string msg = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                    "\n";
  ASSERT_EQ(::write(in[1], msg.data(), msg.size()), static_cast<ssize_t>(msg.size()));
  int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  McpServer server = echo_server();
  ASSERT_EQ(::write(stop[1], "x", 1), 1);
  StdioOptions options;
  options.stop_fd = stop[0];
  auto r = serve_stdio(server, in[0], out, options);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, StopReason::Signal);
  for (int fd : {in[0], in[1], stop[0], stop[1], out}) ::close(fd);
}

TEST_F(StdioTest, SigtermArrivesThroughStopSignals) {
  auto signals = StopSignals::install();
  ASSERT_TRUE(signals.has_value());
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  McpServer server = echo_server();
  ASSERT_EQ(::raise(SIGTERM), 0);  // handled: the test process lives on
  StdioOptions options;
  options.stop_fd = signals->fd();
  auto r = serve_stdio(server, in[0], out, options);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, StopReason::Signal);
  for (int fd : {in[0], in[1], out}) ::close(fd);
}

// A tool that never returns: with stop_within_message, SIGTERM still ends the server, by that
// signal. Run in a child process, which the signal ends.
TEST_F(StdioTest, WithStopWithinMessageASignalEndsAToolThatNeverReturns) {
  int ready[2], in[2], never[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(never), 0);
  const std::string call = json{{"jsonrpc", "2.0"},
                                {"id", 1},
                                {"method", "tools/call"},
                                {"params", {{"name", "hang"}, {"arguments", json::object()}}}}
                               .dump() +
                           "\n";
  ASSERT_EQ(::write(in[1], call.data(), call.size()), static_cast<ssize_t>(call.size()));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto signals = StopSignals::install();
    if (!signals) ::_exit(90);
    ToolRegistry tools;
    tools.add({"hang", "", json{{"type", "object"}}, [&](const json&) {
                 [[maybe_unused]] auto n = ::write(ready[1], "r", 1);
                 char c;
                 while (::read(never[0], &c, 1) != 0) {
                 }
                 return ToolResult{"", false};
               }});
    McpServer server{ServerInfo{"t", "0", ""}, std::move(tools)};
    StdioOptions options;
    options.stop_fd = signals->fd();
    options.stop_within_message = true;
    int out = ::open("/dev/null", O_WRONLY);
    (void)serve_stdio(server, in[0], out, options);
    ::_exit(91);
  }
  // Once the tool is at work, SIGTERM.
  pollfd p{ready[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 1000 && done == 0; ++i) {
    done = ::waitpid(child, &status, WNOHANG);
    if (done == 0) ::usleep(10000);
  }
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    ADD_FAILURE() << "SIGTERM did not end the server within 10 s";
  } else {
    EXPECT_TRUE(WIFSIGNALED(status)) << status;
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), SIGTERM);
    }
  }
  for (int fd : {ready[0], ready[1], in[0], in[1], never[0], never[1]}) ::close(fd);
}

// Without it, a stop waits for the answer.
TEST_F(StdioTest, WithoutStopWithinMessageTheAnswerComesBeforeTheStop) {
  auto signals = StopSignals::install();
  ASSERT_TRUE(signals.has_value());
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  const std::string call = echo_call(1, "answered") + "\n" + echo_call(2, "never") + "\n";
  ASSERT_EQ(::write(in[1], call.data(), call.size()), static_cast<ssize_t>(call.size()));
  ToolRegistry tools;
  tools.add({"echo", "", json{{"type", "object"}}, [](const json& a) {
               ::raise(SIGTERM);  // handled: the test process lives on
               return ToolResult{a.value("text", std::string()), false};
             }});
  McpServer server{ServerInfo{"t", "0", ""}, std::move(tools)};
  int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  StdioOptions options;
  options.stop_fd = signals->fd();
  auto r = serve_stdio(server, in[0], out, options);
  ::close(out);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, StopReason::Signal);
  auto lines = test::file_lines(dir / "out");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(json::parse(lines[0])["result"]["content"][0]["text"], "answered");
  for (int fd : {in[0], in[1]}) ::close(fd);
}

TEST_F(StdioTest, AClosedOutputEndsTheLoop) {
  auto signals = StopSignals::install();  // SIGPIPE ignored while it lives
  ASSERT_TRUE(signals.has_value());
  int outp[2];
  ASSERT_EQ(::pipe(outp), 0);
  ::close(outp[0]);
  auto in_path = dir.write("in", R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                                 "\n");
  int in = ::open(in_path.c_str(), O_RDONLY);
  McpServer server = echo_server();
  auto r = serve_stdio(server, in, outp[1], {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, StopReason::OutputClosed);
  ::close(in);
  ::close(outp[1]);
}

}  // namespace
}  // namespace ctxkit::mcp
