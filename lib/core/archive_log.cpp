#include "core/archive_log.hpp"

#include <fmt/core.h>

#include "util/fs.hpp"
#include "util/one_line.hpp"
#include "util/time.hpp"

namespace ctxkit::core {

void append_archive_log(const Locations& loc, const std::string& what) {
  if (!util::make_private_dirs(loc.state_dir)) return;
  (void)util::append_private_line(
      loc.archive_log(),
      fmt::format("{} {}", util::format_iso8601_ms(util::now_ms()), util::one_line(what)));
}

}  // namespace ctxkit::core
