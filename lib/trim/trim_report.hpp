#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trim/session_trim.hpp"

namespace ctxkit::trim {

// What `ctx-trim --json` prints of a trim (a dry run's or a written one's): one object with the
// sessions, the settings, the totals and per tool what was trimmed.
nlohmann::ordered_json trim_report_json(const SessionTrim& done);

// What `ctx-trim` prints of a trim: a dry run's table per tool (the largest first) and what would
// be trimmed; "nothing worth trimming" when nothing was written; else what was trimmed, the new
// session and the command that continues in it.
std::string trim_report_text(const SessionTrim& done);

}  // namespace ctxkit::trim
