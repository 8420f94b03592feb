#include "util/env.hpp"

extern char** environ;

namespace ctxkit::util {

Env Env::from_process() {
  std::map<std::string, std::string, std::less<>> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return Env(std::move(vars));
}

std::optional<std::string> Env::get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Env::get_nonempty(std::string_view name) const {
  auto v = get(name);
  if (!v || v->empty()) return std::nullopt;
  return v;
}

}  // namespace ctxkit::util
