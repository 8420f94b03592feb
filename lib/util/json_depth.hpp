#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace ctxkit::util {

// The deepest array/object nesting of JSON text, stopping as soon as it exceeds `limit` (strings
// and escapes are skipped, so brackets inside strings do not count). One pass, no recursion: the
// check every reader of a file ctxkit did not write makes before parsing it (the parse itself is
// iterative, but copying, comparing and printing a document recurse once per level).
std::size_t json_depth(std::string_view text, std::size_t limit);

// The members of a JSON object's top level whose names `want` accepts, as (name, value text)
// pairs in document order, found in one pass without building the document: a large file of which
// a few members are wanted (the client's ~/.claude.json) is scanned, and only those values are
// parsed. A name is compared as written (a name with an escape is never wanted). nullopt when the
// text is not an object, is cut short, or nests deeper than `limit`; the values themselves are not
// checked (the parse of a value returned does that).
std::optional<std::vector<std::pair<std::string_view, std::string_view>>> json_top_level_members(
    std::string_view text, bool (*want)(std::string_view name), std::size_t limit);

}  // namespace ctxkit::util
