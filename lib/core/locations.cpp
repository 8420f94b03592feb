#include "core/locations.hpp"

#include <string>

#include "util/paths.hpp"

namespace ctxkit::core {
namespace fs = std::filesystem;

Locations Locations::resolve(const util::Env& env, std::string_view state_dir_setting) {
  Locations l;
  l.home = util::home_dir(env);
  l.config_dir = util::xdg_config_home(env) / "ctxkit";
  if (state_dir_setting.empty())
    l.state_dir = util::xdg_state_home(env) / "ctxkit";
  else if (state_dir_setting.starts_with("~/"))
    l.state_dir = l.home / state_dir_setting.substr(2);
  else
    l.state_dir = state_dir_setting;
  if (auto d = env.get_nonempty("CLAUDE_CONFIG_DIR"))
    l.claude_config_dir = *d;
  else
    l.claude_config_dir = l.home / ".claude";
  return l;
}

fs::path Locations::config_file() const {
  return config_dir / "config.toml";
}
fs::path Locations::workflows_dir() const {
  return config_dir / "workflows";
}

fs::path Locations::state_db() const {
  return state_dir / "state.db";
}
fs::path Locations::meter_db() const {
  return state_dir / "meter.db";
}
fs::path Locations::archive_dir() const {
  return state_dir / "archive";
}
fs::path Locations::index_db(int shard) const {
  return archive_dir() /
         (shard == 0 ? std::string("index.db") : "index-" + std::to_string(shard) + ".db");
}
fs::path Locations::index_lock() const {
  return archive_dir() / ".index.lock";
}
fs::path Locations::archive_log() const {
  return state_dir / "archive.log";
}
fs::path Locations::rollovers_dir() const {
  return state_dir / "rollovers";
}
fs::path Locations::supervisors_dir() const {
  return state_dir / "supervisors";
}

fs::path Locations::claude_projects_dir() const {
  return claude_config_dir / "projects";
}

}  // namespace ctxkit::core
