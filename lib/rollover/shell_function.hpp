#pragma once

// The supervisor without thinking about it: a `claude` shell function in the user's shell
// start-up files that runs the client as `ctx-rollover --supervise -- claude …` in an interactive
// terminal (and the client itself everywhere else). Installed by `ctx-settings install
// --supervise` (`./install.sh --supervise`), removed by `ctx-settings uninstall`.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/env.hpp"
#include "util/error.hpp"

namespace ctxkit::rollover {

// The block's first and last lines.
inline constexpr std::string_view kShellBlockBegin =
    "# >>> ctxkit: claude runs under its supervisor (ctx-settings uninstall removes this) >>>";
inline constexpr std::string_view kShellBlockEnd = "# <<< ctxkit <<<";

// The block (with its marker lines and a final newline) for `rollover_program`, the absolute path
// of ctx-rollover. Plain POSIX shell: bash and zsh read it alike. The client is the one the
// client's own local install points its alias at (~/.claude/local/claude) when there is one, else
// `claude` on the PATH; an alias named claude is removed (it would shadow the function). The
// supervisor is used only when standard input and output are a terminal, outside a Claude Code
// session (CLAUDECODE), for a session (not -p/--print, --version, --help or a sub-command such as
// `mcp` or `plugin`) and while the program is there; otherwise the client runs as if the function
// were not.
std::string shell_function_block(const std::filesystem::path& rollover_program);

// The ctx-rollover a block in `text` runs, when `text` holds one.
std::optional<std::string> shell_block_program(std::string_view text);

// `text` with `block` in place of the one it holds, or appended (after a blank line) when it holds
// none.
std::string with_shell_block(std::string_view text, std::string_view block);

// `text` without its block (and the blank line the block was appended after); `text` itself when
// it holds none.
std::string without_shell_block(std::string_view text);

// The start-up files of the user's interactive shells: ~/.bashrc, and ${ZDOTDIR:-~}/.zshrc when it
// exists or the login shell ($SHELL) is zsh.
std::vector<std::filesystem::path> shell_startup_files(const util::Env& env);

// Puts `block` into `file` (creating it, 0644 less the umask, when missing: the block then says so,
// and a later one keeps saying it). A link is followed to the file it names (dotfile managers link
// these files), which is replaced atomically with its own mode. Returns whether the file changed.
[[nodiscard]] Result<bool> put_shell_block(const std::filesystem::path& file,
                                           std::string_view block);

// Removes the block from `file` when it runs a program in `program_dir` (any, when empty); a file
// made for the block goes with it when nothing else was put in it. A missing file holds none.
// Returns the program of a block that was kept (another install's), or
// "" when none was kept; `removed` tells whether the file changed.
[[nodiscard]] Result<std::string> remove_shell_block(const std::filesystem::path& file,
                                                     const std::filesystem::path& program_dir,
                                                     bool* removed);

}  // namespace ctxkit::rollover
