#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "util/error.hpp"
#include "util/unique_fd.hpp"

namespace ctxkit::util {

// An exclusive flock on a file (created 0600 when missing, never through a link), held while this
// object lives or until the process ends, however it ends.
class FileLock {
 public:
  // nullopt when another process holds it (with wait=false); waits for it with wait=true. A file
  // that cannot be opened is an error "opening P: …" (kind NotFound when its folder is missing).
  [[nodiscard]] static Result<std::optional<FileLock>> acquire(const std::filesystem::path& path,
                                                               bool wait);
  // An exclusive flock on the directory `dir` itself (nothing is created in it), waiting up to
  // `wait` for another holder; still held then: an error of kind Busy.
  [[nodiscard]] static Result<FileLock> acquire_directory(const std::filesystem::path& dir,
                                                          std::chrono::milliseconds wait);
  // A shared or an exclusive flock on `path` (created 0600 when missing; a link, a file that is not
  // regular or not this user's is refused), waiting up to `wait` for other holders: nullopt when
  // it is still held the other way then.
  enum class Mode { Shared, Exclusive };
  [[nodiscard]] static Result<std::optional<FileLock>> acquire_within(
      const std::filesystem::path& path, Mode mode, std::chrono::milliseconds wait);
  // Whether a process holds the lock on `path` now (false when there is no such file).
  static bool held(const std::filesystem::path& path);

  // Closing the descriptor releases the flock.
  FileLock(FileLock&& other) noexcept = default;
  FileLock& operator=(FileLock&& other) noexcept = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() = default;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  UniqueFd fd_;
};

}  // namespace ctxkit::util
