#include "store/state_access.hpp"

#include <fmt/core.h>

#include "core/supervision.hpp"

namespace ctxkit::store {

namespace {

// Opens the store at `path`; one SQLite reports as corrupt is moved aside and a fresh one
// created once.
template <class Open>
auto open_or_replace(std::string_view owner, const std::filesystem::path& path, Open open,
                     std::string& problem, Error::Kind* problem_kind)
    -> std::optional<typename decltype(open())::value_type> {
  uint64_t inode = file_inode(path);
  auto store = open();
  if (store) return std::move(*store);
  if (store.error().kind != Error::Kind::Corrupt) {
    problem = store.error().message;
    if (problem_kind) *problem_kind = store.error().kind;
    return std::nullopt;
  }
  auto aside = quarantine_database(path, inode);
  auto fresh = open();
  if (!fresh) {
    problem = fresh.error().message;
    if (problem_kind) *problem_kind = fresh.error().kind;
    return std::nullopt;
  }
  if (aside && !aside->empty()) {
    problem = fmt::format("{} {} was corrupt; moved it to {} and started a new one", owner,
                          path.string(), aside->string());
  }
  return std::move(*fresh);
}

}  // namespace

std::optional<StateStore> open_state(const core::Locations& loc, const core::Config& config,
                                     std::string& problem, Error::Kind* problem_kind) {
  const auto path = loc.state_db();
  return open_or_replace(
      "state database", path, [&] { return StateStore::open(path, config.state.busy_timeout_ms); },
      problem, problem_kind);
}

std::optional<MeterStore> open_meter(const core::Locations& loc, const core::Config& config,
                                     std::string& problem, Error::Kind* problem_kind) {
  const auto path = loc.meter_db();
  return open_or_replace(
      "meter database", path,
      [&] { return MeterStore::open(path, config.state.busy_timeout_ms, loc.state_db()); }, problem,
      problem_kind);
}

Result<void> hand_over(StateStore& store, const core::Locations& loc, const PendingRollover& p) {
  auto earlier = store.pending_rollover(p.supervisor);
  CTXKIT_TRY(store.put_pending_rollover(p));
  if (earlier && *earlier && (**earlier).prompt_path != p.prompt_path)
    core::forget_prompt_file(loc, (**earlier).prompt_path);
  return {};
}

}  // namespace ctxkit::store
