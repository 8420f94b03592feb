#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "unit/temp_dir.hpp"
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

}  // namespace
}  // namespace ctxkit
