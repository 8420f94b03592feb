#include "runner/client_call.hpp"

#include <fmt/core.h>

#include <utility>

#include "runner/anchor.hpp"
#include "runner/policy.hpp"
#include "util/uuid.hpp"

namespace ctxkit::runner {

std::string without_nul(std::string text) {
  if (text.find('\0') == std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    if (c == '\0')
      out += "\xEF\xBF\xBD";
    else
      out += c;
  }
  return out;
}

std::string report_rules(bool workflow) {
  return fmt::format(
      "When {} is complete, end your final message with this line:\n{} DONE\n"
      "If you cannot complete it, end with:\n{} BLOCKED <one-line reason>\n"
      "Record key decisions as lines starting with \"Decision:\" (in your final message or in the "
      "progress file).{}",
      workflow ? "this step" : "the task", kDoneMarker, kDoneMarker,
      workflow ? "\nYour final message (without the marker line) is recorded as this step's output."
               : "");
}

std::string call_prompt(const std::string& work, int task_iteration, int max_attempts,
                        bool workflow) {
  std::string p = work;
  if (!p.ends_with('\n')) p += '\n';
  if (task_iteration > 1)
    p += fmt::format(
        "\nThis is attempt {} of at most {}: the previous attempt ended without reporting {} as "
        "done. "
        "Check the current state of the work and continue.\n",
        task_iteration, max_attempts, workflow ? "the step" : "the task");
  p.append("\n")
      .append(report_rules(workflow))
      .append("\n");  // not "\n" + …: GCC 12 -Wrestrict at -O3
  return bounded_text(without_nul(std::move(p)), kMaxPromptBytes);
}

std::vector<std::string> base_args(const std::vector<std::string>& claude_args) {
  std::vector<std::string> a = claude_args;
  a.push_back("--output-format");
  a.push_back("stream-json");
  a.push_back("--verbose");
  return a;
}

std::vector<std::string> call_argv(const std::string& claude_bin,
                                   const std::vector<std::string>& claude_args, bool fresh,
                                   const std::string& session, const std::string& anchor,
                                   const std::string& prompt) {
  std::vector<std::string> argv{claude_bin};
  for (const auto& a : base_args(claude_args)) argv.push_back(a);
  argv.push_back("-p");
  if (fresh) {
    argv.push_back("--session-id");
    argv.push_back(session.empty() ? util::random_uuid() : session);
  } else {
    argv.push_back("--resume");
    argv.push_back(session);
  }
  if (!anchor.empty()) {
    argv.push_back("--append-system-prompt");
    argv.push_back(anchor);
  }
  argv.push_back(prompt);
  return argv;
}

}  // namespace ctxkit::runner
