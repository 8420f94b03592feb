#include "util/paths.hpp"

#include <pwd.h>
#include <unistd.h>

namespace ctxkit::util {
namespace fs = std::filesystem;

fs::path home_dir(const Env& env) {
  if (auto h = env.get_nonempty("HOME")) return *h;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "/";
}

fs::path xdg_config_home(const Env& env) {
  if (auto v = env.get_nonempty("XDG_CONFIG_HOME"); v && fs::path(*v).is_absolute()) return *v;
  return home_dir(env) / ".config";
}

fs::path xdg_state_home(const Env& env) {
  if (auto v = env.get_nonempty("XDG_STATE_HOME"); v && fs::path(*v).is_absolute()) return *v;
  return home_dir(env) / ".local" / "state";
}

std::optional<fs::path> executable_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return p.parent_path();
}

}  // namespace ctxkit::util
