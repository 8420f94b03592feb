#include "archive/session_archiver.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fmt/core.h>

#include "claude/session_locator.hpp"
#include "util/fs.hpp"
#include "util/atomic_file.hpp"
#include "util/line_reader.hpp"

namespace ctxkit {
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
}  // namespace

Result<ArchiveOutcome> archive_session(const fs::path& transcript, const Locations& loc, const ArchiveConfig& config) {
  ArchiveOutcome out;
  const std::string project = transcript.parent_path().filename().string();
  const std::string session = transcript.stem().string();
  out.where = archive_location(loc, project, session);
  struct stat st {};
  if (::stat(transcript.c_str(), &st) != 0)
    return fail(fmt::format("reading {}: {}", transcript.string(), std::strerror(errno)), Error::Kind::NotFound);
  if (archive_needs_update(out.where, static_cast<uint64_t>(st.st_size))) {
    if (auto r = copy_complete_lines(transcript, out.where.transcript); !r) return std::unexpected(r.error());
    out.copied = true;
  }
  if (auto r = copy_side_folder(transcript.parent_path() / session, out.where.side_dir); !r) return std::unexpected(r.error());
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

}  // namespace ctxkit
