#include "archive/archive.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "util/atomic_file.hpp"
#include "util/fs.hpp"

namespace ctxkit::archive {
namespace fs = std::filesystem;

ArchiveLocation archive_location(const core::Locations& loc, const std::string& project,
                                 const std::string& id) {
  fs::path dir = loc.archive_dir() / project;
  return {dir / (id + ".jsonl"), dir / id};
}

bool archive_needs_update(const ArchiveLocation& where, uint64_t source_bytes) {
  std::error_code ec;
  auto size = fs::file_size(where.transcript, ec);
  return ec || size < source_bytes;
}

namespace {
Result<void> copy_file_atomic(const fs::path& from, const fs::path& to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return fail(fmt::format("reading {}: {}", from.string(), std::strerror(errno)));
  auto out = util::AtomicFile::create(to, 0600);
  if (!out) {
    ::close(in);
    return std::unexpected(out.error());
  }
  std::string buf(1 << 20, '\0');
  while (true) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(in);
      return fail(fmt::format("reading {}: {}", from.string(), std::strerror(e)));
    }
    if (n == 0) break;
    out->write(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  ::close(in);
  return out->commit(util::Durability::Fsync);
}
}  // namespace

Result<void> copy_side_folder(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return {};
  for (auto it = fs::recursive_directory_iterator(from, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    fs::path rel = fs::relative(it->path(), from, ec);
    fs::path dest = to / rel;
    if (it->is_directory(ec)) {
      if (auto made = util::make_private_dirs(dest); !made) return made;
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    std::error_code e2;
    auto have = fs::file_size(dest, e2);
    if (!e2 && have >= it->file_size(ec)) continue;
    if (auto made = util::make_private_dirs(dest.parent_path()); !made) return made;
    if (auto r = copy_file_atomic(it->path(), dest); !r) return r;
  }
  if (ec) return fail(fmt::format("copying {}: {}", from.string(), ec.message()));
  return {};
}

size_t remove_stale_temporaries(const fs::path& dir, int64_t min_age_s) {
  size_t removed = 0;
  std::error_code ec;
  const time_t now = ::time(nullptr);
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    auto tmp = name.rfind(".jsonl.tmp.");
    if (!name.starts_with('.') || tmp == std::string::npos || name.size() != tmp + 11 + 6) continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    if (now - st.st_mtime < min_age_s) continue;
    if (::unlink(e.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace ctxkit::archive
