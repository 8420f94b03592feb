#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rollover/supervisor.hpp"
#include "unit/temp_dir.hpp"
#include "util/process.hpp"

namespace ctxkit::rollover {
namespace {
namespace fs = std::filesystem;

// The temp dir itself as the state folder.
core::Locations state_in(const test::TempDir& tmp) {
  return core::Locations::resolve(tmp.env(), tmp.path().string());
}

// A configuration whose state folder is `dir`.
core::Config supervisor_config(const fs::path& dir) {
  core::Config cfg;
  cfg.state.dir = dir.string();
  return cfg;
}

// What run_supervisor returned, and the events it reported, in order.
struct Supervised {
  SupervisorResult result;
  std::vector<SupervisorEvent> events;
};
Supervised supervise(const std::vector<std::string>& command, const core::Config& cfg,
                     const util::Env& env) {
  Supervised out;
  out.result =
      run_supervisor(command, cfg, env, [&](const SupervisorEvent& e) { out.events.push_back(e); });
  return out;
}

TEST(Supervisor, RecordedSupervisorIsVerifiedByPidTokenAndStartTime) {
  test::TempDir tmp;
  const pid_t self = ::getpid();
  ASSERT_TRUE(record_supervisor(state_in(tmp), self, "tok-1"));
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "supervisors").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((tmp / "supervisors" / std::to_string(self)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto ok = verify_supervisor(state_in(tmp), std::to_string(self), "tok-1");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(*ok, self);
  // Another token, or the record gone: not ours to signal.
  EXPECT_EQ(verify_supervisor(state_in(tmp), std::to_string(self), "tok-2").error().message,
            "process " + std::to_string(self) + " is not the ctxkit supervisor of this session");
  forget_supervisor(state_in(tmp), self);
  EXPECT_EQ(verify_supervisor(state_in(tmp), std::to_string(self), "tok-1").error().message,
            "process " + std::to_string(self) + " is not a recorded ctxkit supervisor");
}

TEST(Supervisor, AReusedPidDoesNotMatchTheRecord) {
  test::TempDir tmp;
  // A record whose process has ended: its pid now names another process (or none), whose start
  // time differs.
  auto c = util::Child::spawn({{"true"}, std::nullopt, std::nullopt, std::nullopt});
  ASSERT_TRUE(c);
  const pid_t gone = c->pid();
  ASSERT_TRUE(record_supervisor(state_in(tmp), gone, "tok"));
  c->wait();
  tmp.write("supervisors/" + std::to_string(::getpid()),
            "ctxkit-supervisor 1\ntok\n" +
                std::to_string(*util::process_start_time(::getpid()) + 1) + "\n");
  EXPECT_FALSE(verify_supervisor(state_in(tmp), std::to_string(::getpid()), "tok"));
}

TEST(Supervisor, PidTextThatIsNotAPositiveNumberIsRefused) {
  test::TempDir tmp;
  for (std::string bad :
       {"0", "-1", "-4242", "abc", "12x", " 12", "+12", "", "99999999999999999999", "4294967297"}) {
    auto r = verify_supervisor(state_in(tmp), bad, "tok");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message, "CTXKIT_SUPERVISOR_PID '" + bad + "' is not a process id");
  }
  EXPECT_EQ(verify_supervisor(state_in(tmp), "1\n\x1b[2J", "tok").error().message,
            "CTXKIT_SUPERVISOR_PID '1??[2J' is not a process id");
}

TEST(Supervisor, ProcessStartTimeNamesOneProcess) {
  auto self = util::process_start_time(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(util::process_start_time(::getpid()), self);
  EXPECT_FALSE(util::process_start_time(0));
  EXPECT_FALSE(util::process_start_time(-1));
  // A process that has ended and is not yet reaped (a supervisor killed, its shell not yet back)
  // names no running process.
  auto c = util::Child::spawn({{"true"}, std::nullopt, std::nullopt, std::nullopt});
  ASSERT_TRUE(c);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(c->pid()), &info, WEXITED | WNOWAIT), 0);
  EXPECT_FALSE(util::process_start_time(c->pid()));
  c->wait();
}

TEST(Supervisor, ReturnsTheClientsStatusAndReportsWithoutPrinting) {
  test::TempDir tmp;
  const auto [r, events] =
      supervise({"sh", "-c", "exit 7"}, supervisor_config(tmp / "state"), tmp.env());
  EXPECT_FALSE(r.spawn_error);
  EXPECT_EQ(r.last_status, 7);
  EXPECT_EQ(r.clients_started, 1);
  EXPECT_EQ(r.rollovers, 0);
  for (const auto& e : events) EXPECT_EQ(e.kind, SupervisorEvent::Kind::TerminalRestored);
  // The record is gone once the supervisor returns.
  EXPECT_TRUE(fs::is_empty(tmp / "state" / "supervisors"));
}

TEST(Supervisor, AClientThatCannotStartIsAResultNotALine) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  env.set("PATH", (tmp / "empty-bin").string());
  const SupervisorResult r =
      supervise({"no-such-client-xyz"}, supervisor_config(tmp / "state"), env).result;
  ASSERT_TRUE(r.spawn_error);
  EXPECT_NE(r.spawn_error->message.find("no-such-client-xyz"), std::string::npos)
      << r.spawn_error->message;
  EXPECT_EQ(r.clients_started, 0);
  EXPECT_EQ(r.last_status, 0);
}

TEST(Supervisor, AnUnwritableRecordIsReportedAndTheClientStillRuns) {
  test::TempDir tmp;
  const fs::path file = tmp.write("not-a-folder", "x");
  const auto [r, events] =
      supervise({"sh", "-c", "exit 0"}, supervisor_config(file / "state"), tmp.env());
  EXPECT_FALSE(r.spawn_error);
  EXPECT_EQ(r.clients_started, 1);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().kind, SupervisorEvent::Kind::NotRecorded);
  EXPECT_NE(events.front().detail.find("not-a-folder"), std::string::npos) << events.front().detail;
}

}  // namespace
}  // namespace ctxkit::rollover
