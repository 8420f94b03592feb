#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::util {

// `text` quoted for a POSIX shell when it needs it (single quotes), as it is otherwise.
std::string shell_quote(const std::string& text);

// The words of `command` as a POSIX shell splits a simple command: blanks separate words,
// '…' and "…" quote, a backslash escapes the next character (in "…" only before $ ` " \ and a
// newline). nullopt when the command needs a shell to mean what it says: a variable or command
// substitution, a glob, a redirection, a pipe or list, a comment, a leading ~ or a variable
// assignment, an unterminated quote, or no word at all.
std::optional<std::vector<std::string>> split_shell_words(std::string_view command);

// The argv that runs `command`: its words when split_shell_words can split it, else
// {"/bin/sh", "-c", command}.
std::vector<std::string> command_argv(const std::string& command);

}  // namespace ctxkit::util
