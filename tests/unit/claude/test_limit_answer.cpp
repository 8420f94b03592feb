#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
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

TEST(LimitAnswer, ResetsBeyondTheCeilingAreDropped) {
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
  // Far future in words or in the event: dropped; a reset just past: now; far past: dropped.
  EXPECT_FALSE(reset_of("API Error: Request rejected (429) · try again in 9999999 hours"));
  StreamResult r = failed("You've hit your weekly limit");
  for (int64_t at :
       {kNow + 40 * 86400, kNow - 3 * 86400, int64_t{0}, int64_t{-1}, int64_t{1} << 52}) {
    r.rate_limit = RateLimitEvent{"rejected", "seven_day", at};
    const auto got = classify_limit(r, "", 1, kNow);
    ASSERT_TRUE(got);
    EXPECT_FALSE(got->reset_epoch) << at;
  }
  r.rate_limit = RateLimitEvent{"rejected", "seven_day", kNow - 30};
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->reset_epoch, kNow);
  r.rate_limit = RateLimitEvent{"rejected", "seven_day", kNow + 31 * 86400};
  EXPECT_EQ(classify_limit(r, "", 1, kNow)->reset_epoch, kNow + 31 * 86400);
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
