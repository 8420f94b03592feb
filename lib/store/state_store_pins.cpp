// The state database's pins and the checks of what each compaction kept of them.

#include <fmt/core.h>
#include <sqlite3.h>

#include "store/pin_views.hpp"
#include "store/sqlite_stmt.hpp"
#include "store/state_store.hpp"

namespace ctxkit::store {

namespace {
using sqlite::Stmt;

constexpr const char* kPinScope =
    "((scope_kind='line' AND scope=?1 AND ?1<>'') OR (scope_kind='project' AND scope=?2 AND "
    "?2<>''))";

PinCheckRow read_check(Stmt& s) {
  PinCheckRow r;
  r.id = s.col_int(0);
  r.session_id = s.col_text(1);
  r.line_id = s.col_text(2);
  r.at_ms = s.col_int(3);
  r.trigger = s.col_text(4);
  r.total = s.col_int(5);
  r.kept = s.col_int(6);
  r.detail = s.col_text(7);
  r.restored = s.col_int(8);
  r.restored_at_ms = s.col_opt(9);
  return r;
}

constexpr const char* kCheckColumns =
    "id, session_id, line_id, at_ms, trigger, total, kept, detail, restored, restored_at_ms";
}  // namespace

Result<std::string> StateStore::line_of(const std::string& session_id) {
  auto r = session(session_id);
  if (!r) return std::unexpected(r.error());
  if (*r && !(*r)->line_id.empty()) return (*r)->line_id;
  return session_id;
}

Result<int64_t> StateStore::add_pin(const PinRow& pin, int64_t max_per_scope, bool* existed) {
  if (existed) *existed = false;
  const PinViews views{std::filesystem::path(path_)};
  const auto change = views.change();
  CTXKIT_TRY(exec("BEGIN IMMEDIATE"));
  auto rollback = [&](Error e) -> Result<int64_t> {
    (void)exec("ROLLBACK");
    return std::unexpected(std::move(e));
  };
  {
    Stmt s(db_.get(), "SELECT id FROM pins WHERE scope_kind=?1 AND scope=?2 AND text=?3 LIMIT 1");
    if (s.prepare_rc() != SQLITE_OK) return rollback(error("reading pins", s.prepare_rc()));
    s.bind(1, pin.scope_kind);
    s.bind(2, pin.scope);
    s.bind(3, pin.text);
    int rc = s.step();
    if (rc == SQLITE_ROW) {
      const int64_t id = s.col_int(0);
      if (auto c = exec("COMMIT"); !c) return rollback(c.error());
      if (existed) *existed = true;
      return id;
    }
    if (rc != SQLITE_DONE) return rollback(error("reading pins", rc));
  }
  {
    Stmt s(db_.get(), "SELECT count(*) FROM pins WHERE scope_kind=?1 AND scope=?2");
    if (s.prepare_rc() != SQLITE_OK) return rollback(error("reading pins", s.prepare_rc()));
    s.bind(1, pin.scope_kind);
    s.bind(2, pin.scope);
    if (int rc = s.step(); rc != SQLITE_ROW) return rollback(error("reading pins", rc));
    if (s.col_int(0) >= max_per_scope) {
      return rollback(
          Error{fmt::format("the {} already holds {} pins, the most it keeps: remove "
                            "one first (ctx-pin rm ID)",
                            pin.scope_kind == "line" ? "line of work" : "project", max_per_scope),
                Error::Kind::Invalid});
    }
  }
  Stmt s(db_.get(),
         "INSERT INTO pins(scope_kind, scope, text, created_at_ms, session_id) "
         "VALUES(?1,?2,?3,?4,?5)");
  if (s.prepare_rc() != SQLITE_OK) return rollback(error("writing pins", s.prepare_rc()));
  s.bind(1, pin.scope_kind);
  s.bind(2, pin.scope);
  s.bind(3, pin.text);
  s.bind(4, pin.created_at_ms);
  s.bind(5, pin.session_id);
  if (int rc = s.step(); rc != SQLITE_DONE) return rollback(error("writing pins", rc));
  const int64_t id = sqlite3_last_insert_rowid(db_.get());
  if (auto c = exec("COMMIT"); !c) return rollback(c.error());
  return id;
}

Result<std::vector<PinRow>> StateStore::pins(const std::string& line_id, const std::string& project,
                                             int64_t limit) {
  Stmt s(db_.get(), fmt::format("SELECT id, scope_kind, scope, text, created_at_ms, session_id "
                                "FROM pins WHERE {} ORDER BY id LIMIT ?3",
                                kPinScope));
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading pins", s.prepare_rc()));
  s.bind(1, line_id);
  s.bind(2, project);
  s.bind(3, limit);
  std::vector<PinRow> out;
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading pins", rc));
    out.push_back(PinRow{s.col_int(0), s.col_text(1), s.col_text(2), s.col_text(3), s.col_int(4),
                         s.col_text(5)});
  }
  return out;
}

Result<int64_t> StateStore::count_pins(const std::string& line_id, const std::string& project) {
  Stmt s(db_.get(), fmt::format("SELECT count(*) FROM pins WHERE {}", kPinScope));
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("reading pins", s.prepare_rc()));
  s.bind(1, line_id);
  s.bind(2, project);
  if (int rc = s.step(); rc != SQLITE_ROW) return std::unexpected(error("reading pins", rc));
  return s.col_int(0);
}

Result<bool> StateStore::remove_pin(int64_t id, const std::string& line_id,
                                    const std::string& project) {
  const PinViews views{std::filesystem::path(path_)};
  const auto change = views.change();
  Stmt s(db_.get(), fmt::format("DELETE FROM pins WHERE id=?3 AND {}", kPinScope));
  if (s.prepare_rc() != SQLITE_OK) return std::unexpected(error("writing pins", s.prepare_rc()));
  s.bind(1, line_id);
  s.bind(2, project);
  s.bind(3, id);
  if (int rc = s.step(); rc != SQLITE_DONE) return std::unexpected(error("writing pins", rc));
  return sqlite3_changes(db_.get()) > 0;
}

Result<int64_t> StateStore::add_pin_check(const PinCheckRow& c) {
  Stmt s(db_.get(),
         "INSERT INTO pin_checks(session_id, line_id, at_ms, trigger, total, kept, detail, "
         "restored, restored_at_ms) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)");
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("writing pin checks", s.prepare_rc()));
  s.bind(1, c.session_id);
  s.bind(2, c.line_id);
  s.bind(3, c.at_ms);
  s.bind(4, c.trigger);
  s.bind(5, c.total);
  s.bind(6, c.kept);
  s.bind(7, c.detail);
  s.bind(8, c.restored);
  s.bind(9, c.restored_at_ms);
  if (int rc = s.step(); rc != SQLITE_DONE) return std::unexpected(error("writing pin checks", rc));
  return sqlite3_last_insert_rowid(db_.get());
}

Result<std::optional<PinCheckRow>> StateStore::last_pin_check(const std::string& session_id) {
  Stmt s(db_.get(), fmt::format("SELECT {} FROM pin_checks WHERE session_id=?1 ORDER BY id DESC "
                                "LIMIT 1",
                                kCheckColumns));
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading pin checks", s.prepare_rc()));
  s.bind(1, session_id);
  int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<PinCheckRow>();
  if (rc != SQLITE_ROW) return std::unexpected(error("reading pin checks", rc));
  return std::optional<PinCheckRow>(read_check(s));
}

Result<std::vector<PinCheckRow>> StateStore::pin_checks_of_line(const std::string& line_id) {
  Stmt s(db_.get(),
         fmt::format("SELECT {} FROM pin_checks WHERE line_id=?1 ORDER BY id", kCheckColumns));
  if (s.prepare_rc() != SQLITE_OK)
    return std::unexpected(error("reading pin checks", s.prepare_rc()));
  s.bind(1, line_id);
  std::vector<PinCheckRow> out;
  while (true) {
    int rc = s.step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return std::unexpected(error("reading pin checks", rc));
    out.push_back(read_check(s));
  }
  return out;
}

}  // namespace ctxkit::store
