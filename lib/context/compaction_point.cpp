#include "context/compaction_point.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "context/client_rules.hpp"
#include "util/fs.hpp"
#include "util/json_depth.hpp"
#include "util/json_io.hpp"

namespace ctxkit::context {
namespace fs = std::filesystem;

namespace {
// The client's smallest auto-compact window, the part of the window it keeps for a reply, and the
// room it leaves for the summary below that.

bool truthy(const std::optional<std::string>& v) {
  if (!v) return false;
  std::string s;
  for (char c : *v)
    if (!std::isspace(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// A window as the settings write it: a number, a size string, or "auto" (0).
std::optional<int64_t> window_value(const nlohmann::json& v, bool auto_ok) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    const auto n = v.get<int64_t>();
    return n > 0 ? std::optional<int64_t>(n) : std::nullopt;
  }
  if (v.is_number_float()) return parse_window_size(util::dump_json(v));
  if (v.is_string()) {
    if (auto_ok && v.get<std::string>() == "auto") return 0;
    return parse_window_size(v.get<std::string>());
  }
  return std::nullopt;
}

constexpr std::size_t kMaxSettingsDepth = 64;
}  // namespace

std::optional<int64_t> parse_window_size(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  double scale = 1;
  const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(text.back())));
  if (last == 'k' || last == 'm') {
    scale = last == 'k' ? 1e3 : 1e6;
    text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 32) return std::nullopt;
  std::string digits(text);
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(v)) return std::nullopt;
  const double tokens = std::round(v * scale);
  if (tokens < 1 || tokens > 1e15) return std::nullopt;
  return static_cast<int64_t>(tokens);
}

SettingsFileReading read_settings_file(const fs::path& file) {
  // Read with the shared reader: a FIFO or a device in the file's place is not waited on (a hook
  // never hangs).
  SettingsFileReading out;
  out.path = file.string();
  auto read = util::read_file(file);
  if (!read) return out;
  const std::string& text = *read;
  if (text.find("autoCompact") == std::string::npos &&
      text.find("totalTokensReminder") == std::string::npos)
    return out;  // cannot miss the keys
  if (util::json_depth(text, kMaxSettingsDepth) > kMaxSettingsDepth) return out;
  const auto j = util::parse_json(text);
  if (!j.is_object()) return out;
  if (const auto it = j.find("autoCompactWindow"); it != j.end())
    out.window = window_value(*it, false);
  if (const auto it = j.find("autoCompactEnabled"); it != j.end() && it->is_boolean())
    out.enabled = it->get<bool>();
  if (const auto it = j.find("totalTokensReminder"); it != j.end() && it->is_string())
    out.tokens_reminder = it->get<std::string>();
  if (const auto ms = j.find("modelSettings"); ms != j.end() && ms->is_object()) {
    for (const auto& [model, entry] : ms->items()) {
      if (!entry.is_object()) continue;
      const auto w = entry.find("autoCompactWindow");
      if (w == entry.end()) continue;
      if (auto v = window_value(*w, true)) out.models[model] = *v;
    }
  }
  return out;
}

std::vector<fs::path> client_settings_files(const util::Env& env, const fs::path& project) {
  std::vector<fs::path> out;
  if (auto dir = env.get_nonempty("CLAUDE_CONFIG_DIR"))
    out.push_back(fs::path(*dir) / "settings.json");
  else if (auto home = env.get_nonempty("HOME"))
    out.push_back(fs::path(*home) / ".claude" / "settings.json");
  if (!project.empty()) {
    // The user's own file again when the project is the home folder: read once.
    fs::path shared = project / ".claude" / "settings.json";
    if (out.empty() || shared.lexically_normal() != out.front().lexically_normal())
      out.push_back(std::move(shared));
    out.push_back(project / ".claude" / "settings.local.json");
  }
  return out;
}

CompactionSettings client_compaction_settings(const util::Env& env, const fs::path& project) {
  CompactionSettings s = read_compaction_settings(env, client_settings_files(env, project));
  const fs::path state = claude::client_state_file(env);
  util::ReadLimits limits;
  limits.max_bytes = 256ull << 20;
  if (auto text = state.empty() ? Result<std::string>(fail("no state file"))
                                : util::read_file(state, limits))
    s.server = claude::parse_client_state(*text);
  return s;
}

CompactionSettings read_compaction_settings(const util::Env& env,
                                            const std::vector<fs::path>& settings_files) {
  std::vector<SettingsFileReading> files;
  files.reserve(settings_files.size());
  for (const auto& f : settings_files) files.push_back(read_settings_file(f));
  return combine_compaction_settings(env, files);
}

CompactionSettings combine_compaction_settings(const util::Env& env,
                                               const std::vector<SettingsFileReading>& files) {
  CompactionSettings s;
  for (const char* name : {"DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"}) {
    if (truthy(env.get(name))) {
      s.disabled = true;
      s.disabled_by = name;
      break;
    }
  }
  s.disable_1m = truthy(env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT"));
  if (auto pct = env.get_nonempty("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")) {
    char* end = nullptr;
    const double v = std::strtod(pct->c_str(), &end);
    if (end != pct->c_str() && std::isfinite(v) && v > 0 && v <= 100)
      s.pct_override = static_cast<int>(v);
  }
  if (auto r = env.get_nonempty("CLAUDE_CODE_TOTAL_TOKENS_REMINDER")) s.tokens_reminder = *r;
  const bool env_window = [&] {
    auto w = env.get_nonempty("CLAUDE_CODE_AUTO_COMPACT_WINDOW");
    return w && parse_window_size(*w);
  }();
  if (env_window) {
    s.auto_compact_window = parse_window_size(*env.get_nonempty("CLAUDE_CODE_AUTO_COMPACT_WINDOW"));
    s.window_origin = "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
  }
  for (const SettingsFileReading& w : files) {
    const std::string& file = w.path;
    if (w.tokens_reminder && !env.get_nonempty("CLAUDE_CODE_TOTAL_TOKENS_REMINDER"))
      s.tokens_reminder = *w.tokens_reminder;
    if (env_window) continue;
    if (w.window) {
      // A file that sets the window for every model replaces the per-model ones of the files
      // below it (2.1.311 and later).
      s.auto_compact_window = w.window;
      s.window_origin = file;
      s.model_windows.clear();
      s.model_window_origins.clear();
    }
    if (w.enabled) {
      s.enabled_setting = w.enabled;
      s.enabled_origin = file;
    }
    for (const auto& [model, v] : w.models) {
      s.model_windows[model] = v;
      s.model_window_origins[model] = file;
    }
  }
  return s;
}

std::string_view source_name(WindowSource s) {
  switch (s) {
    case WindowSource::Environment:
      return "environment";
    case WindowSource::Settings:
      return "settings";
    case WindowSource::ModelSettings:
      return "model settings";
    case WindowSource::Server:
      return "server";
    case WindowSource::ModelDefault:
      return "model default";
    case WindowSource::UnknownModel:
      return "unknown model";
    case WindowSource::Auto:
      return "auto";
  }
  return "auto";
}

namespace {
// A per-model entry of `windows` for `model`: its own id, or the id without "[1m]" or a date.
const int64_t* model_entry(const std::map<std::string, int64_t>& windows, std::string_view model,
                           const ModelRule* rule, std::string* key) {
  auto look = [&](std::string_view id) -> const int64_t* {
    auto it = windows.find(std::string(id));
    if (it == windows.end()) return nullptr;
    if (key) *key = it->first;
    return &it->second;
  };
  if (model.empty()) return nullptr;
  if (auto v = look(model)) return v;
  if (size_t b = model.find('['); b != std::string_view::npos)
    if (auto v = look(model.substr(0, b))) return v;
  if (rule)
    if (auto v = look(rule->id)) return v;
  return nullptr;
}
}  // namespace

std::string describe_point(const CompactionPoint& p) {
  // The exact figure, shortened only where nothing is lost: the doctor names the point to the
  // token (166,500 stays 166500), where short_tokens rounds for the status line ("167k").
  auto k = [](int64_t n) {
    if (n % 1000 == 0 && n < 1'000'000) return fmt::format("{}k", n / 1000);
    if (n % 1'000'000 == 0) return fmt::format("{}M", n / 1'000'000);
    return fmt::format("{}", n);
  };
  const std::string rules = fmt::format("Claude Code {}'s rules", p.rules_version);
  if (!p.automatic)
    return fmt::format("auto-compaction off ({}) · the client stops sending at {} · {}", p.origin,
                       k(p.blocking), rules);
  if (!p.threshold)
    return fmt::format("auto ({}): compacts only when the API refuses the prompt · {}", p.origin,
                       rules);
  return fmt::format("auto-compact window {} ({}: {}) · compacts at {} · {}",
                     k(p.auto_compact_window >= 1'000'000'000 ? p.tokens : p.auto_compact_window),
                     source_name(p.source), p.origin, k(p.tokens), rules);
}

int64_t model_window(const CompactionSettings& settings, std::string_view model,
                     std::string_view client_version) {
  const RulesChoice choice = rules_for(client_version);
  const ModelRule* rule = find_model(*choice.rules, model);
  const bool asks_1m = model.find("[1m]") != std::string_view::npos;
  if (!settings.disable_1m && (asks_1m || (rule && rule->native_1m))) return 1'000'000;
  if (!rule) return 0;
  return std::min<int64_t>(rule->window, rule->native_1m ? 200'000 : rule->window);
}

CompactionPoint compaction_point(const CompactionSettings& settings, int64_t window,
                                 std::string_view model, std::string_view client_version) {
  const RulesChoice choice = rules_for(client_version);
  const ClientRules& rules = *choice.rules;
  const ModelRule* known = find_model(rules, model);
  const ModelRule& rule = known ? *known : rules.unknown;
  CompactionPoint p;
  p.tokens = window;
  p.rules_version = rules.version;
  p.newer_than_recorded = choice.newer_than_recorded;
  const int64_t reserve = std::min(rule.max_output, rules.reply_reserve_cap);

  // The auto-compact window, from the first source that gives one ("auto" in the settings passes
  // on to the next source).
  std::optional<int64_t> a;  // 0: auto
  std::string key;
  const bool env =
      settings.auto_compact_window && settings.window_origin == "CLAUDE_CODE_AUTO_COMPACT_WINDOW";
  const int64_t* per_model = rules.model_settings && !env
                                 ? model_entry(settings.model_windows, model, known, &key)
                                 : nullptr;
  if (per_model && *per_model == 0) per_model = nullptr;
  const int64_t* served = rules.server_windows
                              ? model_entry(settings.server.model_windows, model, known, nullptr)
                              : nullptr;
  if (served && *served == 0) served = nullptr;
  if (env) {
    a = settings.auto_compact_window;
    if (rules.max_auto_compact_window > 0) a = std::min(*a, rules.max_auto_compact_window);
    p.source = WindowSource::Environment;
    p.origin = settings.window_origin;
  } else if (per_model) {
    a = *per_model;
    p.source = WindowSource::ModelSettings;
    auto o = settings.model_window_origins.find(key);
    p.origin = fmt::format("{} (modelSettings.{})",
                           o != settings.model_window_origins.end() ? o->second : "settings", key);
  } else if (settings.auto_compact_window) {
    a = settings.auto_compact_window;
    p.source = WindowSource::Settings;
    p.origin = settings.window_origin;
  } else if (served) {
    a = *served;
    if (rules.max_auto_compact_window > 0) a = std::min(*a, rules.max_auto_compact_window);
    p.source = WindowSource::Server;
    p.origin = "~/.claude.json (what the server sent for this model)";
  } else if (known) {
    const bool at_1m = window >= 1'000'000;
    const bool is_auto = at_1m ? rule.default_1m_is_auto : rule.default_is_auto;
    const auto size = at_1m ? rule.default_window_1m : rule.default_window;
    a = is_auto || !size ? 0 : *size;
    p.source = is_auto || !size ? WindowSource::Auto : WindowSource::ModelDefault;
    p.origin = fmt::format("the default for {}{} in Claude Code {}", rule.id, at_1m ? " at 1M" : "",
                           rules.version);
  } else if (model.empty()) {
    // No model seen yet (a session without a reply): nothing says the client compacts earlier.
    a = 0;
    p.origin = "no model seen yet";
  } else if (rules.unknown.default_is_auto) {
    a = 0;
    p.origin = fmt::format("a model Claude Code {} does not know ({})", rules.version, model);
  } else {
    a = window;
    p.source = WindowSource::UnknownModel;
    p.origin = fmt::format("the default for an unrecognized model ({}) in Claude Code {}", model,
                           rules.version);
  }
  if (a && *a == 0) p.source = WindowSource::Auto;

  const int64_t effective_all = window - reserve;
  const bool off_by_setting = settings.enabled_setting
                                  ? !*settings.enabled_setting
                                  : settings.server.auto_compact_enabled == false;
  if (settings.disabled || off_by_setting) {
    p.automatic = false;
    p.blocking = std::max<int64_t>(effective_all - rules.blocking_buffer, 1);
    p.origin = settings.disabled ? settings.disabled_by
               : settings.enabled_setting
                   ? "autoCompactEnabled: false in " + settings.enabled_origin
                   : std::string("autoCompactEnabled: false in ~/.claude.json");
    return p;
  }
  if (!a || *a == 0) return p;  // reactive
  p.auto_compact_window = std::max(*a, rules.min_auto_compact_window);
  const int64_t effective = std::min(p.auto_compact_window, window) - reserve;
  int64_t at = effective - rules.summary_buffer;
  if (settings.pct_override) at = std::min(at, effective * *settings.pct_override / 100);
  if (at <= 0 || at >= window) return p;
  p.threshold = true;
  p.tokens = at;
  return p;
}

}  // namespace ctxkit::context
