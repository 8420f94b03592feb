#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite_handle.hpp"
#include "util/error.hpp"

namespace ctxkit::store {

// One search hit. The index keeps no copy of the text: the snippet is cut from the archived
// transcript (`path`, the line at byte `offset`) by the caller.
struct SearchHit {
  std::string session_id;
  std::string project;
  int64_t line = 0;  // 1-based line of the archived transcript
  std::string timestamp;
  std::string role;  // user, assistant, tool_use, tool_result
  std::string snippet;
  double rank = 0;     // bm25, lower is better
  std::string path;    // the archived transcript
  int64_t offset = 0;  // of the line in it
};

// Filters of a search.
struct SearchQuery {
  std::string words;    // the user's words, taken literally
  std::string project;  // exact project folder name, or empty
  std::string session;  // session id, or empty
  std::string since;    // ISO 8601 date or time; hits at or after it
  int limit = 20;
};

// Ranked hits, and whether ranking was limited to the newest matches.
struct SearchResult {
  std::vector<SearchHit> hits;
  bool capped = false;  // more than kMaxRanked messages matched: only the newest were ranked
};

// How far one archived transcript is indexed.
struct IndexedFile {
  int64_t id = 0;
  std::string session_id;
  std::string project;
  uint64_t indexed_bytes = 0;  // complete lines up to here are indexed
  uint64_t indexed_lines = 0;
  bool excluded = false;  // carries the exclusion marker: nothing of it is indexed
};

// Where an indexed message's line starts in its archived transcript.
struct IndexedLine {
  int64_t line = 0;
  int64_t offset = 0;
};

// One message to index.
struct IndexRow {
  int64_t line = 0;
  int64_t offset = 0;
  std::string_view timestamp;
  std::string_view role;
  std::string_view text;
};

// The full-text index of the archive: SQLite FTS5 (bm25) in its own database file, one row per
// message (user prompt, assistant text, tool input, tool output). The FTS5 table is contentless
// (content=''): the archived transcripts already hold the text, so the index stores only the
// token lists plus, per message, where it is (file, line, byte offset), its time and role. The
// caller reads the text (archive/indexer); this module only speaks SQL.
class SearchIndex {
 public:
  static constexpr int kSchemaVersion = 3;
  // At most this many matching messages (the newest) are ranked, so that a query of common words
  // costs the same whatever the archive's size.
  static constexpr int64_t kMaxRanked = 1000;
  // The most words and bytes a query may have (each word is a phrase FTS5 walks the list of
  // messages of, per token: a query of a word said ten thousand times would keep it busy for
  // minutes).
  static constexpr size_t kMaxQueryWords = 64;
  static constexpr size_t kMaxQueryBytes = 2048;
  // Why `words` is too long to search, or empty when it is not.
  static std::string query_too_long(const std::string& words);

  // Opens or creates the index at `path` (0600, WAL, busy timeout). A file SQLite reports as not a
  // database or corrupt is an error of kind Corrupt. An index of an older schema is emptied (it is
  // rebuilt from the archive).
  [[nodiscard]] static Result<SearchIndex> open(const std::filesystem::path& path,
                                                int busy_timeout_ms = 5000);
  // Opens an existing index read-only, creating nothing (store/db_check's open_read_only), for
  // looking at it: the writing calls fail with an error. A missing file is an error of kind
  // NotFound; an index of another schema version one of kind Invalid.
  [[nodiscard]] static Result<SearchIndex> open_read_only(const std::filesystem::path& path,
                                                          int busy_timeout_ms = 1000);
  SearchIndex(SearchIndex&& other) noexcept = default;
  SearchIndex& operator=(SearchIndex&& other) noexcept = default;
  SearchIndex(const SearchIndex&) = delete;
  SearchIndex& operator=(const SearchIndex&) = delete;
  ~SearchIndex() = default;

  // Write transactions (BEGIN IMMEDIATE / COMMIT / ROLLBACK).
  [[nodiscard]] Result<void> begin();
  Result<void> commit();
  void rollback();

  // The file's state, registering it (inside a transaction) when it is new.
  [[nodiscard]] Result<IndexedFile> file(const std::string& path, const std::string& session_id,
                                         const std::string& project);
  // Every indexed file by path (for progress and pending work).
  [[nodiscard]] Result<std::map<std::string, IndexedFile>> files();
  Result<void> add(int64_t file_id, const IndexRow& row);
  [[nodiscard]] Result<void> set_progress(int64_t file_id, uint64_t bytes, uint64_t lines,
                                          bool excluded);
  // Removes the messages of a file. A contentless table forgets a message only when given its
  // text again: `text_at(offset)` re-reads it from the archived copy (nullopt when it cannot,
  // e.g. the file was replaced: then only the message's row goes and its tokens stay unreachable).
  [[nodiscard]] Result<uint64_t> remove_file_rows(
      int64_t file_id, const std::function<std::optional<std::string>(int64_t offset)>& text_at);

  // Ranked hits (bm25) for the user's words (each word quoted: FTS5 syntax is not the user's).
  // The document frequencies of bm25 come from phrase_counts: exact for a word fewer than
  // kPhraseSample messages hold, estimated for a commoner one. Snippets are left empty.
  // At most `max_ranked` of the newest matches are ranked. With `ranked` false every match is
  // returned newest first with rank 0, without bm25 (whose document frequencies cost a pass over
  // the whole index for a common word or phrase): for a query whose matches all fit in the limit.
  [[nodiscard]] Result<SearchResult> search(const SearchQuery& query,
                                            int64_t max_ranked = kMaxRanked, bool ranked = true);
  // How many messages match (with the query's filters), counted up to `up_to`.
  [[nodiscard]] Result<int64_t> count_matches(const SearchQuery& query, int64_t up_to);
  // Moves what the write-ahead log holds into the database and empties the log (after a long
  // indexing run; a reader in the way leaves it for later).
  void checkpoint();
  // The files this shard has excluded (their session carries the exclusion marker).
  [[nodiscard]] Result<std::vector<std::string>> excluded_paths();

  // How many messages the index holds a token for (the index's own view, whatever rows refer to).
  [[nodiscard]] Result<int64_t> token_documents(const std::string& token);

  // The archived file of a session (or, with `agent`, of that subagent of it: agent-<id>), if it
  // was indexed.
  [[nodiscard]] Result<std::optional<std::filesystem::path>> file_of(const std::string& session_id,
                                                                     const std::string& agent = {});

  // The indexed message of `file` nearest before or at `line` (where to start reading to reach
  // that line without reading the file from its start), nullopt when none is.
  [[nodiscard]] Result<std::optional<IndexedLine>> line_at_or_before(
      const std::filesystem::path& file, int64_t line);

  // Turns the user's words into an FTS5 query that matches them literally (all of them).
  static std::string fts_query(const std::string& words);
  // The phrases of that query, one per word, each quoted.
  static std::vector<std::string> fts_phrases(const std::string& words);

  // How many messages hold each of `phrases` (FTS5 queries), in the order given: counted up to
  // `sample`, and beyond estimated from the stretch of rows the newest `sample` of them lie in
  // (the rank's document frequencies, at a bounded cost).
  static constexpr int64_t kPhraseSample = 1000;
  [[nodiscard]] Result<std::vector<double>> phrase_counts(const std::vector<std::string>& phrases,
                                                          int64_t sample = kPhraseSample);

 private:
  SearchIndex(sqlite3* db, std::string path);
  [[nodiscard]] Result<void> exec(const char* sql);
  Error error(const std::string& what, int rc) const;
  // The error of a step that reads the query's match.
  Error searching_error(int rc) const;
  struct Statements;
  sqlite::Handle db_;
  std::string path_;
  std::shared_ptr<Statements> st_;
  bool ranks_ = false;  // ctx_rank is registered on the connection (else bm25() ranks)
  int busy_timeout_ms_ = 5000;
};

// The subagent an archived transcript belongs to: "agent-<id>" for
// <session>/subagents/agent-<id>.jsonl, "" for a session's own transcript.
std::string agent_of_path(std::string_view path);

// A window of `text` around the first occurrence of one of the user's words (case-insensitive),
// every occurrence in it marked with [ ]; "…" where text was left out. Its cost is bounded by
// the window, not by the text.
std::string make_snippet(const std::string& text, const std::string& words);

}  // namespace ctxkit::store
