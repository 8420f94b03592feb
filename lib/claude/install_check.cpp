#include "claude/install_check.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "util/shell.hpp"

namespace ctxkit::claude {

using json = nlohmann::json;

namespace {
std::string str_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}
}  // namespace

std::vector<CommandHook> command_hooks(const json& doc) {
  std::vector<CommandHook> out;
  if (!doc.is_object()) return out;
  auto hooks = doc.find("hooks");
  if (hooks == doc.end() || !hooks->is_object()) return out;
  for (const auto& [event, groups] : hooks->items()) {
    if (!groups.is_array()) continue;
    for (const auto& group : groups) {
      if (!group.is_object()) continue;
      auto list = group.find("hooks");
      if (list == group.end() || !list->is_array()) continue;
      for (const auto& h : *list) {
        if (!h.is_object() || str_of(h, "type") != "command") continue;
        std::string command = str_of(h, "command");
        if (!command.empty()) out.push_back({event, str_of(group, "matcher"), command});
      }
    }
  }
  return out;
}

std::optional<std::vector<std::string>> command_words(const std::string& command,
                                                      const std::string& home,
                                                      const std::string& plugin_root) {
  // The two variables are replaced by marks the splitter keeps as they are (quoted or not), and
  // the marks by the values in the words it returns, as the shell would expand them.
  constexpr std::string_view kHomeMark = "\x01H\x01", kRootMark = "\x01P\x01";
  std::string c = command;
  size_t start = c.find_first_not_of(" \t");
  if (start != std::string::npos && c.compare(start, 2, "~/") == 0) c.replace(start, 1, kHomeMark);
  for (std::string_view var : {"${HOME}", "$HOME"}) replace_all(c, var, kHomeMark);
  if (!plugin_root.empty())
    for (std::string_view var : {"${CLAUDE_PLUGIN_ROOT}", "$CLAUDE_PLUGIN_ROOT"})
      replace_all(c, var, kRootMark);
  auto words = util::split_shell_words(c);
  if (!words) return std::nullopt;
  for (auto& w : *words) {
    if (w.find(kHomeMark) != std::string::npos) {
      if (home.empty()) return std::nullopt;
      replace_all(w, kHomeMark, home);
    }
    replace_all(w, kRootMark, plugin_root);
  }
  return words;
}

std::vector<HookCoverage> match_hooks(const std::vector<CommandHook>& found,
                                      const std::string& home, const std::string& plugin_root) {
  std::vector<HookCoverage> out;
  for (const auto& reg : default_plan("/bin").hooks) {
    HookCoverage cov;
    cov.expected = reg;
    auto want = util::split_shell_words(reg.command);
    if (!want || want->empty()) continue;
    cov.program = file_name(want->front());
    for (const auto& h : found) {
      if (h.event != reg.event || h.matcher != reg.matcher) continue;
      auto words = command_words(h.command, home, plugin_root);
      if (!words || words->empty() || file_name(words->front()) != cov.program) continue;
      if (!std::equal(words->begin() + 1, words->end(), want->begin() + 1, want->end())) continue;
      cov.found.push_back(*words);
    }
    out.push_back(std::move(cov));
  }
  return out;
}

bool runs_ctxkit(const std::vector<CommandHook>& hooks, const std::string& home,
                 const std::string& plugin_root) {
  return std::any_of(hooks.begin(), hooks.end(), [&](const CommandHook& h) {
    auto words = command_words(h.command, home, plugin_root);
    return words && !words->empty() && file_name(words->front()).starts_with("ctx-");
  });
}

std::vector<std::string> plugin_install_paths(const json& installed, const std::string& id) {
  std::vector<std::string> out;
  if (!installed.is_object()) return out;
  auto plugins = installed.find("plugins");
  if (plugins == installed.end() || !plugins->is_object()) return out;
  auto entries = plugins->find(id);
  if (entries == plugins->end()) return out;
  auto take = [&](const json& e) {
    if (e.is_object() && !str_of(e, "installPath").empty()) out.push_back(str_of(e, "installPath"));
  };
  if (entries->is_array())
    for (const auto& e : *entries) take(e);
  else
    take(*entries);
  return out;
}

std::vector<McpServerFound> find_mcp_servers(const json& doc, std::string_view program,
                                             const std::string& home,
                                             const std::string& plugin_root) {
  std::vector<McpServerFound> out;
  if (!doc.is_object()) return out;
  auto servers = doc.find("mcpServers");
  if (servers == doc.end() || !servers->is_object()) return out;
  for (const auto& [name, entry] : servers->items()) {
    if (!entry.is_object()) continue;
    std::string command = str_of(entry, "command");
    if (!plugin_root.empty()) replace_all(command, "${CLAUDE_PLUGIN_ROOT}", plugin_root);
    if (!home.empty() && command.starts_with("~/")) command = home + command.substr(1);
    if (file_name(command) != program) continue;
    McpServerFound f{name, {command}};
    if (auto args = entry.find("args"); args != entry.end() && args->is_array()) {
      for (const auto& a : *args) {
        if (!a.is_string()) continue;
        std::string arg = a.get<std::string>();
        if (!plugin_root.empty()) replace_all(arg, "${CLAUDE_PLUGIN_ROOT}", plugin_root);
        f.argv.push_back(std::move(arg));
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string claude_version_of(std::string_view output) {
  size_t i = 0;
  while (i < output.size() && (output[i] == ' ' || output[i] == '\t')) ++i;
  size_t start = i;
  while (i < output.size() && ((output[i] >= '0' && output[i] <= '9') || output[i] == '.')) ++i;
  std::string_view v = output.substr(start, i - start);
  if (v.empty() || v.front() == '.' || v.find('.') == std::string_view::npos) return {};
  return std::string(v);
}

int compare_versions(std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    auto part = [](std::string_view& s) {
      size_t dot = s.find('.');
      std::string_view p = s.substr(0, dot);
      s = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
      uint64_t v = 0;
      std::from_chars(p.data(), p.data() + p.size(), v);
      return v;
    };
    uint64_t x = part(a), y = part(b);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace ctxkit::claude
