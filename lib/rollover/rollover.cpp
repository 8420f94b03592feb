#include "rollover/rollover.hpp"

#include <unistd.h>

#include <fmt/args.h>
#include <fmt/core.h>
#include <fstream>
#include <set>
#include <sstream>

#include "continuation_template.inc"
#include "util/utf8.hpp"

namespace ctxkit {
namespace fs = std::filesystem;

Result<Summary> read_summary(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return fail(fmt::format("summary file {} does not exist", file.string()), Error::Kind::NotFound);
  if (!fs::is_regular_file(file, ec)) return fail(fmt::format("summary file {} is not a file", file.string()), Error::Kind::Invalid);
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(fmt::format("reading summary file {}: permission denied", file.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  Summary s;
  s.text = ss.str();
  while (!s.text.empty() && std::isspace(static_cast<unsigned char>(s.text.back()))) s.text.pop_back();
  size_t lead = 0;
  while (lead < s.text.size() && std::isspace(static_cast<unsigned char>(s.text[lead]))) ++lead;
  s.text.erase(0, lead);
  if (s.text.empty()) return fail(fmt::format("summary file {} is empty", file.string()), Error::Kind::Invalid);
  if (!util::is_valid_utf8(s.text)) return fail(fmt::format("summary file {} is not UTF-8 text", file.string()), Error::Kind::Invalid);
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
    fs::path installed = (*exe_dir / ".." / "share" / "ctxkit" / "prompts" / "continuation.md").lexically_normal();
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
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  args.push_back(fmt::arg("number", info.number));
  args.push_back(fmt::arg("percent", info.previous_percent ? fmt::format("{}%", *info.previous_percent) : std::string("an unknown level of")));
  args.push_back(fmt::arg("summary", info.summary));
  args.push_back(fmt::arg("search_command", info.search_command));
  args.push_back(fmt::arg("parent_session_id", info.parent_session_id));
  args.push_back(fmt::arg("parent_transcript", info.parent_transcript));
  args.push_back(fmt::arg("archive", info.archive));
  try {
    return fmt::vformat(tmpl, args);
  } catch (const fmt::format_error& e) {
    return fail(fmt::format("continuation template: {}", e.what()), Error::Kind::Invalid);
  }
}

std::vector<std::string> launch_argv(const std::string& bin, const std::vector<std::string>& extra, bool print,
                                     const std::string& session_id, const std::string& prompt) {
  std::vector<std::string> argv{bin};
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (print) argv.push_back("-p");
  argv.push_back("--session-id");
  argv.push_back(session_id);
  argv.push_back(prompt);
  return argv;
}

std::vector<std::string> relaunch_args(const std::vector<std::string>& args) {
  static const std::set<std::string> drop_with_value = {"--resume", "-r", "--session-id"};
  static const std::set<std::string> drop_flag = {"--continue", "-c", "--fork-session"};
  static const std::set<std::string> takes_value = {
      "--model", "--permission-mode", "--add-dir", "--allowedTools", "--allowed-tools", "--disallowedTools",
      "--disallowed-tools", "--append-system-prompt", "--system-prompt", "--settings", "--mcp-config", "--output-format",
      "--input-format", "--agents", "--fallback-model", "--max-turns", "--debug-file", "--setting-sources",
      "--plugin-dir", "--agent", "--betas", "--tools", "--effort"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (drop_with_value.count(a)) {
      ++i;
      continue;
    }
    if (drop_flag.count(a) || a.starts_with("--resume=") || a.starts_with("--session-id=")) continue;
    out.push_back(a);
  }
  if (out.size() > 1) {
    const std::string& last = out.back();
    const std::string& before = out[out.size() - 2];
    if (!last.starts_with("-") && !takes_value.count(before)) out.pop_back();
  }
  return out;
}

Result<std::string> find_program(const std::string& bin, const util::Env& env) {
  if (bin.empty()) return fail("no program to start (rollover.claude_bin is empty)", Error::Kind::Invalid);
  if (bin.find('/') != std::string::npos) {
    if (::access(bin.c_str(), X_OK) == 0) return bin;
    return fail(fmt::format("{} not found or not executable", bin), Error::Kind::NotFound);
  }
  std::string path = env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + bin;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return fail(fmt::format("{} not found in PATH (set rollover.claude_bin or pass --claude-bin)", bin), Error::Kind::NotFound);
}

}  // namespace ctxkit
