#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "claude/client_state.hpp"
#include "context/compaction_point.hpp"
#include "store/meter_store.hpp"
#include "util/env.hpp"

namespace ctxkit::apps {

// What the server told this user about auto-compaction (claude::ServerHints), read from the
// client's state file through the meter's cache: the file (several MB, rewritten often) is parsed
// only when its size or time differ from the cached reading's, so a hook on the hot path pays a
// stat and one row. Without a store the file is read each time. A problem (an unreadable file, a
// cache that could not be written) is put in `problem`; the hints are then what could be had.
claude::ServerHints server_hints(const util::Env& env, store::MeterStore* store,
                                 std::string& problem);

}  // namespace ctxkit::apps

namespace ctxkit::apps {

// The client's compaction settings for a hook: the variables of `env` over the settings files of
// `project` (context::client_settings_files) and the server's hints (server_hints). What the files
// and the state file say is kept in the meter's cache under a signature of their paths, inodes,
// sizes and times: while none of them changed, a hook pays a stat of each and one row, and parses
// no JSON. Without a store everything is read. A problem is put in `problem`.
context::CompactionSettings compaction_settings(const util::Env& env,
                                                const std::filesystem::path& project,
                                                store::MeterStore* store, std::string& problem);

// The cache's text for what the settings files and the server said, and back (false: not text
// this version wrote; the cache is then read again from the files).
std::string encode_compaction_inputs(const std::vector<context::SettingsFileReading>& files,
                                     const claude::ServerHints& server);
bool decode_compaction_inputs(std::string_view text,
                              std::vector<context::SettingsFileReading>& files,
                              claude::ServerHints& server);

}  // namespace ctxkit::apps
