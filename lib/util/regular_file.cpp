#include "util/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/core.h>

namespace ctxkit::util {

Result<OpenedFile> open_regular_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
  return OpenedFile{fd, static_cast<uint64_t>(st.st_size)};
}

}  // namespace ctxkit::util
