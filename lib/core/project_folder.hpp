#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ctxkit::core {

// The client cuts a project's folder name after this many characters and adds a hash.
inline constexpr std::size_t kProjectFolderMax = 200;

// The name of the client's folder for the project at `path` (under its projects folder, and so
// in the archive), as the client makes it: every UTF-16 code unit of the path that is not an
// ASCII letter or digit becomes '-' (so a character above U+FFFF, a surrogate pair, becomes
// "--"; an ill-formed UTF-8 sequence counts as one character); a name longer than
// kProjectFolderMax is cut there and followed by '-' and a hash of the path in base 36.
std::string project_folder_name(std::string_view path);

}  // namespace ctxkit::core
