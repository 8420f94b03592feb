#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "archive/session_archiver.hpp"
#include "trim/trim_session.hpp"
#include "unit/temp_dir.hpp"
#include "unit/trim/bash_session.hpp"
#include "unit/trim/trim_figures.hpp"

namespace ctxkit::trim {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string session_lines(int results) {
  return test::bash_session_lines(results, "11111111-1111-4111-8111-111111111111");
}

// A request that trims Bash results of `t` into the session 2222….
TrimRequest bash_request(const fs::path& t) {
  TrimRequest req;
  req.transcript = t;
  req.new_session_id = "22222222-2222-4222-8222-222222222222";
  req.tools = {"Bash"};
  return req;
}

TEST(TrimSession, LinesArrivingAfterTheSnapshotAreLeftOutAndCounted) {
  test::TempDir tmp;
  fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", session_lines(4));
  TrimRequest req = bash_request(t);
  req.after_snapshot = [&] {
    std::ofstream out(t, std::ios::app);
    for (int i = 0; i < 3; ++i)
      out << R"({"type":"progress","late":true})"
          << "\n";
  };
  auto o = trim_session(req);
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_TRUE(o->written);
  EXPECT_EQ(o->late_lines, 3u);
  std::ifstream in(o->output);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_EQ(line.find("\"late\""), std::string::npos);
  }
  EXPECT_EQ(lines, 8);
}

TEST(TrimSession, CwdAndFirstTimestampAreDecodedJsonText) {
  test::TempDir tmp;
  // The session ran in  /tmp/a "b" \c\  : the client writes it escaped.
  const std::string dir = "/tmp/a \"b\" \\c\\ \xc3\xa9";
  json first = {{"type", "user"},
                {"uuid", "u0"},
                {"sessionId", "11111111-1111-4111-8111-111111111111"},
                {"cwd", dir},
                {"timestamp", "2026-11-21T12:00:00.000Z"},
                {"message", {{"role", "user"}, {"content", "hi"}}}};
  fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl",
                         first.dump(-1, ' ', true) + "\n" + session_lines(4));
  ASSERT_NE(test::read_file(t).find("\\\"b\\\""), std::string::npos);  // escaped on disk
  auto o = trim_session(bash_request(t));
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_EQ(o->cwd, dir);
  EXPECT_EQ(o->first_timestamp, "2026-11-21T12:00:00.000Z");
}

TEST(TrimSession, TempFilesAreNotNamedAsSessions) {
  test::TempDir tmp;
  fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", session_lines(4));
  TrimRequest req = bash_request(t);
  std::vector<std::string> seen;
  auto o = trim_session(req);
  ASSERT_TRUE(o);
  for (const auto& e : fs::directory_iterator(t.parent_path()))
    seen.push_back(e.path().filename().string());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"11111111-1111-4111-8111-111111111111.jsonl",
                                            "22222222-2222-4222-8222-222222222222.jsonl"}));
}

TEST(TrimSession, MetadataSlotIsValidJsonOnTheFirstLine) {
  test::TempDir tmp;
  fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", session_lines(2));
  TrimRequest req = bash_request(t);
  req.trimmed_at = "2026-11-21T00:00:00.000Z";
  auto o = trim_session(req);
  ASSERT_TRUE(o && o->written);
  std::ifstream in(o->output);
  std::string first;
  std::getline(in, first);
  json j = json::parse(first);
  EXPECT_EQ(j["trim_metadata"]["trimmed_at"], "2026-11-21T00:00:00.000Z");
  EXPECT_EQ(j["trim_metadata"]["trim_params"]["threshold"], 500);
  EXPECT_EQ(j["trim_metadata"]["stats"]["results_trimmed"], 2);
  EXPECT_EQ(j["type"], "assistant");
  EXPECT_EQ(j["sessionId"], "22222222-2222-4222-8222-222222222222");
}

TEST(TrimSession, AnEmptyObjectWithSpacesOnTheFirstLineStaysValidJson) {
  for (std::string first_line : {"{}", "{ }", "{\t \r}"}) {
    test::TempDir tmp;
    fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl",
                           first_line + "\n" + session_lines(2));
    auto o = trim_session(bash_request(t));
    ASSERT_TRUE(o && o->written) << first_line;
    std::ifstream in(o->output);
    std::string first;
    std::getline(in, first);
    json j = json::parse(first, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << first_line;
    EXPECT_EQ(j.size(), 1u);
    EXPECT_TRUE(j.contains("trim_metadata"));
  }
}

// A hook archiving the same session holds archive_session's lock: the trim writes its archive copy
// only once that archiver is done, so the two never replace each other's copy.
TEST(TrimSession, TheArchiveCopyWaitsForAnArchiverOfTheSameSession) {
  test::TempDir tmp;
  fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", session_lines(4));
  TrimRequest req = bash_request(t);
  req.archive_transcript = tmp / "archive/proj/11111111-1111-4111-8111-111111111111.jsonl";
  req.archive_side_dir = tmp / "archive/proj/11111111-1111-4111-8111-111111111111";
  fs::create_directories(req.archive_transcript.parent_path());
  auto held = archive::lock_session_archive({req.archive_transcript, req.archive_side_dir});
  ASSERT_TRUE(held) << held.error().message;
  std::atomic<bool> snapshot_taken{false}, done{false};
  req.after_snapshot = [&] { snapshot_taken = true; };
  Result<TrimOutcome> outcome = fail("not run");
  std::thread trim([&] {
    outcome = trim_session(req);
    done = true;
  });
  for (int i = 0; i < 500 && !snapshot_taken; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(snapshot_taken);
  // Time enough to copy four lines twice over; the trim is still waiting for the lock.
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(done);
  EXPECT_FALSE(fs::exists(req.archive_transcript));
  held = fail("released");
  trim.join();
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_TRUE(outcome->archived);
  EXPECT_EQ(test::read_file(req.archive_transcript), test::read_file(t));
}

// A large dry run is read in two parts on two threads. Its figures are those of one pass, line
// numbers included: each line here holds a Bash result just long enough to be cut while the
// notice's line number has two digits, not three. The second part starts at line 99, then 100: a
// number off by one either way changes what is cut.
TEST(TrimSession, ADryRunReadInTwoPartsSaysWhatOnePassSays) {
  for (int second_part_from : {99, 100}) {
    SCOPED_TRACE(second_part_from);
    test::TempDir tmp;
    const fs::path t = tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", "");
    const size_t threshold = 40;
    const size_t notice = Trimmer::notice(0, 0, 0, t.string()).size();
    const size_t edge = threshold + notice + 3 /* its own digits */ + 2 + 1;
    ASSERT_GE(edge, 100u);
    ASSERT_LT(edge, 1000u);
    // Lines of one length: the first part (half of the bytes, to a line's end) ends with line
    // second_part_from - 1.
    const int lines = 2 * (second_part_from - 2);
    std::string text;
    for (int i = 1; i <= lines; ++i) {
      const std::string id = fmt::format("toolu_{:04}", i);
      json line = {
          {"type", "user"},
          {"sessionId", "11111111-1111-4111-8111-111111111111"},
          {"message",
           {{"role", "user"},
            {"content",
             json::array({{{"type", "tool_use"}, {"id", id}, {"name", "Bash"}, {"input", {}}},
                          {{"type", "tool_result"},
                           {"tool_use_id", id},
                           {"content", std::string(edge, 'z')}}})}}}};
      text += line.dump() + "\n";
    }
    tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", text);
    TrimRequest req = bash_request(t);
    req.threshold = threshold;
    req.dry_run = true;
    req.first_part = 0.5;  // the first part ends with line second_part_from - 1
    req.split_at_least = 0;
    auto two = trim_session(req);
    req.split_at_least = UINT64_MAX;
    auto one = trim_session(req);
    ASSERT_TRUE(two) << two.error().message;
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(two->parts, 2);
    EXPECT_EQ(one->parts, 1);
    EXPECT_EQ(one->stats.results_trimmed, 99u);  // lines 1 to 99
    EXPECT_EQ(two->stats.results_trimmed, one->stats.results_trimmed);
    EXPECT_EQ(two->stats.chars_saved, one->stats.chars_saved);
    EXPECT_EQ(two->stats.lines, static_cast<uint64_t>(lines));
    EXPECT_EQ(two->stats.per_tool.at("Bash").results, static_cast<uint64_t>(lines));
    EXPECT_EQ(two->snapshot_bytes, text.size());
  }
}

// A dry run read in two parts, wherever the second starts, says what one pass says: on a made-up
// session whose results stand a few lines after their tool_use,
// with copies of results, results of no tool_use, tool uses without a result, tool ids used again
// under another name,
// results a character either side of what a cut saves, and line numbers past 100 and 1,000.
TEST(TrimSession, ADryRunReadInTwoPartsSaysWhatOnePassSaysOfAMixedSession) {
  test::TempDir tmp;
  const std::string session = "11111111-1111-4111-8111-111111111111";
  const fs::path t = tmp.write("proj/" + session + ".jsonl", "");
  const size_t threshold = 40;
  const size_t edge = threshold + Trimmer::notice(0, 0, 0, t.string()).size() + 3 + 2 + 1;
  const std::vector<std::string> tools = {"Bash", "Read", "Write", "Grep"};
  uint64_t seed = 12345;
  auto next = [&](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  auto use = [&](const std::string& id, const std::string& tool, size_t input) {
    return json{{"type", "assistant"},
                {"sessionId", session},
                {"message",
                 {{"role", "assistant"},
                  {"content", json::array({{{"type", "tool_use"},
                                            {"id", id},
                                            {"name", tool},
                                            {"input", {{"command", std::string(input, 'i')}}}}})}}}}
        .dump();
  };
  auto result = [&](const std::string& type, const std::string& id, size_t chars) {
    return json{{"type", type},
                {"sessionId", session},
                {"message",
                 {{"role", "user"},
                  {"content", json::array({{{"type", "tool_result"},
                                            {"tool_use_id", id},
                                            {"content", std::string(chars, 'r')}}})}}}}
        .dump();
  };
  std::vector<std::string> lines;
  std::vector<std::string> open;  // ids whose result is still to come
  for (int n = 0; lines.size() < 1400; ++n) {
    const std::string id = fmt::format("toolu_{}", n % 250);  // ids used again
    lines.push_back(use(id, tools[next(tools.size())], next(3) == 0 ? 300 : 10));
    open.push_back(id);
    while (!open.empty() && next(3) != 0) {
      const std::string done = open.front();
      open.erase(open.begin());
      if (next(6) == 0) continue;  // no result: the id's next use is the one counted
      const size_t chars = next(4) == 0 ? edge - 1 + next(3) : 100 + next(900);
      lines.push_back(result("user", done, chars));
      if (next(10) == 0) lines.push_back(result("api-request-blob", done, chars));  // a copy
      if (next(15) == 0) lines.push_back(result("user", done, chars));        // the same again
      if (next(40) == 0) lines.push_back(result("user", "toolu_none", 700));  // no tool_use
    }
    if (next(8) == 0) lines.push_back(R"({"type":"progress","sessionId":")" + session + R"("})");
  }
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  tmp.write("proj/" + session + ".jsonl", text);
  TrimRequest req = bash_request(t);
  req.tools = {"Bash", "Read", "Grep"};
  req.threshold = threshold;
  req.dry_run = true;
  req.split_at_least = UINT64_MAX;
  auto one = trim_session(req);
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_GT(one->stats.results_trimmed, 100u);
  EXPECT_GT(one->stats.inputs_trimmed, 20u);
  req.split_at_least = 0;
  for (double first_part : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999}) {
    SCOPED_TRACE(first_part);
    req.first_part = first_part;
    auto parts = trim_session(req);
    ASSERT_TRUE(parts) << parts.error().message;
    EXPECT_EQ(parts->parts, 2);
    EXPECT_EQ(test::figures_of(parts->stats), test::figures_of(one->stats));
    EXPECT_EQ(parts->snapshot_bytes, one->snapshot_bytes);
  }
}

// A process allowed one CPU (taskset, a container's cpuset) reads a dry run in one pass: a second
// thread would only take turns with the first.
TEST(TrimSession, ADryRunOnOneAllowedCpuIsReadInOnePass) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  for (size_t cpu = 0; cpu < static_cast<size_t>(CPU_SETSIZE); ++cpu)
    if (CPU_ISSET(cpu, &before)) {
      CPU_SET(cpu, &one);
      break;
    }
  test::TempDir tmp;
  const fs::path t =
      tmp.write("proj/11111111-1111-4111-8111-111111111111.jsonl", session_lines(40));
  TrimRequest req = bash_request(t);
  req.dry_run = true;
  req.split_at_least = 0;
  ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  auto pinned = trim_session(req);
  ::sched_setaffinity(0, sizeof before, &before);
  ASSERT_TRUE(pinned) << pinned.error().message;
  EXPECT_EQ(pinned->parts, 1);
  if (CPU_COUNT(&before) >= 2) {
    auto free = trim_session(req);
    ASSERT_TRUE(free) << free.error().message;
    EXPECT_EQ(free->parts, 2);
    EXPECT_EQ(free->stats.chars_saved, pinned->stats.chars_saved);
  }
}

}  // namespace
}  // namespace ctxkit::trim
