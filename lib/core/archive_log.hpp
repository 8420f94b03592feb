#pragma once

#include <string>

#include "core/locations.hpp"

namespace ctxkit::core {

// Appends "<UTC time> <what>" as one line to archive.log (Locations::archive_log), the place a
// detached archiver, indexer or hook leaves what it could not do. Nothing when the state folder
// cannot be made or the log cannot be written (it is what is left when nothing else is).
void append_archive_log(const Locations& loc, const std::string& what);

}  // namespace ctxkit::core
