#include "claude/claude_cli.hpp"

#include <set>

namespace ctxkit::claude {

std::vector<std::string> launch_argv(const std::string& bin, const std::vector<std::string>& extra,
                                     bool print, const std::string& session_id,
                                     const std::string& prompt) {
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
  static const std::set<std::string> takes_value = {"--model",
                                                    "--permission-mode",
                                                    "--add-dir",
                                                    "--allowedTools",
                                                    "--allowed-tools",
                                                    "--disallowedTools",
                                                    "--disallowed-tools",
                                                    "--append-system-prompt",
                                                    "--system-prompt",
                                                    "--settings",
                                                    "--mcp-config",
                                                    "--output-format",
                                                    "--input-format",
                                                    "--agents",
                                                    "--fallback-model",
                                                    "--max-turns",
                                                    "--debug-file",
                                                    "--setting-sources",
                                                    "--plugin-dir",
                                                    "--agent",
                                                    "--betas",
                                                    "--tools",
                                                    "--effort"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (drop_with_value.count(a)) {
      ++i;
      continue;
    }
    if (drop_flag.count(a) || a.starts_with("--resume=") || a.starts_with("--session-id="))
      continue;
    out.push_back(a);
  }
  if (out.size() > 1) {
    const std::string& last = out.back();
    const std::string& before = out[out.size() - 2];
    if (!last.starts_with("-") && !takes_value.count(before)) out.pop_back();
  }
  return out;
}

std::vector<std::string> relaunch_argv(const std::vector<std::string>& args,
                                       const std::string& session_id, const std::string& prompt) {
  std::vector<std::string> argv = relaunch_args(args);
  argv.push_back("--session-id");
  argv.push_back(session_id);
  argv.push_back(prompt);
  return argv;
}

std::vector<std::string> resume_argv(const std::vector<std::string>& args,
                                     const std::string& session_id, const std::string& prompt) {
  std::vector<std::string> argv = relaunch_args(args);
  argv.push_back("--resume");
  argv.push_back(session_id);
  argv.push_back(prompt);
  return argv;
}

std::vector<std::string> headless_compact_argv(const std::vector<std::string>& args,
                                               const std::string& session_id,
                                               const std::string& focus) {
  std::vector<std::string> argv = relaunch_args(args);
  argv.push_back("-p");
  argv.push_back("--resume");
  argv.push_back(session_id);
  argv.push_back(focus.empty() ? std::string("/compact") : "/compact " + focus);
  return argv;
}

std::vector<std::string> compact_argv(const std::string& bin, const std::vector<std::string>& extra,
                                      const std::string& session_id, const std::string& focus) {
  std::vector<std::string> argv{bin};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("-p");
  argv.push_back("--resume");
  argv.push_back(session_id);
  argv.push_back(focus.empty() ? std::string("/compact") : "/compact " + focus);
  return argv;
}

}  // namespace ctxkit::claude
