#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::util {

// Hands out bytes [start, limit) of a regular file window by window, each a read-only mapping of
// the file (no copy into a buffer; the file is never written). A second thread maps the next
// windows and makes their pages present while the caller works on the current one; a window the
// system will not map is read into memory instead.
//
// A file that shrinks under a mapping would kill the process (SIGBUS): a handler, installed with
// the first reader, puts zero pages where the file was instead, and the reader then reports that
// the file shrank (an error, not a shorter input), as it does when the file is found smaller than
// `limit` at the end. Memory: three windows at most.
class MappedChunks {
 public:
  static constexpr size_t kDefaultWindow = 4 << 20;
  // A window read into memory (not mapped) is followed by this many zero bytes.
  static constexpr size_t kPadding = 64;

  struct Chunk {
    std::string_view bytes;  // empty at the end of input
    size_t readable = 0;     // bytes readable from bytes.data() (>= bytes.size())
  };

  // `fd` is duplicated (the caller may close it); `name` names the file in errors. The bytes
  // handed out start at `start` (any offset).
  MappedChunks(int fd, uint64_t limit, std::string name, size_t window = kDefaultWindow,
               uint64_t start = 0);
  ~MappedChunks();
  MappedChunks(const MappedChunks&) = delete;
  MappedChunks& operator=(const MappedChunks&) = delete;

  // The next window (valid until the next call), or an error once.
  [[nodiscard]] Result<Chunk> next();

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace ctxkit::util
