#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

#include "store/sqlite_handle.hpp"

namespace ctxkit {

// What indexing one archived transcript did.
struct IndexReport {
  uint64_t lines_read = 0;     // new complete lines read
  uint64_t rows_added = 0;     // messages added to the index
  bool excluded = false;       // the session carries the exclusion marker (nothing of it is indexed)
  uint64_t indexed_bytes = 0;  // the file is indexed up to here
};

// One search hit.
struct SearchHit {
  std::string session_id;
  std::string project;
  int64_t line = 0;          // 1-based line of the archived transcript
  std::string timestamp;
  std::string role;          // user, assistant, tool_use, tool_result
  std::string snippet;
  double rank = 0;           // bm25, lower is better
};

// Filters of a search.
struct SearchQuery {
  std::string words;         // the user's words, taken literally
  std::string project;       // exact project folder name, or empty
  std::string session;       // session id, or empty
  std::string since;         // ISO 8601 date or time; hits at or after it
  int limit = 20;
};

// Ranked hits, and whether ranking was limited to the newest matches.
struct SearchResult {
  std::vector<SearchHit> hits;
  bool capped = false;       // more than kMaxRanked messages matched: only the newest were ranked
};

// The full-text index of the archive: SQLite FTS5 (bm25) in its own database file, one row per
// message (user prompt, assistant text, tool input, tool output) with session, line, time and
// project. Indexing is incremental: only lines added since the last run are read.
class SearchIndex {
 public:
  static constexpr int kSchemaVersion = 1;

  // Opens or creates the index at `path` (0600, WAL, busy timeout).
  static Result<SearchIndex> open(const std::filesystem::path& path, int busy_timeout_ms = 5000);
  SearchIndex(SearchIndex&& other) noexcept = default;
  SearchIndex& operator=(SearchIndex&& other) noexcept = default;
  SearchIndex(const SearchIndex&) = delete;
  SearchIndex& operator=(const SearchIndex&) = delete;
  ~SearchIndex() = default;

  // Indexes the lines of `transcript` (an archived copy) added since the last call for it.
  // A session whose text contains `exclude_marker` is removed from the index and skipped from
  // then on.
  Result<IndexReport> index_file(const std::filesystem::path& transcript, const std::string& session_id,
                                 const std::string& project, const std::string& exclude_marker);

  // At most this many matching messages (the newest) are ranked, so that a query of common words
  // costs the same whatever the archive's size.
  static constexpr int64_t kMaxRanked = 20000;

  // Ranked hits (bm25) for the user's words (each word quoted: FTS5 syntax is not the user's).
  Result<SearchResult> search(const SearchQuery& query);

  // The archived file of a session, if it was indexed.
  Result<std::optional<std::filesystem::path>> file_of(const std::string& session_id);

  // Turns the user's words into an FTS5 query that matches them literally (all of them).
  static std::string fts_query(const std::string& words);

 private:
  SearchIndex(sqlite3* db, std::string path);
  Result<void> exec(const char* sql);
  Error error(const std::string& what, int rc) const;
  sqlite::Handle db_;
  std::string path_;
};

// The text of one transcript line worth searching, and whose it is ("" when the line has none).
struct MessageText {
  std::string role;
  std::string timestamp;
  std::string text;
};
MessageText message_text(std::string_view line);

// A window of `text` around the first occurrence of one of the user's words (case-insensitive),
// every occurrence in it marked with [ ]; "…" where text was left out. Its cost is bounded by
// the window, not by the text.
std::string make_snippet(const std::string& text, const std::string& words);

}  // namespace ctxkit
