#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "claude/limit_answer.hpp"
#include "claude/stream_result.hpp"
#include "unit/json_variants.hpp"
#include "unit/temp_dir.hpp"

namespace ctxkit::claude {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// One recorded case (tests/live/record_limits.py):
// tests/fixtures/claude-code-<v>/limits/<case>.json.
struct Recorded {
  std::string name;  // "claude-code-2.1.197/usage_limit"
  json data;
  std::string stdout_text() const {
    std::string out;
    for (const auto& line : data.at("stdout")) out += line.get<std::string>() + "\n";
    return out;
  }
  // When the call ended: what a runner passes as now.
  int64_t ended() const {
    return data.at("started_epoch").get<int64_t>() +
           static_cast<int64_t>(std::ceil(data.at("seconds").get<double>()));
  }
};

// The tz database the classifier reads zones from (a machine without tzdata knows UTC alone).
bool have_zones() {
  const char* dir = std::getenv("TZDIR");
  return fs::exists(fs::path(dir && *dir ? dir : "/usr/share/zoneinfo") / "Europe" / "Paris");
}

std::vector<Recorded> recorded() {
  std::vector<Recorded> out;
  for (const auto& version : test::client_fixture_dirs()) {
    const fs::path dir = test::fixture_root() / version / "limits";
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      out.push_back({version + "/" + f.stem().string(), json::parse(test::read_file(f))});
  }
  return out;
}

TEST(LimitAnswer, BothEndsOfTheRangeAreRecorded) {
  const std::vector<Recorded> all = recorded();
  std::vector<std::string> versions;
  for (const auto& r : all) {
    const auto v = r.data.at("client_version").get<std::string>();
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
  }
  EXPECT_EQ(versions.size(), test::client_fixture_dirs().size())
      << "every recorded client version has its limits/";
  EXPECT_GE(versions.size(), 2u);
  // Each version has a case of each kind and ones that are no limit.
  for (const auto& v : versions)
    for (const char* kind : {"rate limit", "usage limit", "overloaded", ""}) {
      const bool found = std::any_of(all.begin(), all.end(), [&](const Recorded& r) {
        const json& want = r.data.at("expect").at("limit");
        return r.data.at("client_version") == v &&
               (want.is_null() ? std::string() : want.get<std::string>()) == kind;
      });
      EXPECT_TRUE(found) << v << " has no case of " << (*kind ? kind : "no limit");
    }
}

class LimitFixtures
    : public ::testing::TestWithParam<std::pair<std::string, std::optional<test::JsonVariant>>> {
 protected:
  Recorded get() const {
    for (auto& r : recorded())
      if (r.name == GetParam().first) return r;
    ADD_FAILURE() << "no fixture " << GetParam().first;
    return {};
  }
  std::string text(const Recorded& r) const {
    return GetParam().second ? test::jsonl_variant(r.stdout_text(), *GetParam().second)
                             : r.stdout_text();
  }
};

// Each recorded answer is classified as its case says: the kind, the reset the API named (the
// rate_limit_event's resetsAt) and nothing else, the client's words as the message.
TEST_P(LimitFixtures, ClassifiedAsRecorded) {
  const Recorded r = get();
  const StreamResult result = parse_stream_json(text(r));
  // Every call ended with a result, but one the recorder killed while the client still retried.
  const bool killed = r.data.at("exit_code").get<int>() == 124;
  ASSERT_EQ(result.has_result, !killed) << r.name;
  const auto got = classify_limit(result, r.data.at("stderr").get<std::string>(),
                                  r.data.at("exit_code").get<int>(), r.ended());
  const json& want = r.data.at("expect");
  if (want.at("limit").is_null()) {
    EXPECT_FALSE(got.has_value()) << r.name << ": " << (got ? got->message : "");
    return;
  }
  ASSERT_TRUE(got.has_value()) << r.name;
  EXPECT_EQ(to_string(got->kind), want.at("limit").get<std::string>()) << r.name;
  if (want.at("reset_epoch").is_null())
    EXPECT_FALSE(got->reset_epoch.has_value()) << r.name << ": " << *got->reset_epoch;
  else
    EXPECT_EQ(got->reset_epoch, want.at("reset_epoch").get<int64_t>()) << r.name;
  EXPECT_EQ(got->message, result.text) << r.name;
  EXPECT_EQ(r.data.at("exit_code").get<int>(), 1)
      << r.name << ": a limit ends the call with exit code 1";
}

// The result's text alone (a reader that kept only it, or a stand-in that prints only the result):
// the same kind, and for a usage limit the reset read from the words, time zone included: within
// the minute they name.
TEST_P(LimitFixtures, TheTextAloneSaysTheSame) {
  const Recorded r = get();
  const StreamResult full = parse_stream_json(text(r));
  if (!have_zones() && full.text.find("/") != std::string::npos &&
      full.text.find("resets") != std::string::npos)
    GTEST_SKIP() << "no tz database here";
  StreamResult bare;
  bare.has_result = true;
  bare.is_error = full.is_error;
  bare.subtype = full.subtype;
  bare.text = full.text;
  const auto got = classify_limit(bare, "", r.data.at("exit_code").get<int>(), r.ended());
  const json& want = r.data.at("expect");
  if (want.at("limit").is_null()) {
    EXPECT_FALSE(got.has_value()) << r.name;
    return;
  }
  ASSERT_TRUE(got.has_value()) << r.name;
  EXPECT_EQ(to_string(got->kind), want.at("limit").get<std::string>()) << r.name;
  if (want.at("reset_epoch").is_null()) {
    EXPECT_FALSE(got->reset_epoch.has_value()) << r.name;
  } else {
    ASSERT_TRUE(got->reset_epoch.has_value()) << r.name << ": " << bare.text;
    const int64_t exact = want.at("reset_epoch").get<int64_t>();
    EXPECT_GE(*got->reset_epoch, exact) << r.name << ": " << bare.text;
    EXPECT_LE(*got->reset_epoch, exact + 60) << r.name << ": " << bare.text;
  }
}

// The stream reader's new fields, against what the fake API sent: the HTTP status of a refusal
// that ended the call, the client's retries (one fewer than the requests it made).
TEST_P(LimitFixtures, StreamFieldsMatchTheAnswer) {
  const Recorded r = get();
  const StreamResult result = parse_stream_json(text(r));
  const auto requests = r.data.at("requests").size();
  ASSERT_GE(requests, 1u) << r.name;
  // With CLAUDE_CODE_RETRY_WATCHDOG the client also announces its wait for a reset every 30 s.
  if (r.data.at("env").contains("CLAUDE_CODE_RETRY_WATCHDOG"))
    EXPECT_GE(static_cast<size_t>(result.api_retries), requests - 1) << r.name;
  else
    EXPECT_EQ(static_cast<size_t>(result.api_retries), requests - 1) << r.name;
  const int last_status = r.data.at("requests").back().at("status").get<int>();
  if (r.data.at("exit_code").get<int>() == 0) {
    EXPECT_FALSE(result.is_error) << r.name;
    EXPECT_FALSE(result.api_error_status.has_value()) << r.name;
  } else if (last_status != 200 && result.has_result) {
    EXPECT_EQ(result.api_error_status, last_status) << r.name;
  }
  if (!r.data.at("expect").at("reset_epoch").is_null()) {
    ASSERT_TRUE(result.rate_limit.has_value()) << r.name;
    EXPECT_EQ(result.rate_limit->status, "rejected");
    EXPECT_EQ(result.rate_limit->resets_at, r.data.at("expect").at("reset_epoch").get<int64_t>())
        << r.name;
  }
}

std::vector<std::pair<std::string, std::optional<test::JsonVariant>>> params() {
  std::vector<std::pair<std::string, std::optional<test::JsonVariant>>> out;
  for (const auto& r : recorded()) {
    out.emplace_back(r.name, std::nullopt);
    for (auto v : test::all_json_variants()) out.emplace_back(r.name, v);
  }
  return out;
}

std::string param_name(
    const ::testing::TestParamInfo<std::pair<std::string, std::optional<test::JsonVariant>>>&
        info) {
  std::string n = info.param.first + "_" +
                  (info.param.second ? test::variant_name(*info.param.second) : "AsRecorded");
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Recorded, LimitFixtures, ::testing::ValuesIn(params()), param_name);

// Every recorded successful call of the stream-json fixtures is no limit.
TEST(LimitAnswer, RecordedSuccessesAreNoLimit) {
  int seen = 0;
  for (const auto& set : test::fixture_sets("stream-json")) {
    const size_t slash = set.find('/');
    const fs::path dir =
        test::fixture_root() / set.substr(0, slash) / "stream-json" / set.substr(slash + 1);
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".jsonl") continue;
      StreamResult result = parse_stream_json(test::read_file(e.path()));
      ASSERT_TRUE(result.has_result) << e.path();
      EXPECT_FALSE(classify_limit(result, "", 0, 1'795'660'000).has_value()) << e.path().filename();
      // Even read as if it had failed: its words name no limit.
      result.is_error = true;
      EXPECT_FALSE(classify_limit(result, "", 1, 1'795'660'000).has_value()) << e.path().filename();
      ++seen;
    }
  }
  EXPECT_GE(seen, 4);
}

StreamResult failed(std::string text, std::string subtype = "success") {
  StreamResult r;
  r.has_result = true;
  r.is_error = true;
  r.subtype = std::move(subtype);
  r.text = std::move(text);
  return r;
}

constexpr int64_t kNow = 1'795'663'800;  // 2026-11-26 03:30:00 UTC

TEST(LimitAnswer, OrdinaryFailuresAreNoLimit) {
  EXPECT_FALSE(classify_limit(failed("", "error_max_turns"), "", 1, kNow));
  EXPECT_FALSE(classify_limit(failed("", "error_during_execution"), "", 1, kNow));
  // Another API failure, even when its words speak of limits.
  StreamResult bad =
      failed("API Error: 400 prompt is too long; you've hit your limit of 200000 tokens");
  bad.api_error_status = 400;
  EXPECT_FALSE(classify_limit(bad, "", 1, kNow));
  // A model's successful answer that talks about rate limits.
  StreamResult ok;
  ok.has_result = true;
  ok.subtype = "success";
  ok.text =
      "API Error: Request rejected (429) is what the server returns when you've hit your limit.";
  EXPECT_FALSE(classify_limit(ok, "", 0, kNow));
  // Nothing at all, and a crash that names no limit.
  EXPECT_FALSE(classify_limit(StreamResult{}, "", 0, kNow));
  EXPECT_FALSE(classify_limit(StreamResult{}, "Error: ENOENT: no such file\n", 1, kNow));
}

TEST(LimitAnswer, StderrAloneWhenThereIsNoResult) {
  const auto got =
      classify_limit(StreamResult{}, "starting\nAPI Error: 529 Overloaded. Try again.\n", 1, kNow);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, LimitKind::Overloaded);
  EXPECT_EQ(got->message, "API Error: 529 Overloaded. Try again.");
  // A result that names no limit is believed over stderr.
  EXPECT_FALSE(
      classify_limit(failed("Request timed out"), "API Error: 529 Overloaded.\n", 1, kNow));
  // The same stderr from a call that succeeded is nothing.
  EXPECT_FALSE(classify_limit(StreamResult{}, "API Error: 529 Overloaded.\n", 0, kNow));
}

TEST(LimitAnswer, KindsByStatusAndTypeWhenTheWordsAreUnknown) {
  StreamResult r = failed("Something new the client says");
  r.api_error_status = 429;
  ASSERT_TRUE(classify_limit(r, "", 1, kNow));
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->kind, LimitKind::RateLimit);
  r.api_error_status = 529;
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->kind, LimitKind::Overloaded);
  r.api_error_status.reset();
  r.api_error_type = "overloaded_error";
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->kind, LimitKind::Overloaded);
  r.api_error_type.clear();
  r.api_error = "usage_limit_reached";
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->kind, LimitKind::UsageLimit);
}

// A rejection event that names neither reset nor kind (a subscription's 429 that is not its
// usage limit) does not make a usage limit.
TEST(LimitAnswer, RejectionWithoutResetIsARateLimit) {
  StreamResult r = failed("Something new");
  r.api_error_status = 429;
  r.rate_limit = RateLimitEvent{"rejected", "", std::nullopt};
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->kind, LimitKind::RateLimit);
  r.rate_limit = RateLimitEvent{"rejected", "five_hour", kNow + 100};
  const auto got = classify_limit(r, "", 1, kNow);
  EXPECT_EQ(got->kind, LimitKind::UsageLimit);
  EXPECT_EQ(got->reset_epoch, kNow + 100);
  // An "allowed_warning" event before a 429 is no usage limit.
  r.rate_limit = RateLimitEvent{"allowed_warning", "five_hour", kNow + 100};
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->kind, LimitKind::RateLimit);
  EXPECT_FALSE(classify_limit(r, "", 1, kNow)->reset_epoch);
}

std::optional<int64_t> reset_of(const std::string& text, int64_t now = kNow) {
  const auto got = classify_limit(failed(text), "", 1, now);
  return got ? got->reset_epoch : std::nullopt;
}

TEST(LimitAnswer, ResetsInWords) {
  if (!have_zones()) GTEST_SKIP() << "no tz database here";
  // kNow is 03:30 UTC; a reset names its minute, the answer is that minute's end.
  EXPECT_EQ(reset_of("You've hit your session limit · resets 4:28am (UTC)"), kNow + 58 * 60 + 60);
  EXPECT_EQ(reset_of("You've hit your 5-hour limit · resets 5pm (UTC)"),
            kNow + 13 * 3600 + 30 * 60 + 60);
  // Earlier in the day than now: tomorrow.
  EXPECT_EQ(reset_of("You've hit your session limit · resets 3am (UTC)"),
            kNow + 23 * 3600 + 30 * 60 + 60);
  // 12am is midnight, 12pm noon.
  EXPECT_EQ(reset_of("You've hit your session limit · resets 12am (UTC)"),
            kNow + 20 * 3600 + 30 * 60 + 60);
  EXPECT_EQ(reset_of("You've hit your session limit · resets 12pm (UTC)"),
            kNow + 8 * 3600 + 30 * 60 + 60);
  // Europe/Paris is UTC+1 in November: 5pm there is 16:00 UTC.
  EXPECT_EQ(reset_of("You've hit your 5-hour limit · resets 5pm (Europe/Paris)"),
            kNow + 12 * 3600 + 30 * 60 + 60);
  // With a date, in New York (UTC-5): Nov 30, 10:30pm is Dec 1 03:30 UTC.
  EXPECT_EQ(reset_of("You've hit your weekly limit · resets Nov 30, 10:30pm (America/New_York)"),
            kNow + 5 * 86400 + 60);
  // In summer time: Paris in July is UTC+2 (now: 2026-07-01 10:00 UTC).
  const int64_t july = 1'782'900'000;  // 2026-07-01 10:00:00 UTC
  EXPECT_EQ(reset_of("You've hit your session limit · resets 3pm (Europe/Paris)", july),
            july + 3 * 3600 + 60);
  // Relative times.
  EXPECT_EQ(reset_of("API Error: Request rejected (429) · Please try again in 30 seconds"),
            kNow + 30);
  EXPECT_EQ(reset_of("API Error: Request rejected (429) · usage resets in 2h 15m"), kNow + 8100);
  // None named.
  EXPECT_FALSE(reset_of("API Error: Request rejected (429) · try again later"));
  EXPECT_FALSE(reset_of("API Error: 529 Overloaded. try again in a moment"));
}

// A TZif file without transitions, its offsets in the footer's rule alone (as a "slim" tz database
// writes zones whose rules have not changed lately).
std::string slim_tzif(const std::string& footer) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string header = std::string("TZif2") + std::string(15, '\0');
  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  header += be32(0) + be32(0) + be32(0) + be32(0) + be32(1) + be32(4);
  const std::string body = be32(3600) + std::string{'\0', '\0'} + std::string("CET\0", 4);
  return header + body + header + body + "\n" + footer + "\n";
}

class ScopedTzdir {
 public:
  explicit ScopedTzdir(const std::string& dir) {
    if (const char* old = std::getenv("TZDIR")) old_ = old;
    ::setenv("TZDIR", dir.c_str(), 1);
  }
  ~ScopedTzdir() {
    if (old_)
      ::setenv("TZDIR", old_->c_str(), 1);
    else
      ::unsetenv("TZDIR");
  }

 private:
  std::optional<std::string> old_;
};

TEST(LimitAnswer, ZonesWithOnlyAFooterRule) {
  test::TempDir dir;
  dir.write("Test/Slim", slim_tzif("CET-1CEST,M3.5.0,M10.5.0/3"));
  dir.write("Test/South", slim_tzif("<-03>3<-02>,M10.1.0/0,M3.3.0/0"));  // DST over the new year
  dir.write("Test/Broken", slim_tzif("CET-1CEST,M13.5.0,M10.5.0/3"));
  const ScopedTzdir tzdir(dir.path().string());
  const int64_t july = 1'782'900'000;  // 2026-07-01 10:00:00 UTC
  // Summer: UTC+2; November: UTC+1.
  EXPECT_EQ(reset_of("You've hit your session limit · resets 3pm (Test/Slim)", july),
            july + 3 * 3600 + 60);
  EXPECT_EQ(reset_of("You've hit your session limit · resets 5pm (Test/Slim)"),
            kNow + 12 * 3600 + 30 * 60 + 60);
  // The last Sunday of March 2026 is the 29th: at 01:00 UTC the clocks go to 03:00.
  const int64_t before_change = 1'774'738'800;  // 2026-03-28 23:00:00 UTC, 00:00 local (UTC+1)
  EXPECT_EQ(reset_of("You've hit your session limit · resets 4am (Test/Slim)", before_change),
            before_change + 3 * 3600 + 60);  // 04:00 local is already UTC+2: 02:00 UTC
  // The south: summer (UTC-2) in November, winter (UTC-3) in July.
  EXPECT_EQ(reset_of("You've hit your session limit · resets 5pm (Test/South)"),
            kNow + 15 * 3600 + 30 * 60 + 60);
  EXPECT_EQ(reset_of("You've hit your session limit · resets 3pm (Test/South)", july),
            july + 8 * 3600 + 60);
  // A rule that does not parse: the offset of the file's only type, UTC+1.
  EXPECT_EQ(reset_of("You've hit your session limit · resets 5pm (Test/Broken)", july),
            july + 6 * 3600 + 60);
}

TEST(LimitAnswer, ResetsThatAreNoTimeAreDroppedAndFarOnesKept) {
  // An unknown or hostile zone name: no reset, the kind stays.
  for (const char* text : {"You've hit your session limit · resets 5pm (Mars/Olympus)",
                           "You've hit your session limit · resets 5pm (../../../etc/passwd)",
                           "You've hit your session limit · resets 5pm (/etc/localtime)",
                           "You've hit your session limit · resets 99:99pm (UTC)",
                           "You've hit your session limit · resets Feb 31, 4am (UTC)",
                           "You've hit your session limit · resets 13pm (UTC)"}) {
    const auto got = classify_limit(failed(text), "", 1, kNow);
    ASSERT_TRUE(got) << text;
    EXPECT_EQ(got->kind, LimitKind::UsageLimit) << text;
    EXPECT_FALSE(got->reset_epoch) << text;
  }
  // Far future in words or in the event: kept (the runner stops on a reset past its ceiling),
  // held at the end of year 9999; a reset just past: now; more than a day past: dropped.
  EXPECT_EQ(reset_of("API Error: Request rejected (429) · try again in 9999999 hours"),
            kNow + int64_t{9999999} * 3600);
  StreamResult r = failed("You've hit your weekly limit");
  for (int64_t at : {kNow - 3 * 86400, int64_t{0}, int64_t{-1}}) {
    r.rate_limit = RateLimitEvent{"rejected", "seven_day", at};
    const auto got = classify_limit(r, "", 1, kNow);
    ASSERT_TRUE(got);
    EXPECT_FALSE(got->reset_epoch) << at;
  }
  const std::pair<int64_t, int64_t> kept[] = {
      {kNow - 30, kNow},
      {kNow + 31 * 86400, kNow + 31 * 86400},
      {kNow + 40 * 86400, kNow + 40 * 86400},
      {kNow + 400 * 86400, kNow + 400 * 86400},
      {int64_t{1} << 52, 253402300799},  // 9999-12-31T23:59:59Z
  };
  for (const auto& [at, want] : kept) {
    r.rate_limit = RateLimitEvent{"rejected", "seven_day", at};
    EXPECT_EQ(classify_limit(r, "", 1, kNow)->reset_epoch, want) << at;
  }
}

// What Claude Code itself says, from its own code (2.1.332's messages, their parts filled in as
// it fills them): each wording of a limit, and texts about limits that are none.
std::optional<LimitKind> kind_of(const std::string& text) {
  const auto got = classify_limit(failed(text), "", 1, kNow);
  return got ? std::optional(got->kind) : std::nullopt;
}
std::optional<LimitKind> stderr_kind_of(const std::string& text) {
  const auto got = classify_limit(StreamResult{}, "Error\n" + text + "\n", 1, kNow);
  return got ? std::optional(got->kind) : std::nullopt;
}

TEST(LimitAnswer, TheClientsOwnWordings) {
  const std::pair<std::string, LimitKind> limits[] = {
      {"You've hit your 5-hour limit · resets 4am (UTC)", LimitKind::UsageLimit},
      {"You've hit your weekly limit · resets Dec 1, 4:30pm (UTC)", LimitKind::UsageLimit},
      {"You've hit your Opus limit · resets Dec 1, 4am (UTC)", LimitKind::UsageLimit},
      {"You've hit your Sonnet limit · resets 4am (UTC) · progress saved", LimitKind::UsageLimit},
      {"You've hit your session limit", LimitKind::UsageLimit},
      {"You've hit your limit · resets 4am (UTC)", LimitKind::UsageLimit},
      {"You've hit your usage limit · contact your admin to increase it", LimitKind::UsageLimit},
      {"You've hit your monthly spend limit · /usage-credits to raise it", LimitKind::UsageLimit},
      {"You've hit your org's monthly spend limit · ask your admin to raise it",
       LimitKind::UsageLimit},
      {"You've hit your team's pooled group budget. It resets Dec 1, 4am (UTC).",
       LimitKind::UsageLimit},
      {"You've hit your monthly limit \u2014 raise it below, or it resets next month.",
       LimitKind::UsageLimit},
      {"You\u2019ve hit your weekly limit", LimitKind::UsageLimit},
      {"You're out of usage credits · resets Dec 1, 4am (UTC)", LimitKind::UsageLimit},
      {"Usage limit reached", LimitKind::UsageLimit},
      {"API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited",
       LimitKind::RateLimit},
      {"API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute "
       "rate limit",
       LimitKind::RateLimit},
      {"API Error: 529 Overloaded. This is a server-side issue, usually temporary",
       LimitKind::Overloaded},
      {"Repeated 529 Overloaded errors", LimitKind::Overloaded},
  };
  for (const auto& [text, kind] : limits) {
    EXPECT_EQ(kind_of(text), kind) << text;
    EXPECT_EQ(stderr_kind_of(text), kind) << text;  // the same words on stderr alone
  }
  for (const char* text : {
           "Context limit reached",
           "Budget limit reached ($1.00 of $1.00); stopping background agents",
           "Subagent nesting limit reached (depth 3)",
           "a: Rate limited (429). Polling too frequently.",
           "You've used 90% of your weekly limit · resets Dec 1, 4am (UTC)",
           "You're close to your 5-hour limit",
           "Approaching 5-hour limit",
           "Your usage limit has reset",
           "You're now using usage credits · Your weekly limit resets Dec 1, 4am (UTC)",
       }) {
    EXPECT_FALSE(kind_of(text)) << text;
    EXPECT_FALSE(stderr_kind_of(text)) << text;
  }
}

// The reset as the client formats it (en-US: "4am", "4:30pm", and past a day "Dec 1, 4:30pm",
// with the year when it is not this one), and the other ways a time is written.
TEST(LimitAnswer, ResetTimesInEachForm) {
  const int64_t min = 60, h = 3600, d = 86400;  // kNow: Thursday 2026-11-26 03:30 UTC
  const std::pair<std::string, std::optional<int64_t>> cases[] = {
      {"resets 4:30am (UTC)", kNow + h + min},
      {"resets 4:30 a.m. (UTC)", kNow + h + min},
      {"resets 4:30 P.M. (UTC)", kNow + 13 * h + min},
      {"resets 4:30 p.m.", kNow + 13 * h + min},
      {"resets 16:30 (UTC)", kNow + 13 * h + min},
      {"resets 00:15 (UTC)", kNow + 20 * h + 45 * min + min},
      {"resets 12:05am (UTC)", kNow + 20 * h + 35 * min + min},
      {"resets at 5pm", kNow + 13 * h + 30 * min + min},
      {"resets Dec 1, 4:30pm (UTC)", kNow + 5 * d + 13 * h + min},
      {"resets Dec 1 at 4:30pm", kNow + 5 * d + 13 * h + min},
      {"resets December 1, 4pm", kNow + 5 * d + 12 * h + 30 * min + min},
      {"resets Dec. 1, 4pm (UTC)", kNow + 5 * d + 12 * h + 30 * min + min},
      // 40 days on, in the next year: written with its year, or without.
      {"resets Jan 5, 2027, 4am (UTC)", kNow + 40 * d + 30 * min + min},
      {"resets Jan 5, 4am (UTC)", kNow + 40 * d + 30 * min + min},
      // Within the last day: now; further back: none.
      {"resets Nov 25, 2026, 4am (UTC)", kNow},
      {"resets Nov 20, 2026, 4am (UTC)", std::nullopt},
      {"resets Nov 20, 1969, 4am (UTC)", std::nullopt},
      {"resets Feb 29, 2028, 4am (UTC)", 1835409600 + min},  // 2028-02-29 04:00 UTC
      // Not times.
      {"resets 4:30 (UTC) tomorrow", kNow + h + min},
      {"resets 25:00 (UTC)", std::nullopt},
      {"resets 4:60am (UTC)", std::nullopt},
      {"resets 0am (UTC)", std::nullopt},
      {"resets 17 (UTC)", std::nullopt},
      {"resets Dec 32, 4am (UTC)", std::nullopt},
      {"resets Dec 1 (UTC)", std::nullopt},
      {"resets soon", std::nullopt},
  };
  for (const auto& [words, want] : cases)
    EXPECT_EQ(reset_of("You've hit your weekly limit · " + words), want) << words;
}

// A TZif file (version 1, no leap seconds): its counts and the body as given.
std::string tzif(char version, uint32_t timecnt, uint32_t typecnt, uint32_t charcnt,
                 const std::string& body) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  return std::string("TZif") + version + std::string(15, '\0') + be32(0) + be32(0) + be32(0) +
         be32(timecnt) + be32(typecnt) + be32(charcnt) + body;
}

// A zone file that is no zone gives no reset (the kind stays known), and nothing that could be
// named as one blocks: a FIFO, a folder, a file too large.
TEST(LimitAnswer, MalformedZoneFilesGiveNoReset) {
  test::TempDir dir;
  const std::string type_utc1 = std::string("\0\0\x0e\x10\0\0", 6);  // UTC+1, no DST, name 0
  dir.write("Test/Good", tzif('\0', 0, 1, 4, type_utc1 + std::string("CET\0", 4)));
  dir.write("Test/Empty", "");
  dir.write("Test/Magic", "TZif");
  dir.write("Test/NotTzif", std::string("TZjf") + std::string(60, '\0'));
  dir.write("Test/NoTypes", tzif('\0', 0, 0, 0, ""));
  dir.write(
      "Test/TypeOutOfRange",
      tzif('\0', 1, 1, 4, std::string("\0\0\0\x10\x01", 5) + type_utc1 + std::string("CET\0", 4)));
  dir.write("Test/Unsorted", tzif('\0', 2, 1, 4,
                                  std::string("\0\0\x10\0\0\0\x01\0\0\0", 10) + type_utc1 +
                                      std::string("CET\0", 4)));
  dir.write("Test/Short", tzif('\0', 1000, 1, 4, type_utc1));
  dir.write("Test/Negative", tzif('\0', 0xFFFFFFFFu, 1, 4, type_utc1));
  dir.write("Test/NoSecondBlock", tzif('2', 0, 1, 4, type_utc1 + std::string("CET\0", 4)));
  dir.write("Test/Huge",
            tzif('\0', 0, 1, 4, type_utc1 + std::string("CET\0", 4)) + std::string(2u << 20, '\0'));
  fs::create_directories(dir.path() / "Test" / "Folder");
  ASSERT_EQ(::mkfifo((dir.path() / "Test" / "Fifo").c_str(), 0600), 0);
  const ScopedTzdir tzdir(dir.path().string());
  // The good file reads: 5pm at UTC+1 is 16:00 UTC.
  EXPECT_EQ(reset_of("You've hit your 5-hour limit · resets 5pm (Test/Good)"),
            kNow + 12 * 3600 + 30 * 60 + 60);
  for (const char* zone : {"Empty", "Magic", "NotTzif", "NoTypes", "TypeOutOfRange", "Unsorted",
                           "Short", "Negative", "NoSecondBlock", "Huge", "Folder", "Missing"}) {
    const auto got = classify_limit(
        failed(std::string("You've hit your 5-hour limit · resets 5pm (Test/") + zone + ")"), "", 1,
        kNow);
    ASSERT_TRUE(got) << zone;
    EXPECT_EQ(got->kind, LimitKind::UsageLimit) << zone;
    EXPECT_FALSE(got->reset_epoch) << zone;
  }
  // A FIFO: answered without waiting for a writer (bounded here; a hang is opened from this end).
  auto done = std::make_shared<std::promise<std::optional<LimitAnswer>>>();
  auto answer = done->get_future();
  std::thread([done] {
    done->set_value(classify_limit(failed("You've hit your 5-hour limit · resets 5pm (Test/Fifo)"),
                                   "", 1, kNow));
  }).detach();
  const bool answered = answer.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!answered) {
    const int fd = ::open((dir.path() / "Test" / "Fifo").c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    answer.wait();
  }
  EXPECT_TRUE(answered) << "reading a FIFO as a zone blocked";
  const auto fifo = answer.get();
  ASSERT_TRUE(fifo);
  EXPECT_FALSE(fifo->reset_epoch);
}

// With no result line, the first stderr line that names a limit, within the scan's bounds: lines
// of at most 64 KiB, the first 4 MiB.
TEST(LimitAnswer, StderrScanAndItsBounds) {
  const std::string limit = "You've hit your 5-hour limit · resets 4am (UTC)";
  std::string noise;
  for (int i = 0; i < 100; ++i) noise += "at frame " + std::to_string(i) + "\n";
  auto got = classify_limit(StreamResult{}, noise + limit + "\r\nmore\n", 1, kNow);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, LimitKind::UsageLimit);
  EXPECT_EQ(got->message, limit);
  EXPECT_EQ(got->reset_epoch, kNow + 30 * 60 + 60);
  // The last line without its newline.
  EXPECT_TRUE(classify_limit(StreamResult{}, noise + limit, 1, kNow));
  // A call that exited 0 is no limit, whatever stderr says.
  EXPECT_FALSE(classify_limit(StreamResult{}, limit + "\n", 0, kNow));
  // A line longer than 64 KiB is not read; a later one is.
  const std::string long_line = limit + std::string(64 * 1024, 'x');
  got = classify_limit(StreamResult{}, long_line + "\nAPI Error: 529 Overloaded.\n", 1, kNow);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, LimitKind::Overloaded);
  EXPECT_FALSE(classify_limit(StreamResult{}, long_line + "\n", 1, kNow));
  // A line that ends within the first 4 MiB is read; one past it is not.
  const std::string line(1023, 'n');
  std::string within;
  for (int i = 0; i < 4095; ++i) within += line + "\n";  // 4 MiB less 1 KiB
  EXPECT_TRUE(classify_limit(StreamResult{}, within + limit + "\n", 1, kNow));
  std::string past = within + line + "\n";  // 4 MiB
  EXPECT_FALSE(classify_limit(StreamResult{}, past + limit + "\n", 1, kNow));
}

TEST(LimitAnswer, HostileTextIsOneBoundedLine) {
  std::string text = "API Error: Request rejected (429) · ";
  text += std::string("a\0b\x01\x1b[31m\r\n\tc", 13);
  text += std::string(10'000'000, 'x');
  const auto got = classify_limit(failed(text), std::string(1'000'000, '\n'), 1, kNow);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->kind, LimitKind::RateLimit);
  EXPECT_LE(got->message.size(), 300u);
  EXPECT_TRUE(got->message.starts_with("API Error: Request rejected (429) · a b [31m cxxx"))
      << got->message;
  EXPECT_EQ(got->message.find_first_of(std::string("\0\r\n\t\x01\x1b", 6)), std::string::npos);
  // A cut never splits a UTF-8 sequence, and keeps a whole one at the end.
  std::string dots;
  for (int i = 0; i < 200; ++i) dots += "\u00b7";
  const auto even = classify_limit(failed("You've hit your limit " + dots), "", 1,
                                   kNow);  // 22 bytes, then 2 each
  ASSERT_TRUE(even);
  EXPECT_EQ(even->message.size(), 300u);
  EXPECT_TRUE(even->message.ends_with("\u00b7"));
  const auto odd =
      classify_limit(failed("You've hit your limit! " + dots), "", 1, kNow);  // 23 bytes
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->message.size(), 299u);
  EXPECT_TRUE(odd->message.ends_with("\u00b7"));
  // A result of only digits, colons and "resets" words does not hang or throw.
  std::string noise;
  for (int i = 0; i < 20000; ++i) noise += "resets 1:";
  EXPECT_NO_THROW(classify_limit(failed("You've hit your limit " + noise), "", 1, kNow));
  // An absurd clock: no overflow, the kind still said.
  for (int64_t now :
       {std::numeric_limits<int64_t>::min(), int64_t{-1}, std::numeric_limits<int64_t>::max()}) {
    const auto got_now = classify_limit(
        failed("You've hit your limit · resets Dec 31, 11:59pm (UTC) or try again in "
               "9999999 days"),
        "", 1, now);
    ASSERT_TRUE(got_now);
    EXPECT_EQ(got_now->kind, LimitKind::UsageLimit);
  }
  // A hostile stream-json: a result line with a huge text, NUL escapes, an absurd resetsAt.
  const std::string stream =
      R"x({"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1e300,"rateLimitType":"five_hour"}})x"
      "\n"
      R"x({"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You've hit\u0000 your limit · resets 99999999999am (UTC)"})x"
      "\n";
  const StreamResult parsed = parse_stream_json(stream);
  ASSERT_TRUE(parsed.rate_limit);
  EXPECT_FALSE(parsed.rate_limit->resets_at);
  const auto h = classify_limit(parsed, "", 1, kNow);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->kind, LimitKind::UsageLimit);
  EXPECT_FALSE(h->reset_epoch);
}

TEST(LimitAnswer, KindNames) {
  EXPECT_EQ(to_string(LimitKind::RateLimit), "rate limit");
  EXPECT_EQ(to_string(LimitKind::UsageLimit), "usage limit");
  EXPECT_EQ(to_string(LimitKind::Overloaded), "overloaded");
}

}  // namespace
}  // namespace ctxkit::claude
