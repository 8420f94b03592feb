#include "archive/session_archiver.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fmt/core.h>

#include "claude/session_locator.hpp"
#include "util/atomic_file.hpp"
#include "util/line_reader.hpp"

namespace ctxkit {
namespace fs = std::filesystem;

fs::path index_path(const fs::path& state_dir) { return state_dir / "archive" / "index.db"; }

namespace {
bool project_is_excluded(const std::string& project, const ArchiveConfig& config) {
  for (const auto& p : config.exclude_projects) {
    if (p == project || project_folder_name(p) == project) return true;
  }
  return false;
}

// Copies the complete lines of `from` to `to` (atomically, 0600).
Result<void> copy_complete_lines(const fs::path& from, const fs::path& to) {
  auto reader = util::LineReader::open(from, {}, 4 << 20);
  if (!reader) return std::unexpected(reader.error());
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  ::chmod(to.parent_path().c_str(), 0700);
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

Result<IndexReport> index_archived(const ArchiveLocation& where, const std::string& project, const std::string& session_id,
                                   const fs::path& state_dir, const ArchiveConfig& config, bool* excluded_project) {
  if (project_is_excluded(project, config)) {
    if (excluded_project) *excluded_project = true;
    return IndexReport{};
  }
  auto index = SearchIndex::open(index_path(state_dir));
  if (!index) return std::unexpected(index.error());
  return index->index_file(where.transcript, session_id, project, config.exclude_marker);
}

Result<ArchiveOutcome> archive_session(const fs::path& transcript, const fs::path& state_dir, const ArchiveConfig& config) {
  ArchiveOutcome out;
  const std::string project = transcript.parent_path().filename().string();
  const std::string session = transcript.stem().string();
  out.where = archive_location(state_dir, project, session);
  struct stat st {};
  if (::stat(transcript.c_str(), &st) != 0)
    return fail(fmt::format("reading {}: {}", transcript.string(), std::strerror(errno)), Error::Kind::NotFound);
  if (archive_needs_update(out.where, static_cast<uint64_t>(st.st_size))) {
    if (auto r = copy_complete_lines(transcript, out.where.transcript); !r) return std::unexpected(r.error());
    out.copied = true;
  }
  if (auto r = copy_side_folder(transcript.parent_path() / session, out.where.side_dir); !r) return std::unexpected(r.error());
  auto report = index_archived(out.where, project, session, state_dir, config, &out.project_excluded);
  if (!report) return std::unexpected(report.error());
  out.index = *report;
  out.indexed = !out.project_excluded;
  return out;
}

}  // namespace ctxkit
