#include "store/state_access.hpp"

#include <fmt/core.h>

namespace ctxkit {

std::optional<StateStore> open_state(const Locations& loc, const Config& config,
                                     std::string& problem, Error::Kind* problem_kind) {
  const auto path = loc.state_db();
  uint64_t inode = file_inode(path);
  auto store = StateStore::open(path, config.state.busy_timeout_ms);
  if (store) return std::move(*store);
  if (store.error().kind != Error::Kind::Corrupt) {
    problem = store.error().message;
    if (problem_kind) *problem_kind = store.error().kind;
    return std::nullopt;
  }
  auto aside = quarantine_database(path, inode);
  auto fresh = StateStore::open(path, config.state.busy_timeout_ms);
  if (!fresh) {
    problem = fresh.error().message;
    if (problem_kind) *problem_kind = fresh.error().kind;
    return std::nullopt;
  }
  if (aside && !aside->empty()) {
    problem = fmt::format("state database {} was corrupt; moved it to {} and started a new one",
                          path.string(), aside->string());
  }
  return std::move(*fresh);
}

}  // namespace ctxkit
