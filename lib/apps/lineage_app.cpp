#include "apps/lineage_app.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "apps/cli.hpp"
#include "claude/session_locator.hpp"
#include "context/pins.hpp"
#include "core/config.hpp"
#include "store/state_access.hpp"
#include "store/state_store.hpp"
#include "util/json_io.hpp"
#include "util/one_line.hpp"
#include "util/time.hpp"

namespace ctxkit::apps {
namespace fs = std::filesystem;

int run_lineage(const std::vector<std::string>& args, AppContext& ctx) {
  ProgramCli cli("ctx-lineage",
                 "Shows a session's line of work: from the first ancestor to the newest descendant "
                 "(trims and rollovers).");
  auto app = cli.app();
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
  // The compactions of each session, with what they kept of the pins (pin checks).
  std::vector<store::PinCheckRow> checks;
  if (auto c = store->pin_checks_of_line(chain.front().line_id.empty() ? chain.front().session_id
                                                                       : chain.front().line_id))
    checks = std::move(*c);
  else
    return error(c.error().message);
  auto checks_of = [&](const std::string& id) {
    std::vector<const store::PinCheckRow*> out;
    for (const auto& c : checks)
      if (c.session_id == id) out.push_back(&c);
    return out;
  };
  auto detail_of = [](const store::PinCheckRow& c) {
    nlohmann::ordered_json d = nlohmann::ordered_json::array();
    try {
      d = util::parse_ordered_json_or_throw(c.detail);
    } catch (const std::exception&) {
    }
    return d.is_array() ? d : nlohmann::ordered_json::array();
  };
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
      nlohmann::ordered_json compactions = nlohmann::ordered_json::array();
      for (const auto* c : checks_of(r.session_id)) {
        nlohmann::ordered_json pins = nlohmann::ordered_json::array();
        for (const auto& d : detail_of(*c))
          if (d.is_object())
            pins.push_back({{"text", d.value("text", "")}, {"kept", d.value("kept", false)}});
        compactions.push_back({{"at", util::format_iso8601_ms(c->at_ms)},
                               {"trigger", c->trigger},
                               {"pins", c->total},
                               {"kept", c->kept},
                               {"restored", c->restored},
                               {"checked", std::move(pins)}});
      }
      arr.back()["compactions"] = std::move(compactions);
    }
    ctx.out << util::dump_json(arr) << '\n';
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
    for (const auto* c : checks_of(r.session_id)) {
      ctx.out << fmt::format("     compaction at {} ({}): {}\n", util::format_iso8601_ms(c->at_ms),
                             c->trigger,
                             context::pins_status_words(c->kept, c->total, c->restored));
      for (const auto& d : detail_of(*c))
        if (d.is_object())
          ctx.out << fmt::format("       {} {}\n", d.value("kept", false) ? "kept   " : "dropped",
                                 util::one_line(d.value("text", "")));
    }
  }
  return 0;
}

}  // namespace ctxkit::apps
