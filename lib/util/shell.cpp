#include "util/shell.hpp"

namespace ctxkit::util {

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty() &&
               s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@%,") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace ctxkit::util
