#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "core/locations.hpp"

namespace ctxkit::core {

// Where the hooks record their runs: <state>/hooks/, one empty file <program>.last each, whose
// modification time is the last run.
std::filesystem::path hooks_dir(const Locations& loc);

// Records that the hook program `program` (e.g. "ctx-remind") handled a payload now: sets the
// time of <state>/hooks/<program>.last (utimensat, never through a link: one system call),
// creating it when missing (0600, never through a link, in a 0700 folder made with
// util::make_private_dirs). A failure is ignored (a hook never fails over its own record).
void record_hook_run(const Locations& loc, std::string_view program);

// When `program` last recorded a run (milliseconds since the epoch), nullopt when it never did.
std::optional<int64_t> hook_last_run_ms(const Locations& loc, std::string_view program);

}  // namespace ctxkit::core
