#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::util {

// Reads a file descriptor to its end in chunks of `chunk` bytes, each handed out without a copy.
// The first 4 MB (`read_alone`) are read by the caller's thread, into one buffer; when the input
// goes on past them (a payload of megabytes), a second thread reads ahead into two more chunks
// while the caller works on the current one, so that reading and the caller's work overlap. Memory:
// three chunks at most.
//
// If the reader is destroyed before the end of input, the reading thread is left to end on its
// own (it stops after its current read); the process may exit while it waits for input.
class ChunkReader {
 public:
  static constexpr size_t kDefaultChunk = 64 << 10;
  static constexpr uint64_t kDefaultReadAlone = 4 << 20;
  // Every chunk is followed by this many readable bytes (zero after the last chunk's data), as
  // SIMD JSON parsers require.
  static constexpr size_t kPadding = 64;

  // Bytes [offset, end) of a file, read with pread (the file's own offset is left alone).
  struct Range {
    uint64_t offset = 0;
    uint64_t end = 0;
    std::string name;  // the file, for errors ("reading <name>: ...")
  };

  // `read_alone`: the bytes read by the caller's thread before a second one reads ahead.
  // `range`: read only these bytes of `fd` (by position); without it, `fd` to its end.
  explicit ChunkReader(int fd, size_t chunk = kDefaultChunk,
                       uint64_t read_alone = kDefaultReadAlone, std::optional<Range> range = {});
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next chunk (empty at the end of input), valid until the next call. A read error is
  // returned once, then the input counts as ended.
  Result<std::string_view> next();

  // Whether a second thread was started (tests).
  bool read_ahead() const;

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace ctxkit::util
