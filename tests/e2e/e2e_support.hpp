#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "unit/temp_dir.hpp"
#include "util/process.hpp"

namespace ctxkit::test {

// Where the programs under test are: $CTXKIT_E2E_BIN_DIR, else this build's.
std::string bin_dir();

// Runs a built ctxkit program (by name) with `args`, `stdin_data` and exactly the environment
// `env` (nothing inherited). Fails the test if it cannot be started.
util::ProcessResult run_tool(const std::string& name, const std::vector<std::string>& args,
                             const std::string& stdin_data, const util::Env& env,
                             const std::filesystem::path& cwd = {});

// A recorded session (with its subagent file) under HOME/.claude/projects/-proj in a temp dir,
// its tool outputs enlarged to `output_chars` (as a long session's would be; 0 keeps them): the
// basic session of a fixture set ("claude-code-<version>/<model>", see fixture_sets), by default
// the oldest supported release's claude-sonnet-4-5 one (kId). Where the client copies the
// messages it sends into the transcript (api-request-blob lines, 2.1.332), the copies are
// enlarged the same way.
struct RecordedSession {
  static constexpr const char* kId = "e276539b-fd98-4786-afff-185c4144940f";
  static constexpr const char* kDefaultSet = "claude-sonnet-4-5";
  TempDir tmp;
  std::string id;
  std::filesystem::path dir, transcript;
  std::string original;
  util::Env env;
  explicit RecordedSession(size_t output_chars = 20000, const std::string& set = "");
  std::filesystem::path state() const { return tmp / "home/.local/state/ctxkit"; }
};

// The same, as another user (uid/gid 65534), which only root can do; used where root's
// permission bypass would hide the case. Returns exit code -1 (the caller skips) when not root or
// when setpriv is missing.
util::ProcessResult run_tool_as_nobody(const std::string& name, const std::string& stdin_data,
                                       const util::Env& env);

// The version of the CMake project (project(ctxkit VERSION …)), as the build wrote it.
// The headless browser of the page tests: $CTXKIT_CHROMIUM, else `chromium` on the PATH; none when
// neither is there (a test that needs it skips and says so; CI installs it).
std::optional<std::string> chromium();

// Runs `browser` headless with a profile of its own in `tmp` (no sandbox, no GPU, no first-run or
// background network, sRGB at scale 1) and `args` after those, within 120 s.
util::ProcessResult run_browser(const std::string& browser, const TempDir& tmp,
                                std::vector<std::string> args);

// How many times `needle` occurs in `hay` (overlapping ones too).
size_t occurrences(const std::string& hay, const std::string& needle);

std::string expected_version();

// The number of non-empty lines of `text`.
size_t line_count(const std::string& text);

// A transcript's assistant line as the client writes it: one Bash tool call `tool_id`, and usage
// that read `cache_read` tokens of context (5 more as input).
std::string assistant_line(const std::string& msg_id, int64_t cache_read,
                           const std::string& tool_id, bool sidechain = false);

// The start of a stand-in `claude` script that appends its arguments to $STANDIN_LOG as one line,
// "call: [arg] [arg] …" (a newline in an argument as '~', each cut at `max_chars`).
std::string standin_call_logger(int max_chars);
// The "call:" lines of such a log, in order.
std::vector<std::string> standin_calls(const std::filesystem::path& log);

}  // namespace ctxkit::test
