// The limit classifier on words alone: a result's text (with the fields a flag byte picks) and
// stderr, at a clock the input picks; or, after a 'Z', a zone file the words name. Checks: a
// limit's message is one bounded line; its reset never lies before the clock nor after year 9999.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "claude/limit_answer.hpp"
#include "claude/stream_result.hpp"

namespace {
// A folder of its own for the fuzzed zone, named by TZDIR (the classifier reads zones there).
const std::string& zone_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/fuzz-tzdir-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (!made) std::abort();
    const std::string d(made);
    ::mkdir((d + "/Fuzz").c_str(), 0700);
    ::setenv("TZDIR", d.c_str(), 1);
    return d;
  }();
  return dir;
}

void check(const std::optional<ctxkit::claude::LimitAnswer>& limit, int64_t now) {
  if (!limit) return;
  if (limit->message.size() > 300) std::abort();
  for (char c : limit->message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
  const int64_t clock = std::clamp<int64_t>(now, 0, int64_t{1} << 40);
  // Never before the clock, nor past year 9999 (or the clock, when that is later still).
  if (limit->reset_epoch &&
      (*limit->reset_epoch < clock || *limit->reset_epoch > std::max<int64_t>(clock, 253402300799)))
    std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string& dir = zone_dir();
  ctxkit::claude::StreamResult r;
  r.has_result = true;
  r.is_error = true;
  r.subtype = "success";
  const int64_t now = 1'795'663'800;  // 2026-11-26 03:30:00 UTC
  if (!in.empty() && in[0] == 'Z') {
    // A zone file, named in the client's words.
    std::ofstream(dir + "/Fuzz/Zone", std::ios::binary | std::ios::trunc)
        .write(in.data() + 1, static_cast<std::streamsize>(in.size() - 1));
    r.text = "You've hit your 5-hour limit · resets Dec 1, 4:30pm (Fuzz/Zone)";
    check(ctxkit::claude::classify_limit(r, "", 1, now), now);
    r.text = "You've hit your 5-hour limit · resets 5am (Fuzz/Zone)";
    check(ctxkit::claude::classify_limit(r, "", 1, now), now);
    return 0;
  }
  // Flags, then 8 bytes of clock offset, then the words.
  const uint8_t flags = in.empty() ? 0 : static_cast<uint8_t>(in[0]);
  if (!in.empty()) in.remove_prefix(1);
  int64_t shift = 0;
  if (in.size() >= 8) {
    std::memcpy(&shift, in.data(), 8);
    in.remove_prefix(8);
  }
  const int64_t clock = (flags & 0x80) ? shift : now + (shift % (400 * 86400));
  if (flags & 1) r.api_error_status = 429;
  if (flags & 2) r.api_error_status = 529;
  if (flags & 4) r.api_error = "usage_limit_reached";
  if (flags & 8) r.rate_limit = ctxkit::claude::RateLimitEvent{"rejected", "five_hour", shift};
  if (flags & 16) r.has_result = false;
  r.text = std::string(in);
  check(ctxkit::claude::classify_limit(r, in, 1, clock), clock);
  check(ctxkit::claude::classify_limit(ctxkit::claude::StreamResult{}, in, 1, clock), clock);
  return 0;
}
