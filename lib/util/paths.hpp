#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "util/env.hpp"

namespace ctxkit::util {

// The user's home directory: $HOME, else the password database entry.
std::filesystem::path home_dir(const Env& env);
// ${XDG_CONFIG_HOME:-~/.config}
std::filesystem::path xdg_config_home(const Env& env);
// ${XDG_STATE_HOME:-~/.local/state}
std::filesystem::path xdg_state_home(const Env& env);
// The directory holding the running executable (from /proc/self/exe), for finding data files
// installed beside it.
std::optional<std::filesystem::path> executable_dir();

}  // namespace ctxkit::util
