#include "claude/settings_merge.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "util/shell.hpp"

namespace ctxkit::claude {

using ojson = nlohmann::ordered_json;

namespace {

bool group_has_command(const ojson& group, const std::string& command) {
  if (!group.is_object()) return false;
  auto hooks = group.find("hooks");
  if (hooks == group.end() || !hooks->is_array()) return false;
  return std::any_of(hooks->begin(), hooks->end(), [&](const ojson& h) {
    return h.is_object() && h.contains("command") && h["command"] == command;
  });
}
}  // namespace

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
    // Records sessions, hands prepared rollovers to the supervisor, archives ended sessions
    // (detached, so the client is not held).
    {"SessionStart", "", "ctx-session-hook", ""},
    {"Stop", "", "ctx-session-hook", ""},
    // Makes the live session searchable before the client compacts it (Stop does after each turn).
    {"PreCompact", "", "ctx-session-hook", ""},
    {"SessionEnd", "", "ctx-session-hook", ""},
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
}  // namespace

std::string wrap_status_command(const std::string& status_command, const std::string& theirs) {
  return status_command + " --wrap " + util::shell_quote(theirs);
}

namespace {
// Whether `command` runs ctxkit's ctx-status (wherever installed, wrapping or not).
bool runs_ctx_status(const std::string& command) {
  auto words = util::split_shell_words(command);
  if (!words || words->empty()) return false;
  const std::string& first = words->front();
  return first == "ctx-status" || first.ends_with("/ctx-status");
}
}  // namespace

SettingsPlan default_plan(const std::string& bin_dir) {
  std::string dir = bin_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return plan_with(
      [&](const std::string& program) { return util::shell_quote(dir + "/" + program); });
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
  const auto programs = hook_programs();
  for (const auto& [event, groups] : hooks->items()) {
    if (!groups.is_array()) continue;
    for (const auto& g : groups) {
      if (!g.is_object() || !g.contains("hooks") || !g["hooks"].is_array()) continue;
      for (const auto& h : g["hooks"]) {
        if (!h.is_object() || !h.contains("command") || !h["command"].is_string()) continue;
        const std::string cmd = h["command"].get<std::string>();
        for (const auto& p : programs) {
          // The program's name as a whole path component: ".../ctx-remind", "'.../ctx-gate'
          // --hook".
          for (size_t at = cmd.find(p); at != std::string::npos; at = cmd.find(p, at + 1)) {
            const size_t end = at + p.size();
            const bool starts = at == 0 || cmd[at - 1] == '/' || cmd[at - 1] == '\'' ||
                                cmd[at - 1] == '"' || cmd[at - 1] == ' ';
            const bool ends =
                end == cmd.size() || cmd[end] == ' ' || cmd[end] == '\'' || cmd[end] == '"';
            if (starts && ends) {
              if (std::find(out.begin(), out.end(), cmd) == out.end()) out.push_back(cmd);
              break;
            }
          }
        }
      }
    }
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
  if (auto hooks = settings.find("hooks"); hooks != settings.end() && hooks->is_object()) {
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
    if (!hooks.is_object()) return "\"hooks\" is not an object";
    for (const auto& reg : plan.hooks) {
      if (!hooks.contains(reg.event)) {
        hooks[reg.event] = ojson::array();
        report.created.push_back("hooks." + reg.event);
      }
      ojson& groups = hooks[reg.event];
      if (!groups.is_array()) return fmt::format("\"hooks.{}\" is not an array", reg.event);
      bool present = std::any_of(groups.begin(), groups.end(),
                                 [&](const ojson& g) { return group_has_command(g, reg.command); });
      if (present) {
        report.lines.push_back(
            fmt::format("already registered: {} hook {}", reg.event, reg.command));
        continue;
      }
      ojson group = ojson::object();
      if (!reg.matcher.empty()) group["matcher"] = reg.matcher;
      group["hooks"] = ojson::array(
          {ojson{{"type", "command"}, {"command", reg.command}, {"timeout", reg.timeout}}});
      groups.push_back(std::move(group));
      report.lines.push_back(fmt::format("registered: {} hook {}", reg.event, reg.command));
      report.changed = true;
    }
  }
  if (!plan.status_command.empty()) {
    auto it = settings.find("statusLine");
    if (it == settings.end()) {
      settings["statusLine"] =
          ojson{{"type", "command"}, {"command", plan.status_command}, {"padding", 0}};
      report.lines.push_back(fmt::format("registered: statusLine {}", plan.status_command));
      report.changed = true;
    } else if (it->is_object() && it->contains("command") &&
               (*it)["command"] == plan.status_command) {
      report.lines.push_back(fmt::format("already registered: statusLine {}", plan.status_command));
    } else if (const auto* cmd =
                   it->is_object() && it->contains("command") ? &(*it)["command"] : nullptr;
               cmd && cmd->is_string() && !cmd->get<std::string>().empty() &&
               !runs_ctx_status(cmd->get<std::string>())) {
      const std::string theirs = cmd->get<std::string>();
      if (plan.wrap_status_line) {
        WrappedStatusLine w{wrap_status_command(plan.status_command, theirs), *it};
        (*it)["command"] = w.command;
        report.lines.push_back(fmt::format(
            "wrapped: statusLine {} (yours, {}, is shown beside ours)", w.command, theirs));
        report.wrapped = std::move(w);
        report.changed = true;
      } else {
        report.kept_status_command = theirs;
      }
    } else if (cmd && cmd->is_string() &&
               cmd->get<std::string>().starts_with(plan.status_command + " --wrap ")) {
      report.lines.push_back(
          fmt::format("already registered: statusLine {}", cmd->get<std::string>()));
    } else {
      report.lines.push_back(
          fmt::format("kept your statusLine; to show the context figure set its command to {}",
                      plan.status_command));
    }
  }
  return {};
}

std::string remove_settings(ojson& settings, const SettingsPlan& plan,
                            const std::vector<std::string>& created, SettingsReport& report,
                            const std::optional<WrappedStatusLine>& wrapped) {
  if (!settings.is_object()) return "settings file is not a JSON object";
  auto was_created = [&](const std::string& name) {
    return std::find(created.begin(), created.end(), name) != created.end();
  };
  if (auto hooks_it = settings.find("hooks"); hooks_it != settings.end() && hooks_it->is_object()) {
    ojson& hooks = *hooks_it;
    for (const auto& reg : plan.hooks) {
      auto ev = hooks.find(reg.event);
      if (ev == hooks.end() || !ev->is_array()) continue;
      ojson kept = ojson::array();
      for (auto& group : *ev) {
        if (!group_has_command(group, reg.command)) {
          kept.push_back(group);
          continue;
        }
        ojson remaining = ojson::array();
        for (auto& h : group["hooks"]) {
          if (h.is_object() && h.contains("command") && h["command"] == reg.command) continue;
          remaining.push_back(h);
        }
        report.lines.push_back(fmt::format("removed: {} hook {}", reg.event, reg.command));
        report.changed = true;
        if (!remaining.empty()) {
          group["hooks"] = remaining;
          kept.push_back(group);
        }
      }
      *ev = kept;
      if (ev->empty() && was_created("hooks." + reg.event)) {
        hooks.erase(reg.event);
        report.changed = true;
      }
    }
    if (hooks.empty() && was_created("hooks")) {
      settings.erase("hooks");
      report.changed = true;
    }
  }
  if (wrapped) {
    auto it = settings.find("statusLine");
    if (it != settings.end() && it->is_object() && it->contains("command") &&
        (*it)["command"] == wrapped->command) {
      *it = wrapped->original;
      report.lines.push_back(
          fmt::format("restored: your statusLine {}", wrapped->original.value("command", "")));
      report.changed = true;
    } else {
      report.lines.push_back("kept the statusLine: it no longer is the one the install set");
    }
  } else if (!plan.status_command.empty()) {
    auto it = settings.find("statusLine");
    if (it != settings.end() && it->is_object() && it->contains("command") &&
        (*it)["command"] == plan.status_command) {
      settings.erase("statusLine");
      report.lines.push_back(fmt::format("removed: statusLine {}", plan.status_command));
      report.changed = true;
    }
  }
  return {};
}

}  // namespace ctxkit::claude
