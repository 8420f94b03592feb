#include "util/regular_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ctxkit::util {

Result<OpenedFile> open_regular_file(const std::filesystem::path& path, bool follow_link) {
  // The system sees a path only up to its first NUL byte: "t\0x.jsonl" would open "t".
  if (path.native().find('\0') != std::string::npos)
    return fail(fmt::format("opening {}: the path contains a NUL byte", path.string()),
                Error::Kind::Invalid);
  // Non-blocking, so that a FIFO or a device is refused here instead of blocking the open.
  int fd = ::open(path.c_str(),
                  O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow_link ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    int e = errno;
    return fail(fmt::format("opening {}: {}", path.string(), std::strerror(e)),
                e == ENOENT ? Error::Kind::NotFound : Error::Kind::Generic);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(fmt::format("reading {}: not a regular file", path.string()));
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return OpenedFile{fd, static_cast<uint64_t>(st.st_size)};
}

}  // namespace ctxkit::util
