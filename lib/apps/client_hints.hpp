#pragma once

#include <string>

#include "claude/client_state.hpp"
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
