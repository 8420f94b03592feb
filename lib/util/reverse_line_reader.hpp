#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::util {

// Reads a file's lines from the end towards the start without reading what it does not need.
// Memory grows only with the longest line returned; reading stops once `max_bytes` from the
// end have been examined, so the cost is bounded whatever the file's size.
class ReverseLineReader {
 public:
  // A line and where it starts in the file. `text` stays valid until the next call to prev().
  struct Line {
    std::string_view text;
    uint64_t offset = 0;
  };

  // Opens `path` and notes its current size; bytes appended later are not seen.
  [[nodiscard]] static Result<ReverseLineReader> open(const std::filesystem::path& path,
                                                      uint64_t max_bytes);
  ReverseLineReader(ReverseLineReader&& other) noexcept;
  ReverseLineReader& operator=(ReverseLineReader&&) = delete;
  ReverseLineReader(const ReverseLineReader&) = delete;
  ReverseLineReader& operator=(const ReverseLineReader&) = delete;
  ~ReverseLineReader();

  // Returns the previous non-empty line (the last one first, a final line without a newline
  // included), or nullopt at the start of the file or when the byte budget is spent; read
  // errors are returned as errors.
  [[nodiscard]] Result<std::optional<Line>> prev();
  // The size of the file when it was opened.
  uint64_t size() const { return size_; }
  // True when prev() stopped because of the byte budget rather than the start of the file.
  bool budget_exhausted() const { return budget_exhausted_; }

 private:
  ReverseLineReader(int fd, uint64_t size, uint64_t max_bytes, std::string path);
  [[nodiscard]] Result<bool> extend();
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t max_bytes_ = 0;
  std::string path_;
  std::string buf_;  // file bytes [buf_start_, buf_start_ + buf_.size())
  uint64_t buf_start_ = 0;
  uint64_t cursor_ = 0;  // end (exclusive) of the next line to return
  bool done_ = false;
  bool budget_exhausted_ = false;
};

}  // namespace ctxkit::util
