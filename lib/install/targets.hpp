#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace ctxkit::install {

// A path as a file name: every character but letters and digits becomes '-' (as install.sh
// names its manifests, so that both find the same ones).
std::string path_key(const std::filesystem::path& p);

// `p` made absolute and normal (as given when that fails).
std::filesystem::path absolute_path(const std::string& p);

// Where the per-user set-up writes, for the user (~/.claude, ~/.claude.json) or a project.
struct Targets {
  std::filesystem::path claude_dir;  // settings.json and skills/ live here
  std::filesystem::path settings;
  std::filesystem::path mcp_config;
  std::filesystem::path settings_manifest, mcp_manifest, archive_mcp_manifest;
  std::filesystem::path skills_list;  // the skill files the install wrote, one a line
};

// The targets of the user's set-up (`project` empty: ~/.claude and ~/.claude.json, or
// $CLAUDE_CONFIG_DIR) or of a project's, with the install's records in `manifest_dir`.
Targets targets_for(const util::Env& env, const std::string& project,
                    const std::filesystem::path& manifest_dir);

// The user's settings file (where `claude plugin install --scope user` enables plugins).
std::filesystem::path user_settings(const util::Env& env);

// The settings files that may enable a plugin or register hooks for this target, each once.
std::vector<std::filesystem::path> settings_files(const util::Env& env, const std::string& project);

// "<id> enabled in <file>" for each ctxkit plugin enabled in `files` (unreadable files are
// skipped).
std::vector<std::string> enabled_plugins_in(const std::vector<std::filesystem::path>& files);

}  // namespace ctxkit::install
