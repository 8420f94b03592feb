#include "runner/client_call.hpp"

#include <fmt/core.h>

#include <csignal>
#include <utility>

#include "runner/anchor.hpp"
#include "runner/policy.hpp"
#include "runner/run_record.hpp"
#include "util/process.hpp"
#include "util/time.hpp"
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
    // Copied from a string: GCC 12 at -O3 takes the literal's copy for an overflow that is none.
    static const std::string kAppendSystemPrompt = "--append-system-prompt";
    argv.push_back(kAppendSystemPrompt);
    argv.push_back(anchor);
  }
  argv.push_back(prompt);
  return argv;
}

Result<CallResult> invoke_client(const std::vector<std::string>& argv,
                                 const std::filesystem::path& cwd, const CallLimits& limits,
                                 const std::function<void()>& on_result,
                                 const std::function<void(const std::string&)>& note) {
  util::ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  // A client must not go on working in the project after ctx-run is gone (kill -9 included):
  // a --resume would start a second agent beside it.
  spec.parent_death_signal = SIGTERM;
  // Memory: the lines are read as they come and not kept (the longest line is held, not the
  // whole output); stderr's tail only. Time: after its result (or its exit) the client gets
  // exit_grace_seconds to exit and close its output, then it is killed and its output left
  // (a process it started may hold it open for ever); call_timeout_seconds bounds a whole call.
  spec.keep_handed_lines = false;
  spec.err_tail_bytes = 64u << 10;
  spec.linger = std::chrono::seconds(limits.exit_grace_seconds);
  if (limits.call_timeout_seconds > 0)
    spec.timeout = std::chrono::seconds(limits.call_timeout_seconds);
  claude::StreamResultReader reader;
  spec.done = [&reader] { return reader.result().has_result; };
  int64_t t_result = -1;
  spec.on_stdout_line = [&](std::string_view line) {
    const bool had_result = reader.result().has_result;
    reader.feed_line(line);
    if (had_result || !reader.result().has_result) return;
    t_result = util::now_ms();
    if (on_result) on_result();
  };
  const int64_t t0 = util::now_ms();
  auto r = util::run_process(spec);
  if (!r) return std::unexpected(r.error());
  CallResult c;
  const int64_t t_end = util::now_ms();
  c.client_ms = t_end - t0;
  if (t_result >= 0) c.exit_ms = t_end - t_result;
  c.exit_code = r->exit_code;
  c.timed_out = r->timed_out;
  c.cut_off = r->cut_off;
  if (c.timed_out)
    note(fmt::format(
        "note: the call took longer than call_timeout_seconds ({} s): the client was killed",
        limits.call_timeout_seconds));
  else if (c.cut_off)
    note(
        fmt::format("note: the client (or a process it started) held its output open {} s after "
                    "its {}: killed, its output "
                    "no longer read",
                    limits.exit_grace_seconds, t_result >= 0 ? "result" : "exit"));
  // A last line without its newline was not handed over.
  if (const size_t nl = r->out.rfind('\n'); nl != std::string::npos)
    reader.feed_line(std::string_view(r->out).substr(nl + 1));
  else
    reader.feed_line(r->out);
  c.stream = reader.result();
  if (!r->err.empty())
    c.stderr_tail = r->err.size() > 2000 ? r->err.substr(r->err.size() - 2000) : r->err;
  return c;
}

nlohmann::ordered_json call_record_json(const CallResult& call, const std::string& session_id,
                                        const char* report) {
  nlohmann::ordered_json result = {{"exit_code", call.exit_code},
                                   {"session_id", session_id},
                                   {"has_result", call.stream.has_result},
                                   {"is_error", call.stream.is_error},
                                   {"subtype", call.stream.subtype},
                                   {"num_turns", call.stream.num_turns},
                                   {"usage", usage_json(call.stream.usage)},
                                   {"cost_usd", call.stream.cost_usd},
                                   {"report", report},
                                   {"text", call.stream.text}};
  if (!call.stderr_tail.empty()) result["stderr_tail"] = call.stderr_tail;
  if (call.timed_out) result["timed_out"] = true;
  if (call.cut_off) result["cut_off"] = true;
  return result;
}

}  // namespace ctxkit::runner
