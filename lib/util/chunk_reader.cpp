#include "util/chunk_reader.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ctxkit::util {

ChunkReader::ChunkReader(int fd, size_t chunk) : fd_(fd), chunk_(std::max<size_t>(chunk, 1)) {}

Result<std::string_view> ChunkReader::next() {
  if (ended_) return std::string_view();
  if (!buf_) buf_ = std::make_unique_for_overwrite<char[]>(chunk_ + kPadding);
  while (true) {
    // What one read gives is handed out at once: a pipe whose writer pauses (or holds it open
    // after ill-formed input) must not keep bytes that arrived from the scanner.
    const ssize_t n = ::read(fd_, buf_.get(), chunk_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ended_ = true;
      return fail(fmt::format("reading stdin: {}", std::strerror(errno)));
    }
    if (n == 0) {
      ended_ = true;
      return std::string_view();
    }
    std::memset(buf_.get() + n, 0, kPadding);
    return std::string_view(buf_.get(), static_cast<size_t>(n));
  }
}

}  // namespace ctxkit::util
