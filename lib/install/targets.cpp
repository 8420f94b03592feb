#include "install/targets.hpp"

#include <fmt/core.h>

#include <cctype>

#include "claude/settings_merge.hpp"
#include "install/settings_edit.hpp"
#include "util/paths.hpp"

namespace ctxkit::install {
namespace fs = std::filesystem;

// A path as a file name: every character but letters and digits becomes '-' (as install.sh
// names its manifests, so that both find the same ones).
std::string path_key(const fs::path& p) {
  std::string out = p.string();
  for (auto& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return out;
}

fs::path absolute_path(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return ec ? fs::path(p) : a.lexically_normal();
}

Targets targets_for(const util::Env& env, const std::string& project,
                    const fs::path& manifest_dir) {
  Targets t;
  if (!project.empty()) {
    fs::path dir = absolute_path(project);
    t.claude_dir = dir / ".claude";
    t.mcp_config = dir / ".mcp.json";
  } else if (auto cfg = env.get_nonempty("CLAUDE_CONFIG_DIR")) {
    t.claude_dir = *cfg;
    t.mcp_config = fs::path(*cfg) / ".claude.json";
  } else {
    t.claude_dir = util::home_dir(env) / ".claude";
    t.mcp_config = util::home_dir(env) / ".claude.json";
  }
  t.settings = t.claude_dir / "settings.json";
  t.settings_manifest = manifest_dir / ("settings-manifest" + path_key(t.settings) + ".json");
  t.mcp_manifest = manifest_dir / ("mcp-manifest" + path_key(t.mcp_config) + ".json");
  t.archive_mcp_manifest =
      manifest_dir / ("mcp-archive-manifest" + path_key(t.mcp_config) + ".json");
  t.skills_list = t.claude_dir / "skills" / ".ctxkit-installed";
  return t;
}

// The user's settings file (where `claude plugin install --scope user` enables plugins).
fs::path user_settings(const util::Env& env) {
  if (auto cfg = env.get_nonempty("CLAUDE_CONFIG_DIR")) return fs::path(*cfg) / "settings.json";
  return util::home_dir(env) / ".claude" / "settings.json";
}

// The settings files that may enable a plugin or register hooks for this target, each once.
std::vector<fs::path> settings_files(const util::Env& env, const std::string& project) {
  std::vector<fs::path> files{user_settings(env)};
  if (!project.empty()) {
    fs::path dir = absolute_path(project) / ".claude";
    files.push_back(dir / "settings.json");
    files.push_back(dir / "settings.local.json");
  }
  return files;
}

// "<id> enabled in <file>" for each ctxkit plugin enabled in `files` (unreadable files are
// skipped).
std::vector<std::string> enabled_plugins_in(const std::vector<fs::path>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) {
    auto j = read_settings_json(f, true);
    if (!j) continue;
    for (const auto& id : claude::enabled_ctxkit_plugins(*j))
      out.push_back(fmt::format("{} enabled in {}", id, f.string()));
  }
  return out;
}

}  // namespace ctxkit::install
