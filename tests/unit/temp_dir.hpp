#pragma once

#include <filesystem>
#include <string>

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

// The recorded fixtures directory (tests/fixtures/claude-code-2.1.197).
std::filesystem::path fixtures();

}  // namespace ctxkit::test
