#include "util/shell.hpp"

namespace ctxkit::util {

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty() &&
               s.find_first_not_of(
                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@%,") ==
                   std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::optional<std::vector<std::string>> split_shell_words(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;       // a word has started (an empty quoted word counts)
  bool quoted_start = false;  // the word began with a quote (so '=' or '~' in it are literal)
  bool quoted_any = false;    // some part of the word was quoted before an '=' was seen
  size_t i = 0;
  auto finish = [&]() -> bool {
    if (!in_word) return true;
    words.push_back(std::move(word));
    word.clear();
    in_word = quoted_start = quoted_any = false;
    return true;
  };
  while (i < command.size()) {
    char c = command[i];
    if (c == ' ' || c == '\t') {
      finish();
      ++i;
      continue;
    }
    if (!in_word) {
      if (c == '#' || c == '~') return std::nullopt;  // a comment; the home folder's expansion
      quoted_start = c == '\'' || c == '"';
    }
    in_word = true;
    switch (c) {
      case '\'': {
        size_t end = command.find('\'', i + 1);
        if (end == std::string_view::npos) return std::nullopt;
        word.append(command.substr(i + 1, end - i - 1));
        quoted_any = true;
        i = end + 1;
        break;
      }
      case '"': {
        ++i;
        while (true) {
          if (i >= command.size()) return std::nullopt;
          char d = command[i];
          if (d == '"') break;
          if (d == '$' || d == '`') return std::nullopt;
          if (d == '\\' && i + 1 < command.size()) {
            char e = command[i + 1];
            if (e == '$' || e == '`' || e == '"' || e == '\\') {
              word += e;
              i += 2;
              continue;
            }
            if (e == '\n') {
              i += 2;
              continue;
            }
          }
          word += d;
          ++i;
        }
        quoted_any = true;
        ++i;
        break;
      }
      case '\\':
        if (i + 1 >= command.size()) return std::nullopt;
        if (command[i + 1] != '\n') word += command[i + 1];
        quoted_any = true;
        i += 2;
        break;
      case '=':
        // NAME=value before the program is an assignment only the shell makes.
        if (words.empty() && !quoted_start && !quoted_any && !word.empty()) return std::nullopt;
        word += c;
        ++i;
        break;
      case '\n':
      case '|':
      case '&':
      case ';':
      case '<':
      case '>':
      case '(':
      case ')':
      case '$':
      case '`':
      case '*':
      case '?':
      case '[':
      case '{':
      case '}':
      case '!':
        return std::nullopt;
      default:
        word += c;
        ++i;
    }
  }
  finish();
  if (words.empty()) return std::nullopt;
  return words;
}

std::vector<std::string> command_argv(const std::string& command) {
  if (auto words = split_shell_words(command)) return *words;
  return {"/bin/sh", "-c", command};
}

}  // namespace ctxkit::util
