#include "util/reverse_line_reader.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/fs.hpp"
#include "util/regular_file.hpp"

namespace ctxkit::util {

namespace {
// The first read, and the least any later one adds. The meter usually finds its line in the
// last few kilobytes, and each fresh page of the buffer costs a hook a page fault.
constexpr uint64_t kMinChunk = 16 * 1024;
}  // namespace

ReverseLineReader::ReverseLineReader(int fd, uint64_t size, uint64_t max_bytes, std::string path)
    : fd_(fd),
      size_(size),
      max_bytes_(max_bytes),
      path_(std::move(path)),
      buf_start_(size),
      cursor_(size) {}

ReverseLineReader::ReverseLineReader(ReverseLineReader&& o) noexcept
    : fd_(o.fd_),
      size_(o.size_),
      max_bytes_(o.max_bytes_),
      path_(std::move(o.path_)),
      buf_(std::move(o.buf_)),
      buf_start_(o.buf_start_),
      cursor_(o.cursor_),
      done_(o.done_),
      budget_exhausted_(o.budget_exhausted_) {
  o.fd_ = -1;
}

ReverseLineReader::~ReverseLineReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<ReverseLineReader> ReverseLineReader::open(const std::filesystem::path& path,
                                                  uint64_t max_bytes) {
  auto file = open_regular_file(path);
  if (!file) return std::unexpected(file.error());
  return ReverseLineReader(file->fd, file->size, max_bytes, path.string());
}

// Reads an earlier chunk in front of the buffered bytes. Returns false when nothing more may be
// read (start of file or budget).
Result<bool> ReverseLineReader::extend() {
  if (buf_start_ == 0) return false;
  uint64_t examined = size_ - buf_start_;
  if (examined >= max_bytes_) {
    budget_exhausted_ = true;
    return false;
  }
  uint64_t keep = cursor_ - buf_start_;  // bytes of the line being assembled
  uint64_t chunk = std::max<uint64_t>(kMinChunk, keep);
  chunk = std::min({chunk, buf_start_, max_bytes_ - examined});
  uint64_t new_start = buf_start_ - chunk;
  // Not zero-filled first: every byte is read or copied in below.
  std::string next;
  next.resize_and_overwrite(static_cast<size_t>(chunk + keep), [](char*, size_t n) { return n; });
  if (int e = read_all_at(fd_, next.data(), static_cast<size_t>(chunk), new_start)) {
    if (e == ENODATA) return fail(fmt::format("reading {}: file shrank while reading", path_));
    return fail(fmt::format("reading {}: {}", path_, std::strerror(e)));
  }
  std::memcpy(next.data() + chunk, buf_.data(), static_cast<size_t>(keep));
  buf_.swap(next);
  buf_start_ = new_start;
  return true;
}

Result<std::optional<ReverseLineReader::Line>> ReverseLineReader::prev() {
  while (!done_) {
    size_t end = static_cast<size_t>(cursor_ - buf_start_);
    const void* nl = end ? ::memrchr(buf_.data(), '\n', end) : nullptr;
    if (nl != nullptr) {
      size_t pos = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data());
      uint64_t line_start = buf_start_ + pos + 1;
      uint64_t line_end = cursor_;
      cursor_ = buf_start_ + pos;
      if (line_end > line_start) {
        return Line{
            std::string_view(buf_.data() + pos + 1, static_cast<size_t>(line_end - line_start)),
            line_start};
      }
      continue;
    }
    auto more = extend();
    if (!more) return std::unexpected(more.error());
    if (*more) continue;
    done_ = true;
    if (buf_start_ == 0 && cursor_ > 0) {
      size_t len = static_cast<size_t>(cursor_);
      cursor_ = 0;
      return Line{std::string_view(buf_.data(), len), 0};
    }
  }
  return std::nullopt;
}

}  // namespace ctxkit::util
