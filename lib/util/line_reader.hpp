#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/mapped_chunks.hpp"
#include "util/unique_fd.hpp"

namespace ctxkit::util {

// Reads a file's lines from the start, up to a byte limit fixed when it is opened (a snapshot of
// a file that may still be growing: only complete lines, ending in '\n' before the limit, are
// returned). Every returned line has at least kPadding readable bytes after it, as SIMD JSON
// parsers require. Memory: one chunk plus the longest line.
class LineReader {
 public:
  static constexpr size_t kPadding = 64;

  struct Line {
    std::string_view text;  // without the '\n'
    size_t capacity = 0;    // readable bytes from text.data() (>= text.size() + kPadding)
    uint64_t number = 0;    // 1-based
    uint64_t offset = 0;    // of the first byte in the file
  };

  // Opens `path`; `limit` bytes are read at most (nullopt: the size now). Reading starts at
  // `start` (a line boundary), whose line is numbered `first_line`.
  [[nodiscard]] static Result<LineReader> open(const std::filesystem::path& path,
                                               std::optional<uint64_t> limit = {},
                                               size_t chunk = 1 << 20, uint64_t start = 0,
                                               uint64_t first_line = 1);
  // The same over `path` mapped window by window, the next windows mapped ahead on a second
  // thread (util/mapped_chunks.hpp; `chunk` bytes each): for one pass over a large file, which is
  // then not copied, and whose loading overlaps the caller's work. Lines inside a window are
  // handed out where they are; a line across windows (or too near the end for its padding) is
  // copied. A file that shrinks while it is read is an error. `start` and `first_line` as above.
  [[nodiscard]] static Result<LineReader> open_read_ahead(const std::filesystem::path& path,
                                                          std::optional<uint64_t> limit = {},
                                                          size_t chunk = 1 << 20,
                                                          uint64_t start = 0,
                                                          uint64_t first_line = 1);
  LineReader(LineReader&& other) noexcept = default;
  LineReader& operator=(LineReader&&) = delete;
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader() = default;

  // The next complete line, nullopt at the end. A final fragment without '\n' is not returned
  // (see trailing_fragment()).
  [[nodiscard]] Result<std::optional<Line>> next();
  // The snapshot's size.
  uint64_t limit() const { return limit_; }
  // Bytes after the last complete line (a line still being written).
  uint64_t trailing_fragment() const { return fragment_; }
  // End offset of the last complete line returned.
  uint64_t consumed() const { return consumed_; }

 private:
  LineReader(int fd, uint64_t limit, size_t chunk, std::string path);
  [[nodiscard]] Result<std::optional<Line>> next_ahead();
  UniqueFd fd_;
  uint64_t limit_ = 0;
  uint64_t file_pos_ = 0;  // next byte to read from the file
  // The buffer (size_ = capacity + kPadding bytes), allocated when first read into and never
  // zero-filled: a small file costs a small buffer, a large one `chunk` bytes whatever its size.
  std::unique_ptr<char[]> buf_;
  size_t size_ = 0;
  size_t begin_ = 0, end_ = 0;  // unconsumed bytes buf_[begin_, end_)
  size_t chunk_ = 0;
  uint64_t number_ = 0;
  uint64_t consumed_ = 0;
  uint64_t fragment_ = 0;
  std::string path_;
  // Read ahead: the chunks, the current one and where in it, and a line across chunks.
  std::unique_ptr<MappedChunks> ahead_;
  std::string_view chunk_view_;
  size_t chunk_readable_ = 0;  // bytes readable from chunk_view_.data()
  size_t chunk_pos_ = 0;
  std::string across_;
  bool across_active_ = false;
};

}  // namespace ctxkit::util
