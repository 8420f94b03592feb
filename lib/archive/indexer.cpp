#include "archive/indexer.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>
#include <fmt/core.h>

#include "claude/message_text.hpp"
#include "claude/session_locator.hpp"
#include "store/state_store.hpp"
#include "util/line_reader.hpp"
#include "util/time.hpp"

namespace ctxkit {
namespace fs = std::filesystem;

fs::path index_path(const fs::path& state_dir) { return state_dir / "archive" / "index.db"; }

bool project_is_excluded(const std::string& project, const ArchiveConfig& config) {
  for (const auto& p : config.exclude_projects) {
    if (p == project || project_folder_name(p) == project) return true;
  }
  return false;
}

namespace {

// The line starting at `offset` (without its '\n'), read with pread; nullopt when unreadable.
std::optional<std::string> line_at(int fd, int64_t offset) {
  constexpr size_t kChunk = 64 << 10;
  constexpr size_t kMax = 256u << 20;
  std::string out;
  auto pos = static_cast<off_t>(offset);
  while (out.size() < kMax) {
    size_t have = out.size();
    out.resize(have + kChunk);
    ssize_t n = ::pread(fd, out.data() + have, kChunk, pos);
    if (n < 0 && errno == EINTR) {
      out.resize(have);
      continue;
    }
    if (n <= 0) {
      out.resize(have);
      return have > 0 ? std::optional<std::string>(std::move(out)) : std::nullopt;
    }
    out.resize(have + static_cast<size_t>(n));
    if (auto nl = out.find('\n', have); nl != std::string::npos) {
      out.resize(nl);
      return out;
    }
    pos += n;
  }
  return std::nullopt;
}

int open_archived(const fs::path& p) { return ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); }

void log_line(const fs::path& state_dir, const std::string& what) {
  int fd = ::open((state_dir / "archive.log").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  std::string line = fmt::format("{} {}\n", util::format_iso8601_ms(util::now_ms()), what);
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}
}  // namespace

std::optional<std::string> message_text_at(const fs::path& transcript, int64_t offset) {
  int fd = open_archived(transcript);
  if (fd < 0) return std::nullopt;
  auto line = line_at(fd, offset);
  ::close(fd);
  if (!line) return std::nullopt;
  return message_text(*line).text;
}

Result<IndexReport> index_file(SearchIndex& index, const fs::path& transcript, const std::string& session_id,
                               const std::string& project, const std::string& marker, uint64_t batch_bytes) {
  IndexReport report;
  const std::string path = transcript.string();
  if (auto r = index.begin(); !r) return std::unexpected(r.error());
  auto rollback = [&](Error e) -> Result<IndexReport> {
    index.rollback();
    return std::unexpected(std::move(e));
  };
  auto file = index.file(path, session_id, project);
  if (!file) return rollback(file.error());
  struct stat st {};
  if (::stat(transcript.c_str(), &st) != 0) return rollback(Error{fmt::format("reading {}: {}", path, std::strerror(errno))});
  const auto size = static_cast<uint64_t>(st.st_size);
  if (file->excluded) {
    report.excluded = true;
    report.indexed_bytes = size;
    if (auto r = index.set_progress(file->id, size, file->indexed_lines, true); !r) return rollback(r.error());
    if (auto r = index.commit(); !r) return rollback(r.error());
    return report;
  }
  uint64_t from = file->indexed_bytes, line_no = file->indexed_lines;
  if (size < from) {
    // Replaced by a shorter file: its old text is gone, start over for it.
    if (auto r = index.remove_file_rows(file->id, [](int64_t) { return std::optional<std::string>(); }); !r) return rollback(r.error());
    from = 0;
    line_no = 0;
  }
  report.indexed_bytes = from;
  auto reader = util::LineReader::open(transcript, size, 4 << 20, from, line_no + 1);
  if (!reader) return rollback(reader.error());
  MessageTextExtractor extract;
  uint64_t batch = 0;
  while (true) {
    auto next = reader->next();
    if (!next) return rollback(next.error());
    if (!*next) break;
    const auto& l = **next;
    report.lines_read++;
    if (!marker.empty() && l.text.find(marker) != std::string_view::npos) {
      // Everything of the session goes, what earlier runs indexed included.
      int fd = open_archived(transcript);
      auto removed = index.remove_file_rows(file->id, [&](int64_t offset) -> std::optional<std::string> {
        if (fd < 0) return std::nullopt;
        auto line = line_at(fd, offset);
        if (!line) return std::nullopt;
        return extract.extract(*line).text;
      });
      if (fd >= 0) ::close(fd);
      if (!removed) return rollback(removed.error());
      if (auto r = index.set_progress(file->id, size, l.number, true); !r) return rollback(r.error());
      if (auto r = index.commit(); !r) return rollback(r.error());
      report.excluded = true;
      report.rows_added = 0;
      report.indexed_bytes = size;
      return report;
    }
    line_no = l.number;
    MessageText m = extract.extract(l.text, l.capacity);
    if (!m.text.empty()) {
      if (auto r = index.add(file->id, {static_cast<int64_t>(l.number), static_cast<int64_t>(l.offset), m.timestamp, m.role, m.text}); !r)
        return rollback(r.error());
      report.rows_added++;
    }
    batch += l.text.size() + 1;
    if (batch >= batch_bytes) {
      if (auto r = index.set_progress(file->id, reader->consumed(), line_no, false); !r) return rollback(r.error());
      if (auto r = index.commit(); !r) return rollback(r.error());
      if (auto r = index.begin(); !r) return std::unexpected(r.error());
      batch = 0;
    }
  }
  report.indexed_bytes = reader->consumed();
  if (auto r = index.set_progress(file->id, report.indexed_bytes, line_no, false); !r) return rollback(r.error());
  if (auto r = index.commit(); !r) return rollback(r.error());
  return report;
}

IndexLock::~IndexLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

Result<std::optional<IndexLock>> IndexLock::acquire(const fs::path& state_dir, bool wait) {
  // The archive folder is not created here: an indexer whose archive is gone has nothing to do.
  fs::path p = state_dir / "archive" / ".index.lock";
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return fail(fmt::format("opening {}: {}", p.string(), std::strerror(errno)), errno == ENOENT ? Error::Kind::NotFound : Error::Kind::ReadOnly);
  while (::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK) return std::optional<IndexLock>();
    return fail(fmt::format("locking {}: {}", p.string(), std::strerror(e)));
  }
  return std::optional<IndexLock>(IndexLock(fd));
}

Result<SearchIndex> open_index(const fs::path& state_dir, std::string* note) {
  fs::path db = index_path(state_dir);
  uint64_t inode = file_inode(db);
  auto index = SearchIndex::open(db);
  if (index || index.error().kind != Error::Kind::Corrupt) return index;
  auto aside = quarantine_database(db, inode);
  if (!aside) return std::unexpected(aside.error());
  auto fresh = SearchIndex::open(db);
  if (fresh && note && !aside->empty())
    *note = fmt::format("search index {} was corrupt; moved it to {} and rebuilt it from the archive", db.string(), aside->string());
  return fresh;
}

namespace {
struct Archived {
  fs::path path;
  std::string project, session_id;
  uint64_t size = 0;
};

std::vector<Archived> archived_transcripts(const fs::path& state_dir, const ArchiveConfig& config) {
  std::vector<Archived> out;
  std::error_code ec;
  for (const auto& proj : fs::directory_iterator(state_dir / "archive", ec)) {
    std::error_code e2;
    if (!proj.is_directory(e2) || proj.is_symlink(e2)) continue;
    std::string project = proj.path().filename().string();
    if (project_is_excluded(project, config)) continue;
    for (const auto& f : fs::directory_iterator(proj.path(), e2)) {
      std::string name = f.path().filename().string();
      std::error_code e3;
      if (name.starts_with('.') || !name.ends_with(".jsonl") || f.is_symlink(e3) || !f.is_regular_file(e3)) continue;
      out.push_back({f.path(), project, f.path().stem().string(), f.file_size(e3)});
    }
  }
  return out;
}
}  // namespace

Result<IndexProgress> index_progress(SearchIndex& index, const fs::path& state_dir, const ArchiveConfig& config) {
  auto known = index.files();
  if (!known) return std::unexpected(known.error());
  IndexProgress p;
  for (const auto& a : archived_transcripts(state_dir, config)) {
    p.files++;
    p.archived_bytes += a.size;
    auto it = known->find(a.path.string());
    uint64_t done = it == known->end() ? 0 : it->second.excluded ? a.size : std::min(a.size, it->second.indexed_bytes);
    p.indexed_bytes += done;
    if (done < a.size) p.files_pending++;
  }
  return p;
}

Result<PendingRun> index_pending(SearchIndex& index, const fs::path& state_dir, const ArchiveConfig& config) {
  auto known = index.files();
  if (!known) return std::unexpected(known.error());
  PendingRun run;
  for (const auto& a : archived_transcripts(state_dir, config)) {
    auto it = known->find(a.path.string());
    if (it != known->end() && (it->second.excluded || it->second.indexed_bytes >= a.size)) continue;
    auto r = index_file(index, a.path, a.session_id, a.project, config.exclude_marker);
    if (!r) {
      if (r.error().kind == Error::Kind::Corrupt || r.error().kind == Error::Kind::Busy) return std::unexpected(r.error());
      if (run.first_error.empty()) run.first_error = r.error().message;
      continue;
    }
    run.files++;
    run.bytes += r->indexed_bytes;
  }
  return run;
}

void run_indexer(const fs::path& state_dir, const ArchiveConfig& config) {
  auto lock = IndexLock::acquire(state_dir, true);
  if (!lock || !*lock) {
    if (!lock && lock.error().kind != Error::Kind::NotFound) log_line(state_dir, fmt::format("indexing: {}", lock.error().message));
    return;
  }
  std::string note;
  auto index = open_index(state_dir, &note);
  if (!note.empty()) log_line(state_dir, note);
  if (!index) {
    log_line(state_dir, fmt::format("indexing: {}", index.error().message));
    return;
  }
  auto run = index_pending(*index, state_dir, config);
  if (!run) log_line(state_dir, fmt::format("indexing: {}", run.error().message));
  else if (!run->first_error.empty()) log_line(state_dir, fmt::format("indexing: {}", run->first_error));
}

void fill_snippets(SearchResult& result, const std::string& words) {
  MessageTextExtractor extract;
  for (auto& h : result.hits) {
    int fd = open_archived(h.path);
    if (fd < 0) continue;
    auto line = line_at(fd, h.offset);
    ::close(fd);
    if (!line) continue;
    h.snippet = make_snippet(extract.extract(*line).text, words);
  }
}

}  // namespace ctxkit
