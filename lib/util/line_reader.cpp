#include "util/line_reader.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/regular_file.hpp"

namespace ctxkit::util {

LineReader::LineReader(int fd, uint64_t limit, size_t chunk, std::string path)
    : fd_(fd), limit_(limit), chunk_(std::max<size_t>(chunk, 1)), path_(std::move(path)) {}

Result<LineReader> LineReader::open(const std::filesystem::path& path,
                                    std::optional<uint64_t> limit, size_t chunk, uint64_t start,
                                    uint64_t first_line) {
  auto file = open_regular_file(path);
  if (!file) return std::unexpected(file.error());
  ::posix_fadvise(file->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  LineReader reader(file->fd, limit ? std::min(*limit, file->size) : file->size, chunk,
                    path.string());
  reader.file_pos_ = std::min(start, reader.limit_);
  reader.consumed_ = reader.file_pos_;
  reader.number_ = first_line > 0 ? first_line - 1 : 0;
  return reader;
}

Result<LineReader> LineReader::open_read_ahead(const std::filesystem::path& path,
                                               std::optional<uint64_t> limit, size_t chunk,
                                               uint64_t start, uint64_t first_line) {
  auto reader = open(path, limit, chunk, start, first_line);
  if (!reader) return reader;
  reader->ahead_ = std::make_unique<MappedChunks>(reader->fd_.get(), reader->limit_, reader->path_,
                                                  reader->chunk_, reader->file_pos_);
  return reader;
}

Result<std::optional<LineReader::Line>> LineReader::next_ahead() {
  while (true) {
    if (chunk_pos_ < chunk_view_.size()) {
      const char* start = chunk_view_.data() + chunk_pos_;
      const size_t rest = chunk_view_.size() - chunk_pos_;
      const void* nl = std::memchr(start, '\n', rest);
      if (nl != nullptr) {
        const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
        Line line;
        const size_t readable = chunk_readable_ - chunk_pos_;
        if (!across_active_ && readable >= len + kPadding) {
          // Inside the window: handed out where it is (what follows it is its padding).
          line.text = std::string_view(start, len);
          line.capacity = readable;
        } else {
          if (!across_active_) across_.clear();
          across_.append(start, len);
          const size_t n = across_.size();
          across_.append(kPadding, '\0');  // readable, zero bytes after the line
          across_.resize(n);
          line.text = across_;
          line.capacity = across_.capacity();
          across_active_ = false;
        }
        line.number = ++number_;
        line.offset = consumed_;
        consumed_ += line.text.size() + 1;
        chunk_pos_ += len + 1;
        return line;
      }
      // The line goes on in the next chunk: keep its start.
      if (!across_active_) across_.clear();
      across_.append(start, rest);
      across_active_ = true;
      chunk_pos_ = chunk_view_.size();
    }
    auto chunk = ahead_->next();
    if (!chunk) return std::unexpected(chunk.error());
    if (chunk->bytes.empty()) {
      fragment_ = across_active_ ? across_.size() : 0;
      return std::nullopt;
    }
    chunk_view_ = chunk->bytes;
    chunk_readable_ = chunk->readable;
    chunk_pos_ = 0;
  }
}

Result<std::optional<LineReader::Line>> LineReader::next() {
  if (ahead_) return next_ahead();
  while (true) {
    if (begin_ < end_) {
      const char* start = buf_.get() + begin_;
      const void* nl = std::memchr(start, '\n', end_ - begin_);
      if (nl != nullptr) {
        size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
        Line line;
        line.text = std::string_view(start, len);
        line.capacity = size_ - begin_;
        line.number = ++number_;
        line.offset = consumed_;
        begin_ += len + 1;
        consumed_ += len + 1;
        return line;
      }
    }
    if (file_pos_ >= limit_) {
      fragment_ = end_ - begin_;
      return std::nullopt;
    }
    // Move the partial line to the front; grow when a line does not fit.
    size_t pending = end_ - begin_;
    if (begin_ > 0) {
      std::memmove(buf_.get(), buf_.get() + begin_, pending);
      begin_ = 0;
      end_ = pending;
    }
    size_t capacity = size_ > 0 ? size_ - kPadding : 0;
    if (end_ == capacity) {
      // First read: what is left of the file, up to a chunk; then double for a long line.
      const uint64_t left = limit_ - file_pos_;
      const size_t grown =
          capacity == 0 ? static_cast<size_t>(std::min<uint64_t>(chunk_, left)) : capacity * 2;
      auto bigger = std::make_unique_for_overwrite<char[]>(grown + kPadding);
      if (pending > 0) std::memcpy(bigger.get(), buf_.get(), pending);
      buf_ = std::move(bigger);
      size_ = grown + kPadding;
      capacity = grown;
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(capacity - end_, limit_ - file_pos_));
    ssize_t got = ::pread(fd_.get(), buf_.get() + end_, want, static_cast<off_t>(file_pos_));
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail(fmt::format("reading {}: {}", path_, std::strerror(errno)));
    }
    if (got == 0) {
      limit_ = file_pos_;  // the file shrank: stop at what exists
      continue;
    }
    file_pos_ += static_cast<uint64_t>(got);
    end_ += static_cast<size_t>(got);
    std::memset(buf_.get() + end_, 0, std::min(kPadding, size_ - end_));
  }
}

}  // namespace ctxkit::util
