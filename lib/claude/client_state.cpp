#include "claude/client_state.hpp"

#include <nlohmann/json.hpp>

#include "util/json_depth.hpp"
#include "util/json_io.hpp"

namespace ctxkit::claude {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
// A window as the client caches it: a whole number, or an object whose "default" is one (the
// surface and subscription entries beside it are not followed).
std::optional<int64_t> window_of(const json& v) {
  if (v.is_object()) {
    auto d = v.find("default");
    return d == v.end() ? std::nullopt : window_of(*d);
  }
  if (v.is_number_integer() || v.is_number_unsigned()) {
    const int64_t n = v.get<int64_t>();
    return n > 0 ? std::optional<int64_t>(n) : std::nullopt;
  }
  return std::nullopt;
}

// {"<model>": window, …} into `out`, keeping what is there (an earlier source wins).
void read_model_windows(const json& v, std::map<std::string, int64_t>& out) {
  if (!v.is_object()) return;
  for (const auto& [model, entry] : v.items())
    if (auto n = window_of(entry)) out.emplace(model, *n);
}

// The client data: the newest slot of clientDataCacheSlots ({"<slot>": {"data": {…}, "at": ms}}),
// else the older clientDataCache.
const json* newest_client_data(const json* slots, const json* legacy) {
  const json* best = nullptr;
  int64_t best_at = -1;
  if (slots && slots->is_object()) {
    for (const auto& [name, slot] : slots->items()) {
      if (!slot.is_object()) continue;
      auto data = slot.find("data");
      if (data == slot.end() || !data->is_object()) continue;
      auto at = slot.find("at");
      const int64_t t = at != slot.end() && at->is_number() ? at->get<int64_t>() : 0;
      if (t > best_at) {
        best = &*data;
        best_at = t;
      }
    }
  }
  if (!best && legacy && legacy->is_object()) best = legacy;
  return best;
}

bool wanted(std::string_view key) {
  return key == "autoCompactEnabled" || key == "autoCompactWindowsCache" ||
         key == "clientDataCache" || key == "clientDataCacheSlots";
}
}  // namespace

fs::path client_state_file(const util::Env& env) {
  if (auto dir = env.get_nonempty("CLAUDE_CONFIG_DIR")) return fs::path(*dir) / ".claude.json";
  if (auto home = env.get_nonempty("HOME")) return fs::path(*home) / ".claude.json";
  return {};
}

constexpr std::size_t kMaxStateDepth = 64;

ServerHints parse_client_state(std::string_view text) {
  ServerHints hints;
  // Only the wanted top-level members are kept (a state file is several MB); the parse is
  // nlohmann's, since the hooks that read it are static programs without simdjson's library.
  // Only the wanted top-level members are parsed: the file is several MB, most of it the
  // projects' entries, and the client writes it again during a session.
  const auto members = util::json_top_level_members(text, wanted, kMaxStateDepth);
  if (!members) return hints;
  std::map<std::string, json> found;
  for (const auto& [key, value] : *members) {
    json v = util::parse_json(value);
    if (!v.is_discarded()) found[std::string(key)] = std::move(v);
  }
  auto at = [&](const char* k) -> const json* {
    auto it = found.find(k);
    return it == found.end() ? nullptr : &it->second;
  };
  if (const json* e = at("autoCompactEnabled"); e && e->is_boolean())
    hints.auto_compact_enabled = e->get<bool>();
  // The client data's per-model windows first, then the bootstrap's.
  if (const json* data = newest_client_data(at("clientDataCacheSlots"), at("clientDataCache")))
    if (auto r = data->find("rowan_thicket"); r != data->end())
      read_model_windows(*r, hints.model_windows);
  if (const json* c = at("autoCompactWindowsCache")) read_model_windows(*c, hints.model_windows);
  return hints;
}

std::string hints_to_json(const ServerHints& h) {
  json j = json::object();
  if (!h.model_windows.empty()) j["models"] = h.model_windows;
  if (h.auto_compact_enabled) j["auto_compact_enabled"] = *h.auto_compact_enabled;
  return util::dump_json(j);
}

ServerHints hints_from_json(std::string_view text) {
  ServerHints h;
  const json j = util::parse_json(text);
  if (!j.is_object()) return h;
  if (auto m = j.find("models"); m != j.end() && m->is_object())
    for (const auto& [k, v] : m->items())
      if (v.is_number_integer() && v.get<int64_t>() >= 0) h.model_windows[k] = v.get<int64_t>();
  if (auto e = j.find("auto_compact_enabled"); e != j.end() && e->is_boolean())
    h.auto_compact_enabled = e->get<bool>();
  return h;
}

}  // namespace ctxkit::claude
