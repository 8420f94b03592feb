#include "apps/lineage_app.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "claude/session_locator.hpp"
#include "core/config.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

int run_lineage(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli("ctx-lineage",
                 "Shows a session's line of work: from the first ancestor to the newest descendant "
                 "(trims and rollovers).");
  CLI::App& app = cli.app();
  std::string session;
  bool json_out = false;
  app.add_option("session", session,
                 "session id or transcript path (default: $CLAUDE_CODE_SESSION_ID)");
  app.add_flag("--json", json_out, "print the chain as JSON");
  cli.add_version();
  if (auto rc = cli.parse(args, ctx)) return *rc;
  const auto error = cli.error(ctx);
  if (session.empty()) {
    auto id = ctx.env.get_nonempty("CLAUDE_CODE_SESSION_ID");
    if (!id) return error("no session given and $CLAUDE_CODE_SESSION_ID is not set");
    session = *id;
  }
  if (session.find('/') != std::string::npos || session.ends_with(".jsonl"))
    session = fs::path(session).stem().string();
  core::Config cfg = core::load_config(ctx.env, {core::project_start_dir(ctx.env, "")});
  std::string note;
  auto store = store::open_state(cfg.locations(ctx.env), cfg, note);
  if (!store) return error(note);
  auto start = store->session(session);
  if (!start) return error(start.error().message);
  if (!*start) return error(fmt::format("no lineage recorded for session {}", session));

  // Up to the first ancestor, then down along the newest child.
  std::vector<store::SessionRecord> up{**start};
  for (int guard = 0; guard < 10000 && !up.back().parent_id.empty(); ++guard) {
    auto p = store->session(up.back().parent_id);
    if (!p) return error(p.error().message);
    if (!*p) break;
    up.push_back(**p);
  }
  std::vector<store::SessionRecord> chain(up.rbegin(), up.rend());
  for (int guard = 0; guard < 10000; ++guard) {
    auto kids = store->children(chain.back().session_id);
    if (!kids) return error(kids.error().message);
    if (kids->empty()) break;
    chain.push_back(kids->back());
  }
  if (json_out) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : chain) {
      arr.push_back({{"number", r.number},
                     {"session_id", r.session_id},
                     {"parent_id", r.parent_id.empty() ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(r.parent_id)},
                     {"started_at", r.started_at},
                     {"ended_at", r.ended_at},
                     {"end_reason", r.end_reason},
                     {"context_at_end", r.context_at_end ? nlohmann::ordered_json(*r.context_at_end)
                                                         : nlohmann::ordered_json(nullptr)},
                     {"tokens_saved", r.tokens_saved ? nlohmann::ordered_json(*r.tokens_saved)
                                                     : nlohmann::ordered_json(nullptr)},
                     {"transcript", r.transcript},
                     {"current", r.session_id == session}});
    }
    ctx.out << arr.dump() << '\n';
    return 0;
  }
  for (const auto& r : chain) {
    std::string end =
        r.end_reason.empty()
            ? std::string("open")
            : fmt::format("{} at {}{}{}", r.end_reason, r.ended_at.empty() ? "?" : r.ended_at,
                          r.context_at_end ? fmt::format(", context {}%", *r.context_at_end) : "",
                          r.tokens_saved ? fmt::format(", saved ~{} tokens", *r.tokens_saved) : "");
    ctx.out << fmt::format("{} #{} {}  started {}  {}\n", r.session_id == session ? '*' : ' ',
                           r.number, r.session_id, r.started_at.empty() ? "?" : r.started_at, end);
    if (!r.transcript.empty()) ctx.out << fmt::format("     {}\n", r.transcript);
  }
  return 0;
}

}  // namespace ctxkit::apps
