#include "apps/workflow_sink.hpp"

#include <fmt/core.h>

#include <memory>
#include <optional>

#include "apps/app.hpp"
#include "store/state_store.hpp"
#include "workflow/supervised_action.hpp"
#include "workflow/workflow_events.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

std::function<void(const workflow::WorkflowEvent&)> workflow_event_sink(const core::Config& cfg,
                                                                        const util::Env& env,
                                                                        const fs::path& worktree,
                                                                        std::ostream& err,
                                                                        const char* tool) {
  // The database is opened at the first event and kept (a server hands out many); after an
  // error, or once the file is another one (moved aside as corrupt and made again), it is opened
  // again.
  struct Kept {
    std::optional<store::StateStore> store;
    uint64_t inode = 0;
  };
  auto kept = std::make_shared<Kept>();
  return [cfg, env, worktree, &err, tool, kept](const workflow::WorkflowEvent& e) {
    const fs::path db = cfg.locations(env).state_db();
    if (kept->store && store::file_inode(db) != kept->inode) kept->store.reset();
    if (!kept->store) {
      auto opened = store::StateStore::open(db, cfg.state.busy_timeout_ms);
      if (!opened) {
        print_note(err, tool, "note: " + opened.error().message);
      } else {
        kept->store.emplace(std::move(*opened));
        kept->inode = store::file_inode(db);
      }
    }
    auto* store = &kept->store;
    if (*store) {
      if (auto r = workflow::append_event(**store, worktree, e); !r) {
        print_note(err, tool, "note: " + r.error().message);
        store->reset();
      }
    }
    if (e.kind == "handed_out" && workflow::under_supervisor(env)) {
      if (auto r = workflow::request_supervised_action(cfg, env, worktree, e); !r)
        print_note(err, tool,
                   "note: the supervisor cannot carry out /" + e.action + ": " + r.error().message);
    }
  };
}

}  // namespace ctxkit::apps
