#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/fs.hpp"

namespace ctxkit::util {
namespace fs = std::filesystem;

namespace {
constexpr size_t kBufferSize = 1 << 20;

std::string errno_text(int e) {
  return std::strerror(e);
}
}  // namespace

Result<void> fsync_directory(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(fmt::format("opening directory {}: {}", dir.string(), errno_text(errno)));
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  if (rc != 0) return fail(fmt::format("syncing directory {}: {}", dir.string(), errno_text(e)));
  return {};
}

AtomicFile::AtomicFile(fs::path target, fs::path temp, int fd)
    : target_(std::move(target)), temp_(std::move(temp)), fd_(fd) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : target_(std::move(other.target_)),
      temp_(std::move(other.temp_)),
      fd_(other.fd_),
      buffer_(std::move(other.buffer_)),
      written_(other.written_),
      write_errno_(other.write_errno_),
      committed_(other.committed_) {
  other.fd_ = -1;
  other.committed_ = true;
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

Result<AtomicFile> AtomicFile::create(const fs::path& path, unsigned mode) {
  fs::path dir = path.parent_path();
  std::string templ = (dir / fmt::format(".{}.tmp.XXXXXX", path.filename().string())).string();
  int fd = ::mkostemp(templ.data(), O_CLOEXEC);
  if (fd < 0) {
    return fail(fmt::format("creating a temporary file in {}: {}",
                            dir.empty() ? std::string(".") : dir.string(), errno_text(errno)),
                errno == EROFS || errno == EACCES ? Error::Kind::ReadOnly : Error::Kind::Generic);
  }
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(templ.c_str());
    return fail(fmt::format("setting the mode of {}: {}", templ, errno_text(e)));
  }
  return AtomicFile(path, fs::path(templ), fd);
}

void AtomicFile::flush_buffer() {
  if (buffer_.empty() || write_errno_ != 0) {
    buffer_.clear();
    return;
  }
  if ((write_errno_ = write_all(fd_, buffer_)) == 0) written_ += buffer_.size();
  buffer_.clear();
}

void AtomicFile::overwrite(uint64_t offset, std::string_view data) {
  flush_buffer();
  if (write_errno_ != 0) return;
  if (offset + data.size() > written_) {
    write_errno_ = EINVAL;
    return;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w =
        ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      write_errno_ = errno;
      return;
    }
    done += static_cast<size_t>(w);
  }
}

void AtomicFile::write(std::string_view data) {
  if (write_errno_ != 0) return;
  if (data.size() >= kBufferSize) {
    flush_buffer();
    if (write_errno_ == 0 && (write_errno_ = write_all(fd_, data)) == 0) written_ += data.size();
    return;
  }
  buffer_.append(data);
  if (buffer_.size() >= kBufferSize) flush_buffer();
}

Result<void> AtomicFile::commit(Durability durability) {
  if (committed_) return fail(fmt::format("{}: already committed", target_.string()));
  flush_buffer();
  if (write_errno_ != 0) {
    return fail(fmt::format("writing {}: {}", temp_.string(), errno_text(write_errno_)));
  }
  if (durability == Durability::Fsync && ::fsync(fd_) != 0) {
    return fail(fmt::format("syncing {}: {}", temp_.string(), errno_text(errno)));
  }
  if (::close(fd_) != 0) {
    fd_ = -1;
    return fail(fmt::format("closing {}: {}", temp_.string(), errno_text(errno)));
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    return fail(
        fmt::format("renaming {} to {}: {}", temp_.string(), target_.string(), errno_text(errno)));
  }
  committed_ = true;
  if (durability == Durability::Fsync) {
    auto r = fsync_directory(target_.parent_path());
    if (!r) return r;
  }
  return {};
}

Result<void> write_file_atomic(const fs::path& path, std::string_view data, unsigned mode,
                               Durability durability) {
  auto file = AtomicFile::create(path, mode);
  if (!file) return std::unexpected(file.error());
  file->write(data);
  return file->commit(durability);
}

}  // namespace ctxkit::util
