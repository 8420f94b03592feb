#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::util {

// How much durability a replacement needs.
enum class Durability { Flush, Fsync };

// Replaces `path` with `data`: writes a temporary file in the same directory (named
// ".<name>.tmp.XXXXXX", so nothing that lists "*.json" or "*.jsonl" sees it), applies `mode`,
// optionally fsyncs the file and the directory, then renames it over `path`. On any failure the
// temporary file is removed and `path` is left as it was.
[[nodiscard]] Result<void> write_file_atomic(const std::filesystem::path& path,
                                             std::string_view data, unsigned mode,
                                             Durability durability = Durability::Fsync);

// A file being written under a temporary name in the destination's directory. Nothing becomes
// visible under the final name until commit() succeeds; the destructor only removes the
// temporary file, it never commits.
class AtomicFile {
 public:
  // Creates the temporary file for `path` with permissions `mode`.
  [[nodiscard]] static Result<AtomicFile> create(const std::filesystem::path& path, unsigned mode);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  // Appends bytes; errors are remembered and reported by commit().
  void write(std::string_view data);
  // Bytes written so far (what the file will hold once flushed).
  uint64_t size() const { return written_ + buffer_.size(); }
  // Overwrites bytes already written at `offset` (flushing first); for a header whose content
  // is known only at the end. Errors are remembered and reported by commit().
  void overwrite(uint64_t offset, std::string_view data);
  // Flushes, fsyncs (file and directory when asked) and renames into place.
  [[nodiscard]] Result<void> commit(Durability durability = Durability::Fsync);
  // The temporary file's path (for diagnostics and tests).
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  AtomicFile(std::filesystem::path target, std::filesystem::path temp, int fd);
  void flush_buffer();
  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  std::string buffer_;
  uint64_t written_ = 0;
  int write_errno_ = 0;
  bool committed_ = false;
};

// fsyncs a directory so that a rename inside it is durable.
[[nodiscard]] Result<void> fsync_directory(const std::filesystem::path& dir);

}  // namespace ctxkit::util
