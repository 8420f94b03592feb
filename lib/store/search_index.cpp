#include "store/search_index.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "store/db_check.hpp"
#include "store/sqlite_stmt.hpp"
#include "util/fs.hpp"
#include "util/text.hpp"

namespace ctxkit::store {
namespace fs = std::filesystem;

namespace {

using sqlite::Stmt;

// FTS5 options, chosen from measurements on generated archives (docs/archive.md, "The index"):
// contentless (the archive holds the text), detail=full (positions kept: a word such as engine.c:42
// is a phrase of tokens, matched exactly), unicode61 tokenizer, and 16 MB of pending terms before a
// segment is written (the default, 1 MB, writes many small segments that are merged again and
// again: indexing 1.3 to 1.5 times slower and the index 20% larger).
const char* kSchema =
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
    "session_id TEXT NOT NULL,"
    "  project TEXT NOT NULL, indexed_bytes INTEGER NOT NULL DEFAULT 0, indexed_lines INTEGER NOT "
    "NULL DEFAULT 0,"
    "  excluded INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS files_session ON files(session_id);"
    "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, line "
    "INTEGER NOT NULL,"
    "  offset INTEGER NOT NULL, timestamp TEXT NOT NULL, role TEXT NOT NULL);"
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, content='', detail=full, "
    "tokenize='unicode61');"
    "INSERT INTO fts(fts, rank) VALUES('hashsize', 16777216);";

const char* kLineIndex = "CREATE INDEX IF NOT EXISTS messages_line ON messages(file_id, line);";

// ctx_rank(fts, n1, n2, ...): bm25 (FTS5's own formula, k1 = 1.2, b = 0.75, lower is better) with
// the number of messages holding each phrase of the query given by the caller. FTS5's bm25()
// counts them itself, with a pass over each phrase's whole list of messages: for a common word,
// over most of the index, whatever the number of rows ranked. The caller counts them up to a
// bound and estimates beyond it (SearchIndex::search).
// The index's row count and mean message length, read once per query (FTS5 reads them again at
// every call otherwise).
struct RankTotals {
  double rows = 1;
  double avg = 1;
};

void ctx_rank(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int n_val,
              sqlite3_value** val) {
  constexpr double k1 = 1.2, b = 0.75;
  auto* totals = static_cast<RankTotals*>(api->xGetAuxdata(fts, 0));
  if (!totals) {
    sqlite3_int64 rows = 0, tokens = 0;
    int rc = api->xRowCount(fts, &rows);
    if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    totals = new RankTotals;
    totals->rows = static_cast<double>(std::max<sqlite3_int64>(rows, 1));
    totals->avg = tokens > 0 ? static_cast<double>(tokens) / totals->rows : 1.0;
    if (api->xSetAuxdata(fts, totals, [](void* p) { delete static_cast<RankTotals*>(p); }) !=
        SQLITE_OK) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
  }
  int size = 0;
  if (int rc = api->xColumnSize(fts, -1, &size); rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  const double norm = k1 * (1.0 - b + b * static_cast<double>(size) / totals->avg);
  const int phrases = api->xPhraseCount(fts);
  double score = 0;
  for (int i = 0; i < phrases; ++i) {
    // How often the phrase occurs in this message (its positions, walked directly).
    double f = 0;
    Fts5PhraseIter it;
    int column = 0, offset = 0;
    if (int rc = api->xPhraseFirst(fts, i, &it, &column, &offset); rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    for (; column >= 0; api->xPhraseNext(fts, &it, &column, &offset)) f += 1;
    if (f == 0) continue;
    // A phrase the caller gave no count for counts as in every message: it weighs nothing.
    double n = i < n_val ? sqlite3_value_double(val[i]) : totals->rows;
    n = std::clamp(n, 0.0, totals->rows);
    double idf = std::log((totals->rows - n + 0.5) / (n + 0.5));
    if (idf <= 0.0) idf = 1e-6;
    score += idf * (f * (k1 + 1.0)) / (f + norm);
  }
  sqlite3_result_double(ctx, -score);
}

// Registers ctx_rank on a connection (FTS5's extension interface, reached through "SELECT
// fts5(?)").
bool register_rank(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &s, nullptr) != SQLITE_OK) return false;
  sqlite3_bind_pointer(s, 1, reinterpret_cast<void*>(&api), "fts5_api_ptr", nullptr);
  sqlite3_step(s);
  sqlite3_finalize(s);
  if (!api || api->iVersion < 2) return false;
  return api->xCreateFunction(api, "ctx_rank", nullptr, ctx_rank, nullptr) == SQLITE_OK;
}

}  // namespace

struct SearchIndex::Statements {
  Statements(sqlite3* db)
      : meta(db,
             "INSERT INTO messages(file_id, line, offset, timestamp, role) VALUES(?1,?2,?3,?4,?5)"),
        text(db, "INSERT INTO fts(rowid, body) VALUES(?1,?2)"),
        progress(db,
                 "UPDATE files SET indexed_bytes=?2, indexed_lines=?3, excluded=?4 WHERE id=?1") {}
  Stmt meta, text, progress;
};

SearchIndex::SearchIndex(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
Error SearchIndex::error(const std::string& what, int rc) const {
  return Error{fmt::format("search index {}: {}: {}", path_, what,
                           db_ ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc)),
               sqlite::error_kind(rc)};
}

Error SearchIndex::searching_error(int rc) const {
  // SQLITE_ERROR while a step reads the match is about the query itself: said without the
  // index's path (the answer may go to the model, not to the user).
  if (rc == SQLITE_ERROR)
    return Error{fmt::format("the query could not be searched: {}", sqlite3_errmsg(db_.get())),
                 Error::Kind::Invalid};
  return error("searching", rc);
}

Result<void> SearchIndex::exec(const char* sql) {
  return sqlite::exec(db_.get(), sql, "search index", path_);
}

Result<void> SearchIndex::begin() {
  return exec("BEGIN IMMEDIATE");
}
Result<void> SearchIndex::commit() {
  return exec("COMMIT");
}
void SearchIndex::rollback() {
  (void)exec("ROLLBACK");
}

Result<SearchIndex> SearchIndex::open(const fs::path& path, int busy_timeout_ms) {
  // archive/ (and any missing folder above it): 0700 whatever the umask, never a link.
  if (auto made = util::make_private_dirs(path.parent_path()); !made)
    return fail(made.error().message, Error::Kind::ReadOnly);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return fail(fmt::format("search index {}: {}", path.string(), std::strerror(errno)),
                Error::Kind::ReadOnly);
  ::close(fd);
  sqlite3* raw = nullptr;
  sqlite::configure_once();
  // No link followed in the index's folder; the folders above it are the user's.
  int rc = sqlite3_open_v2(
      util::resolve_above(path, path.parent_path()).c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
      nullptr);
  SearchIndex idx(raw, path.string());
  if (rc != SQLITE_OK) return std::unexpected(idx.error("opening", rc));
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  // Checkpoints (each with an fsync) every 64 MB of log rather than every 4 MB: an indexer writes
  // in long batches, and waiting on the disk a dozen times per 100 MB archived cost a third of
  // its time.
  if (auto r = idx.exec(
          "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=16384;");
      !r)
    return std::unexpected(r.error());
  auto version = [&]() -> Result<int> {
    Stmt v(raw, "PRAGMA user_version");
    if (v.prepare_rc() != SQLITE_OK)
      return std::unexpected(idx.error("reading the schema version", v.prepare_rc()));
    int src = v.step();
    if (src != SQLITE_ROW) return std::unexpected(idx.error("reading the schema version", src));
    return static_cast<int>(v.col_int(0));
  };
  auto seen = version();
  if (!seen) return std::unexpected(seen.error());
  if (*seen != kSchemaVersion) {
    // Only a new or older index takes the write lock (readers never wait for an indexer).
    CTXKIT_TRY(idx.exec("BEGIN IMMEDIATE"));
    auto now = version();
    if (!now) {
      idx.rollback();
      return std::unexpected(now.error());
    }
    if (*now > kSchemaVersion) {
      idx.rollback();
      return fail(fmt::format("search index {}: schema version {} is newer than this ctxkit ({})",
                              path.string(), *now, kSchemaVersion));
    }
    if (*now < kSchemaVersion) {
      // Version 1 kept a copy of every message, version 2 was one database: the index is rebuilt
      // from the archive.
      const char* drop =
          "DROP TABLE IF EXISTS messages; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS fts;";
      if (auto r = idx.exec(*now > 0 ? drop : ""); !r) {
        idx.rollback();
        return std::unexpected(r.error());
      }
      if (auto r = idx.exec(kSchema); !r) {
        idx.rollback();
        return std::unexpected(r.error());
      }
      (void)idx.exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
    }
    CTXKIT_TRY(idx.exec("COMMIT"));
    if (*now > 0 && *now < kSchemaVersion) (void)idx.exec("VACUUM");
  }
  // Where a line is (archive_show): added to indexes of this schema made before it existed; a
  // no-op once it exists.
  CTXKIT_TRY(idx.exec(kLineIndex));
  idx.ranks_ = register_rank(raw);
  idx.st_ = std::make_shared<Statements>(raw);
  for (Stmt* s : {&idx.st_->meta, &idx.st_->text, &idx.st_->progress})
    if (s->prepare_rc() != SQLITE_OK)
      return std::unexpected(idx.error("preparing", s->prepare_rc()));
  return idx;
}

Result<SearchIndex> SearchIndex::open_read_only(const fs::path& path, int busy_timeout_ms) {
  auto db = store::open_read_only(path, busy_timeout_ms);
  if (!db) return std::unexpected(db.error());
  SearchIndex idx(db->release(), path.string());
  Stmt v(idx.db_.get(), "PRAGMA user_version");
  if (v.prepare_rc() != SQLITE_OK)
    return std::unexpected(idx.error("reading the schema version", v.prepare_rc()));
  int rc = v.step();
  if (rc != SQLITE_ROW) return std::unexpected(idx.error("reading the schema version", rc));
  if (int seen = static_cast<int>(v.col_int(0)); seen != kSchemaVersion)
    return fail(fmt::format("search index {}: schema version {}, this ctxkit's is {}",
                            path.string(), seen, kSchemaVersion),
                Error::Kind::Invalid);
  idx.ranks_ = register_rank(idx.db_.get());
  return idx;
}

Result<IndexedFile> SearchIndex::file(const std::string& path, const std::string& session_id,
                                      const std::string& project) {
  IndexedFile f;
  {
    Stmt s(db_.get(),
           "SELECT id, session_id, project, indexed_bytes, indexed_lines, excluded FROM files "
           "WHERE path=?1");
    s.bind(1, path);
    int rc = s.step();
    if (rc == SQLITE_ROW) {
      f = {s.col_int(0),
           s.col_text(1),
           s.col_text(2),
           static_cast<uint64_t>(s.col_int(3)),
           static_cast<uint64_t>(s.col_int(4)),
           s.col_int(5) != 0};
      return f;
    }
    if (rc != SQLITE_DONE) return std::unexpected(error("reading files", rc));
  }
  Stmt ins(db_.get(), "INSERT INTO files(path, session_id, project) VALUES(?1,?2,?3)");
  ins.bind(1, path);
  ins.bind(2, session_id);
  ins.bind(3, project);
  if (int rc = ins.step(); rc != SQLITE_DONE) return std::unexpected(error("recording files", rc));
  f.id = sqlite3_last_insert_rowid(db_.get());
  f.session_id = session_id;
  f.project = project;
  return f;
}

Result<std::map<std::string, IndexedFile>> SearchIndex::files() {
  std::map<std::string, IndexedFile> out;
  Stmt s(db_.get(),
         "SELECT path, id, session_id, project, indexed_bytes, indexed_lines, excluded FROM files");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading files", s.prepare_rc()));
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading files", rc));
    out[s.col_text(0)] = {s.col_int(1),
                          s.col_text(2),
                          s.col_text(3),
                          static_cast<uint64_t>(s.col_int(4)),
                          static_cast<uint64_t>(s.col_int(5)),
                          s.col_int(6) != 0};
  }
  return out;
}

Result<void> SearchIndex::add(int64_t file_id, const IndexRow& row) {
  if (!st_)
    return fail(fmt::format("search index {}: opened read-only", path_), Error::Kind::ReadOnly);
  Stmt& m = st_->meta;
  m.bind(1, file_id);
  m.bind(2, row.line);
  m.bind(3, row.offset);
  m.bind_view(4, row.timestamp);
  m.bind_view(5, row.role);
  int rc = m.step();
  m.reset();
  if (rc != SQLITE_DONE) return std::unexpected(error("indexing", rc));
  Stmt& t = st_->text;
  t.bind(1, static_cast<int64_t>(sqlite3_last_insert_rowid(db_.get())));
  t.bind_view(2, row.text);
  rc = t.step();
  t.reset();
  if (rc != SQLITE_DONE) return std::unexpected(error("indexing", rc));
  return {};
}

Result<void> SearchIndex::set_progress(int64_t file_id, uint64_t bytes, uint64_t lines,
                                       bool excluded) {
  if (!st_)
    return fail(fmt::format("search index {}: opened read-only", path_), Error::Kind::ReadOnly);
  Stmt& p = st_->progress;
  p.bind(1, file_id);
  p.bind(2, static_cast<int64_t>(bytes));
  p.bind(3, static_cast<int64_t>(lines));
  p.bind(4, static_cast<int64_t>(excluded ? 1 : 0));
  int rc = p.step();
  p.reset();
  if (rc != SQLITE_DONE) return std::unexpected(error("recording files", rc));
  return {};
}

Result<uint64_t> SearchIndex::remove_file_rows(
    int64_t file_id, const std::function<std::optional<std::string>(int64_t)>& text_at) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  {
    Stmt s(db_.get(), "SELECT id, offset FROM messages WHERE file_id=?1");
    s.bind(1, file_id);
    while (true) {
      int rc = s.step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return std::unexpected(error("reading messages", rc));
      rows.emplace_back(s.col_int(0), s.col_int(1));
    }
  }
  Stmt del(db_.get(), "INSERT INTO fts(fts, rowid, body) VALUES('delete', ?1, ?2)");
  for (const auto& [id, offset] : rows) {
    auto text = text_at(offset);
    if (!text) continue;
    del.bind(1, id);
    del.bind(2, *text);
    int rc = del.step();
    del.reset();
    if (rc != SQLITE_DONE) return std::unexpected(error("removing messages", rc));
  }
  Stmt d(db_.get(), "DELETE FROM messages WHERE file_id=?1");
  d.bind(1, file_id);
  if (int rc = d.step(); rc != SQLITE_DONE) return std::unexpected(error("removing messages", rc));
  return rows.size();
}

namespace {
// What separates the words of a query: a space and every control character, as a tab or a
// newline always did (a NUL inside a quoted phrase would end FTS5's reading of the expression:
// "unterminated string").
bool separates(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7F;
}

// Moves `pos` back to the start of a UTF-8 sequence.
size_t char_start(const std::string& s, size_t pos) {
  while (pos > 0 && pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}
}  // namespace

std::string make_snippet(const std::string& text, const std::string& words) {
  constexpr size_t kBefore = 60, kAfter = 140;
  std::vector<std::string> terms;
  size_t i = 0;
  while (i < words.size()) {
    while (i < words.size() && separates(words[i])) ++i;
    size_t start = i;
    while (i < words.size() && !separates(words[i])) ++i;
    if (i > start) terms.push_back(util::ascii_lower(words.substr(start, i - start)));
  }
  const std::string low = util::ascii_lower(text);
  // Center on the rarest word that occurs (the identifier, not the common word beside it).
  size_t first = std::string::npos, fewest = std::string::npos;
  for (const auto& t : terms) {
    if (t.empty()) continue;
    size_t at = low.find(t);
    if (at == std::string::npos) continue;
    size_t count = 0;
    for (size_t p = at; p != std::string::npos && count < fewest; p = low.find(t, p + t.size()))
      ++count;
    if (count < fewest) {
      fewest = count;
      first = at;
    }
  }
  if (first == std::string::npos) first = 0;
  size_t from = char_start(text, first > kBefore ? first - kBefore : 0);
  size_t to = char_start(text, std::min(text.size(), first + kAfter));
  if (to < text.size() && to <= from) to = text.size();
  // Mark every term in the window.
  std::string out = from > 0 ? "…" : "";
  size_t pos = from;
  while (pos < to) {
    size_t best = std::string::npos, len = 0;
    for (const auto& t : terms) {
      size_t at = t.empty() ? std::string::npos : low.find(t, pos);
      if (at < best && at + t.size() <= to) {
        best = at;
        len = t.size();
      }
    }
    if (best == std::string::npos) break;
    out.append(text, pos, best - pos);
    out += '[';
    out.append(text, best, len);
    out += ']';
    pos = best + len;
  }
  out.append(text, pos, to - pos);
  if (to < text.size()) out += "…";
  return out;
}

std::string SearchIndex::fts_query(const std::string& words) {
  std::string out;
  for (const auto& p : fts_phrases(words)) {
    if (!out.empty()) out += ' ';
    out += p;
  }
  return out;
}

std::string SearchIndex::query_too_long(const std::string& words) {
  if (words.size() > kMaxQueryBytes)
    return fmt::format("the query is {} bytes long; give at most {}", words.size(), kMaxQueryBytes);
  size_t n = 0;
  for (size_t i = 0; i < words.size();) {
    while (i < words.size() && separates(words[i])) ++i;
    if (i < words.size()) ++n;
    while (i < words.size() && !separates(words[i])) ++i;
  }
  if (n > kMaxQueryWords)
    return fmt::format("the query has {} words; give at most {}", n, kMaxQueryWords);
  return {};
}

std::vector<std::string> SearchIndex::fts_phrases(const std::string& words) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < words.size()) {
    while (i < words.size() && separates(words[i])) ++i;
    size_t start = i;
    while (i < words.size() && !separates(words[i])) ++i;
    if (i == start) break;
    std::string w = words.substr(start, i - start);
    std::string quoted = "\"";
    for (char c : w) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += '"';
    out.push_back(std::move(quoted));
  }
  return out;
}

void SearchIndex::checkpoint() {
  // Without waiting: a reader in the way leaves the log for a later checkpoint.
  sqlite3_busy_timeout(db_.get(), 0);
  (void)exec("PRAGMA wal_checkpoint(TRUNCATE)");
  sqlite3_busy_timeout(db_.get(), busy_timeout_ms_);
}

Result<std::vector<std::string>> SearchIndex::excluded_paths() {
  std::vector<std::string> out;
  Stmt s(db_.get(), "SELECT path FROM files WHERE excluded=1");
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading files", s.prepare_rc()));
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading files", rc));
    out.push_back(s.col_text(0));
  }
  return out;
}

namespace {
// The filters of a search as SQL after the FTS5 match (?1), numbered from ?2.
std::string filter_sql(const SearchQuery& q, int& n) {
  std::string sql;
  if (!q.project.empty()) sql += fmt::format(" AND f.project = ?{}", n++);
  if (!q.session.empty()) sql += fmt::format(" AND f.session_id = ?{}", n++);
  if (!q.since.empty()) sql += fmt::format(" AND m.timestamp >= ?{}", n++);
  return sql;
}
void bind_filters(sqlite::Stmt& s, const SearchQuery& q, int& k) {
  if (!q.project.empty()) s.bind(k++, q.project);
  if (!q.session.empty()) s.bind(k++, q.session);
  if (!q.since.empty()) s.bind(k++, q.since);
}
}  // namespace

Result<int64_t> SearchIndex::count_matches(const SearchQuery& q, int64_t up_to) {
  if (auto why = query_too_long(q.words); !why.empty()) return fail(why, Error::Kind::Invalid);
  std::string match = fts_query(q.words);
  if (match.empty()) return fail("nothing to search for", Error::Kind::Invalid);
  int n = 2;
  std::string sql =
      "SELECT count(*) FROM (SELECT m.id FROM fts CROSS JOIN messages m ON m.id = fts.rowid CROSS "
      "JOIN files f ON f.id = m.file_id "
      "WHERE fts MATCH ?1 AND f.excluded = 0" +
      filter_sql(q, n);
  sql += fmt::format(" LIMIT ?{})", n);
  Stmt s(db_.get(), sql);
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("preparing search", s.prepare_rc()));
  int k = 1;
  s.bind(k++, match);
  bind_filters(s, q, k);
  s.bind(k, up_to);
  int rc = s.step();
  if (rc != SQLITE_ROW) return std::unexpected(searching_error(rc));
  return s.col_int(0);
}

Result<SearchResult> SearchIndex::search(const SearchQuery& q, int64_t max_ranked, bool ranked) {
  if (auto why = query_too_long(q.words); !why.empty()) return fail(why, Error::Kind::Invalid);
  std::string match = fts_query(q.words);
  if (match.empty()) return fail("nothing to search for", Error::Kind::Invalid);
  SearchResult result;
  // Where the newest kMaxRanked matches begin (walking matches by rowid is cheap; ranking is not).
  int64_t floor_rowid = 0;
  if (ranked) {
    Stmt c(db_.get(),
           "SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2");
    if (c.prepare_rc() != SQLITE_OK)
      return std::unexpected(error("preparing search", c.prepare_rc()));
    c.bind(1, match);
    c.bind(2, max_ranked);
    int rc = c.step();
    if (rc == SQLITE_ROW) {
      floor_rowid = c.col_int(0) + 1;
      result.capped = true;
    } else if (rc != SQLITE_DONE) {
      return std::unexpected(searching_error(rc));
    }
  }
  // The rank: bm25 with each phrase's number of messages counted up to kPhraseSample (the newest)
  // and, beyond, estimated from how densely those newest matches lie among the newest messages.
  // bm25() itself would count them over the whole index (tens of milliseconds for a word most
  // messages hold); the estimate only matters for such words, whose weight is near nothing.
  std::string rank_sql = "bm25(fts)";
  std::vector<double> counts;
  if (ranked && ranks_) {
    auto phrase_counts = this->phrase_counts(fts_phrases(q.words));
    if (!phrase_counts) return std::unexpected(phrase_counts.error());
    // A word without a token (punctuation alone) is no phrase of FTS5's: it drops it from the
    // query, so its count (none) is left out too.
    for (double c : *phrase_counts)
      if (c > 0) counts.push_back(c);
    // The counts are numbers of this function's own making: written into the SQL as they are.
    rank_sql = "ctx_rank(fts";
    for (double c : counts) rank_sql += fmt::format(", {:.1f}", c);
    rank_sql += ")";
  }
  std::string sql =
      std::string("SELECT f.session_id, f.project, m.line, m.timestamp, m.role, ") +
      (ranked ? rank_sql : "0.0") +
      ", f.path, m.offset "
      // CROSS JOIN keeps the FTS5 match the outer loop (SQLite would otherwise scan messages).
      "FROM fts CROSS JOIN messages m ON m.id = fts.rowid CROSS JOIN files f ON f.id = m.file_id "
      "WHERE fts MATCH ?1 AND f.excluded = 0";
  int n = 2;
  if (floor_rowid > 0) sql += fmt::format(" AND fts.rowid >= ?{}", n++);
  sql += filter_sql(q, n);
  sql += ranked ? fmt::format(" ORDER BY 6 LIMIT ?{}", n)
                : fmt::format(" ORDER BY fts.rowid DESC LIMIT ?{}", n);
  Stmt s(db_.get(), sql);
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("preparing search", s.prepare_rc()));
  int k = 1;
  s.bind(k++, match);
  if (floor_rowid > 0) s.bind(k++, floor_rowid);
  bind_filters(s, q, k);
  s.bind(k, static_cast<int64_t>(q.limit));
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(searching_error(rc));
    SearchHit h;
    h.session_id = s.col_text(0);
    h.project = s.col_text(1);
    h.line = s.col_int(2);
    h.timestamp = s.col_text(3);
    h.role = s.col_text(4);
    h.rank = s.col_double(5);
    h.path = s.col_text(6);
    h.offset = s.col_int(7);
    result.hits.push_back(std::move(h));
  }
  return result;
}

Result<std::vector<double>> SearchIndex::phrase_counts(const std::vector<std::string>& phrases,
                                                       int64_t sample) {
  std::vector<double> out;
  int64_t newest = 0;
  {
    Stmt m(db_.get(), "SELECT max(id) FROM messages");
    if (m.prepare_rc() != SQLITE_OK)
      return std::unexpected(error("preparing search", m.prepare_rc()));
    if (int rc = m.step(); rc != SQLITE_ROW) return std::unexpected(error("searching", rc));
    newest = m.col_int(0);
  }
  Stmt c(db_.get(),
         "SELECT count(*), min(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY "
         "rowid DESC LIMIT ?2)");
  if (c.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("preparing search", c.prepare_rc()));
  for (const auto& phrase : phrases) {
    c.bind(1, phrase);
    c.bind(2, sample);
    int rc = c.step();
    if (rc != SQLITE_ROW) {
      c.reset();
      return std::unexpected(searching_error(rc));
    }
    const int64_t found = c.col_int(0), oldest = c.col_int(1);
    c.reset();
    // Fewer than `sample`: the exact count. Else that many in the stretch of rows from the oldest
    // of them to the newest message, scaled to the whole index.
    if (found < sample || oldest <= 0 || newest < oldest)
      out.push_back(static_cast<double>(found));
    else
      out.push_back(static_cast<double>(found) * static_cast<double>(newest) /
                    static_cast<double>(newest - oldest + 1));
  }
  return out;
}

Result<int64_t> SearchIndex::token_documents(const std::string& token) {
  if (auto r =
          exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, fts, 'row')");
      !r)
    return std::unexpected(r.error());
  Stmt s(db_.get(), "SELECT doc FROM temp.vocab WHERE term=?1");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading the vocabulary", s.prepare_rc()));
  s.bind(1, token);
  int rc = s.step();
  if (rc == SQLITE_DONE) return 0;
  if (rc != SQLITE_ROW) return std::unexpected(error("reading the vocabulary", rc));
  return s.col_int(0);
}

std::string agent_of_path(std::string_view path) {
  fs::path p(path);
  if (p.parent_path().filename() != "subagents") return {};
  return p.stem().string();
}

Result<std::optional<fs::path>> SearchIndex::file_of(const std::string& session_id,
                                                     const std::string& agent) {
  Stmt s(db_.get(), "SELECT path FROM files WHERE session_id=?1 ORDER BY indexed_bytes DESC");
  s.bind(1, session_id);
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) return std::optional<fs::path>();
    if (rc != SQLITE_ROW) return std::unexpected(error("reading files", rc));
    std::string path = s.col_text(0);
    if (agent_of_path(path) == agent) return std::optional<fs::path>(fs::path(path));
  }
}

Result<std::optional<IndexedLine>> SearchIndex::line_at_or_before(const fs::path& file,
                                                                  int64_t line) {
  Stmt s(db_.get(),
         "SELECT m.line, m.offset FROM files f CROSS JOIN messages m ON m.file_id = f.id "
         "WHERE f.path = ?1 AND m.line <= ?2 ORDER BY m.line DESC LIMIT 1");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading messages", s.prepare_rc()));
  s.bind(1, file.string());
  s.bind(2, line);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<IndexedLine>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading messages", rc));
  return std::optional<IndexedLine>(IndexedLine{s.col_int(0), s.col_int(1)});
}

}  // namespace ctxkit::store
