#include "rollover/rollover.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "continuation_template.inc"
#include "util/process.hpp"
#include "util/utf8.hpp"

namespace ctxkit::rollover {
namespace fs = std::filesystem;

Result<Summary> read_summary(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec))
    return fail(fmt::format("summary file {} does not exist", file.string()),
                Error::Kind::NotFound);
  if (!fs::is_regular_file(file, ec))
    return fail(fmt::format("summary file {} is not a file", file.string()), Error::Kind::Invalid);
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(fmt::format("reading summary file {}: permission denied", file.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  Summary s;
  s.text = ss.str();
  while (!s.text.empty() && std::isspace(static_cast<unsigned char>(s.text.back())))
    s.text.pop_back();
  size_t lead = 0;
  while (lead < s.text.size() && std::isspace(static_cast<unsigned char>(s.text[lead]))) ++lead;
  s.text.erase(0, lead);
  if (s.text.empty())
    return fail(fmt::format("summary file {} is empty", file.string()), Error::Kind::Invalid);
  if (s.text.find('\0') != std::string::npos)
    return fail(fmt::format("summary file {} contains a NUL byte (it must be text)", file.string()),
                Error::Kind::Invalid);
  if (!util::is_valid_utf8(s.text))
    return fail(fmt::format("summary file {} is not UTF-8 text", file.string()),
                Error::Kind::Invalid);
  bool in_word = false;
  for (char c : s.text) {
    bool space = std::isspace(static_cast<unsigned char>(c));
    if (!space && !in_word) ++s.words;
    in_word = !space;
  }
  return s;
}

std::string continuation_template(const std::optional<fs::path>& exe_dir) {
  if (exe_dir) {
    fs::path installed =
        (*exe_dir / ".." / "share" / "ctxkit" / "prompts" / "continuation.md").lexically_normal();
    std::ifstream in(installed, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      if (!ss.str().empty()) return ss.str();
    }
  }
  return kContinuationTemplate;
}

Result<std::string> render_continuation(const std::string& tmpl, const ContinuationInfo& info) {
  const std::string percent = info.previous_percent ? fmt::format("{}%", *info.previous_percent)
                                                    : std::string("an unknown level of");
  const std::string retrieval = !info.retrieval.empty()
                                    ? info.retrieval
                                    : fmt::format(
                                          "The full previous session is archived and searchable. "
                                          "For anything not in the summary above, search "
                                          "it (all projects unless you add `--project` or "
                                          "`--session`):\n\n    {0} \"what you need to find\"\n\n"
                                          "Each hit names a session and a line; print that "
                                          "message in full (the original text of anything that "
                                          "was trimmed) with:\n\n    {0} --show SESSION:LINE\n\n"
                                          "Example queries: a decision about a topic, an error "
                                          "message, a file name such as engine.c:42.",
                                          info.search_command);
  // Named arguments held as lvalues: make_format_args takes references (fmt 10 no longer binds
  // them to temporaries).
  const auto number = fmt::arg("number", info.number);
  const auto percent_arg = fmt::arg("percent", percent);
  const auto summary = fmt::arg("summary", info.summary);
  const auto search_command = fmt::arg("search_command", info.search_command);
  const auto retrieval_arg = fmt::arg("retrieval", retrieval);
  const auto parent_session_id = fmt::arg("parent_session_id", info.parent_session_id);
  const auto parent_transcript = fmt::arg("parent_transcript", info.parent_transcript);
  const auto archive_arg = fmt::arg("archive", info.archive);
  try {
    return fmt::vformat(
        tmpl, fmt::make_format_args(number, percent_arg, summary, search_command, retrieval_arg,
                                    parent_session_id, parent_transcript, archive_arg));
  } catch (const fmt::format_error& e) {
    return fail(fmt::format("continuation template: {}", e.what()), Error::Kind::Invalid);
  }
}

Result<std::string> find_program(const std::string& bin, const util::Env& env) {
  if (bin.empty())
    return fail("no program to start (rollover.claude_bin is empty)", Error::Kind::Invalid);
  auto found = util::find_in_path(bin, env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
  if (found) return found;
  if (bin.find('/') != std::string::npos) return std::unexpected(found.error());
  return fail(
      fmt::format("{} not found in PATH (set rollover.claude_bin or pass --claude-bin)", bin),
      Error::Kind::NotFound);
}

Result<void> check_prompt_fits(const std::string& prompt, const fs::path& summary_file) {
  const size_t max = util::max_argument_bytes();
  if (prompt.find('\0') != std::string::npos)
    return fail(
        "the continuation prompt contains a NUL byte (check the template in share/ctxkit/prompts/)",
        Error::Kind::Invalid);
  if (prompt.size() > max)
    return fail(fmt::format("the continuation prompt would be {} bytes, over the {} bytes one "
                            "program argument can hold: "
                            "shorten the summary {}",
                            prompt.size(), max, summary_file.string()),
                Error::Kind::Invalid);
  return {};
}

}  // namespace ctxkit::rollover
