#include "util/fs.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ctxkit::util {
namespace fs = std::filesystem;

namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

// Checks one folder ctxkit owns (already known to exist): a directory of ours, 0700, not a link.
Result<void> check_owned_dir(const fs::path& dir) {
  struct stat st {};
  int rc = ::lstat(dir.c_str(), &st);
  if (rc != 0) return fail(fmt::format("checking {}: {}", dir.string(), errno_text(errno)));
  if (S_ISLNK(st.st_mode))
    return fail(
        fmt::format("{} is a symbolic link inside the state directory (refused)", dir.string()),
        Error::Kind::Invalid);
  if (!S_ISDIR(st.st_mode))
    return fail(fmt::format("{} is not a directory", dir.string()), Error::Kind::Invalid);
  if (st.st_uid != ::geteuid())
    return fail(
        fmt::format("{} belongs to another user (uid {}); refusing to keep private data there",
                    dir.string(), st.st_uid),
        Error::Kind::Invalid);
  if (st.st_mode & S_ISVTX)  // a shared folder such as /tmp: never tightened, never used
    return fail(
        fmt::format("{} is a shared folder (sticky bit); refusing to keep private data there",
                    dir.string()),
        Error::Kind::Invalid);
  if ((st.st_mode & 07777) != 0700) {
    if (::chmod(dir.c_str(), 0700) != 0)
      return fail(fmt::format("making {} private (0700): {}", dir.string(), errno_text(errno)));
  }
  return {};
}

// `p` without "." and ".." parts and without a trailing separator ("a/b/" has an empty last
// element).
fs::path normal(const fs::path& p) {
  fs::path n = p.lexically_normal();
  return n.has_filename() || !n.has_parent_path() || n == n.root_path() ? n : n.parent_path();
}

}  // namespace

Result<void> make_private_dirs(const fs::path& dir, const fs::path& base_in) {
  if (dir.empty()) return fail("make_private_dirs: empty path", Error::Kind::Invalid);
  if (dir.native().find('\0') != std::string::npos)
    return fail(fmt::format("creating directory {}: the path contains a NUL byte", dir.string()),
                Error::Kind::Invalid);
  const fs::path target = normal(dir);
  fs::path base = base_in.empty() ? target : normal(base_in);
  // `base` must be `target` or one of its ancestors; otherwise only `target` is ours.
  {
    auto [bi, ti] = std::mismatch(base.begin(), base.end(), target.begin(), target.end());
    if (bi != base.end()) base = target;
  }
  // The usual case, a private folder made by an earlier run: one check, no walk from the root.
  if (base == target && check_owned_dir(target)) return {};
  // From the top: every missing folder is made 0700 (umask cannot widen it; a restrictive umask
  // is corrected by the checks). From `base` down, each folder is checked before anything is
  // made inside it, so a link planted below `base` is refused before it is followed.
  const size_t base_depth = static_cast<size_t>(std::distance(base.begin(), base.end()));
  fs::path cur;
  size_t depth = 0;
  for (const auto& part : target) {
    cur /= part;
    ++depth;
    if (part.empty()) continue;
    if (::mkdir(cur.c_str(), 0700) == 0) {
      (void)::chmod(cur.c_str(), 0700);
    } else if (int e = errno; e != EEXIST) {
      // A folder we cannot create: fine when it exists after all (e.g. EACCES on "/").
      struct stat st {};
      if (!(::stat(cur.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
        return fail(
            fmt::format("creating directory {}: {}", cur.string(), errno_text(e)),
            e == EROFS || e == EACCES || e == EPERM ? Error::Kind::ReadOnly : Error::Kind::Generic);
    }
    if (depth < base_depth) continue;  // above the base: not ours to check
    if (auto r = check_owned_dir(cur); !r) return r;
  }
  return {};
}

fs::path resolve_above(const fs::path& path_in, const fs::path& base) {
  const fs::path path = normal(path_in);
  const fs::path above = normal(base).parent_path();
  // `path` below `base`: its parts past those of `above`.
  auto [ai, pi] = std::mismatch(above.begin(), above.end(), path.begin(), path.end());
  if (ai != above.end() || pi == path.end()) return path_in;
  char* real = ::realpath(above.empty() ? "." : above.c_str(), nullptr);
  if (real == nullptr) return path_in;
  fs::path out(real);
  std::free(real);
  for (; pi != path.end(); ++pi)
    if (!pi->empty()) out /= *pi;
  return out;
}

unsigned umask_mode(unsigned mode) {
  // The umask can only be read by setting it; /proc tells without changing it (another thread
  // may be creating files).
  unsigned mask = 022;
  bool found = false;
  if (FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "Umask: %o", &mask) == 1) {
        found = true;
        break;
      }
    std::fclose(f);
  }
  if (!found) {
    const mode_t old = ::umask(022);
    ::umask(old);
    mask = old;
  }
  return mode & ~mask & 07777;
}

bool read_only_file(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWUSR) == 0;
}

Result<std::string> read_file(const fs::path& path, const ReadLimits& limits) {
  if (path.native().find('\0') != std::string::npos)
    return fail(fmt::format("opening {}: the path contains a NUL byte", path.string()),
                Error::Kind::Invalid);
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (!limits.follow_links) flags |= O_NOFOLLOW;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP && !limits.follow_links)
      return fail(fmt::format("reading {}: a symbolic link (refused)", path.string()),
                  Error::Kind::Invalid);
    return fail(fmt::format("opening {}: {}", path.string(), errno_text(e)),
                e == ENOENT ? Error::Kind::NotFound : Error::Kind::Generic);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(fmt::format("reading {}: not a regular file", path.string()), Error::Kind::Invalid);
  }
  if (static_cast<uint64_t>(st.st_size) > limits.max_bytes) {
    ::close(fd);
    return fail(fmt::format("reading {}: larger than {} bytes", path.string(), limits.max_bytes),
                Error::Kind::Invalid);
  }
  std::string data;
  data.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      if (data.size() + static_cast<size_t>(n) > limits.max_bytes) {
        ::close(fd);
        return fail(
            fmt::format("reading {}: larger than {} bytes", path.string(), limits.max_bytes),
            Error::Kind::Invalid);
      }
      data.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd);
    return fail(fmt::format("reading {}: {}", path.string(), errno_text(e)));
  }
  ::close(fd);
  return data;
}

Result<int> open_private_file(const fs::path& path, int flags, unsigned mode) {
  if (path.native().find('\0') != std::string::npos)
    return fail(fmt::format("opening {}: the path contains a NUL byte", path.string()),
                Error::Kind::Invalid);
  int fd = ::open(path.c_str(), flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
                  static_cast<mode_t>(mode));
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP)
      return fail(fmt::format("opening {}: a symbolic link (refused)", path.string()),
                  Error::Kind::Invalid);
    return fail(
        fmt::format("opening {}: {}", path.string(), errno_text(e)),
        e == EROFS || e == EACCES || e == EPERM ? Error::Kind::ReadOnly : Error::Kind::Generic);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(fmt::format("opening {}: not a regular file", path.string()), Error::Kind::Invalid);
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return fail(
        fmt::format("opening {}: belongs to another user (uid {})", path.string(), st.st_uid),
        Error::Kind::Invalid);
  }
  if ((st.st_mode & 077) != 0) (void)::fchmod(fd, static_cast<mode_t>(mode));
  // Back to blocking for the caller's writes.
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) (void)::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return EIO;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd, POLLOUT, 0};
      (void)::poll(&p, 1, -1);
      continue;
    }
    return errno;
  }
  return 0;
}

int read_all_at(int fd, char* out, size_t length, uint64_t offset) {
  size_t got = 0;
  while (got < length) {
    ssize_t n = ::pread(fd, out + got, length - got, static_cast<off_t>(offset + got));
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return ENODATA;
    if (errno == EINTR) continue;
    return errno;
  }
  return 0;
}

Result<void> append_private_line(const fs::path& path, const std::string& line) {
  auto fd = open_private_file(path, O_WRONLY | O_APPEND);
  if (!fd) return std::unexpected(fd.error());
  const int e = write_all(*fd, line + "\n");
  ::close(*fd);
  if (e != 0) return fail(fmt::format("writing {}: {}", path.string(), errno_text(e)));
  return {};
}

}  // namespace ctxkit::util
