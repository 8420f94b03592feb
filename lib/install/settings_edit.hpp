#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "claude/settings_merge.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::install {

// A JSON file of the client's configuration (settings, MCP servers) or an install's record: null
// when it is blank, or missing and `missing_ok`. A file larger than `max_bytes` or nested deeper
// than 256 levels is not one; a FIFO is not waited on.
[[nodiscard]] Result<nlohmann::ordered_json> read_json_file(const std::filesystem::path& p,
                                                            bool missing_ok, uint64_t max_bytes);

// read_json_file for a settings file: at most 16 MiB.
[[nodiscard]] Result<nlohmann::ordered_json> read_settings_json(const std::filesystem::path& p,
                                                                bool missing_ok);

// The file an edit of `link` reads and replaces: `link` itself, or the file it leads to when it is
// a symbolic link (which stays one).
[[nodiscard]] Result<std::filesystem::path> edit_target(const std::filesystem::path& link);

// The last step of an edit that leaves a file the install made with nothing else in it: the file
// goes, with the edit's record (`manifest`, when kept) and the records of other installs it took
// over; the edit's `lines`, then what was removed, go to `out`.
[[nodiscard]] Result<void> remove_made_file(const std::filesystem::path& target,
                                            const std::vector<std::string>& lines,
                                            const std::filesystem::path& manifest,
                                            const std::vector<std::filesystem::path>& taken,
                                            std::ostream& out);

// `target` (the file `link` leads to) replaced atomically by `text`, with its mode (0600 for a
// new file, whose folder is made); an existing one is first saved beside the link as
// "<link>.ctxkit-backup-<stamp>" (said on `out`), read up to `max_bytes`.
[[nodiscard]] Result<void> replace_with_backup(const std::filesystem::path& link,
                                               const std::filesystem::path& target,
                                               const std::string& text, uint64_t max_bytes,
                                               std::ostream& out);

// One edit of a settings file: the install or removal of ctxkit's hooks and status line.
struct SettingsEdit {
  std::string action;  // install | uninstall
  std::filesystem::path settings;
  claude::SettingsPlan plan;
  std::filesystem::path manifest;  // where the install's record is; empty: none is kept
  bool dry_run = false;
  // The command that installs again with --wrap-status-line (offered when a status line of the
  // user's is kept).
  std::string wrap_hint;
  claude::RemoveScope scope;  // uninstall: which of ctxkit's entries go
  // install: ctxkit's hooks of every folder are removed first (the plugin brings its own).
  bool take_over_hooks = false;
};

// Makes the edit: the file (through a link, its target) is read, ctxkit's entries merged or
// removed (claude/settings_merge), the records of other installs taken over (install_records), a
// backup of the file written beside it, the file replaced atomically, the install's record kept
// or removed. What it did goes to `out`, a line each; an error says what and where.
[[nodiscard]] Result<void> edit_settings(const SettingsEdit& e, const util::Env& env,
                                         std::ostream& out);

// After an uninstall: ctxkit's entries of another install (another folder) stay; name them and
// the way to remove them.
void note_other_installs(const std::filesystem::path& file, const nlohmann::ordered_json& settings,
                         const std::string& home, std::ostream& out);

}  // namespace ctxkit::install
