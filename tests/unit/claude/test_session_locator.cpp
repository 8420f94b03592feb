#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "claude/session_locator.hpp"
#include "core/locations.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {
namespace fs = std::filesystem;

constexpr const char* kSession = "0f0e0d0c-1111-2222-3333-444455556666";

// A tool run early in a session (ctx-rollover, /trim) can look for the session's transcript
// before the client has written it: the current session is looked for again for a while.
TEST(SessionLocator, TheCurrentSessionsTranscriptWrittenAMomentLaterIsFound) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  env.set("CLAUDE_CODE_SESSION_ID", kSession);
  const core::Locations loc = core::Locations::resolve(env, (tmp / "state").string());
  const fs::path folder = loc.claude_projects_dir() / "-proj";
  fs::create_directories(folder);

  auto missing = locate_session("", env, loc);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, Error::Kind::NotFound);

  // Written 100 ms after the lookup starts: found only by looking again.
  const fs::path transcript = folder / (std::string(kSession) + ".jsonl");
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ofstream(transcript) << "{\"type\":\"user\"}\n";
  });
  auto found = locate_session("", env, loc, std::chrono::milliseconds(10000));
  writer.join();
  ASSERT_TRUE(found.has_value()) << found.error().message;
  EXPECT_EQ(*found, transcript);
}

TEST(SessionLocator, ANamedSessionThatIsMissingIsNotFound) {
  test::TempDir tmp;
  util::Env env = tmp.env();
  const core::Locations loc = core::Locations::resolve(env, (tmp / "state").string());
  fs::create_directories(loc.claude_projects_dir() / "-proj");
  auto r = locate_session(kSession, env, loc, std::chrono::milliseconds(0));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Error::Kind::NotFound);
  EXPECT_NE(r.error().message.find(kSession), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ctxkit::claude
