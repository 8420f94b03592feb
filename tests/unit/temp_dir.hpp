#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace ctxkit::test {

// A fresh directory removed at destruction, with an environment whose HOME and XDG_* point
// into it so that nothing a test runs touches the real user's files.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // HOME, XDG_CONFIG_HOME, XDG_STATE_HOME inside the directory, plus PATH.
  util::Env env() const;
  // Writes a file (creating parent directories) and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// Reads a whole file.
std::string read_file(const std::filesystem::path& path);

// Forks `n` children at once, child i running work(i) and exiting with what it returns; waits
// for all and gives each one's exit status in order (-1 for one that did not exit normally).
std::vector<int> exit_codes_of_children(int n, const std::function<int(int)>& work);

// The recorded fixtures directory of the oldest supported client
// (tests/fixtures/claude-code-2.1.197).
std::filesystem::path fixtures();

// tests/fixtures: one claude-code-<version>/ folder a client version of the supported range.
std::filesystem::path fixture_root();

// The recorded client versions' folders ("claude-code-2.1.197", ...), oldest first.
std::vector<std::string> client_fixture_dirs();

// "<version folder>/<model>" for every recorded version and model that holds `part` (a path below
// the model's folder, or "stream-json", which lies at <version>/stream-json/<model>).
std::vector<std::string> fixture_sets(const std::string& part);

// A gtest parameter name made of a fixture set ("claude-code-2.1.197/claude-opus-4-8" ->
// "v2_1_197_claude_opus_4_8").
std::string fixture_set_name(const std::string& set);

// fixture_root() / "<version>/<model>" / part for a set of fixture_sets().
std::filesystem::path fixture_path(const std::string& set, const std::string& part);

// The main transcripts (<session id>.jsonl) of a recorded transcripts folder, by name.
std::vector<std::filesystem::path> main_transcripts(const std::filesystem::path& transcripts_dir);

// Every transcript file of a fixture set: the basic session's (with its subagent's) and the
// compactions', by path.
std::vector<std::filesystem::path> recorded_transcripts(const std::string& set);

// The lines of a file.
std::vector<std::string> file_lines(const std::filesystem::path& p);

// The first `n` lines of `lines`, newline-terminated.
std::string first_lines(const std::vector<std::string>& lines, size_t n);

// context = input + cache creation + cache read of the assistant line with `tool_use_id`; its
// index in `index`. -1 if absent.
int64_t usage_of_tool_use(const std::vector<std::string>& lines, const std::string& tool_use_id,
                          size_t& index);

}  // namespace ctxkit::test
