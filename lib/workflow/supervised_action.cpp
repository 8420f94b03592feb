#include "workflow/supervised_action.hpp"

#include <fmt/core.h>

#include "core/supervision.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/uuid.hpp"
#include "workflow/reanchor.hpp"

namespace ctxkit::workflow {
namespace fs = std::filesystem;

namespace {
constexpr int kReanchorTokens = 2000;
}

bool under_supervisor(const util::Env& env) {
  return core::supervisor_of(env).has_value();
}

Result<void> request_supervised_action(const core::Config& cfg, const util::Env& env,
                                       const fs::path& worktree, const WorkflowEvent& event) {
  const auto supervisor = core::supervisor_of(env);
  if (!supervisor) return fail("not under a supervisor");
  if (event.action != "clear" && event.action != "compact")
    return fail(fmt::format("unknown context action '{}'", event.action));
  const core::Locations loc = cfg.locations(env);
  const std::string session = env.get_nonempty("CLAUDE_CODE_SESSION_ID").value_or("");
  std::string prompt = workflow_reanchor(worktree, event.action, kReanchorTokens);
  if (prompt.empty())
    prompt = "Continue the workflow: call workflow_status for the current step's instructions.";
  store::PendingRollover p;
  p.supervisor = supervisor->token;
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
  return store::hand_over(*store, loc, p);
}

}  // namespace ctxkit::workflow
