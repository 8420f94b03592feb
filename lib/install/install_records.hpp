#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/env.hpp"

namespace ctxkit::install {

// The records ctxkit's installs keep of what they added to Claude Code's files (one JSON file per
// settings file or MCP configuration, named after it): install.sh keeps them beside the installed
// programs (<prefix>/share/ctxkit), ctx-settings otherwise in $XDG_STATE_HOME/ctxkit/install. An
// install that takes over another's entries takes over its records too, so that either uninstall
// removes exactly what is left.

// ctx-settings' own folder for them: $XDG_STATE_HOME/ctxkit/install.
std::filesystem::path default_records_dir(const util::Env& env);

// The records named `name` that the installs whose programs are in `program_dirs` keep: in
// <dir>/../share/ctxkit for each, and in default_records_dir when the record there names one of
// those folders ("bin_dir") or none; each once, only those that exist, `own` left out. None when
// `program_dirs` is empty.
std::vector<std::filesystem::path> other_records(const std::string& name,
                                                 const std::vector<std::string>& program_dirs,
                                                 const std::filesystem::path& own,
                                                 const util::Env& env);

// A record as a JSON object: an empty object when it is missing or unreadable.
nlohmann::ordered_json read_record(const std::filesystem::path& path);

// Adds what `other` says the installs created ("created": the containers, "created_file",
// "created_container") to `record`.
void take_over_record(nlohmann::ordered_json& record, const nlohmann::ordered_json& other);

// Removes the records of `paths` (those that cannot be removed stay; an install elsewhere may be
// read-only).
void remove_records(const std::vector<std::filesystem::path>& paths);

}  // namespace ctxkit::install
