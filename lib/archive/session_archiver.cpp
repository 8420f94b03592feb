#include "archive/session_archiver.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "claude/session_locator.hpp"
#include "core/archive_log.hpp"
#include "util/atomic_file.hpp"
#include "util/file_lock.hpp"
#include "util/fs.hpp"
#include "util/line_reader.hpp"

namespace ctxkit::archive {
namespace fs = std::filesystem;

namespace {
// Copies the complete lines of `from` to `to` (atomically, 0600).
Result<void> copy_complete_lines(const fs::path& from, const fs::path& to) {
  auto reader = util::LineReader::open(from, {}, 4 << 20);
  if (!reader) return std::unexpected(reader.error());
  if (auto made = util::make_private_dirs(to.parent_path()); !made) return made;
  auto out = util::AtomicFile::create(to, 0600);
  if (!out) return std::unexpected(out.error());
  while (true) {
    auto line = reader->next();
    if (!line) return std::unexpected(line.error());
    if (!*line) break;
    out->write((*line)->text);
    out->write("\n");
  }
  return out->commit(util::Durability::Fsync);
}
// When the archived copy `to` (of `have` bytes) is a prefix of `from` (its last 4 KB are the same
// bytes there), appends what `from` holds after it, up to `from`'s last complete line, and
// returns true; returns false, writing nothing, when it is not (the transcript was replaced).
// The cost is that of the new lines, not of the session: a live session is archived after every
// turn this way.
Result<bool> append_new_lines(const fs::path& from, const fs::path& to, uint64_t have) {
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  };
  Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (in.fd < 0) return fail(fmt::format("reading {}: {}", from.string(), std::strerror(errno)));
  Fd out{::open(to.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW)};
  if (out.fd < 0) return false;
  struct stat st {};
  if (::fstat(out.fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) != have)
    return false;
  const size_t tail = static_cast<size_t>(std::min<uint64_t>(have, 4096));
  std::string a(tail, '\0'), b(tail, '\0');
  const auto at = static_cast<off_t>(have - tail);
  if (::pread(in.fd, a.data(), tail, at) != static_cast<ssize_t>(tail) ||
      ::pread(out.fd, b.data(), tail, at) != static_cast<ssize_t>(tail) || a != b)
    return false;
  std::string buf(1 << 20, '\0'), held;
  auto pos = static_cast<off_t>(have);
  bool wrote = false;
  while (true) {
    ssize_t n = ::pread(in.fd, buf.data(), buf.size(), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(fmt::format("reading {}: {}", from.string(), std::strerror(errno)));
    if (n == 0) break;
    pos += n;
    held.append(buf.data(), static_cast<size_t>(n));
    const size_t nl = held.rfind('\n');
    if (nl == std::string::npos) continue;
    if (const int e = util::write_all(out.fd, std::string_view(held).substr(0, nl + 1)); e != 0)
      return fail(fmt::format("writing {}: {}", to.string(), std::strerror(e)));
    held.erase(0, nl + 1);
    wrote = true;
  }
  if (wrote && ::fdatasync(out.fd) != 0)
    return fail(fmt::format("writing {}: {}", to.string(), std::strerror(errno)));
  return true;
}
}  // namespace

Result<util::FileLock> lock_session_archive(const ArchiveLocation& where) {
  const fs::path dir = where.transcript.parent_path();
  auto lock = util::FileLock::acquire(
      dir / fmt::format(".{}.lock", where.transcript.stem().string()), true);
  if (!lock) return std::unexpected(lock.error());
  if (!*lock) return fail(fmt::format("locking the archive of {}", where.transcript.string()));
  return std::move(**lock);
}

Result<ArchiveOutcome> archive_session(const fs::path& transcript, const core::Locations& loc,
                                       const core::ArchiveConfig& config, bool queue_once) {
  ArchiveOutcome out;
  const std::string project = transcript.parent_path().filename().string();
  const std::string session = transcript.stem().string();
  out.where = archive_location(loc, project, session);
  struct stat st {};
  if (::stat(transcript.c_str(), &st) != 0)
    return fail(fmt::format("reading {}: {}", transcript.string(), std::strerror(errno)),
                Error::Kind::NotFound);
  {
    // One archiver of a session at a time (the Stop and PreCompact hooks of one session may
    // overlap), and with `queue_once` at most one waiting behind it.
    const fs::path dir = out.where.transcript.parent_path();
    CTXKIT_TRY(util::make_private_dirs(dir));
    std::optional<util::FileLock> queued;
    if (queue_once) {
      auto q = util::FileLock::acquire(dir / ("." + session + ".queue"), false);
      if (!q) return std::unexpected(q.error());
      if (!*q) {
        out.queued_behind = true;
        return out;
      }
      queued = std::move(*q);
    }
    auto lock = lock_session_archive(out.where);
    if (!lock) return std::unexpected(lock.error());
    queued.reset();  // the next hook may queue now: this one reads the transcript's size only below
    std::error_code ec;
    const auto have = fs::file_size(out.where.transcript, ec);
    if (!ec && have < static_cast<uint64_t>(st.st_size)) {
      auto appended = append_new_lines(transcript, out.where.transcript, have);
      if (!appended) return std::unexpected(appended.error());
      out.copied = *appended;
    }
    if (!out.copied && archive_needs_update(out.where, static_cast<uint64_t>(st.st_size))) {
      CTXKIT_TRY(copy_complete_lines(transcript, out.where.transcript));
      out.copied = true;
    }
    CTXKIT_TRY(copy_side_folder(transcript.parent_path() / session, out.where.side_dir));
  }
  out.project_excluded = project_is_excluded(project, config);
  if (out.project_excluded) return out;
  auto lock = IndexLock::acquire(loc, false);
  if (!lock) return std::unexpected(lock.error());
  if (!*lock) return out;  // another indexer is at work
  auto index = open_index(loc, nullptr);
  if (!index) return std::unexpected(index.error());
  auto run = index_pending(*index, loc, config);
  if (!run) return std::unexpected(run.error());
  out.index = *run;
  out.indexed = true;
  return out;
}

std::string archive_and_index(const fs::path& transcript, const core::Locations& loc,
                              const core::ArchiveConfig& config, bool live) {
  auto r = archive_session(transcript, loc, config, /*queue_once=*/live);
  // Another indexer was at work: (at the end, after waiting for it) finish what it left.
  if (r && !r->indexed && !r->project_excluded && !r->queued_behind)
    run_indexer(loc, config, /*queue_once=*/live);
  if (r) return {};
  core::append_archive_log(loc,
                           fmt::format("archiving {}: {}", transcript.string(), r.error().message));
  return r.error().message;
}

}  // namespace ctxkit::archive
