#pragma once

#include <cstdint>
#include <filesystem>

#include "util/error.hpp"

namespace ctxkit::util {

// An open file descriptor (the caller closes it) and the file's size when it was opened.
struct OpenedFile {
  int fd = -1;
  uint64_t size = 0;
};

// Opens `path` read-only. A missing file is an error of kind NotFound ("opening P: …"); anything
// that is not a regular file is an error "reading P: not a regular file"; a FIFO or a device is
// refused without blocking, and so is a path with a NUL byte (the system would see only its
// first part). With `follow_link` false, a symbolic link at `path` is refused too ("opening P:
// Too many levels of symbolic links").
[[nodiscard]] Result<OpenedFile> open_regular_file(const std::filesystem::path& path,
                                                   bool follow_link = true);

}  // namespace ctxkit::util
