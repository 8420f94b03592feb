#pragma once

#include <filesystem>
#include <string_view>

#include "util/env.hpp"

namespace ctxkit::core {

// The folders ctxkit uses and the well-known files in them, resolved once per run: the one place
// that knows where things are. Everything comes from the environment, except the state folder,
// which the `state.dir` setting may move (Config::locations passes it). That setting decides
// where private data goes, so load_config takes it only from the user's own config.toml and
// CTXKIT_STATE_DIR, never from a project's .work.toml. The folders are not created here: their
// users create them with util::make_private_dirs (0700; a link in ctxkit's own folders, the state
// folder included, is refused; links above them, such as a home reached through a link, are the
// user's), and open their databases by util::resolve_above.
struct Locations {
  std::filesystem::path home;        // $HOME, else the password database entry
  std::filesystem::path config_dir;  // ${XDG_CONFIG_HOME:-~/.config}/ctxkit
  std::filesystem::path
      state_dir;  // `state.dir` ("~/" = home), else ${XDG_STATE_HOME:-~/.local/state}/ctxkit
  std::filesystem::path claude_config_dir;  // ${CLAUDE_CONFIG_DIR:-~/.claude}

  // `state_dir_setting`: the configuration's `state.dir`; empty: the default state folder. A
  // relative XDG_* variable is ignored (the XDG rule).
  static Locations resolve(const util::Env& env, std::string_view state_dir_setting = {});

  // Under config_dir.
  std::filesystem::path config_file() const;    // config.toml: the user's configuration
  std::filesystem::path workflows_dir() const;  // workflows/: the user's workflow templates

  // Under state_dir.
  std::filesystem::path state_db() const;     // state.db
  std::filesystem::path meter_db() const;     // meter.db: the context meter's figures
  std::filesystem::path archive_dir() const;  // archive/: <project folder>/<session id>.jsonl
  // archive/index.db, then index-1.db, ...: the shards of the archive's search index.
  std::filesystem::path index_db(int shard = 0) const;
  std::filesystem::path index_lock() const;  // archive/.index.lock: the one indexer's lock
  std::filesystem::path archive_log()
      const;  // archive.log: what detached archivers and indexers could not do
  std::filesystem::path rollovers_dir() const;  // rollovers/: <session id>.md continuation prompts
  std::filesystem::path supervisors_dir()
      const;  // supervisors/: <pid> records of running supervisors

  // Under claude_config_dir.
  std::filesystem::path claude_projects_dir()
      const;  // projects/: <project folder>/<session id>.jsonl
};

}  // namespace ctxkit::core
