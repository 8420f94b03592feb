#include "apps/workflow_sink.hpp"

#include <fmt/core.h>

#include <memory>
#include <optional>

#include "apps/app.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/uuid.hpp"
#include "workflow/reanchor.hpp"
#include "workflow/workflow_events.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

namespace {
constexpr int kReanchorTokens = 2000;
}

bool under_supervisor(const util::Env& env) {
  return env.get_nonempty("CTXKIT_SUPERVISOR").has_value();
}

Result<void> request_supervised_action(const core::Config& cfg, const util::Env& env,
                                       const fs::path& worktree,
                                       const workflow::WorkflowEvent& event) {
  const auto token = env.get_nonempty("CTXKIT_SUPERVISOR");
  if (!token) return fail("not under a supervisor");
  if (event.action != "clear" && event.action != "compact")
    return fail(fmt::format("unknown context action '{}'", event.action));
  const core::Locations loc = cfg.locations(env);
  const std::string session = env.get_nonempty("CLAUDE_CODE_SESSION_ID").value_or("");
  std::string prompt = workflow::workflow_reanchor(worktree, event.action, kReanchorTokens);
  if (prompt.empty())
    prompt = "Continue the workflow: call workflow_status for the current step's instructions.";
  store::PendingRollover p;
  p.supervisor = *token;
  p.session_id = session;
  p.new_session_id = event.action == "clear" ? util::random_uuid() : session;
  p.cwd = worktree.string();
  p.action = event.action;
  p.focus = event.focus;
  const fs::path dir = loc.rollovers_dir();
  if (auto made = util::make_private_dirs(dir, loc.state_dir); !made) return made;
  const fs::path file = dir / fmt::format("workflow-{}-{}.md", event.action, util::random_uuid());
  if (auto w = util::write_file_atomic(file, prompt, 0600, util::Durability::Flush); !w) return w;
  p.prompt_path = file.string();
  auto store = store::StateStore::open(loc.state_db(), cfg.state.busy_timeout_ms);
  if (!store) return std::unexpected(store.error());
  return store->put_pending_rollover(p);
}

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
    if (e.kind == "handed_out" && under_supervisor(env)) {
      if (auto r = request_supervised_action(cfg, env, worktree, e); !r)
        print_note(err, tool,
                   "note: the supervisor cannot carry out /" + e.action + ": " + r.error().message);
    }
  };
}

}  // namespace ctxkit::apps
