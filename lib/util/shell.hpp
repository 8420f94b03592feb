#pragma once

#include <string>

namespace ctxkit::util {

// `text` quoted for a POSIX shell when it needs it (single quotes), as it is otherwise.
std::string shell_quote(const std::string& text);

}  // namespace ctxkit::util
