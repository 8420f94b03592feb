#include "claude/settings_merge.hpp"

#include <algorithm>
#include <fmt/core.h>

#include "util/shell.hpp"

namespace ctxkit {

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

SettingsPlan default_plan(const std::string& bin_dir) {
  std::string dir = bin_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  SettingsPlan plan;
  plan.hooks.push_back({"PostToolUse", "*", util::shell_quote(dir + "/ctx-remind"), 10});
  // Records sessions, hands prepared rollovers to the supervisor, archives ended sessions
  // (detached, so the client is not held).
  for (const char* event : {"SessionStart", "Stop", "SessionEnd"})
    plan.hooks.push_back({event, "", util::shell_quote(dir + "/ctx-session-hook"), 10});
  // The pre-step context gate re-anchors a workflow after /clear and /compact only: its output
  // is replayed on every resume, so it does not answer on startup or resume.
  plan.hooks.push_back({"SessionStart", "clear|compact", util::shell_quote(dir + "/ctx-gate") + " --hook", 10});
  plan.status_command = util::shell_quote(dir + "/ctx-status");
  return plan;
}

std::string merge_settings(ojson& settings, const SettingsPlan& plan, SettingsReport& report) {
  if (settings.is_null()) settings = ojson::object();
  if (!settings.is_object()) return "settings file is not a JSON object";
  // A file the client itself would reject is refused whole, before anything changes.
  if (auto hooks = settings.find("hooks"); hooks != settings.end() && hooks->is_object()) {
    for (const auto& [event, groups] : hooks->items()) {
      if (!groups.is_array()) return fmt::format("\"hooks.{}\" is not an array", event);
      for (size_t i = 0; i < groups.size(); ++i)
        if (!groups[i].is_object()) return fmt::format("\"hooks.{}[{}]\" is not an object", event, i);
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
        report.lines.push_back(fmt::format("already registered: {} hook {}", reg.event, reg.command));
        continue;
      }
      ojson group = ojson::object();
      if (!reg.matcher.empty()) group["matcher"] = reg.matcher;
      group["hooks"] = ojson::array({ojson{{"type", "command"}, {"command", reg.command}, {"timeout", reg.timeout}}});
      groups.push_back(std::move(group));
      report.lines.push_back(fmt::format("registered: {} hook {}", reg.event, reg.command));
      report.changed = true;
    }
  }
  if (!plan.status_command.empty()) {
    auto it = settings.find("statusLine");
    if (it == settings.end()) {
      settings["statusLine"] = ojson{{"type", "command"}, {"command", plan.status_command}, {"padding", 0}};
      report.lines.push_back(fmt::format("registered: statusLine {}", plan.status_command));
      report.changed = true;
    } else if (it->is_object() && it->contains("command") && (*it)["command"] == plan.status_command) {
      report.lines.push_back(fmt::format("already registered: statusLine {}", plan.status_command));
    } else {
      report.lines.push_back(fmt::format(
          "kept your statusLine; to show the context figure set its command to {}", plan.status_command));
    }
  }
  return {};
}

std::string remove_settings(ojson& settings, const SettingsPlan& plan, const std::vector<std::string>& created,
                            SettingsReport& report) {
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
  if (!plan.status_command.empty()) {
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

}  // namespace ctxkit
