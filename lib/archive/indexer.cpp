#include "archive/indexer.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "archive/output_archive.hpp"
#include "claude/message_text.hpp"
#include "claude/session_locator.hpp"
#include "core/archive_log.hpp"
#include "store/state_store.hpp"
#include "util/fs.hpp"
#include "util/line_reader.hpp"
#include "util/regular_file.hpp"
#include "util/time.hpp"

namespace ctxkit::archive {
namespace fs = std::filesystem;

bool project_is_excluded(const std::string& project, const core::ArchiveConfig& config) {
  return config.excludes(project);
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

// An archived transcript opened for reading, -1 when it cannot be: never through a link, and a
// FIFO or a device put in its place is refused without blocking.
int open_archived(const fs::path& p) {
  auto file = util::open_regular_file(p, false);
  return file ? file->fd : -1;
}

// The session an archived transcript belongs to: <project>/<session>.jsonl, or
// <project>/<session>/subagents/agent-<id>.jsonl for one of its subagents'.
std::string session_of_archived(const std::string& path) {
  const fs::path p(path);
  return store::agent_of_path(path).empty() ? p.stem().string()
                                            : p.parent_path().parent_path().filename().string();
}

void log_line(const core::Locations& loc, const std::string& what) {
  core::append_archive_log(loc, what);
}
}  // namespace

std::optional<std::string> message_text_at(const fs::path& transcript, int64_t offset) {
  int fd = open_archived(transcript);
  if (fd < 0) return std::nullopt;
  auto line = line_at(fd, offset);
  ::close(fd);
  if (!line) return std::nullopt;
  return claude::message_text(*line).text;
}

std::string with_capped_outputs(std::string text, const fs::path& outputs, uint64_t max_bytes) {
  if (outputs.empty()) return text;
  static constexpr std::string_view kNote = "archive_show {\"handle\": \"";
  std::vector<std::string> seen;
  size_t at = 0;
  const size_t end = text.size();
  while ((at = text.find(kNote, at)) != std::string::npos && at < end) {
    at += kNote.size();
    const size_t close = text.find('"', at);
    if (close == std::string::npos || close > end) break;
    std::string handle = text.substr(at, close - at);
    if (!valid_output_handle(handle) || std::find(seen.begin(), seen.end(), handle) != seen.end())
      continue;
    seen.push_back(handle);
    // Its first max_bytes: a link, a FIFO or anything but a regular file is not read (nor waited
    // on).
    auto opened = util::open_regular_file(outputs / (handle + ".txt"), false);
    if (!opened) continue;
    std::string whole(std::min<uint64_t>(opened->size, max_bytes), '\0');
    size_t got = 0;
    while (got < whole.size()) {
      const ssize_t n =
          ::pread(opened->fd, whole.data() + got, whole.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(opened->fd);
    whole.resize(got);
    if (whole.empty()) continue;
    text += '\n';
    text += whole;
  }
  return text;
}

Result<IndexReport> index_file(store::SearchIndex& index, const fs::path& transcript,
                               const std::string& session_id, const std::string& project,
                               const std::string& marker, uint64_t batch_bytes, Shard shard,
                               const fs::path& outputs) {
  IndexReport report;
  const std::string path = transcript.string();
  CTXKIT_TRY(index.begin());
  auto rollback = [&](Error e) -> Result<IndexReport> {
    index.rollback();
    return std::unexpected(std::move(e));
  };
  auto file = index.file(path, session_id, project);
  if (!file) return rollback(file.error());
  struct stat st {};
  if (::stat(transcript.c_str(), &st) != 0)
    return rollback(Error{fmt::format("reading {}: {}", path, std::strerror(errno))});
  const auto size = static_cast<uint64_t>(st.st_size);
  if (file->excluded) {
    report.excluded = true;
    report.indexed_bytes = size;
    if (auto r = index.set_progress(file->id, size, file->indexed_lines, true); !r)
      return rollback(r.error());
    if (auto r = index.commit(); !r) return rollback(r.error());
    return report;
  }
  uint64_t from = file->indexed_bytes, line_no = file->indexed_lines;
  if (size < from) {
    // Replaced by a shorter file: its old text is gone, start over for it.
    if (auto r =
            index.remove_file_rows(file->id, [](int64_t) { return std::optional<std::string>(); });
        !r)
      return rollback(r.error());
    from = 0;
    line_no = 0;
  }
  report.indexed_bytes = from;
  auto reader = util::LineReader::open(transcript, size, 4 << 20, from, line_no + 1);
  if (!reader) return rollback(reader.error());
  claude::MessageTextExtractor extract;
  uint64_t batch = 0;
  while (true) {
    auto next = reader->next();
    if (!next) return rollback(next.error());
    if (!*next) break;
    const auto& l = **next;
    report.lines_read++;
    if (!marker.empty() &&
        ::memmem(l.text.data(), l.text.size(), marker.data(), marker.size()) != nullptr) {
      // Everything of the session goes, what earlier runs indexed included.
      int fd = open_archived(transcript);
      auto removed =
          index.remove_file_rows(file->id, [&](int64_t offset) -> std::optional<std::string> {
            if (fd < 0) return std::nullopt;
            auto line = line_at(fd, offset);
            if (!line) return std::nullopt;
            return extract.extract(*line).text;
          });
      if (fd >= 0) ::close(fd);
      if (!removed) return rollback(removed.error());
      if (auto r = index.set_progress(file->id, size, l.number, true); !r)
        return rollback(r.error());
      if (auto r = index.commit(); !r) return rollback(r.error());
      report.excluded = true;
      report.rows_added = 0;
      report.indexed_bytes = size;
      return report;
    }
    line_no = l.number;
    claude::MessageText m =
        shard.owns(l.offset) ? extract.extract(l.text, l.capacity) : claude::MessageText{};
    if (!m.text.empty() && !outputs.empty())
      m.text = with_capped_outputs(std::move(m.text), outputs);
    if (!m.text.empty()) {
      if (auto r =
              index.add(file->id, {static_cast<int64_t>(l.number), static_cast<int64_t>(l.offset),
                                   m.timestamp, m.role, m.text});
          !r)
        return rollback(r.error());
      report.rows_added++;
    }
    batch += l.text.size() + 1;
    if (batch >= batch_bytes) {
      if (auto r = index.set_progress(file->id, reader->consumed(), line_no, false); !r)
        return rollback(r.error());
      if (auto r = index.commit(); !r) return rollback(r.error());
      CTXKIT_TRY(index.begin());
      batch = 0;
    }
  }
  report.indexed_bytes = reader->consumed();
  if (auto r = index.set_progress(file->id, report.indexed_bytes, line_no, false); !r)
    return rollback(r.error());
  if (auto r = index.commit(); !r) return rollback(r.error());
  return report;
}

Result<std::optional<IndexLock>> IndexLock::acquire(const core::Locations& loc, bool wait) {
  // The archive folder is not created here: an indexer whose archive is gone has nothing to do.
  auto lock = util::FileLock::acquire(loc.index_lock(), wait);
  if (!lock) return std::unexpected(lock.error());
  if (!*lock) return std::optional<IndexLock>();
  return std::optional<IndexLock>(IndexLock(std::move(**lock)));
}

namespace {
// Runs `f(i)` for every shard i at once, one thread each (shard 0 on the calling thread), and
// returns their results in shard order; an exception becomes that shard's error.
template <class F>
auto on_each_shard(int shards, const char* what, F f) -> std::vector<decltype(f(0))> {
  std::vector<decltype(f(0))> out(static_cast<size_t>(std::max(shards, 0)));
  auto one = [&](int i) {
    try {
      out[static_cast<size_t>(i)] = f(i);
    } catch (const std::exception& e) {
      out[static_cast<size_t>(i)] = fail(fmt::format("{}: {}", what, e.what()));
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < shards; ++i) threads.emplace_back(one, i);
  if (shards > 0) one(0);
  for (auto& t : threads) t.join();
  return out;
}

Result<store::SearchIndex> open_shard(const fs::path& db, std::string* note) {
  uint64_t inode = store::file_inode(db);
  auto index = store::SearchIndex::open(db);
  if (index || index.error().kind != Error::Kind::Corrupt) return index;
  auto aside = store::quarantine_database(db, inode);
  if (!aside) return std::unexpected(aside.error());
  auto fresh = store::SearchIndex::open(db);
  if (fresh && note && !aside->empty()) {
    if (!note->empty()) *note += "; ";
    *note +=
        fmt::format("search index {} was corrupt; moved it to {} and rebuilt it from the archive",
                    db.string(), aside->string());
  }
  return fresh;
}
}  // namespace

Result<ArchiveIndex> open_index(const core::Locations& loc, std::string* note) {
  std::vector<store::SearchIndex> shards;
  for (int i = 0; i < kIndexShards; ++i) {
    auto shard = open_shard(loc.index_db(i), note);
    if (!shard) return std::unexpected(shard.error());
    shards.push_back(std::move(*shard));
  }
  return ArchiveIndex(std::move(shards));
}

Result<ArchiveIndex> open_index_read_only(const core::Locations& loc) {
  std::vector<store::SearchIndex> shards;
  for (int i = 0; i < kIndexShards; ++i) {
    auto shard = store::SearchIndex::open_read_only(loc.index_db(i));
    if (!shard) return std::unexpected(shard.error());
    shards.push_back(std::move(*shard));
  }
  return ArchiveIndex(std::move(shards));
}

Result<store::SearchResult> ArchiveIndex::search(const store::SearchQuery& query) {
  // The shards are searched at once, each ranking its share of the newest matches and saying
  // which sessions it has excluded: the shards exclude a session each in its own transaction, and
  // a session one has excluded is left out of every shard's hits (another may not have got that
  // far yet).
  const int64_t share = std::max<int64_t>(1, store::SearchIndex::kMaxRanked / std::max(size(), 1));
  // When every match fits in the limit, ranking changes only their order, and bm25 would cost a
  // pass over the whole index for each common word or phrase of the query (an identifier beside
  // "src/engine.c:42"): then the hits come newest first, unranked.
  const int64_t fits = std::min<int64_t>(std::max(query.limit, 0), store::SearchIndex::kMaxRanked);
  int64_t matches = 0;
  for (int i = 0; i < size() && matches <= fits; ++i) {
    auto c = shard(i).count_matches(query, fits + 1);
    if (!c) return std::unexpected(c.error());
    matches += *c;
  }
  const bool ranked = matches > fits;
  struct Found {
    store::SearchResult result;
    std::vector<std::string> excluded;
  };
  auto found = on_each_shard(size(), "searching", [&](int i) -> Result<Found> {
    auto r = shard(i).search(query, share, ranked);
    if (!r) return std::unexpected(r.error());
    auto excluded = shard(i).excluded_paths();
    if (!excluded) return std::unexpected(excluded.error());
    return Found{std::move(*r), std::move(*excluded)};
  });
  // A session is left out whole when its transcript or one of its subagents' carries the marker.
  std::set<std::string> excluded;
  for (const auto& f : found) {
    if (!f) return std::unexpected(f.error());
    for (const auto& p : f->excluded) excluded.insert(session_of_archived(p));
  }
  store::SearchResult all;
  for (auto& f : found) {
    all.capped = all.capped || f->result.capped;
    for (auto& h : f->result.hits)
      if (!excluded.contains(h.session_id)) all.hits.push_back(std::move(h));
  }
  std::stable_sort(all.hits.begin(), all.hits.end(),
                   [ranked](const store::SearchHit& a, const store::SearchHit& b) {
                     if (!ranked && a.timestamp != b.timestamp) return a.timestamp > b.timestamp;
                     if (a.rank != b.rank) return a.rank < b.rank;
                     if (a.path != b.path) return a.path < b.path;
                     return a.line < b.line;
                   });
  if (all.hits.size() > static_cast<size_t>(std::max(query.limit, 0)))
    all.hits.resize(static_cast<size_t>(std::max(query.limit, 0)));
  return all;
}

Result<std::map<std::string, ArchiveIndex::File>> ArchiveIndex::files() {
  std::map<std::string, File> out;
  std::map<std::string, int> seen;
  for (auto& s : shards_) {
    auto known = s.files();
    if (!known) return std::unexpected(known.error());
    for (auto& [path, f] : *known) {
      auto [it, fresh] = out.try_emplace(path, File{f, f.excluded});
      seen[path]++;
      if (fresh) continue;
      File& m = it->second;
      m.excluded_somewhere = m.excluded_somewhere || f.excluded;
      m.least.excluded = m.least.excluded && f.excluded;
      if (f.indexed_bytes < m.least.indexed_bytes) {
        m.least.indexed_bytes = f.indexed_bytes;
        m.least.indexed_lines = f.indexed_lines;
      }
    }
  }
  // A file a shard has not seen yet is not indexed there at all.
  for (auto& [path, f] : out) {
    if (seen[path] < size()) {
      f.least.indexed_bytes = 0;
      f.least.indexed_lines = 0;
      f.least.excluded = false;
    }
  }
  return out;
}

Result<std::optional<fs::path>> ArchiveIndex::file_of(const std::string& session_id,
                                                      const std::string& agent) {
  for (auto& s : shards_) {
    auto f = s.file_of(session_id, agent);
    if (!f || *f) return f;
  }
  return std::optional<fs::path>();
}

Result<std::set<std::string>> ArchiveIndex::excluded_sessions() {
  std::set<std::string> out;
  for (auto& s : shards_) {
    auto excluded = s.excluded_paths();
    if (!excluded) return std::unexpected(excluded.error());
    for (const auto& p : *excluded) out.insert(session_of_archived(p));
  }
  return out;
}

Result<std::optional<store::IndexedLine>> ArchiveIndex::line_at_or_before(const fs::path& file,
                                                                          int64_t line) {
  std::optional<store::IndexedLine> best;
  for (auto& s : shards_) {
    auto l = s.line_at_or_before(file, line);
    if (!l) return std::unexpected(l.error());
    if (*l && (!best || (*l)->line > best->line)) best = *l;
  }
  return best;
}

namespace {
struct Archived {
  fs::path path;
  std::string project, session_id;
  uint64_t size = 0;
};

std::vector<Archived> archived_transcripts(const core::Locations& loc,
                                           const core::ArchiveConfig& config) {
  std::vector<Archived> out;
  std::error_code ec;
  for (const auto& proj : fs::directory_iterator(loc.archive_dir(), ec)) {
    std::error_code e2;
    if (!proj.is_directory(e2) || proj.is_symlink(e2)) continue;
    std::string project = proj.path().filename().string();
    // The capped outputs' folder beside the projects is none (possibly thousands of files).
    if (proj.path() == outputs_dir(loc) || project_is_excluded(project, config)) continue;
    for (const auto& f : fs::directory_iterator(proj.path(), e2)) {
      std::string name = f.path().filename().string();
      std::error_code e3;
      if (name.starts_with('.') || !name.ends_with(".jsonl") || f.is_symlink(e3) ||
          !f.is_regular_file(e3))
        continue;
      const std::string session = f.path().stem().string();
      out.push_back({f.path(), project, session, f.file_size(e3)});
      // Its subagents' transcripts (<session>/subagents/agent-<id>.jsonl), indexed as the
      // session's: a hit in one names the agent (store::agent_of_path).
      for (const auto& a : fs::directory_iterator(proj.path() / session / "subagents", e3)) {
        std::string agent = a.path().filename().string();
        std::error_code e4;
        if (!agent.starts_with("agent-") || !agent.ends_with(".jsonl") || a.is_symlink(e4) ||
            !a.is_regular_file(e4))
          continue;
        out.push_back({a.path(), project, session, a.file_size(e4)});
      }
    }
  }
  return out;
}
}  // namespace

namespace {
// Whether every shard is done with an archived file of `size` bytes.
bool indexed_everywhere(const ArchiveIndex::File& f, uint64_t size) {
  if (f.least.excluded) return true;
  return !f.excluded_somewhere && f.least.indexed_bytes >= size;
}
}  // namespace

Result<IndexProgress> index_progress(ArchiveIndex& index, const core::Locations& loc,
                                     const core::ArchiveConfig& config) {
  auto known = index.files();
  if (!known) return std::unexpected(known.error());
  IndexProgress p;
  for (const auto& a : archived_transcripts(loc, config)) {
    p.files++;
    p.archived_bytes += a.size;
    auto it = known->find(a.path.string());
    uint64_t done = 0;
    if (it != known->end())
      done = indexed_everywhere(it->second, a.size)
                 ? a.size
                 : std::min(a.size, it->second.least.indexed_bytes);
    p.indexed_bytes += done;
    if (done < a.size) p.files_pending++;
  }
  return p;
}

Result<PendingRun> index_pending(ArchiveIndex& index, const core::Locations& loc,
                                 const core::ArchiveConfig& config, uint64_t batch_bytes) {
  auto known = index.files();
  if (!known) return std::unexpected(known.error());
  std::vector<Archived> pending;
  for (auto& a : archived_transcripts(loc, config)) {
    auto it = known->find(a.path.string());
    if (it == known->end() || !indexed_everywhere(it->second, a.size))
      pending.push_back(std::move(a));
  }
  PendingRun run;
  if (pending.empty()) return run;
  // One thread per shard, each with its own connection to its own database.
  const int shards = index.size();
  auto per = on_each_shard(shards, "indexing", [&](int s) -> Result<PendingRun> {
    PendingRun mine;
    for (const auto& a : pending) {
      auto r = index_file(index.shard(s), a.path, a.session_id, a.project, config.exclude_marker,
                          batch_bytes, Shard{s, shards}, outputs_dir(loc));
      if (!r) {
        if (r.error().kind == Error::Kind::Corrupt || r.error().kind == Error::Kind::Busy)
          return std::unexpected(r.error());
        if (mine.first_error.empty()) mine.first_error = r.error().message;
        continue;
      }
      mine.files++;
      mine.bytes += r->indexed_bytes;
    }
    index.shard(s).checkpoint();
    return mine;
  });
  run.files = UINT64_MAX;
  run.bytes = UINT64_MAX;
  for (auto& r : per) {
    if (!r) return std::unexpected(r.error());
    run.files = std::min(run.files, r->files);
    run.bytes = std::min(run.bytes, r->bytes);
    if (run.first_error.empty()) run.first_error = r->first_error;
  }
  return run;
}

void run_indexer(const core::Locations& loc, const core::ArchiveConfig& config, bool queue_once) {
  std::optional<util::FileLock> queued;
  if (queue_once) {
    auto q = util::FileLock::acquire(loc.archive_dir() / ".index.queue.lock", false);
    if (!q || !*q) return;  // another waits already (or there is no archive)
    queued = std::move(*q);
  }
  auto lock = IndexLock::acquire(loc, true);
  queued
      .reset();  // a later hook's indexer may queue now: this one lists the pending work only below
  if (!lock || !*lock) {
    if (!lock && lock.error().kind != Error::Kind::NotFound)
      log_line(loc, fmt::format("indexing: {}", lock.error().message));
    return;
  }
  std::string note;
  auto index = open_index(loc, &note);
  if (!note.empty()) log_line(loc, note);
  if (!index) {
    log_line(loc, fmt::format("indexing: {}", index.error().message));
    return;
  }
  auto run = index_pending(*index, loc, config);
  if (!run)
    log_line(loc, fmt::format("indexing: {}", run.error().message));
  else if (!run->first_error.empty())
    log_line(loc, fmt::format("indexing: {}", run->first_error));
}

void fill_snippets(store::SearchResult& result, const std::string& words, const fs::path& outputs) {
  claude::MessageTextExtractor extract;
  for (auto& h : result.hits) {
    int fd = open_archived(h.path);
    if (fd < 0) continue;
    auto line = line_at(fd, h.offset);
    ::close(fd);
    if (!line) continue;
    h.snippet = store::make_snippet(
        with_capped_outputs(extract.extract(*line).text, outputs, kMaxSnippetOutputBytes), words);
  }
}

}  // namespace ctxkit::archive
