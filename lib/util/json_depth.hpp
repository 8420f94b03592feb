#pragma once

#include <cstddef>
#include <string_view>

namespace ctxkit::util {

// The deepest array/object nesting of JSON text, stopping as soon as it exceeds `limit` (strings
// and escapes are skipped, so brackets inside strings do not count). One pass, no recursion: the
// check every reader of a file ctxkit did not write makes before parsing it (the parse itself is
// iterative, but copying, comparing and printing a document recurse once per level).
std::size_t json_depth(std::string_view text, std::size_t limit);

}  // namespace ctxkit::util
