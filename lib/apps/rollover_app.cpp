#include "apps/rollover_app.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "core/config.hpp"
#include "context/context_meter.hpp"
#include "rollover/rollover.hpp"
#include "archive/session_archiver.hpp"
#include "claude/session_locator.hpp"
#include "store/state_store.hpp"
#include "apps/cli.hpp"
#include "store/state_access.hpp"
#include "util/atomic_file.hpp"
#include "util/paths.hpp"
#include "util/time.hpp"
#include "util/shell.hpp"
#include "util/uuid.hpp"

extern char** environ;

namespace ctxkit {
namespace fs = std::filesystem;

namespace {
constexpr const char* kTool = "ctx-rollover";

volatile sig_atomic_t g_wake = 0;
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_stop = 0;

void on_usr1(int) { g_wake = 1; }
void on_forward(int sig, siginfo_t* info, void*) {
  // A signal from the terminal already reached the child (same process group); one sent to the
  // supervisor by a process (kill) is passed on.
  if (info && (info->si_code == SI_USER || info->si_code == SI_QUEUE) && g_child > 0) ::kill(g_child, sig);
  if (sig == SIGTERM || sig == SIGHUP) g_stop = 1;
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, std::string& problem) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGQUIT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGHUP);
  sigaddset(&def, SIGUSR1);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0].c_str(), &fa, &attr, a.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    problem = fmt::format("starting {}: {}", argv[0], std::strerror(rc));
    return -1;
  }
  return pid;
}

int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

int supervise(const std::vector<std::string>& command, const Config& cfg, AppContext& ctx) {
  if (command.empty()) {
    ctx.err << kTool << ": error: --supervise needs a command: ctx-rollover --supervise -- claude [args…]\n";
    return 1;
  }
  const std::string token = util::random_uuid();
  ::setenv("CTXKIT_SUPERVISOR", token.c_str(), 1);
  ::setenv("CTXKIT_SUPERVISOR_PID", std::to_string(::getpid()).c_str(), 1);
  termios saved{};
  const bool tty = ::isatty(0) && ::tcgetattr(0, &saved) == 0;

  struct sigaction sa {};
  sa.sa_sigaction = on_forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  struct sigaction su {};
  su.sa_handler = on_usr1;
  sigemptyset(&su.sa_mask);
  ::sigaction(SIGUSR1, &su, nullptr);

  // One connection for the whole run, opened when first needed (and again if it could not be).
  std::optional<StateStore> store;
  auto state = [&]() -> StateStore* {
    std::string note;
    if (!store) store = open_state(cfg, ctx.env, note);
    return store ? &*store : nullptr;
  };
  // The rollover prepared in the supervised session, once its turn has ended.
  auto ready_rollover = [&]() -> std::optional<PendingRollover> {
    StateStore* s = state();
    if (!s) return std::nullopt;
    auto p = s->pending_rollover(token);
    if (p && *p && (*p)->ready) return **p;
    return std::nullopt;
  };

  std::vector<std::string> argv = command;
  std::string cwd;
  int last_status = 0;
  while (true) {
    std::string problem;
    pid_t child = spawn(argv, cwd, problem);
    if (child < 0) {
      ctx.err << kTool << ": error: " << problem << '\n';
      return last_status ? last_status : 1;
    }
    g_child = child;
    std::optional<PendingRollover> ready;
    auto last_poll = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    int status = 0;
    bool exited = false;
    while (!exited) {
      pid_t r = ::waitpid(child, &status, WNOHANG);
      if (r == child) {
        exited = true;
        break;
      }
      auto now = std::chrono::steady_clock::now();
      if (g_wake || now - last_poll > std::chrono::milliseconds(500)) {
        g_wake = 0;
        last_poll = now;
        ready = ready_rollover();
        if (ready) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!exited && ready) {
      // The turn ended with a rollover pending: end this client, then start the new session.
      ::kill(child, SIGTERM);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.rollover.grace_seconds);
      while (::waitpid(child, &status, WNOHANG) != child) {
        if (std::chrono::steady_clock::now() >= deadline) {
          ::kill(child, SIGKILL);
          ::waitpid(child, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      exited = true;
    }
    g_child = 0;
    last_status = exit_status(status);
    if (tty) {
      ::tcsetattr(0, TCSANOW, &saved);
      if (::isatty(1)) ctx.out << "\x1b[?25h" << std::flush;  // show the cursor again
    }
    // The child ended by itself: a rollover that became ready at the very end still counts.
    if (!ready) ready = ready_rollover();
    if (!ready || g_stop) return last_status;
    std::string prompt;
    {
      std::ifstream in(ready->prompt_path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      prompt = ss.str();
    }
    if (StateStore* s = state()) (void)s->clear_pending_rollover(token);
    if (prompt.empty()) {
      ctx.err << kTool << ": error: the continuation prompt " << ready->prompt_path << " is missing\n";
      return last_status ? last_status : 1;
    }
    ctx.err << kTool << ": starting the new session " << ready->new_session_id << '\n';
    argv = relaunch_args(command);
    argv.push_back("--session-id");
    argv.push_back(ready->new_session_id);
    argv.push_back(prompt);
    cwd = ready->cwd;
  }
}
}  // namespace

int run_rollover(const std::vector<std::string>& args_in, AppContext& ctx) {
  // Everything after "--" is the supervised command, taken as it is.
  std::vector<std::string> args, command;
  bool after = false;
  for (const auto& a : args_in) {
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? command : args).push_back(a);
  }
  CLI::App app{"Hands the work over to a fresh Claude Code session that starts with a handoff summary and can search "
               "the archived previous session."};
  app.name(kTool);
  std::string summary_file, session, claude_bin;
  bool print = false, supervise_mode = false, show = false, show_version = false, json_out = false;
  app.add_option("--summary-file", summary_file, "the handoff summary (about 500 words at most)");
  app.add_option("--session", session, "session id or transcript path (default: $CLAUDE_CODE_SESSION_ID)");
  app.add_option("--claude-bin", claude_bin, "the Claude Code program (default: rollover.claude_bin)");
  app.add_flag("--print", print, "start the new session headless (claude -p)");
  app.add_flag("--supervise", supervise_mode, "run `-- claude [args…]` as a child and carry out its rollovers");
  app.add_flag("--json", json_out, "print what was prepared as one JSON object (inside Claude Code)");
  app.add_flag("--show-config", show, "print the effective configuration and where each value came from");
  app.add_flag("--version", show_version, "print the version");
  if (auto rc = parse_cli(app, args, ctx, kTool)) return *rc;
  if (show_version) {
    ctx.out << kTool << ' ' << version() << '\n';
    return 0;
  }
  Config cfg = load_config(ctx.env, {project_start_dir(ctx.env, "")});
  if (show) {
    ctx.out << show_config(cfg);
    return 0;
  }
  if (supervise_mode) return supervise(command, cfg, ctx);
  auto error = [&](const std::string& what) {
    ctx.err << kTool << ": error: " << what << '\n';
    return 1;
  };
  if (!command.empty()) return error("a command after -- is only used with --supervise");
  if (summary_file.empty()) return error("--summary-file is required (write the handoff summary to a file first)");

  // Everything that can fail is checked before anything is recorded.
  auto summary = read_summary(summary_file);
  if (!summary) return error(summary.error().message);
  auto transcript = locate_session(session, ctx.env);
  if (!transcript) return error(transcript.error().message);
  const bool inside = ctx.env.get("CLAUDECODE") == std::optional<std::string>("1");
  const auto supervisor = ctx.env.get_nonempty("CTXKIT_SUPERVISOR");
  const std::string bin = claude_bin.empty() ? cfg.rollover.claude_bin : claude_bin;
  std::string program = bin;
  if (!inside && !supervisor) {
    auto found = find_program(bin, ctx.env);
    if (!found) return error(found.error().message);
    program = *found;
  }
  const fs::path state_dir = cfg.state_dir(ctx.env);
  std::error_code ec;
  fs::create_directories(state_dir / "rollovers", ec);
  if (ec) return error(fmt::format("creating state directory {}: {}", state_dir.string(), ec.message()));
  ::chmod(state_dir.c_str(), 0700);
  std::string note;
  std::optional<StateStore> store = open_state(cfg, ctx.env, note);
  if (!store) return error(note);

  const fs::path path = *transcript;
  const std::string parent_id = path.stem().string();
  const std::string project = path.parent_path().filename().string();
  std::optional<int> pct;
  std::string cwd, first_timestamp;
  pct = transcript_percent(path, cfg.context);
  {
    // The session's working directory, for the new session and the printed command.
    std::ifstream in(path);
    std::string line;
    for (int i = 0; i < 200 && std::getline(in, line) && (cwd.empty() || first_timestamp.empty()); ++i) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object()) continue;
      if (cwd.empty() && j.contains("cwd") && j["cwd"].is_string()) cwd = j["cwd"].get<std::string>();
      if (first_timestamp.empty() && j.contains("timestamp") && j["timestamp"].is_string()) first_timestamp = j["timestamp"].get<std::string>();
    }
  }
  // Outside Claude Code the new session starts where the caller is; otherwise in the session's
  // own directory.
  if (!inside && !supervisor) cwd = fs::current_path(ec).string();
  if (cwd.empty() || !fs::is_directory(cwd, ec)) cwd = fs::current_path(ec).string();

  auto archived = archive_session(path, state_dir, cfg.archive);
  if (!archived) return error(archived.error().message);

  const std::string new_id = util::random_uuid();
  auto parent_record = store->session(parent_id);
  int64_t number = parent_record && *parent_record ? (*parent_record)->number + 1 : 2;
  auto exe_dir = util::executable_dir();
  ContinuationInfo info;
  info.number = number;
  info.previous_percent = pct;
  info.summary = summary->text;
  info.parent_session_id = parent_id;
  info.parent_transcript = path.string();
  info.archive = archived->where.transcript.string();
  info.search_command = exe_dir ? (*exe_dir / "ctx-search").string() : std::string("ctx-search");
  auto prompt = render_continuation(continuation_template(exe_dir), info);
  if (!prompt) return error(prompt.error().message);
  const fs::path prompt_file = state_dir / "rollovers" / (new_id + ".md");
  if (auto r = util::write_file_atomic(prompt_file, *prompt, 0600); !r) return error(r.error().message);

  const std::string now = util::format_iso8601_ms(util::now_ms());
  SessionRecord parent, child;
  parent.session_id = parent_id;
  parent.project = project;
  parent.transcript = path.string();
  parent.cwd = cwd;
  parent.started_at = first_timestamp;
  child.session_id = new_id;
  child.project = project;
  child.transcript = (path.parent_path() / (new_id + ".jsonl")).string();
  child.cwd = cwd;
  child.started_at = now;
  child.summary = summary->text;
  if (supervisor) {
    // Record the hand-over for the supervisor first, so that a failure records nothing.
    if (auto r = store->put_pending_rollover({*supervisor, parent_id, new_id, prompt_file.string(), cwd, false}); !r)
      return error(r.error().message);
  }
  auto recorded = store->record_derivation(parent, child, "rollover", pct ? std::optional<int64_t>(*pct) : std::nullopt,
                                           std::nullopt, now);
  if (!recorded) {
    if (supervisor) (void)store->clear_pending_rollover(*supervisor);
    return error(recorded.error().message);
  }
  if (summary->too_long())
    ctx.err << kTool << ": warning: the summary has " << summary->words << " words; about 500 is the aim\n";

  const std::string command_line = fmt::format("cd {} && {} --session-id {} \"$(cat {})\"", util::shell_quote(cwd), util::shell_quote(bin),
                                               new_id, util::shell_quote(prompt_file.string()));
  if (json_out) {
    nlohmann::ordered_json j = {{"session_id", new_id}, {"parent_session_id", parent_id}, {"number", number},
                                {"context_percent", pct ? nlohmann::ordered_json(*pct) : nlohmann::ordered_json(nullptr)},
                                {"archive", archived->where.transcript.string()}, {"prompt_file", prompt_file.string()},
                                {"supervised", supervisor.has_value()}, {"command", command_line}};
    ctx.out << j.dump() << '\n';
    if (inside || supervisor) return 0;
  }
  if (supervisor) {
    ctx.out << fmt::format("Rollover prepared: session #{} ({}) starts with your handoff summary as soon as this turn ends. "
                           "The previous session is archived and searchable.\n", number, new_id);
    return 0;
  }
  if (inside) {
    ctx.out << fmt::format("Rollover prepared: session #{} ({}) with your handoff summary; the previous session is archived "
                           "and searchable.\nStart it (after leaving this session) with:\n  {}\n", number, new_id, command_line);
    return 0;
  }
  // Outside Claude Code: become the new session, in the caller's directory.
  std::vector<std::string> argv = launch_argv(program, cfg.rollover.claude_args, print || cfg.rollover.print, new_id, *prompt);
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  std::cout.flush();
  ::execv(program.c_str(), a.data());
  return error(fmt::format("starting {}: {}", program, std::strerror(errno)));
}

}  // namespace ctxkit
