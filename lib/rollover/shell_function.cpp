#include "rollover/shell_function.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include "util/atomic_file.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/shell.hpp"

namespace ctxkit::rollover {
namespace fs = std::filesystem;

namespace {
// Where the block starts and ends (the end just past its last line's newline), when `text` holds
// one.
std::optional<std::pair<size_t, size_t>> block_span(std::string_view text) {
  size_t begin = text.find(kShellBlockBegin);
  while (begin != std::string_view::npos && begin != 0 && text[begin - 1] != '\n')
    begin = text.find(kShellBlockBegin, begin + 1);
  if (begin == std::string_view::npos) return std::nullopt;
  size_t end = text.find(kShellBlockEnd, begin);
  if (end == std::string_view::npos) return std::nullopt;
  end += kShellBlockEnd.size();
  if (end < text.size() && text[end] == '\n') ++end;
  return std::make_pair(begin, end);
}
}  // namespace

std::string shell_function_block(const fs::path& rollover_program) {
  const std::string program = util::shell_quote(rollover_program.string());
  // An alias named claude (the client's own local install writes one) would shadow the function
  // and break its definition: it goes, and the client it pointed at is the one run.
  return fmt::format(
      "{begin}\n"
      "unalias claude 2>/dev/null\n"
      "claude() {{\n"
      "  set -- \"$([ -x \"$HOME/.claude/local/claude\" ] && echo \"$HOME/.claude/local/claude\" "
      "|| "
      "echo claude)\" \"$@\"\n"
      "  if [ -z \"${{CLAUDECODE:-}}\" ] && [ -t 0 ] && [ -t 1 ] && [ -x {program} ]; then\n"
      "    case \" $* \" in\n"
      "      *\" -p \"*|*\" --print \"*|*\" -v \"*|*\" --version \"*|*\" -h \"*|*\" --help \"*) "
      ";;\n"
      "      *) case \"${{2:-}}\" in\n"
      "           mcp|plugin|plugins|config|doctor|update|upgrade|install|setup-token|auth|"
      "migrate-installer) ;;\n"
      "           *) {program} --supervise -- \"$@\"; return ;;\n"
      "         esac ;;\n"
      "    esac\n"
      "  fi\n"
      "  command \"$@\"\n"
      "}}\n"
      "{end}\n",
      fmt::arg("begin", kShellBlockBegin), fmt::arg("end", kShellBlockEnd),
      fmt::arg("program", program));
}

std::optional<std::string> shell_block_program(std::string_view text) {
  const auto span = block_span(text);
  if (!span) return std::nullopt;
  const std::string_view block = text.substr(span->first, span->second - span->first);
  // The line that runs it: `*) <program> --supervise -- "$@"; return ;;`.
  const size_t at = block.find(" --supervise -- ");
  if (at == std::string_view::npos) return std::string();
  size_t start = block.rfind('\n', at);
  start = start == std::string_view::npos ? 0 : start + 1;
  std::string_view line = block.substr(start, at - start);
  if (const size_t arrow = line.find(')'); arrow != std::string_view::npos)
    line = line.substr(arrow + 1);
  const auto words = util::split_shell_words(line);
  if (!words || words->size() != 1) return std::string();
  return words->front();
}

std::string with_shell_block(std::string_view text, std::string_view block) {
  if (const auto span = block_span(text)) {
    std::string out(text.substr(0, span->first));
    out += block;
    out += text.substr(span->second);
    return out;
  }
  std::string out(text);
  if (!out.empty()) {
    if (out.back() != '\n') out += '\n';
    out += '\n';
  }
  out += block;
  return out;
}

std::string without_shell_block(std::string_view text) {
  const auto span = block_span(text);
  if (!span) return std::string(text);
  size_t begin = span->first;
  // The blank line with_shell_block put before it.
  if (begin >= 2 && text[begin - 1] == '\n' && text[begin - 2] == '\n') --begin;
  std::string out(text.substr(0, begin));
  out += text.substr(span->second);
  return out;
}

std::vector<fs::path> shell_startup_files(const util::Env& env) {
  const fs::path home = util::home_dir(env);
  std::vector<fs::path> out{home / ".bashrc"};
  const fs::path zdot = env.get_nonempty("ZDOTDIR").value_or(home.string());
  const fs::path zshrc = fs::path(zdot) / ".zshrc";
  std::error_code ec;
  const std::string shell = env.get("SHELL").value_or("");
  if (fs::exists(zshrc, ec) || shell.ends_with("/zsh")) out.push_back(zshrc);
  return out;
}

namespace {
// The file a start-up file's path names: a link is followed (relative to its folder).
fs::path resolved(const fs::path& file) {
  std::error_code ec;
  fs::path p = file;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p;
}

Result<bool> replace_text(const fs::path& file, const std::string& before, const std::string& after,
                          bool existed) {
  if (after == before) return false;
  unsigned mode = util::umask_mode(0644);
  if (existed) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) mode = st.st_mode & 07777;
  }
  CTXKIT_TRY(util::write_file_atomic(file, after, mode, util::Durability::Fsync));
  return true;
}
}  // namespace

namespace {
// The line a block carries, after its first, in a file that was made for it: the file goes with
// the block when nothing else is in it (an empty ~/.zshrc the user had is not the same as none:
// zsh offers its set-up when there is none).
constexpr std::string_view kMadeForIt =
    "# (this file was made for this block: it goes with it when nothing else is in it)\n";

// Whether the block in `text` says its file was made for it.
bool made_for_block(std::string_view text) {
  const auto span = block_span(text);
  return span && text.substr(span->first, span->second - span->first).find(kMadeForIt) !=
                     std::string_view::npos;
}
}  // namespace

Result<bool> put_shell_block(const fs::path& file, std::string_view block) {
  const fs::path target = resolved(file);
  auto text = util::read_file(target);
  const bool existed = text.has_value();
  if (!text && text.error().kind != Error::Kind::NotFound)
    return fail(fmt::format("{} (nothing written)", text.error().message));
  const std::string before = existed ? *text : std::string();
  std::string put(block);
  if (const size_t first = put.find('\n');
      first != std::string::npos && (!existed || made_for_block(before)))
    put.insert(first + 1, kMadeForIt);
  return replace_text(target, before, with_shell_block(before, put), existed);
}

Result<std::string> remove_shell_block(const fs::path& file, const fs::path& program_dir,
                                       bool* removed) {
  if (removed) *removed = false;
  const fs::path target = resolved(file);
  auto text = util::read_file(target);
  if (!text) {
    if (text.error().kind == Error::Kind::NotFound) return std::string();
    return std::unexpected(text.error());
  }
  const auto program = shell_block_program(*text);
  if (!program) return std::string();
  if (!program_dir.empty() && fs::path(*program).parent_path() != program_dir) return *program;
  const std::string rest = without_shell_block(*text);
  if (made_for_block(*text) && rest.find_first_not_of(" \t\n") == std::string::npos) {
    std::error_code ec;
    if (!fs::remove(target, ec) && ec)
      return fail(fmt::format("removing {}: {}", target.string(), ec.message()));
    if (removed) *removed = true;
    return std::string();
  }
  auto changed = replace_text(target, *text, rest, true);
  if (!changed) return std::unexpected(changed.error());
  if (removed) *removed = *changed;
  return std::string();
}

}  // namespace ctxkit::rollover
