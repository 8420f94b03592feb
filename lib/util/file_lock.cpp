#include "util/file_lock.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "util/fs.hpp"

namespace ctxkit::util {

Result<std::optional<FileLock>> FileLock::acquire(const std::filesystem::path& path, bool wait) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return fail(fmt::format("opening {}: {}", path.string(), std::strerror(errno)),
                errno == ENOENT ? Error::Kind::NotFound : Error::Kind::ReadOnly);
  while (::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return std::optional<FileLock>();
    return fail(fmt::format("locking {}: {}", path.string(), std::strerror(e)));
  }
  return std::optional<FileLock>(FileLock(fd));
}

Result<FileLock> FileLock::acquire_directory(const std::filesystem::path& dir,
                                             std::chrono::milliseconds wait) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(fmt::format("opening {}: {}", dir.string(), std::strerror(errno)));
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(1);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    if (e == EINTR) continue;
    if (e != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      if (e == EWOULDBLOCK)
        return fail(fmt::format("{} is locked by another program for longer than {} ms",
                                dir.string(), wait.count()),
                    Error::Kind::Busy);
      return fail(fmt::format("locking {}: {}", dir.string(), std::strerror(e)));
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return FileLock(fd);
}

Result<std::optional<FileLock>> FileLock::acquire_within(const std::filesystem::path& path,
                                                         Mode mode,
                                                         std::chrono::milliseconds wait) {
  auto fd = open_private_file(path, O_RDWR);
  if (!fd) return std::unexpected(fd.error());
  const int how = mode == Mode::Shared ? LOCK_SH : LOCK_EX;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(1);
  while (::flock(*fd, how | LOCK_NB) != 0) {
    const int e = errno;
    if (e == EINTR) continue;
    if (e != EWOULDBLOCK) {
      ::close(*fd);
      return fail(fmt::format("locking {}: {}", path.string(), std::strerror(e)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(*fd);
      return std::optional<FileLock>();
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return std::optional<FileLock>(FileLock(*fd));
}

bool FileLock::held(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  bool busy = false;
  while (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    busy = errno == EWOULDBLOCK;
    break;
  }
  ::close(fd);
  return busy;
}

}  // namespace ctxkit::util
