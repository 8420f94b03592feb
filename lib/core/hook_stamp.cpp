#include "core/hook_stamp.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "util/fs.hpp"

namespace ctxkit::core {

namespace {
std::filesystem::path stamp_path(const Locations& loc, std::string_view program) {
  std::string name(program);
  name += ".last";
  return hooks_dir(loc) / name;
}
}  // namespace

std::filesystem::path hooks_dir(const Locations& loc) {
  return loc.state_dir / "hooks";
}

void record_hook_run(const Locations& loc, std::string_view program) {
  const auto path = stamp_path(loc, program);
  // The usual case, one system call: the file is there. A link in its place gets its own time
  // set (never its target's) and does not count as a run (hook_last_run_ms wants a regular file).
  if (::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
    return;
  auto fd = util::open_private_file(path, O_WRONLY);
  if (!fd && fd.error().kind == Error::Kind::Generic) {
    // Most likely the folder is missing (the first run): make it private, then try once more.
    std::error_code ec;
    if (std::filesystem::is_directory(path.parent_path(), ec)) return;
    if (!util::make_private_dirs(path.parent_path(), loc.state_dir)) return;
    fd = util::open_private_file(path, O_WRONLY);
  }
  if (!fd) return;
  (void)::futimens(*fd, nullptr);
  ::close(*fd);
}

std::optional<int64_t> hook_last_run_ms(const Locations& loc, std::string_view program) {
  struct stat st {};
  if (::lstat(stamp_path(loc, program).c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return std::nullopt;
  return int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

}  // namespace ctxkit::core
