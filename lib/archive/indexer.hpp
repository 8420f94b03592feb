#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/locations.hpp"
#include "store/search_index.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"

namespace ctxkit::archive {

// What indexing one archived transcript did.
struct IndexReport {
  uint64_t lines_read = 0;  // new complete lines read
  uint64_t rows_added = 0;  // messages added to the index
  bool excluded = false;    // the session carries the exclusion marker (nothing of it is indexed)
  uint64_t indexed_bytes = 0;  // the file is indexed up to here
};

// The archive's index is split into kIndexShards databases, written at once by as many threads
// (FTS5 tokenizing is the cost of indexing, and one SQLite database has one writer at a time).
// Each line of an archived transcript belongs to one shard, by the stretch of kShardStretch bytes
// of the file it starts in; every shard reads the whole file (line numbers, the exclusion marker)
// and indexes its own lines, and keeps its own record of how far it got.
inline constexpr int kIndexShards = 2;
inline constexpr uint64_t kShardStretch = 256 << 10;
struct Shard {
  int index = 0;
  int count = 1;
  bool owns(uint64_t offset) const {
    return count <= 1 ||
           static_cast<int>((offset / kShardStretch) % static_cast<uint64_t>(count)) == index;
  }
};

// The shards of an archive's index, read as one.
class ArchiveIndex {
 public:
  explicit ArchiveIndex(std::vector<store::SearchIndex> shards) : shards_(std::move(shards)) {}
  int size() const { return static_cast<int>(shards_.size()); }
  store::SearchIndex& shard(int i) { return shards_[static_cast<size_t>(i)]; }
  // Each shard's best hits, merged by rank.
  [[nodiscard]] Result<store::SearchResult> search(const store::SearchQuery& query);
  // Every indexed file by path: indexed as far as its least advanced shard, excluded when every
  // shard excludes it (`excluded_somewhere` when one does).
  struct File {
    store::IndexedFile least;
    bool excluded_somewhere = false;
  };
  [[nodiscard]] Result<std::map<std::string, File>> files();
  Result<std::optional<std::filesystem::path>> file_of(const std::string& session_id,
                                                       const std::string& agent = {});
  // The sessions some shard has excluded (their transcript, or one of their subagents', carries
  // the exclusion marker): a search leaves each out whole.
  [[nodiscard]] Result<std::set<std::string>> excluded_sessions();
  // The indexed line nearest before or at `line` in `file`, over every shard.
  [[nodiscard]] Result<std::optional<store::IndexedLine>> line_at_or_before(
      const std::filesystem::path& file, int64_t line);

 private:
  std::vector<store::SearchIndex> shards_;
};

// Indexes the lines of `transcript` (an archived copy) added since the last call for it, in
// transactions of about kBatchBytes of transcript each: a kill loses at most the batch under way,
// and what is committed always says how far the file is indexed. A session whose text contains
// `exclude_marker` is removed from the index and skipped from then on.
inline constexpr uint64_t kIndexBatchBytes = 32ull << 20;
// With a `shard`, only the lines that shard owns are added. With `outputs` (the folder of capped
// outputs, archive::outputs_dir), a line whose text holds ctx-cap's note is indexed with the whole
// output the note names (with_capped_outputs): its words are found as the line's.
[[nodiscard]] Result<IndexReport> index_file(
    store::SearchIndex& index, const std::filesystem::path& transcript,
    const std::string& session_id, const std::string& project, const std::string& exclude_marker,
    uint64_t batch_bytes = kIndexBatchBytes, Shard shard = {},
    const std::filesystem::path& outputs = {});

// `text` followed by the archived outputs (in `outputs`) that ctx-cap's notes in it name
// (`archive_show {"handle": "H", …`), the first `max_bytes` of each (kMaxIndexedOutputBytes when
// indexing; a snippet reads less); `text` alone when it names none or they are gone.
inline constexpr uint64_t kMaxIndexedOutputBytes = 16ull << 20;
inline constexpr uint64_t kMaxSnippetOutputBytes = 2ull << 20;
std::string with_capped_outputs(std::string text, const std::filesystem::path& outputs,
                                uint64_t max_bytes = kMaxIndexedOutputBytes);

// Whether [archive] exclude_projects names this project folder.
bool project_is_excluded(const std::string& project, const core::ArchiveConfig& config);

// The one indexer of an archive at a time: an exclusive flock on Locations::index_lock()
// (created 0600, never through a link), released when this object goes or the process dies. A
// missing archive folder is an error of kind NotFound.
class IndexLock {
 public:
  // nullopt when another process holds it (with wait=false); waits for it with wait=true.
  [[nodiscard]] static Result<std::optional<IndexLock>> acquire(const core::Locations& loc,
                                                                bool wait);

 private:
  explicit IndexLock(util::FileLock lock) : lock_(std::move(lock)) {}
  util::FileLock lock_;
};
// Opens the search index, every shard (Locations::index_db). A shard that SQLite reports as corrupt
// is moved aside ("index.db.corrupt-<stamp>") and a new, empty one created: the archive rebuilds it
// (index_pending). `note` then says so.
[[nodiscard]] Result<ArchiveIndex> open_index(const core::Locations& loc, std::string* note);

// Opens every shard of the search index read-only (store::SearchIndex::open_read_only), creating
// nothing and moving nothing aside, for looking at it: searching and index_progress work on it.
// The first shard that is missing, damaged or of another schema is the error.
[[nodiscard]] Result<ArchiveIndex> open_index_read_only(const core::Locations& loc);

// How much of the archive is indexed: bytes of archived transcripts (of projects not excluded)
// against bytes indexed.
struct IndexProgress {
  uint64_t archived_bytes = 0;
  uint64_t indexed_bytes = 0;
  uint64_t files = 0;
  uint64_t files_pending = 0;  // not indexed yet, or only partly
  bool complete() const { return files_pending == 0; }
};
[[nodiscard]] Result<IndexProgress> index_progress(ArchiveIndex& index, const core::Locations& loc,
                                                   const core::ArchiveConfig& config);

// Indexes every archived transcript not indexed yet, or only partly (after a kill, a crash, a
// quarantined index, or an indexer that never ran), one thread per shard. The caller holds the
// IndexLock.
struct PendingRun {
  uint64_t files = 0;
  uint64_t bytes = 0;
  std::string first_error;  // a file that could not be indexed (the others still are)
};
[[nodiscard]] Result<PendingRun> index_pending(ArchiveIndex& index, const core::Locations& loc,
                                               const core::ArchiveConfig& config,
                                               uint64_t batch_bytes = kIndexBatchBytes);

// Takes the lock (waiting for it), opens the index and indexes what is pending: what a detached
// indexer runs. Errors go to Locations::archive_log().
// With `queue_once`, returns at once when another process already waits for the lock: that one
// indexes what this one would have (it lists the pending work once it has the lock), so hooks
// that run after every turn never pile up waiting indexers.
void run_indexer(const core::Locations& loc, const core::ArchiveConfig& config,
                 bool queue_once = false);

// Cuts each hit's snippet from its archived transcript (the index keeps no text), and from the
// capped outputs the line names when `outputs` is given.
void fill_snippets(store::SearchResult& result, const std::string& words,
                   const std::filesystem::path& outputs = {});

// The message text of the line at `offset` in an archived transcript.
std::optional<std::string> message_text_at(const std::filesystem::path& transcript, int64_t offset);

}  // namespace ctxkit::archive
