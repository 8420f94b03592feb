#pragma once

// A session's pins as a small file beside the state database, so that the PreCompact hook prints
// them without opening the database (its shared WAL index, its schema) on every compaction.
//
// A view is a copy, and is used only while provably current:
// - Every change that can alter what a session's pins are (a pin added or removed, a session
//   recorded or moved to a line) is made by a *writer* holding the views' lock exclusively, and
//   gives the views a new generation (a random number in `pins/views.gen`) before its transaction
//   and again after it.
// - A view is written only under the lock held shared, from what the database holds then, stamped
//   with the generation read under that lock and with the database file's identity.
// - A view is read without any lock, and used only when its generation is the current one and the
//   database is the same file. A writer killed between its commit and its second new generation
//   leaves the first: every view written before it is stale already, and a view written after it
//   (the lock is free once the writer is gone) is read from the committed state.
// A lock still held after the wait (another program holding the file): the writer changes the
// generation at both ends anyway, and no view is written; only a writer killed between its commit
// and its second generation, then, can leave a view read before its commit current.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "util/file_lock.hpp"

namespace ctxkit::store {

// What a session's PreCompact hook needs: the pins' texts (oldest first, as many as are injected)
// and how many there are in all.
struct PinView {
  std::vector<std::string> texts;
  int64_t total = 0;
  // Whether the session's record decided its line and project. When it did not (a session no hook
  // recorded yet), the project came from the folder the pins were read for, and the view holds
  // only for a hook whose folder names the same project.
  bool recorded = true;
  std::string project;
};

class PinViews {
 public:
  // The views of the state database at `db` (in `pins/` beside it).
  explicit PinViews(const std::filesystem::path& db,
                    std::chrono::milliseconds wait = std::chrono::milliseconds(2000));

  // The view of `session_id`, when there is one, current, and valid for a hook whose folder names
  // the project `project`. Reads two small files and stats the database; opens no database.
  std::optional<PinView> read(const std::string& session_id, const std::string& project) const;

  // Held by a writer across its change (see above): the lock, and a new generation at both ends.
  class Change {
   public:
    Change(Change&& other) noexcept : views_(other.views_), lock_(std::move(other.lock_)) {
      other.views_ = nullptr;
    }
    Change& operator=(Change&&) noexcept = delete;
    Change(const Change&) = delete;
    Change& operator=(const Change&) = delete;
    ~Change();

   private:
    friend class PinViews;
    explicit Change(const PinViews* views);
    const PinViews* views_;
    std::optional<util::FileLock> lock_;
  };
  Change change() const;

  // Writes the view of `session_id` with what `read_view` reads from the database, under the lock
  // held shared. Nothing is written when the lock stays taken or read_view fails (its error is
  // returned); a session id that cannot name a file is skipped.
  template <typename ReadView>
  [[nodiscard]] Result<void> refresh(const std::string& session_id, ReadView&& read_view) const {
    auto held = lock(util::FileLock::Mode::Shared);
    if (!held) return std::unexpected(held.error());
    if (!held->has_value()) return {};
    std::string generation = current_generation();
    if (generation.empty()) {  // none yet (no writer ran since the install): start one
      next_generation();
      generation = current_generation();
    }
    Result<PinView> view = read_view();
    if (!view) return std::unexpected(view.error());
    if (generation.empty()) return {};
    return write(session_id, *view, generation);
  }

  // Whether `id` can name a view's file.
  static bool usable_id(const std::string& id);

 private:
  // The views' lock, taken within the wait (nullopt: still held the other way).
  [[nodiscard]] Result<std::optional<util::FileLock>> lock(util::FileLock::Mode mode) const;
  std::string current_generation() const;
  void next_generation() const;
  [[nodiscard]] Result<void> write(const std::string& session_id, const PinView& view,
                                   const std::string& generation) const;
  std::filesystem::path db_, dir_;
  std::chrono::milliseconds wait_;
};

// The text of a view's file, and back (exposed for tests).
std::string encode_pin_view(const PinView& view, const std::string& generation,
                            const std::string& db_identity);
std::optional<PinView> decode_pin_view(const std::string& text, const std::string& generation,
                                       const std::string& db_identity);

}  // namespace ctxkit::store
