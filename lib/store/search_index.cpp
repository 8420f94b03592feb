#include "store/search_index.hpp"

#include <fcntl.h>
#include <sqlite3.h>

#include "store/sqlite_stmt.hpp"
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "util/line_reader.hpp"
#include "util/utf8.hpp"

namespace ctxkit {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using sqlite::Stmt;

const char* kSchema =
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, session_id TEXT NOT NULL, project TEXT NOT NULL,"
    "  indexed_bytes INTEGER NOT NULL DEFAULT 0, indexed_lines INTEGER NOT NULL DEFAULT 0,"
    "  excluded INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS files_session ON files(session_id);"
    "CREATE VIRTUAL TABLE IF NOT EXISTS messages USING fts5(text, session_id UNINDEXED, project UNINDEXED,"
    "  line UNINDEXED, timestamp UNINDEXED, role UNINDEXED, tokenize='unicode61');";

std::string text_of_content(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const auto& b : content) {
    if (!b.is_object()) continue;
    std::string type = b.value("type", "");
    std::string piece;
    if (type == "text" && b.contains("text") && b["text"].is_string()) piece = b["text"].get<std::string>();
    else if (type == "tool_use" && b.contains("input")) piece = fmt::format("{} {}", b.value("name", ""), b["input"].dump(-1, ' ', false, json::error_handler_t::replace));
    else if (type == "tool_result" && b.contains("content")) piece = text_of_content(b["content"]);
    if (piece.empty()) continue;
    if (!out.empty()) out += '\n';
    out += piece;
  }
  return out;
}
}  // namespace

MessageText message_text(std::string_view line) {
  MessageText m;
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded()) j = json::parse(util::sanitize_json_text(line), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return m;
  std::string type = j.value("type", "");
  if (type != "user" && type != "assistant") return m;
  auto msg = j.find("message");
  if (msg == j.end() || !msg->is_object() || !msg->contains("content")) return m;
  const json& content = (*msg)["content"];
  m.timestamp = j.value("timestamp", "");
  m.text = text_of_content(content);
  m.role = type;
  if (content.is_array() && !content.empty() && content[0].is_object()) {
    std::string first = content[0].value("type", "");
    if (first == "tool_result") m.role = "tool_result";
    else if (first == "tool_use") m.role = "tool_use";
  }
  return m;
}

SearchIndex::SearchIndex(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
Error SearchIndex::error(const std::string& what, int rc) const {
  return Error{fmt::format("search index {}: {}: {}", path_, what, db_ ? sqlite3_errmsg(db_.get()) : sqlite3_errstr(rc))};
}

Result<void> SearchIndex::exec(const char* sql) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    return fail(fmt::format("search index {}: {}", path_, m), (rc & 0xff) == SQLITE_BUSY ? Error::Kind::Busy : Error::Kind::Generic);
  }
  return {};
}

Result<SearchIndex> SearchIndex::open(const fs::path& path, int busy_timeout_ms) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fail(fmt::format("creating {}: {}", path.parent_path().string(), ec.message()), Error::Kind::ReadOnly);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  SearchIndex idx(raw, path.string());
  if (rc != SQLITE_OK) return std::unexpected(idx.error("opening", rc));
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  if (auto r = idx.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !r) return std::unexpected(r.error());
  if (auto r = idx.exec("BEGIN IMMEDIATE"); !r) return std::unexpected(r.error());
  Stmt v(raw, "PRAGMA user_version");
  int version = v.step() == SQLITE_ROW ? static_cast<int>(v.col_int(0)) : 0;
  if (version > kSchemaVersion) {
    (void)idx.exec("ROLLBACK");
    return fail(fmt::format("search index {}: schema version {} is newer than this ctxkit ({})", path.string(), version, kSchemaVersion));
  }
  if (version < kSchemaVersion) {
    if (auto r = idx.exec(kSchema); !r) {
      (void)idx.exec("ROLLBACK");
      return std::unexpected(r.error());
    }
    (void)idx.exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
  }
  if (auto r = idx.exec("COMMIT"); !r) return std::unexpected(r.error());
  return idx;
}

Result<IndexReport> SearchIndex::index_file(const fs::path& transcript, const std::string& session_id,
                                            const std::string& project, const std::string& marker) {
  IndexReport report;
  const std::string path = transcript.string();
  if (auto r = exec("BEGIN IMMEDIATE"); !r) return std::unexpected(r.error());
  auto rollback = [&](Error e) -> Result<IndexReport> {
    (void)exec("ROLLBACK");
    return std::unexpected(std::move(e));
  };
  uint64_t from = 0, lines_before = 0;
  bool excluded = false;
  {
    Stmt s(db_.get(), "SELECT indexed_bytes, indexed_lines, excluded FROM files WHERE path=?1");
    s.bind(1, path);
    int rc = s.step();
    if (rc == SQLITE_ROW) {
      from = static_cast<uint64_t>(s.col_int(0));
      lines_before = static_cast<uint64_t>(s.col_int(1));
      excluded = s.col_int(2) != 0;
    } else if (rc != SQLITE_DONE) {
      return rollback(error("reading files", rc));
    }
  }
  struct stat st {};
  if (::stat(transcript.c_str(), &st) != 0) return rollback(Error{fmt::format("reading {}: {}", path, std::strerror(errno))});
  if (static_cast<uint64_t>(st.st_size) < from) {
    // The file was replaced by a shorter one: start over for it.
    Stmt d(db_.get(), "DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages WHERE session_id=?1 AND project=?2)");
    d.bind(1, session_id);
    d.bind(2, project);
    d.step();
    from = 0;
    lines_before = 0;
  }
  report.excluded = excluded;
  report.indexed_bytes = from;
  if (!excluded) {
    // Only what was added since the last run is read.
    auto reader = util::LineReader::open(transcript, static_cast<uint64_t>(st.st_size), 4 << 20, from, lines_before + 1);
    if (!reader) return rollback(reader.error());
    Stmt ins(db_.get(), "INSERT INTO messages(text, session_id, project, line, timestamp, role) VALUES(?1,?2,?3,?4,?5,?6)");
    if (ins.prepare_rc() != SQLITE_OK) return rollback(error("preparing insert", ins.prepare_rc()));
    uint64_t line_no = lines_before;
    while (true) {
      auto next = reader->next();
      if (!next) return rollback(next.error());
      if (!*next) break;
      const auto& l = **next;
      line_no = l.number;
      report.lines_read++;
      if (!marker.empty() && l.text.find(marker) != std::string_view::npos) {
        excluded = true;
        report.excluded = true;
        break;
      }
      MessageText m = message_text(l.text);
      if (m.text.empty()) continue;
      ins.bind(1, m.text);
      ins.bind(2, session_id);
      ins.bind(3, project);
      ins.bind(4, static_cast<int64_t>(l.number));
      ins.bind(5, m.timestamp);
      ins.bind(6, m.role);
      int rc = ins.step();
      ins.reset();
      if (rc != SQLITE_DONE) return rollback(error("indexing", rc));
      report.rows_added++;
    }
    report.indexed_bytes = excluded ? static_cast<uint64_t>(st.st_size) : reader->consumed();
    if (excluded) {
      Stmt d(db_.get(), "DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages WHERE session_id=?1)");
      d.bind(1, session_id);
      if (int rc = d.step(); rc != SQLITE_DONE) return rollback(error("removing an excluded session", rc));
      report.rows_added = 0;
    }
    Stmt up(db_.get(),
            "INSERT INTO files(path, session_id, project, indexed_bytes, indexed_lines, excluded) VALUES(?1,?2,?3,?4,?5,?6) "
            "ON CONFLICT(path) DO UPDATE SET indexed_bytes=excluded.indexed_bytes, indexed_lines=excluded.indexed_lines, "
            "excluded=excluded.excluded");
    up.bind(1, path);
    up.bind(2, session_id);
    up.bind(3, project);
    up.bind(4, static_cast<int64_t>(report.indexed_bytes));
    up.bind(5, static_cast<int64_t>(line_no));
    up.bind(6, static_cast<int64_t>(excluded ? 1 : 0));
    if (int rc = up.step(); rc != SQLITE_DONE) return rollback(error("recording files", rc));
  }
  if (auto r = exec("COMMIT"); !r) return rollback(r.error());
  return report;
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
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
    while (i < words.size() && std::isspace(static_cast<unsigned char>(words[i]))) ++i;
    size_t start = i;
    while (i < words.size() && !std::isspace(static_cast<unsigned char>(words[i]))) ++i;
    if (i > start) terms.push_back(lower(words.substr(start, i - start)));
  }
  const std::string low = lower(text);
  // Center on the rarest word that occurs (the identifier, not the common word beside it).
  size_t first = std::string::npos, fewest = std::string::npos;
  for (const auto& t : terms) {
    if (t.empty()) continue;
    size_t at = low.find(t);
    if (at == std::string::npos) continue;
    size_t count = 0;
    for (size_t p = at; p != std::string::npos && count < fewest; p = low.find(t, p + t.size())) ++count;
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
  size_t i = 0;
  while (i < words.size()) {
    while (i < words.size() && std::isspace(static_cast<unsigned char>(words[i]))) ++i;
    size_t start = i;
    while (i < words.size() && !std::isspace(static_cast<unsigned char>(words[i]))) ++i;
    if (i == start) break;
    std::string w = words.substr(start, i - start);
    std::string quoted = "\"";
    for (char c : w) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += '"';
    if (!out.empty()) out += ' ';
    out += quoted;
  }
  return out;
}

Result<SearchResult> SearchIndex::search(const SearchQuery& q) {
  std::string match = fts_query(q.words);
  if (match.empty()) return fail("nothing to search for", Error::Kind::Invalid);
  SearchResult result;
  // Where the newest kMaxRanked matches begin (walking matches by rowid is cheap; ranking is not).
  int64_t floor_rowid = 0;
  {
    Stmt c(db_.get(), "SELECT rowid FROM messages WHERE messages MATCH ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2");
    if (c.prepare_rc() != SQLITE_OK) return std::unexpected(error("preparing search", c.prepare_rc()));
    c.bind(1, match);
    c.bind(2, kMaxRanked);
    int rc = c.step();
    if (rc == SQLITE_ROW) {
      floor_rowid = c.col_int(0) + 1;
      result.capped = true;
    } else if (rc != SQLITE_DONE) {
      return std::unexpected(error("searching", rc));
    }
  }
  // Rank in a subquery that returns only the best rowids: SQLite computes every result column
  // before sorting, so snippets (which read the whole message) are made for the hits only.
  std::string inner = "SELECT rowid FROM messages WHERE messages MATCH ?1";
  int n = 2;
  if (floor_rowid > 0) inner += fmt::format(" AND rowid >= ?{}", n++);
  if (!q.project.empty()) inner += fmt::format(" AND project = ?{}", n++);
  if (!q.session.empty()) inner += fmt::format(" AND session_id = ?{}", n++);
  if (!q.since.empty()) inner += fmt::format(" AND timestamp >= ?{}", n++);
  inner += fmt::format(" ORDER BY bm25(messages) LIMIT ?{}", n);
  std::string sql =
      "SELECT session_id, project, line, timestamp, role, text, bm25(messages) "
      "FROM messages WHERE messages MATCH ?1 AND rowid IN (" + inner + ") ORDER BY bm25(messages)";
  Stmt s(db_.get(), sql);
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("preparing search", s.prepare_rc()));
  int k = 1;
  s.bind(k++, match);
  if (floor_rowid > 0) s.bind(k++, floor_rowid);
  if (!q.project.empty()) s.bind(k++, q.project);
  if (!q.session.empty()) s.bind(k++, q.session);
  if (!q.since.empty()) s.bind(k++, q.since);
  s.bind(k, static_cast<int64_t>(q.limit));
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("searching", rc));
    result.hits.push_back({s.col_text(0), s.col_text(1), s.col_int(2), s.col_text(3), s.col_text(4),
                           make_snippet(s.col_text(5), q.words), s.col_double(6)});
  }
  return result;
}

Result<std::optional<fs::path>> SearchIndex::file_of(const std::string& session_id) {
  Stmt s(db_.get(), "SELECT path FROM files WHERE session_id=?1 ORDER BY indexed_bytes DESC LIMIT 1");
  s.bind(1, session_id);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<fs::path>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading files", rc));
  return std::optional<fs::path>(fs::path(s.col_text(0)));
}

}  // namespace ctxkit
