#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "unit/temp_dir.hpp"
#include "util/bounded_run.hpp"
#include "util/process.hpp"

namespace ctxkit {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(Process, RunProcessCollectsOutputAndExitCode) {
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c", "printf out; printf err >&2; exit 3"};
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out");
  EXPECT_EQ(r->err, "err");
}

// A child that stops reading its stdin makes the write fail, not kill the caller; and the
// caller's disposition of SIGPIPE is its own (run_process used to ignore it process-wide). Run in
// a child of the test, so that a SIGPIPE that got through ends that child, not the suite.
TEST(Process, AChildThatLeavesItsStdinUnreadNeitherKillsTheCallerNorChangesItsSIGPIPE) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    util::ProcessSpec spec;
    spec.argv = {"sh", "-c", "exec 0<&-; sleep 0.05; exit 4"};
    spec.stdin_data.assign(4 << 20, 'x');  // far more than a pipe holds
    auto r = util::run_process(spec);
    if (!r || r->exit_code != 4) ::_exit(10);
    struct sigaction now {};
    ::sigaction(SIGPIPE, nullptr, &now);
    if (now.sa_handler != SIG_DFL) ::_exit(11);
    sigset_t pending;
    ::sigpending(&pending);
    if (::sigismember(&pending, SIGPIPE)) ::_exit(12);
    ::_exit(0);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  EXPECT_EQ(WEXITSTATUS(st), 0) << "10: the run failed, 11: SIGPIPE's disposition changed, 12: a "
                                   "SIGPIPE left pending";
}

// Lines reach the callback while the child runs: this child goes on only once the callback has
// seen its first line. A line longer than one read comes whole; a last line without '\n' is not
// handed over (it stays in `out`).
TEST(Process, RunProcessHandsOverStdoutLinesAsTheyArrive) {
  test::TempDir dir;
  const fs::path flag = dir / "seen-first";
  util::ProcessSpec spec;
  spec.argv = {
      "sh", "-c",
      "printf 'first\\n'; i=0; while [ ! -e \"$1\" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); "
      "done;"
      " [ -e \"$1\" ] || exit 9; head -c 200000 /dev/zero | tr '\\0' x; printf '\\nsecond\\nlast'",
      "sh", flag.string()};
  spec.timeout = 20s;
  std::vector<std::string> lines;
  spec.on_stdout_line = [&](std::string_view line) {
    lines.emplace_back(line);
    if (line == "first") std::ofstream(flag) << "";
  };
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "first");
  EXPECT_EQ(lines[1], std::string(200000, 'x'));
  EXPECT_EQ(lines[2], "second");
  EXPECT_TRUE(r->out.ends_with("\nsecond\nlast"));
}

// With a parent-death signal the child is started another way (fork + exec); it behaves the same:
// output, exit code, working directory, the given PATH searched, and a failed exec an error.
TEST(Process, RunProcessWithAParentDeathSignalBehavesTheSame) {
  test::TempDir dir;
  dir.write("bin/tool",
            "#!/bin/sh\nprintf '%s|%s' \"$(pwd)\" \"$1\"; read -r line; printf '%s' \"$line\" >&2; "
            "exit 4\n");
  fs::permissions(dir / "bin/tool", fs::perms::owner_all);
  dir.write("bin/garbage", "not a program\n");
  fs::permissions(dir / "bin/garbage", fs::perms::owner_all);
  util::ProcessSpec spec;
  spec.argv = {"tool", "arg"};
  spec.env = std::map<std::string, std::string>{{"PATH", (dir / "bin").string()}};
  spec.cwd = dir.path();
  spec.stdin_data = "to stderr";
  spec.parent_death_signal = SIGTERM;
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->out, dir.path().string() + "|arg");
  EXPECT_EQ(r->err, "to stderr");
  spec.argv = {"garbage"};
  auto bad = util::run_process(spec);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("starting garbage: Exec format error"), std::string::npos)
      << bad.error().message;
  spec.argv = {"missing-tool"};
  EXPECT_EQ(util::run_process(spec).error().kind, Error::Kind::NotFound);
}

// A relative program is found from the child's working directory, as posix_spawnp finds it
// after its chdir.
TEST(Process, WithADeathSignalARelativeProgramIsTakenFromTheChildsFolder) {
  test::TempDir dir;
  dir.write("proj/bin/tool", "#!/bin/sh\necho ran\n");
  fs::permissions(dir / "proj/bin/tool", fs::perms::owner_all);
  util::ProcessSpec spec;
  spec.argv = {"./bin/tool"};
  spec.cwd = dir / "proj";
  spec.parent_death_signal = SIGTERM;
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "ran\n");
}

// A line callback that throws does not leave the child running or unreaped.
TEST(Process, ACallbackThatThrowsTakesTheChildDown) {
  for (bool death_signal : {false, true}) {
    util::ProcessSpec spec;
    spec.argv = {"sh", "-c", "echo $$; exec sleep 30"};
    if (death_signal) spec.parent_death_signal = SIGTERM;
    pid_t child = 0;
    spec.on_stdout_line = [&](std::string_view line) {
      child = static_cast<pid_t>(std::stol(std::string(line)));
      throw std::runtime_error("stop here");
    };
    EXPECT_THROW((void)util::run_process(spec), std::runtime_error);
    ASSERT_GT(child, 0);
    EXPECT_NE(::kill(child, 0), 0)
        << "child " << child << " still there";  // reaped: no such process
  }
}

// exec ends an argument at its first NUL: such an argument is refused, nothing runs.
TEST(Process, AnArgumentWithANulIsRefusedNotCut) {
  test::TempDir dir;
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c", std::string("touch ran\0; echo cut", 18)};
  spec.cwd = dir.path();
  auto r = util::run_process(spec);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "starting sh: argument 2 holds a NUL byte (it would be cut short)");
  EXPECT_FALSE(fs::exists(dir / "ran"));
}

// Lines handed over need not stay in memory: `out` keeps only the line still arriving, and
// stderr its tail, however much the child writes.
TEST(Process, HandedLinesAreNotKeptWhenAskedSo) {
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c",
               "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 40000000; yes e | head -c "
               "1000000 >&2; printf tail"};
  spec.keep_handed_lines = false;
  spec.err_tail_bytes = 1000;
  size_t lines = 0, longest = 0;
  spec.on_stdout_line = [&](std::string_view line) {
    ++lines;
    longest = std::max(longest, line.size());
  };
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(lines, 40000000u / 37);
  EXPECT_EQ(longest, 36u);
  EXPECT_EQ(r->out.size(), 40000000u % 37 + 4) << "only the unfinished last line";
  EXPECT_EQ(r->out.substr(r->out.size() - 4), "tail");
  EXPECT_EQ(r->err.size(), 1000u);
}

// A child that has given what was wanted and does not exit, or whose output a process it started
// keeps open, holds the caller only for the linger.
TEST(Process, TheLingerEndsAChildThatStaysAfterItIsDone) {
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo result; exec sleep 30"};
  spec.linger = 300ms;
  bool seen = false;
  spec.on_stdout_line = [&](std::string_view line) { seen = seen || line == "result"; };
  spec.done = [&] { return seen; };
  const auto t0 = std::chrono::steady_clock::now();
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(r->cut_off);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + SIGKILL);
  // Not done yet: no linger (a client may work for hours before its result).
  seen = false;
  spec.argv = {"sh", "-c", "echo working; sleep 1; echo result"};
  auto slow = util::run_process(spec);
  ASSERT_TRUE(slow);
  EXPECT_FALSE(slow->cut_off);
  EXPECT_EQ(slow->exit_code, 0);
}

TEST(Process, TheLingerEndsTheWaitForOutputABackgroundChildHolds) {
  test::TempDir dir;
  util::ProcessSpec spec;
  // The shell exits at once; the sleep it started keeps stdout open for 30 s.
  spec.argv = {"sh", "-c", "sleep 30 & echo $! > bg.pid; echo started; exit 4"};
  spec.cwd = dir.path();
  spec.linger = 300ms;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(r->cut_off);
  EXPECT_EQ(r->exit_code, 4);  // the child's own exit
  EXPECT_EQ(r->out, "started\n");
  const pid_t bg = static_cast<pid_t>(std::stol(test::read_file(dir / "bg.pid")));
  ::kill(bg, SIGKILL);
}

TEST(Process, DetachRunsTheWorkInAnotherProcessAndReturnsFirst) {
  test::TempDir tmp;
  const fs::path gate = tmp / "gate", done = tmp / "done";
  const pid_t parent = ::getpid();
  // The work waits for a file that only the caller creates after detach returned: if detach
  // waited for the work, this test would hang until the gate timeout and then fail.
  util::detach([&] {
    for (int i = 0; i < 500 && !fs::exists(gate); ++i) std::this_thread::sleep_for(10ms);
    std::ofstream(done) << (fs::exists(gate) ? "after" : "before") << ' ' << (::getpid() != parent);
  });
  std::ofstream(gate) << "go";
  std::string text;
  for (int i = 0; i < 500 && text.empty(); ++i) {
    std::this_thread::sleep_for(10ms);
    text = test::read_file(done);
  }
  EXPECT_EQ(text, "after 1");
}

TEST(Process, DetachedWorkThatThrowsExitsOneInsteadOfAborting) {
  // A child of the test becomes the subreaper of what it detaches, so it can collect the
  // grandchild's status (otherwise init would).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) ::_exit(90);
    util::detach([] { throw std::runtime_error("the work failed"); });
    int status = 0;
    if (::waitpid(-1, &status, 0) < 0) ::_exit(91);
    ::_exit(WIFSIGNALED(status) ? 100 + WTERMSIG(status) : WEXITSTATUS(status));
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);  // not 100 + SIGABRT
}

TEST(Process, DetachWhenForkFailsRunsTheWorkHereAndKeepsItsExceptionThere) {
  // In a child of the test, fork fails from some point on (clone and clone3 return EAGAIN).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EAGAIN & SECCOMP_RET_DATA)),
    };
    sock_fprog program{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
      ::_exit(90);
    bool ran = false;
    try {
      util::detach([&] {
        ran = true;
        throw std::runtime_error("the work failed");
      });
    } catch (...) {
      ::_exit(91);  // the work's exception reached the caller
    }
    ::_exit(ran ? 0 : 92);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 90) GTEST_SKIP() << "no seccomp filter here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The environment a child gets in these tests: only what is listed.
std::map<std::string, std::string, std::less<>> small_env(
    std::map<std::string, std::string, std::less<>> extra = {}) {
  extra.emplace("PATH", "/usr/bin:/bin");
  return extra;
}

// Waits (bounded) until `file` has some text.
std::string wait_for_text(const fs::path& file) {
  std::string text;
  for (int i = 0; i < 500 && text.empty(); ++i) {
    text = fs::exists(file) ? test::read_file(file) : "";
    if (text.empty()) std::this_thread::sleep_for(10ms);
  }
  return text;
}

TEST(Process, ChildExitCodeIsReported) {
  auto c = util::Child::spawn({{"sh", "-c", "exit 7"}, small_env(), std::nullopt, std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  util::ExitStatus s = c->wait();
  EXPECT_EQ(s, (util::ExitStatus{7, std::nullopt}));
  EXPECT_EQ(s.shell_code(), 7);
  EXPECT_EQ(c->poll(), s);  // reaped once, remembered
  EXPECT_FALSE(c->signal(SIGTERM));
}

TEST(Process, ChildKilledByASignalReportsTheSignalNotACode) {
  auto c = util::Child::spawn(
      {{"sh", "-c", "kill -s KILL $$"}, small_env(), std::nullopt, std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  util::ExitStatus s = c->wait();
  EXPECT_FALSE(s.code);
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_EQ(s.shell_code(), 128 + SIGKILL);
}

TEST(Process, ChildGetsExactlyTheGivenEnvironmentAndWorkingDirectory) {
  test::TempDir tmp;
  const fs::path out = tmp / "out", dir = tmp / "work dir";
  fs::create_directories(dir);
  auto c = util::Child::spawn(
      {{"sh", "-c", "printf '%s|%s|%s' \"$(pwd)\" \"$GREETING\" \"${HOME-unset}\" > \"$OUT\""},
       small_env({{"GREETING", "hi there"}, {"OUT", out.string()}}),
       dir,
       std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wait().code, 0);
  EXPECT_EQ(test::read_file(out), dir.string() + "|hi there|unset");
}

TEST(Process, ChildIsSearchedInTheGivenPath) {
  test::TempDir tmp;
  const fs::path bin = tmp / "bin";
  fs::create_directories(bin);
  tmp.write("bin/only-here", "#!/bin/sh\nexit 42\n");
  fs::permissions(bin / "only-here", fs::perms::owner_all);
  auto c = util::Child::spawn({{"only-here"},
                               small_env({{"PATH", bin.string() + ":/usr/bin:/bin"}}),
                               std::nullopt,
                               std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wait().code, 42);
  // Not in the PATH given: an error of kind NotFound that names it, and nothing started.
  auto missing = util::Child::spawn({{"only-here"}, small_env(), std::nullopt, std::nullopt});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, Error::Kind::NotFound);
  EXPECT_EQ(missing.error().message, "starting only-here: only-here not found in PATH");
}

// The exec itself fails in the child (a file marked executable that is no program): the caller
// gets the reason and no child, with a death signal (the child started by clone, or by fork under
// ThreadSanitizer, which reports on a pipe) and without.
TEST(Process, AChildWhoseExecFailsIsAnErrorWithItsReason) {
  test::TempDir tmp;
  const fs::path bogus = tmp / "bogus";
  std::ofstream(bogus) << "\x7f"
                          "ELF not really\n";
  fs::permissions(bogus, fs::perms::owner_all);
  for (std::optional<int> death : {std::optional<int>(SIGHUP), std::optional<int>()}) {
    auto c = util::Child::spawn({{bogus.string()}, small_env(), std::nullopt, death});
    ASSERT_FALSE(c) << (death ? "with" : "without") << " a death signal";
    EXPECT_EQ(c.error().message, "starting " + bogus.string() + ": Exec format error");
  }
}

TEST(Process, FindInPathSkipsWhatIsNotAnExecutableFile) {
  test::TempDir tmp;
  fs::create_directories(tmp / "a" / "tool");  // a directory of that name
  tmp.write("b/tool", "not executable");
  tmp.write("c/tool", "#!/bin/sh\n");
  fs::permissions(tmp / "c/tool", fs::perms::owner_all);
  const std::string path =
      (tmp / "a").string() + "::" + (tmp / "b").string() + ":" + (tmp / "c").string();
  auto found = util::find_in_path("tool", path);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, (tmp / "c/tool").string());
  EXPECT_EQ(util::find_in_path("tool", "/nonexistent").error().message, "tool not found in PATH");
  EXPECT_EQ(util::find_in_path((tmp / "b/tool").string(), "").error().message,
            (tmp / "b/tool").string() + " not found or not executable");
  EXPECT_EQ(*util::find_in_path((tmp / "c/tool").string(), ""), (tmp / "c/tool").string());
}

TEST(Process, ChildInAMissingDirectoryIsAnErrorNotAChild) {
  test::TempDir tmp;
  auto c = util::Child::spawn({{"sh", "-c", "exit 0"}, small_env(), tmp / "gone", std::nullopt});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message, "starting sh: working directory " + (tmp / "gone").string() +
                                   ": No such file or directory");
}

TEST(Process, WaitForTimesOutOnARunningChildAndTerminateEndsIt) {
  auto c = util::Child::spawn({{"sleep", "30"}, small_env(), std::nullopt, std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wait_for(50ms), std::nullopt);
  EXPECT_EQ(c->poll(), std::nullopt);
  util::ExitStatus s = c->terminate(2s);
  EXPECT_EQ(s.signal, SIGTERM);
}

TEST(Process, TerminateKillsAChildThatIgnoresTerm) {
  test::TempDir tmp;
  const fs::path ready = tmp / "ready";
  auto c = util::Child::spawn(
      {{"sh", "-c", "trap '' TERM; echo up > \"$READY\"; while :; do sleep 0.05; done"},
       small_env({{"READY", ready.string()}}),
       std::nullopt,
       std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(wait_for_text(ready), "up\n");
  auto start = std::chrono::steady_clock::now();
  util::ExitStatus s = c->terminate(200ms);
  EXPECT_EQ(s.signal, SIGKILL);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
}

TEST(Process, ChildStartsWithDefaultSignalsWhateverTheCallerIgnores) {
  // An ignored SIGINT would survive exec; the child must still die of one.
  struct sigaction ignore {
  }, saved{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &saved);
  auto c = util::Child::spawn(
      {{"sh", "-c", "kill -s INT $$; exit 3"}, small_env(), std::nullopt, std::nullopt});
  ::sigaction(SIGINT, &saved, nullptr);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wait().signal, SIGINT);
}

// A terminal client whose supervisor is killed is hung up with it (SpawnSpec::parent_death_signal):
// the signal comes when the thread that started the child ends; without it the child runs on.
TEST(Process, ASpawnedChildGetsItsDeathSignalWhenTheThreadThatStartedItEnds) {
  test::TempDir tmp;
  const fs::path ready = tmp / "ready", got = tmp / "got";
  auto start = [&](std::optional<int> death_signal) {
    std::optional<util::Child> child;
    std::thread([&] {
      auto c = util::Child::spawn({{"sh", "-c",
                                    "trap 'echo HUP > \"$GOT\"; exit 4' HUP; echo up > \"$READY\"; "
                                    "while :; do sleep 0.05; done"},
                                   small_env({{"READY", ready.string()}, {"GOT", got.string()}}),
                                   std::nullopt,
                                   death_signal});
      ASSERT_TRUE(c) << c.error().message;
      ASSERT_EQ(wait_for_text(ready), "up\n");
      child.emplace(std::move(*c));
    }).join();  // the thread that started it has ended
    return child;
  };
  auto hung_up = start(SIGHUP);
  ASSERT_TRUE(hung_up);
  auto s = hung_up->wait_for(10s);
  if (!s) hung_up->terminate(2s);
  ASSERT_TRUE(s) << "the child did not get its death signal";
  EXPECT_EQ(s->code, 4);
  EXPECT_EQ(test::read_file(got), "HUP\n");
  fs::remove(ready);
  fs::remove(got);
  auto left = start(std::nullopt);
  ASSERT_TRUE(left);
  EXPECT_EQ(left->wait_for(300ms), std::nullopt);
  EXPECT_EQ(left->terminate(2s).signal, SIGTERM);
  EXPECT_FALSE(fs::exists(got));
}

// The death signal's way of starting a child (clone, not posix_spawn) keeps Child::spawn's promise:
// every signal at its default, nothing blocked.
TEST(Process, AChildWithADeathSignalStartsWithDefaultSignalsToo) {
  struct sigaction ignore {
  }, saved{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &saved);
  sigset_t usr1, old;
  ::sigemptyset(&usr1);
  ::sigaddset(&usr1, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &usr1, &old);
  auto c = util::Child::spawn(
      {{"sh", "-c", "kill -s USR1 $$; kill -s INT $$; exit 3"}, small_env(), std::nullopt, SIGHUP});
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::sigaction(SIGINT, &saved, nullptr);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->wait().signal, SIGUSR1);
  auto missing = util::Child::spawn({{"only-here"}, small_env(), std::nullopt, SIGHUP});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "starting only-here: only-here not found in PATH");
}

TEST(Process, ForwarderPassesASignalFromAProcessToTheChild) {
  test::TempDir tmp;
  const fs::path ready = tmp / "ready", got = tmp / "got";
  auto c = util::Child::spawn({{"sh", "-c",
                                "trap 'echo USR2 > \"$GOT\"; exit 5' USR2; echo up > \"$READY\"; "
                                "while :; do sleep 0.05; done"},
                               small_env({{"READY", ready.string()}, {"GOT", got.string()}}),
                               std::nullopt,
                               std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(wait_for_text(ready), "up\n");
  {
    util::SignalForwarder fwd({SIGUSR2, SIGHUP});
    fwd.set_target(c->pid());
    ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);  // sent by a process: SI_USER
    auto s = c->wait_for(5s);
    ASSERT_TRUE(s) << "the child never got the forwarded signal";
    EXPECT_EQ(s->code, 5);
    EXPECT_TRUE(fwd.take(SIGUSR2));
    EXPECT_FALSE(fwd.take(SIGUSR2));  // taken once
    EXPECT_FALSE(fwd.take(SIGHUP));
  }
  EXPECT_EQ(test::read_file(got), "USR2\n");
  // The previous disposition is back: SIGUSR2 is not handled by the forwarder any more.
  struct sigaction now {};
  ::sigaction(SIGUSR2, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

// A signal sent while no child is set (as between a supervisor's spawn and its set_target) is
// not lost: it goes to the child once it is set.
TEST(Process, ForwarderPassesASignalSentBeforeTheChildWasSet) {
  test::TempDir tmp;
  const fs::path ready = tmp / "ready", got = tmp / "got";
  auto c = util::Child::spawn({{"sh", "-c",
                                "trap 'echo USR2 > \"$GOT\"; exit 5' USR2; echo up > \"$READY\"; "
                                "while :; do sleep 0.05; done"},
                               small_env({{"READY", ready.string()}, {"GOT", got.string()}}),
                               std::nullopt,
                               std::nullopt});
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(wait_for_text(ready), "up\n");
  {
    util::SignalForwarder fwd({SIGUSR2});
    ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);  // no child set yet
    fwd.set_target(c->pid());
    auto s = c->wait_for(10s);
    if (!s) c->terminate(2s);
    ASSERT_TRUE(s) << "the signal sent before set_target never reached the child";
    EXPECT_EQ(s->code, 5);
    EXPECT_TRUE(fwd.take(SIGUSR2));
  }
  EXPECT_EQ(test::read_file(got), "USR2\n");
}

TEST(Process, LatchRecordsASignalUntilTaken) {
  util::SignalLatch latch(SIGUSR1);
  EXPECT_FALSE(latch.take());
  ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
  EXPECT_TRUE(latch.take());
  EXPECT_FALSE(latch.take());
}

TEST(Process, RunProcessTimesOutAndKills) {
  util::ProcessSpec spec;
  spec.argv = {"sleep", "30"};
  spec.timeout = 100ms;
  auto start = std::chrono::steady_clock::now();
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Process, RunProcessWithAnEnvironmentSearchesItsPath) {
  util::ProcessSpec spec;
  spec.argv = {"no-such-program-here"};
  spec.env = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}};
  auto r = util::run_process(spec);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "starting no-such-program-here: no-such-program-here not found in PATH");
}

// Whether `pid` runs (a zombie no longer does).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

pid_t timed_out_grandchild(bool group) {
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c", "sleep 30 & echo $!; wait"};
  spec.timeout = 300ms;
  if (group) {
    auto r = util::run_bounded(spec, 0);
    EXPECT_TRUE(r && r->result.timed_out);
    return r ? static_cast<pid_t>(std::stol(r->result.out)) : 0;
  }
  auto r = util::run_process(spec);
  EXPECT_TRUE(r && r->timed_out);
  return r ? static_cast<pid_t>(std::stol(r->out)) : 0;
}

TEST(Process, RunBoundedTimeoutKillsTheChildsProcessGroup) {
  pid_t left = timed_out_grandchild(false);
  ASSERT_GT(left, 0);
  EXPECT_TRUE(running(left));  // without a group of its own, the shell's child outlives it
  ::kill(left, SIGKILL);
  pid_t gone = timed_out_grandchild(true);
  ASSERT_GT(gone, 0);
  for (int i = 0; i < 100 && running(gone); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(running(gone));
}

TEST(Process, RunProcessTimeoutHoldsWhenTheChildClosesItsOutputAndStays) {
  util::ProcessSpec spec;
  spec.argv = {"sh", "-c", "exec >/dev/null 2>&1; sleep 30"};
  spec.timeout = 200ms;
  auto start = std::chrono::steady_clock::now();
  auto r = util::run_process(spec);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Process, RunBoundedStopsAChildThatWritesTooMuch) {
  util::ProcessSpec spec;
  spec.argv = {"yes"};
  auto r = util::run_bounded(spec, 1000);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->overflowed);
  EXPECT_FALSE(r->result.timed_out);
  EXPECT_EQ(r->result.out.size(), 1000u);
  EXPECT_EQ(r->result.out.substr(0, 4), "y\ny\n");
}

}  // namespace
}  // namespace ctxkit
