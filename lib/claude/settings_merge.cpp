#include "claude/settings_merge.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "claude/install_check.hpp"
#include "util/json_io.hpp"
#include "util/shell.hpp"

namespace ctxkit::claude {

using ojson = nlohmann::ordered_json;

namespace {
// Every hook ctxkit registers, by program; the settings install and the plugin take it from here.
struct HookSpec {
  const char* event;
  const char* matcher;
  const char* program;
  const char* args;
};
constexpr HookSpec kHooks[] = {
    {"PostToolUse", "*", "ctx-remind", ""},
    // Caps a large output of Bash or an MCP tool (the only tools it changes: the client starts it
    // for no other).
    {"PostToolUse", "Bash|mcp__.*", "ctx-cap", ""},
    // Records sessions, hands prepared rollovers to the supervisor, archives ended sessions
    // (detached, so the client is not held).
    {"SessionStart", "", "ctx-session-hook", ""},
    {"Stop", "", "ctx-session-hook", ""},
    // Makes the live session searchable before the client compacts it (Stop does after each turn).
    {"PreCompact", "", "ctx-session-hook", ""},
    {"SessionEnd", "", "ctx-session-hook", ""},
    // Pins: given to the summarizer (PreCompact), checked against its summary (PostCompact), the
    // ones it left out re-injected at the next prompt (UserPromptSubmit).
    {"PreCompact", "", "ctx-pin", " --hook"},
    {"PostCompact", "", "ctx-pin", " --hook"},
    {"UserPromptSubmit", "", "ctx-pin", " --hook"},
    // The pre-step context gate re-anchors a workflow after /clear and /compact only: its output
    // is replayed on every resume, so it does not answer on startup or resume.
    {"SessionStart", "clear|compact", "ctx-gate", " --hook"},
};

template <class PathOf>
SettingsPlan plan_with(PathOf path_of) {
  SettingsPlan plan;
  for (const auto& h : kHooks)
    plan.hooks.push_back({h.event, h.matcher, path_of(h.program) + h.args, 10});
  plan.status_command = path_of("ctx-status");
  return plan;
}

// The words of a command as the client's shell would run it, the variables a registration may use
// kept readable ("$HOME" read as `home`, or left as "$HOME" when it is not known).
std::optional<std::vector<std::string>> words_of(const std::string& command,
                                                 const std::string& home) {
  return command_words(command, home.empty() ? std::string("$HOME") : home,
                       "${CLAUDE_PLUGIN_ROOT}");
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string normal_dir(const std::string& dir) {
  std::string d = std::filesystem::path(dir).lexically_normal().string();
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

const std::string* string_at(const ojson& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

// A group's matcher is the plan's: an absent or empty one is the same as "" (every source).
bool matcher_is(const ojson& group, const std::string& want) {
  auto it = group.find("matcher");
  if (it == group.end()) return want.empty();
  return it->is_string() && it->get<std::string>() == want;
}

std::string matcher_text(const ojson& group) {
  auto it = group.find("matcher");
  if (it == group.end()) return "";
  return it->is_string() ? it->get<std::string>() : util::dump_json(*it);
}

// Where one hook sits: hooks.<event>[group].hooks[hook].
struct Spot {
  size_t group, hook;
  bool operator<(const Spot& o) const { return group != o.group ? group < o.group : hook < o.hook; }
};

// The hook commands of an event's groups, with where each is (entries of another shape skipped).
template <class F>
void for_each_command(const ojson& groups, F f) {
  for (size_t g = 0; g < groups.size(); ++g) {
    const ojson& group = groups[g];
    if (!group.is_object()) continue;
    auto list = group.find("hooks");
    if (list == group.end() || !list->is_array()) continue;
    for (size_t h = 0; h < list->size(); ++h)
      if (const std::string* command = string_at((*list)[h], "command"))
        f(Spot{g, h}, group, *command);
  }
}

// Takes the hooks at `spots` out of `groups`; a group left without hooks goes too.
void erase_spots(ojson& groups, const std::set<Spot>& spots) {
  if (spots.empty()) return;
  ojson kept = ojson::array();
  for (size_t g = 0; g < groups.size(); ++g) {
    ojson& group = groups[g];
    bool touched = false;
    ojson remaining = ojson::array();
    if (group.is_object() && group.contains("hooks") && group["hooks"].is_array()) {
      for (size_t h = 0; h < group["hooks"].size(); ++h) {
        if (spots.count(Spot{g, h})) {
          touched = true;
          continue;
        }
        remaining.push_back(group["hooks"][h]);
      }
    }
    if (!touched) {
      kept.push_back(std::move(group));
    } else if (!remaining.empty()) {
      group["hooks"] = std::move(remaining);
      kept.push_back(std::move(group));
    }
  }
  groups = std::move(kept);
}

std::string hook_label(const std::string& event, const std::string& matcher, bool with_matcher) {
  return with_matcher ? fmt::format("{}[{}]", event, matcher) : event;
}

// The status-line command that runs `status_command` with the arguments of `words` (all but the
// program).
std::string with_arguments(const std::string& status_command,
                           const std::vector<std::string>& words) {
  std::string out = status_command;
  for (size_t i = 1; i < words.size(); ++i) {
    out += ' ';
    out += util::shell_quote(words[i]);
  }
  return out;
}

// The command a ctx-status command wraps (`--wrap CMD`), or empty.
std::string wrapped_command(const std::vector<std::string>& words) {
  for (size_t i = 1; i + 1 < words.size(); ++i)
    if (words[i] == "--wrap") return words[i + 1];
  return {};
}
}  // namespace

std::string wrap_status_command(const std::string& status_command, const std::string& theirs) {
  return status_command + " --wrap " + util::shell_quote(theirs);
}

std::string ctxkit_hook_key(const std::string& event, const std::string& command) {
  auto words = words_of(command, "");
  if (!words || words->empty()) return {};
  const std::string program = file_name(words->front());
  std::string args;
  for (size_t i = 1; i < words->size(); ++i) {
    args += ' ';
    args += (*words)[i];
  }
  for (const auto& h : kHooks)
    if (event == h.event && program == h.program && args == h.args) return program + args;
  return {};
}

bool runs_ctx_status(const std::string& command) {
  auto words = words_of(command, "");
  return words && !words->empty() && file_name(words->front()) == "ctx-status";
}

std::string command_program_dir(const std::string& command, const std::string& home) {
  auto words = words_of(command, home);
  if (!words || words->empty() || words->front().empty() || words->front().front() != '/')
    return {};
  return normal_dir(std::filesystem::path(words->front()).parent_path().string());
}

SettingsPlan default_plan(const std::string& bin_dir) {
  std::string dir = bin_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  SettingsPlan plan =
      plan_with([&](const std::string& program) { return util::shell_quote(dir + "/" + program); });
  plan.bin_dir = dir;
  return plan;
}

SettingsPlan plugin_plan() {
  SettingsPlan plan = plan_with(
      [](const std::string& program) { return "\"${CLAUDE_PLUGIN_ROOT}/bin/" + program + "\""; });
  plan.status_command.clear();  // a plugin cannot set the status line
  return plan;
}

std::vector<std::string> hook_programs() {
  std::vector<std::string> out;
  for (const auto& h : kHooks)
    if (std::find(out.begin(), out.end(), h.program) == out.end()) out.push_back(h.program);
  return out;
}

std::vector<std::string> ctxkit_hook_commands(const ojson& settings) {
  std::vector<std::string> out;
  if (!settings.is_object()) return out;
  auto hooks = settings.find("hooks");
  if (hooks == settings.end() || !hooks->is_object()) return out;
  for (const auto& [event, groups] : hooks->items()) {
    if (!groups.is_array()) continue;
    for_each_command(groups, [&](Spot, const ojson&, const std::string& command) {
      if (!ctxkit_hook_key(event, command).empty() &&
          std::find(out.begin(), out.end(), command) == out.end())
        out.push_back(command);
    });
  }
  return out;
}

namespace {
template <class Json>
std::vector<std::string> enabled_plugins_of(const Json& settings) {
  std::vector<std::string> out;
  if (!settings.is_object()) return out;
  auto plugins = settings.find("enabledPlugins");
  if (plugins == settings.end() || !plugins->is_object()) return out;
  for (const auto& [id, on] : plugins->items())
    if (id.rfind(std::string(kPluginName) + "@", 0) == 0 && on.is_boolean() &&
        on.template get<bool>())
      out.push_back(id);
  return out;
}

// One registration of the plan: of the entries of ctxkit's for it, the one that is already right
// is kept, the first other one is replaced and every further one is removed.
void merge_hook(ojson& groups, const HookRegistration& reg, SettingsReport& report) {
  const std::string key = ctxkit_hook_key(reg.event, reg.command);
  std::optional<Spot> same;
  std::vector<Spot> others;
  for_each_command(groups, [&](Spot at, const ojson& group, const std::string& command) {
    const bool ours =
        key.empty() ? command == reg.command : ctxkit_hook_key(reg.event, command) == key;
    if (!ours) return;
    if (!same && command == reg.command && matcher_is(group, reg.matcher))
      same = at;
    else
      others.push_back(at);
  });
  auto command_at = [&](Spot at) {
    return groups[at.group]["hooks"][at.hook]["command"].get<std::string>();
  };
  std::set<Spot> drop;
  bool append = false;
  if (same) {
    report.lines.push_back(fmt::format("already registered: {} hook {}", reg.event, reg.command));
  } else if (!others.empty()) {
    const Spot first = others.front();
    others.erase(others.begin());
    ojson& group = groups[first.group];
    const std::string old = command_at(first);
    const bool matcher_changed = !matcher_is(group, reg.matcher);
    report.lines.push_back(
        fmt::format("replaced: {} hook {} (now {}{})",
                    hook_label(reg.event, matcher_text(group), matcher_changed), old, reg.command,
                    matcher_changed ? fmt::format(" on [{}]", reg.matcher) : std::string()));
    report.replaced_commands.push_back(old);
    report.changed = true;
    if (group["hooks"].size() == 1) {
      group["hooks"][0]["command"] = reg.command;
      if (reg.matcher.empty())
        group.erase("matcher");
      else
        group["matcher"] = reg.matcher;
    } else {
      // It shares its group with hooks of the user's: ours moves to a group of its own.
      drop.insert(first);
      append = true;
    }
  } else {
    report.lines.push_back(fmt::format("registered: {} hook {}", reg.event, reg.command));
    report.changed = true;
    append = true;
  }
  for (const Spot& at : others) {
    report.lines.push_back(fmt::format("removed: {} hook {} (a second registration of {})",
                                       reg.event, command_at(at), key));
    report.replaced_commands.push_back(command_at(at));
    report.changed = true;
    drop.insert(at);
  }
  erase_spots(groups, drop);
  if (append) {
    ojson group = ojson::object();
    if (!reg.matcher.empty()) group["matcher"] = reg.matcher;
    group["hooks"] = ojson::array(
        {ojson{{"type", "command"}, {"command", reg.command}, {"timeout", reg.timeout}}});
    groups.push_back(std::move(group));
  }
}

void merge_status_line(ojson& settings, const SettingsPlan& plan, SettingsReport& report) {
  auto it = settings.find("statusLine");
  if (it == settings.end()) {
    settings["statusLine"] =
        ojson{{"type", "command"}, {"command", plan.status_command}, {"padding", 0}};
    report.lines.push_back(fmt::format("registered: statusLine {}", plan.status_command));
    report.changed = true;
    return;
  }
  const std::string* cmd = string_at(*it, "command");
  if (cmd && *cmd == plan.status_command) {
    report.lines.push_back(fmt::format("already registered: statusLine {}", plan.status_command));
    return;
  }
  if (cmd && runs_ctx_status(*cmd)) {
    // ctxkit's, from this folder or another: ours, with the same arguments (a wrapped status line
    // of the user's stays wrapped).
    auto words = words_of(*cmd, "");
    const std::string now = with_arguments(plan.status_command, *words);
    if (now == *cmd) {
      report.lines.push_back(fmt::format("already registered: statusLine {}", now));
      return;
    }
    const std::string old = *cmd;
    if (const std::string theirs = wrapped_command(*words); !theirs.empty()) {
      ojson original = *it;
      original["command"] = theirs;
      report.wrapped = WrappedStatusLine{now, std::move(original)};
    }
    (*it)["command"] = now;
    report.lines.push_back(fmt::format("replaced: statusLine {} (now {})", old, now));
    report.replaced_commands.push_back(old);
    report.changed = true;
    return;
  }
  if (cmd && !cmd->empty()) {
    const std::string theirs = *cmd;
    if (plan.wrap_status_line) {
      WrappedStatusLine w{wrap_status_command(plan.status_command, theirs), *it};
      (*it)["command"] = w.command;
      report.lines.push_back(fmt::format("wrapped: statusLine {} (yours, {}, is shown beside ours)",
                                         w.command, theirs));
      report.wrapped = std::move(w);
      report.changed = true;
    } else if (plan.replace_status_line) {
      WrappedStatusLine w{plan.status_command, *it};
      (*it)["command"] = plan.status_command;
      report.lines.push_back(
          fmt::format("replaced: your statusLine {} (now {}; uninstall puts yours back)", theirs,
                      plan.status_command));
      report.wrapped = std::move(w);
      report.changed = true;
    } else {
      report.kept_status_command = theirs;
    }
    return;
  }
  report.lines.push_back(
      fmt::format("kept your statusLine; to show the context figure set its command to {}",
                  plan.status_command));
}
}  // namespace

std::vector<std::string> enabled_ctxkit_plugins(const ojson& settings) {
  return enabled_plugins_of(settings);
}
std::vector<std::string> enabled_ctxkit_plugins(const nlohmann::json& settings) {
  return enabled_plugins_of(settings);
}

std::string merge_settings(ojson& settings, const SettingsPlan& plan, SettingsReport& report) {
  if (settings.is_null()) settings = ojson::object();
  if (!settings.is_object()) return "settings file is not a JSON object";
  // A file the client itself would reject is refused whole, before anything changes.
  if (auto hooks = settings.find("hooks"); hooks != settings.end()) {
    if (!hooks->is_object()) return "\"hooks\" is not an object";
    for (const auto& [event, groups] : hooks->items()) {
      if (!groups.is_array()) return fmt::format("\"hooks.{}\" is not an array", event);
      for (size_t i = 0; i < groups.size(); ++i)
        if (!groups[i].is_object())
          return fmt::format("\"hooks.{}[{}]\" is not an object", event, i);
    }
  }
  if (auto line = settings.find("statusLine"); line != settings.end() && !line->is_object())
    return "\"statusLine\" is not an object";
  if (!plan.hooks.empty()) {
    if (!settings.contains("hooks")) {
      settings["hooks"] = ojson::object();
      report.created.push_back("hooks");
    }
    ojson& hooks = settings["hooks"];
    for (const auto& reg : plan.hooks) {
      if (!hooks.contains(reg.event)) {
        hooks[reg.event] = ojson::array();
        report.created.push_back("hooks." + reg.event);
      }
      merge_hook(hooks[reg.event], reg, report);
    }
  }
  if (!plan.status_command.empty()) merge_status_line(settings, plan, report);
  if (plan.disable_plugins) {
    for (const auto& id : enabled_plugins_of(settings)) {
      settings["enabledPlugins"][id] = false;
      report.lines.push_back(
          fmt::format("disabled: plugin {} (this install takes its place; its hooks would run "
                      "beside these)",
                      id));
      report.disabled_plugins.push_back(id);
      report.changed = true;
    }
  }
  return {};
}

void drop_created_containers(ojson& settings, const std::vector<std::string>& created,
                             SettingsReport& report) {
  if (!settings.is_object()) return;
  auto hooks = settings.find("hooks");
  if (hooks == settings.end() || !hooks->is_object()) return;
  for (const auto& name : created) {
    if (!name.starts_with("hooks.")) continue;
    auto ev = hooks->find(name.substr(6));
    if (ev != hooks->end() && ev->is_array() && ev->empty()) {
      hooks->erase(ev);
      report.changed = true;
    }
  }
  if (hooks->empty() && std::find(created.begin(), created.end(), "hooks") != created.end()) {
    settings.erase(hooks);
    report.changed = true;
  }
}

std::string remove_settings(ojson& settings, const SettingsPlan& plan,
                            const std::vector<std::string>& created, SettingsReport& report,
                            const std::optional<WrappedStatusLine>& wrapped,
                            const RemoveScope& scope) {
  if (!settings.is_object()) return "settings file is not a JSON object";
  // Whether a command of ctxkit's is within the scope: every folder, this install's folder, or
  // one of the plan's commands.
  auto in_scope = [&](const std::string& command) {
    if (scope.all) return true;
    for (const auto& reg : plan.hooks)
      if (reg.command == command) return true;
    if (command == plan.status_command) return true;
    const std::string dir = command_program_dir(command, scope.home);
    return !dir.empty() && !plan.bin_dir.empty() && dir == normal_dir(plan.bin_dir);
  };
  if (auto hooks_it = settings.find("hooks");
      !plan.hooks.empty() && hooks_it != settings.end() && hooks_it->is_object()) {
    ojson& hooks = *hooks_it;
    for (auto& [event, groups] : hooks.items()) {
      if (!groups.is_array()) continue;
      std::set<Spot> drop;
      for_each_command(groups, [&](Spot at, const ojson&, const std::string& command) {
        if (ctxkit_hook_key(event, command).empty() || !in_scope(command)) return;
        drop.insert(at);
        report.lines.push_back(fmt::format("removed: {} hook {}", event, command));
        report.replaced_commands.push_back(command);
      });
      if (drop.empty()) continue;
      report.changed = true;
      erase_spots(groups, drop);
    }
  }
  if (!plan.hooks.empty()) drop_created_containers(settings, created, report);
  if (plan.status_command.empty() && !wrapped) return {};
  auto it = settings.find("statusLine");
  const std::string* cmd = it != settings.end() ? string_at(*it, "command") : nullptr;
  if (wrapped && cmd && *cmd == wrapped->command) {
    *it = wrapped->original;
    report.lines.push_back(
        fmt::format("restored: your statusLine {}", wrapped->original.value("command", "")));
    report.changed = true;
    return {};
  }
  if (!plan.status_command.empty() && cmd && runs_ctx_status(*cmd) && in_scope(*cmd)) {
    const std::string old = *cmd;
    auto words = words_of(old, "");
    if (const std::string theirs = words ? wrapped_command(*words) : std::string();
        !theirs.empty()) {
      (*it)["command"] = theirs;
      report.lines.push_back(fmt::format("restored: your statusLine {}", theirs));
    } else {
      settings.erase("statusLine");
      report.lines.push_back(fmt::format("removed: statusLine {}", old));
    }
    report.replaced_commands.push_back(old);
    report.changed = true;
    return {};
  }
  if (wrapped)
    report.lines.push_back("kept the statusLine: it no longer is the one the install set");
  return {};
}

}  // namespace ctxkit::claude
