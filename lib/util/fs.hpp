#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace ctxkit::util {

// Makes `dir` and its missing parents with mode 0700, and checks the folders ctxkit owns: `base`
// (an ancestor of `dir`, or `dir` itself when empty) and every folder below it down to `dir`.
// Each of them must be a directory owned by this user; one that is group- or world-accessible is
// tightened to 0700; one owned by another user, or a shared one with the sticky bit (/tmp), is
// refused. A symbolic link in their place is refused (never followed), `base` included. Folders
// above `base` are created 0700 when missing and otherwise left as they are, links among them
// followed (a home reached through a link: /home -> /data/home).
[[nodiscard]] Result<void> make_private_dirs(const std::filesystem::path& dir,
                                             const std::filesystem::path& base = {});

// `path`, in ctxkit's own folder `base` (`base` itself or below it), with the folders above
// `base` resolved (their links followed) and `base` and what lies below it kept as they are: the
// path to give an open that follows no link anywhere in a path (SQLite's SQLITE_OPEN_NOFOLLOW),
// so that it refuses a link where ctxkit's own folders and files are and nowhere above them, the
// rule make_private_dirs and open_private_file follow. `path` as it is when the folder above
// `base` cannot be resolved (the open then says why).
std::filesystem::path resolve_above(const std::filesystem::path& path,
                                    const std::filesystem::path& base);

// `mode` less this process's umask: the mode open(O_CREAT) would give a new file.
unsigned umask_mode(unsigned mode);

// Whether `path` is an existing file its owner may not write (mode without u+w): a file the user
// made read-only, which ctxkit does not replace (root could, through rename).
bool read_only_file(const std::filesystem::path& path);

// Options of read_file.
struct ReadLimits {
  uint64_t max_bytes = 64ull << 20;  // a larger file is an error (kind Invalid)
  bool follow_links = true;          // false: a symbolic link at `path` is refused
};

// Reads a whole regular file. Never blocks on a FIFO or a device (the file is opened non-blocking
// and checked before reading); a missing file is an error of kind NotFound ("opening P: …"), a
// directory or other non-regular file "reading P: not a regular file", a file over the limit
// "reading P: larger than N bytes".
[[nodiscard]] Result<std::string> read_file(const std::filesystem::path& path,
                                            const ReadLimits& limits = {});

// Opens `path` for appending/writing with O_NOFOLLOW (a link at `path` is refused), creating it
// with `mode` when missing; refuses anything but a regular file owned by this user. Returns the
// descriptor (the caller closes it).
[[nodiscard]] Result<int> open_private_file(const std::filesystem::path& path, int flags,
                                            unsigned mode = 0600);

// Writes all of `data` to `fd`, again after EINTR and, on a non-blocking descriptor, after
// waiting for it to take more (EAGAIN). Returns 0, or the errno of the write that failed (EIO
// when a write takes nothing).
int write_all(int fd, std::string_view data);

// Reads `length` bytes at `offset` of `fd` into `out`, again after EINTR and short reads. Returns
// 0, the errno of the read that failed, or ENODATA when the file ends first.
int read_all_at(int fd, char* out, size_t length, uint64_t offset);

// Appends `line` (a newline is added) to `path`, opened with open_private_file.
[[nodiscard]] Result<void> append_private_line(const std::filesystem::path& path,
                                               const std::string& line);

}  // namespace ctxkit::util
