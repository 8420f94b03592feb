#include "claude/limit_answer.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "util/fs.hpp"

namespace ctxkit::claude {
namespace {

// What the client prints (tests/fixtures/claude-code-<version>/limits/, recorded by
// tests/live/record_limits.py), from 2.1.197 to 2.1.332:
//   a rate limit (429):  "API Error: Request rejected (429) · <message>", or with a subscription
//                        "API Error: Server is temporarily limiting requests (not your usage limit)
//                        · ..."
//   a usage limit:       "You've hit your session limit · resets 4:28am (UTC)" (2.1.332: "5-hour
//                        limit", "weekly limit", ...), after a rate_limit_event whose status is
//                        "rejected" and resetsAt the reset; 2.1.332's result adds api_error
//                        "usage_limit_reached"
//   an overload (529):   "API Error: 529 Overloaded. This is a server-side issue, ..."
// each time in an is_error result carrying api_error_status, exit code 1.

// A reset more than a day before now is dropped (the kind stays known, the runner waits its own
// backoff); one within that day is taken as now (retry at once). A reset in the future is kept
// however far it lies (the runner stops on one past its ceiling), held at the end of year 9999 so
// that no sum overflows.
constexpr int64_t kResetPastSlack = 86400;
constexpr int64_t kLastEpoch = 253402300799;  // 9999-12-31T23:59:59Z
constexpr size_t kMessageMax = 300;

bool has(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Case-insensitive search; npos when absent.
size_t ifind(std::string_view hay, std::string_view needle, size_t from = 0) {
  if (needle.empty() || hay.size() < needle.size()) return std::string_view::npos;
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && lower(hay[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}
bool ihas(std::string_view hay, std::string_view needle) {
  return ifind(hay, needle) != std::string_view::npos;
}

std::optional<int64_t> sane_reset(std::optional<int64_t> at, int64_t now) {
  if (!at) return std::nullopt;
  if (*at < now - kResetPastSlack) return std::nullopt;
  return std::clamp(*at, now, std::max(now, kLastEpoch));
}

// One line of at most kMessageMax bytes: control characters (NUL included) become spaces, runs
// of spaces one, a cut never splits a UTF-8 sequence.
std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(std::min(text.size(), kMessageMax));
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const char put = u < 0x20 || u == 0x7f ? ' ' : c;
    if (put == ' ' && (out.empty() || out.back() == ' ')) continue;
    if (out.size() >= kMessageMax) break;
    out.push_back(put);
  }
  // Drop a sequence the cut left incomplete.
  size_t k = out.size();
  while (k > 0 && (static_cast<unsigned char>(out[k - 1]) & 0xC0) == 0x80) --k;
  if (k > 0) {
    const auto lead = static_cast<unsigned char>(out[k - 1]);
    const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (out.size() - (k - 1) < need) out.resize(k - 1);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// --- time zones -------------------------------------------------------------------------------
// GCC 12's libstdc++ has no std::chrono::tzdb, and setting TZ for localtime_r is not thread-safe:
// the zone's offsets are read from its TZif file under $TZDIR (else /usr/share/zoneinfo) here.

// A zone name as the tz database spells them ("Europe/Paris", "America/Argentina/Buenos_Aires",
// "Etc/GMT+5", "UTC"): nothing that could leave the folder.
bool zone_name_ok(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '/' || name.back() == '/' ||
      has(name, "..") || has(name, "//"))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '_' || c == '-' || c == '+';
  });
}

// Days since 1970-01-01 of a civil date (proleptic Gregorian), and back.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}
int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// The rule of a TZif footer (a POSIX TZ string such as "CET-1CEST,M3.5.0,M10.5.0/3"): the
// offsets after the file's last transition (a "slim" tz database lists none after the zone's last
// change of rules). Only the "Mm.w.d" form of its dates, the one the database uses.
struct Rule {
  int32_t std_offset = 0, dst_offset = 0;  // seconds east of UTC
  bool has_dst = false;
  struct When {
    unsigned month = 0, week = 0, weekday = 0;
    int32_t time = 7200;  // local seconds after midnight
  } start, end;
  // The UTC instant of `w` in `year`, `offset` the one in force before it.
  static int64_t at(const When& w, int64_t year, int32_t offset) {
    const int64_t first = days_from_civil(year, w.month, 1);
    const int64_t first_weekday =
        (first + 4) - 7 * floor_div(first + 4, 7);  // 0: Sunday; 1970-01-01 a Thursday
    int64_t day =
        first + (static_cast<int64_t>(w.weekday) - first_weekday + 7) % 7 + 7 * (w.week - 1);
    const unsigned next = w.month == 12 ? 1 : w.month + 1;
    const int64_t month_end = days_from_civil(w.month == 12 ? year + 1 : year, next, 1);
    while (day >= month_end) day -= 7;  // week 5: the last such day
    return day * 86400 + w.time - offset;
  }
  int32_t offset_at(int64_t t) const {
    if (!has_dst) return std_offset;
    int64_t y = 0;
    unsigned m = 0, d = 0;
    civil_from_days(floor_div(t + std_offset, 86400), y, m, d);
    const int64_t s = at(start, y, std_offset), e = at(end, y, dst_offset);
    const bool dst = s < e ? (t >= s && t < e) : !(t >= e && t < s);
    return dst ? dst_offset : std_offset;
  }
};

// "[+-]hh[:mm[:ss]]" as seconds; POSIX TZ offsets count west of UTC, so the caller negates them.
std::optional<int32_t> posix_time(std::string_view& s) {
  int sign = 1;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) sign = s[0] == '-' ? -1 : 1, s.remove_prefix(1);
  int32_t total = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0) {
      if (s.empty() || s[0] != ':') break;
      s.remove_prefix(1);
    }
    int n = 0, digits = 0;
    while (!s.empty() && s[0] >= '0' && s[0] <= '9' && digits < 3)
      n = n * 10 + (s[0] - '0'), s.remove_prefix(1), ++digits;
    if (digits == 0) return std::nullopt;
    total += n * (part == 0 ? 3600 : part == 1 ? 60 : 1);
  }
  if (total > 167 * 3600) return std::nullopt;
  return sign * total;
}

bool posix_name(std::string_view& s) {
  if (!s.empty() && s[0] == '<') {
    const size_t close = s.find('>');
    if (close == std::string_view::npos) return false;
    s.remove_prefix(close + 1);
    return true;
  }
  size_t n = 0;
  while (n < s.size() && ((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z'))) ++n;
  s.remove_prefix(n);
  return n >= 3;
}

std::optional<Rule::When> posix_date(std::string_view& s) {
  if (s.empty() || s[0] != 'M') return std::nullopt;
  s.remove_prefix(1);
  unsigned v[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (s.empty() || s[0] != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    int digits = 0;
    while (!s.empty() && s[0] >= '0' && s[0] <= '9' && digits < 2)
      v[i] = v[i] * 10 + static_cast<unsigned>(s[0] - '0'), s.remove_prefix(1), ++digits;
    if (digits == 0) return std::nullopt;
  }
  if (v[0] < 1 || v[0] > 12 || v[1] < 1 || v[1] > 5 || v[2] > 6) return std::nullopt;
  Rule::When w{v[0], v[1], v[2], 7200};
  if (!s.empty() && s[0] == '/') {
    s.remove_prefix(1);
    auto t = posix_time(s);
    if (!t) return std::nullopt;
    w.time = *t;
  }
  return w;
}

std::optional<Rule> parse_rule(std::string_view s) {
  Rule r;
  if (!posix_name(s)) return std::nullopt;
  auto std_off = posix_time(s);
  if (!std_off) return std::nullopt;
  r.std_offset = r.dst_offset = -*std_off;
  if (s.empty()) return r;
  if (!posix_name(s)) return std::nullopt;
  r.dst_offset = r.std_offset + 3600;
  if (!s.empty() && s[0] != ',') {
    auto dst_off = posix_time(s);
    if (!dst_off) return std::nullopt;
    r.dst_offset = -*dst_off;
  }
  if (s.empty() || s[0] != ',') return std::nullopt;
  s.remove_prefix(1);
  auto start = posix_date(s);
  if (!start || s.empty() || s[0] != ',') return std::nullopt;
  s.remove_prefix(1);
  auto end = posix_date(s);
  if (!end || !s.empty()) return std::nullopt;
  r.start = *start, r.end = *end, r.has_dst = true;
  return r;
}

struct Zone {
  std::vector<int64_t> transitions;  // UTC instants, ascending
  std::vector<uint8_t> type_of;      // the local time type from each transition on
  std::vector<int32_t> offsets;      // seconds east of UTC, by type
  int32_t before = 0;                // the offset before the first transition
  std::optional<Rule> rule;          // after the last transition, when the footer gives one
  // The offset (seconds east of UTC) at UTC instant t.
  int32_t offset_at(int64_t t) const {
    const auto it = std::upper_bound(transitions.begin(), transitions.end(), t);
    if (it == transitions.begin()) return transitions.empty() && rule ? rule->offset_at(t) : before;
    if (it == transitions.end() && rule) return rule->offset_at(t);
    return offsets[type_of[static_cast<size_t>(it - transitions.begin() - 1)]];
  }
};

int64_t be(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

// A TZif file (RFC 8536): its version 2+ 64-bit block and footer rule when there are, else the
// 32-bit block (instants after its last transition keep that transition's offset).
std::optional<Zone> parse_tzif(const std::string& data) {
  auto u = reinterpret_cast<const unsigned char*>(data.data());
  size_t at = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (data.size() < at + 44 || data.compare(at, 4, "TZif") != 0) return std::nullopt;
    const char version = data[at + 4];
    const unsigned char* h = u + at + 20;
    const int64_t isutc = be(h, 4), isstd = be(h + 4, 4), leap = be(h + 8, 4),
                  timecnt = be(h + 12, 4), typecnt = be(h + 16, 4), charcnt = be(h + 20, 4);
    if (isutc < 0 || isstd < 0 || leap < 0 || timecnt < 0 || typecnt <= 0 || charcnt < 0 ||
        timecnt > 100000 || typecnt > 256 || leap > 10000 || charcnt > 100000)
      return std::nullopt;
    const int tsize = pass == 0 ? 4 : 8;
    const size_t body = static_cast<size_t>(timecnt * tsize + timecnt + typecnt * 6 + charcnt +
                                            leap * (tsize + 4) + isstd + isutc);
    const size_t start = at + 44;
    if (data.size() < start + body) return std::nullopt;
    if (pass == 0 && version >= '2') {  // skip to the 64-bit block
      at = start + body;
      continue;
    }
    Zone z;
    const unsigned char* p = u + start;
    for (int64_t i = 0; i < timecnt; ++i) z.transitions.push_back(be(p + i * tsize, tsize));
    p += timecnt * tsize;
    for (int64_t i = 0; i < timecnt; ++i) {
      if (p[i] >= typecnt) return std::nullopt;
      z.type_of.push_back(p[i]);
    }
    p += timecnt;
    for (int64_t i = 0; i < typecnt; ++i)
      z.offsets.push_back(static_cast<int32_t>(be(p + i * 6, 4)));
    if (!std::is_sorted(z.transitions.begin(), z.transitions.end())) return std::nullopt;
    z.before = z.offsets[0];
    // The footer: "\n<POSIX TZ string>\n" after the 64-bit block.
    const size_t footer = start + body;
    if (pass == 1 && footer < data.size() && data[footer] == '\n') {
      const size_t close = data.find('\n', footer + 1);
      if (close != std::string::npos && close - footer < 128)
        z.rule = parse_rule(std::string_view(data).substr(footer + 1, close - footer - 1));
    }
    return z;
  }
  return std::nullopt;
}

std::optional<Zone> load_zone(std::string_view name) {
  if (name == "UTC" || name == "GMT" || name == "Etc/UTC" || name == "Etc/GMT" || name == "Z")
    return Zone{};
  if (!zone_name_ok(name)) return std::nullopt;
  const char* dir = std::getenv("TZDIR");
  std::string path = (dir && *dir ? std::string(dir) : std::string("/usr/share/zoneinfo")) + "/" +
                     std::string(name);
  // A regular file of at most 1 MiB (a FIFO or a device under TZDIR would block or never end).
  auto data = util::read_file(path, {1u << 20, true});
  if (!data) return std::nullopt;
  return parse_tzif(*data);
}

// The UTC instant of a local wall time (seconds since the epoch, as if the zone were UTC): the
// offset in force at that instant (a wall time skipped by a change forward lands after it).
int64_t local_to_utc(const Zone& z, int64_t local) {
  int64_t guess = local - z.offset_at(local);
  guess = local - z.offset_at(guess);
  return guess;
}

// --- "resets <when>" ----------------------------------------------------------------------------

struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  void spaces() {
    while (!done() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
  }
  std::optional<int> number(int max_digits) {
    int n = 0, digits = 0;
    while (!done() && s[i] >= '0' && s[i] <= '9' && digits < max_digits)
      n = n * 10 + (s[i++] - '0'), ++digits;
    if (digits == 0 || (!done() && s[i] >= '0' && s[i] <= '9')) return std::nullopt;
    return n;
  }
  bool word(std::string_view w) {  // case-insensitive, at a word's end
    if (s.size() - i < w.size()) return false;
    for (size_t k = 0; k < w.size(); ++k)
      if (lower(s[i + k]) != lower(w[k])) return false;
    const size_t end = i + w.size();
    if (end < s.size() && ((s[end] >= 'a' && s[end] <= 'z') || (s[end] >= 'A' && s[end] <= 'Z')))
      return false;
    i = end;
    return true;
  }
};

constexpr std::array<std::string_view, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                      "jul", "aug", "sep", "oct", "nov", "dec"};

std::optional<unsigned> month(Cursor& c) {
  for (unsigned m = 0; m < kMonths.size(); ++m) {
    Cursor t = c;
    if (t.s.size() - t.i < 3) return std::nullopt;
    bool match = true;
    for (size_t k = 0; k < 3; ++k) match = match && lower(t.s[t.i + k]) == kMonths[m][k];
    if (!match) continue;
    t.i += 3;
    while (!t.done() && ((t.peek() >= 'a' && t.peek() <= 'z') || t.peek() == '.'))
      ++t.i;  // "Dec", "December", "Dec."
    c = t;
    return m + 1;
  }
  return std::nullopt;
}

// "in 30 s", "in 2h 15m", "in 45 minutes": seconds, or nothing.
std::optional<int64_t> duration(Cursor c) {
  if (!c.word("in")) return std::nullopt;
  int64_t total = 0;
  bool any = false;
  for (int parts = 0; parts < 4; ++parts) {
    c.spaces();
    auto n = c.number(7);
    if (!n) break;
    c.spaces();
    int64_t unit = 0;
    for (auto [w, secs] : std::array<std::pair<std::string_view, int64_t>, 12>{{{"seconds", 1},
                                                                                {"second", 1},
                                                                                {"secs", 1},
                                                                                {"sec", 1},
                                                                                {"s", 1},
                                                                                {"minutes", 60},
                                                                                {"minute", 60},
                                                                                {"mins", 60},
                                                                                {"min", 60},
                                                                                {"m", 60},
                                                                                {"hours", 3600},
                                                                                {"h", 3600}}})
      if (c.word(w)) {
        unit = secs;
        break;
      }
    if (!unit && (c.word("hour") || c.word("hrs") || c.word("hr"))) unit = 3600;
    if (!unit && (c.word("days") || c.word("day") || c.word("d"))) unit = 86400;
    if (!unit) break;
    total += *n * unit;
    any = true;
  }
  return any ? std::optional<int64_t>(total) : std::nullopt;
}

// "4:28am (UTC)", "5pm (Europe/Paris)", "Dec 1, 4am (America/New_York)", "Dec 1 at 4:30pm",
// "17:00": the next such instant from now (a date without a year: the next such date), in the
// named zone, else UTC. Nothing when the words are not a time or the zone is unknown.
std::optional<int64_t> wall_time(Cursor c, int64_t now) {
  std::optional<unsigned> mon = month(c);
  std::optional<int> day, year;
  if (mon) {
    c.spaces();
    day = c.number(2);
    if (!day || *day < 1 || *day > 31) return std::nullopt;
    if (*mon == 2 && *day > 29) return std::nullopt;
    if ((*mon == 4 || *mon == 6 || *mon == 9 || *mon == 11) && *day > 30) return std::nullopt;
    c.spaces();
    // "Jan 5, 2027, 4am": the client adds the year when it is not the current one.
    if (Cursor t = c; auto y4 = t.number(4)) {
      if (t.i - c.i == 4) {
        if (*y4 < 1970) return std::nullopt;
        year = *y4;
        c = t;
        c.spaces();
      }
    }
    c.word("at");
    c.spaces();
  }
  auto hour = c.number(2);
  if (!hour) return std::nullopt;
  int minute = 0;
  const bool colon = c.peek() == ':';
  if (colon) {
    ++c.i;
    auto m = c.number(2);
    if (!m || *m > 59) return std::nullopt;
    minute = *m;
  }
  while (c.peek() == ' ') ++c.i;
  if (c.word("am") || c.word("a.m.")) {
    if (*hour < 1 || *hour > 12) return std::nullopt;
    *hour %= 12;
  } else if (c.word("pm") || c.word("p.m.")) {
    if (*hour < 1 || *hour > 12) return std::nullopt;
    *hour = *hour % 12 + 12;
  } else if (*hour > 23 || (!mon && !colon)) {
    return std::nullopt;  // a bare number is not a time
  }
  Zone zone;
  while (c.peek() == ' ') ++c.i;
  if (c.peek() == '(') {
    const size_t close = c.s.find(')', c.i);
    if (close == std::string_view::npos || close - c.i > 70) return std::nullopt;
    auto z = load_zone(c.s.substr(c.i + 1, close - c.i - 1));
    if (!z) return std::nullopt;
    zone = std::move(*z);
  }
  const int64_t local_now = now + zone.offset_at(now);
  int64_t y = 0;
  unsigned m = 0, d = 0;
  civil_from_days(floor_div(local_now, 86400), y, m, d);
  const int64_t time_of_day = *hour * 3600 + minute * 60;
  // The reset lies within the minute named: its end, so that a wait never ends early.
  const int64_t slack = 60;
  if (mon) {
    const int64_t first = year ? int64_t{*year} : y, last = year ? int64_t{*year} : y + 1;
    for (int64_t in_year = first; in_year <= last; ++in_year) {
      const int64_t local =
          days_from_civil(in_year, *mon, static_cast<unsigned>(*day)) * 86400 + time_of_day;
      const int64_t at = local_to_utc(zone, local) + slack;
      if (at >= now - kResetPastSlack) return at;
    }
    return std::nullopt;
  }
  int64_t at = local_to_utc(zone, days_from_civil(y, m, d) * 86400 + time_of_day) + slack;
  if (at < now)
    at = local_to_utc(zone, days_from_civil(y, m, d) * 86400 + 86400 + time_of_day) + slack;
  return at;
}

// The first reset a text names after "resets", "reset at", "try again in", "retry after".
std::optional<int64_t> reset_in_text(std::string_view text, int64_t now) {
  for (std::string_view phrase :
       {"resets", "reset at", "reset", "try again", "retry after", "available again"}) {
    size_t at = 0;
    for (int tries = 0; tries < 8; ++tries) {
      at = ifind(text, phrase, at);
      if (at == std::string_view::npos) break;
      Cursor c{text, at + phrase.size()};
      at += phrase.size();
      c.spaces();
      if (auto secs = duration(c)) return now + *secs;
      c.word("at");
      c.word("on");
      c.spaces();
      if (auto when = wall_time(c, now)) return when;
    }
  }
  return std::nullopt;
}

// --- what the words say -------------------------------------------------------------------------

std::optional<LimitKind> kind_in_text(std::string_view t) {
  // A subscription's 429 that is not its usage limit says so.
  if (ihas(t, "not your usage limit") || ihas(t, "temporarily limiting requests"))
    return LimitKind::RateLimit;
  // A subscription's limits ("You've hit your session limit", "You've hit your weekly limit",
  // "You've hit your team's pooled group budget", "You've reached your ... limit", "usage limit
  // reached"): usage.
  if ((ihas(t, "you've hit your") || ihas(t, "you\u2019ve hit your") ||
       ihas(t, "you've reached your") || ihas(t, "you\u2019ve reached your")) &&
      (ihas(t, "limit") || ihas(t, "budget")))
    return LimitKind::UsageLimit;
  if (ihas(t, "usage limit reached") || ihas(t, "usage_limit_reached"))
    return LimitKind::UsageLimit;
  // Usage credits spent until they reset ("You're out of usage credits · resets Dec 1, 4am").
  if (ihas(t, "you're out of usage credits") || ihas(t, "you\u2019re out of usage credits"))
    return LimitKind::UsageLimit;
  if (ihas(t, "overloaded_error") || ihas(t, "529 overloaded") || ihas(t, "api error: 529") ||
      ihas(t, "api error (529"))
    return LimitKind::Overloaded;
  if (ihas(t, "rate_limit_error") || ihas(t, "request rejected (429)") ||
      ihas(t, "api error: 429") || ihas(t, "api error (429"))
    return LimitKind::RateLimit;
  return std::nullopt;
}

std::optional<LimitKind> kind_of_status(int status) {
  if (status == 429) return LimitKind::RateLimit;
  if (status == 529) return LimitKind::Overloaded;
  return std::nullopt;
}

std::optional<LimitKind> kind_of_type(std::string_view type) {
  if (type == "rate_limit_error") return LimitKind::RateLimit;
  if (type == "overloaded_error") return LimitKind::Overloaded;
  return std::nullopt;
}

// The first line of stderr that names a limit.
std::string_view limit_line(std::string_view text) {
  size_t scanned = 0;
  while (!text.empty() && scanned < (1u << 22)) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (line.size() <= 64 * 1024 && kind_in_text(line)) return line;
    scanned += line.size() + 1;
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return {};
}

}  // namespace

std::string_view to_string(LimitKind kind) {
  switch (kind) {
    case LimitKind::RateLimit:
      return "rate limit";
    case LimitKind::UsageLimit:
      return "usage limit";
    case LimitKind::Overloaded:
      return "overloaded";
  }
  return "rate limit";
}

std::optional<LimitAnswer> classify_limit(const StreamResult& result, std::string_view stderr_text,
                                          int exit_code, int64_t now_epoch) {
  // A clock before 1970 or past year 36,000 is no clock: kept in range so that no sum overflows.
  now_epoch = std::clamp<int64_t>(now_epoch, 0, int64_t{1} << 40);
  // A call that succeeded is no limit, whatever its text says (a limit that cleared within the
  // client's own retries ends this way too).
  if (exit_code == 0 && (!result.has_result || !result.is_error)) return std::nullopt;
  if (result.has_result && !result.is_error) return std::nullopt;

  std::optional<LimitKind> kind;
  std::string_view said;
  // A subscription's usage limit comes with a rate_limit_event "rejected" that names its reset
  // and the limit's kind; a 429 that is not the usage limit brings one "rejected" that names
  // neither.
  const bool usage_event = result.rate_limit && result.rate_limit->status == "rejected" &&
                           (result.rate_limit->resets_at || !result.rate_limit->type.empty());
  if (result.has_result) {
    // What the result names, strongest first: the client's own word for a usage limit, the words
    // of the text, the rejection event, the API's error type, its HTTP status. Other failures (a
    // 400, a 500, max turns, a hook) are none.
    if (result.api_error == "usage_limit_reached") kind = LimitKind::UsageLimit;
    if (!kind && result.api_error_status && *result.api_error_status != 429 &&
        *result.api_error_status != 529)
      return std::nullopt;
    // "error_max_turns", "error_during_execution", ...: the client's own ends, never the API's
    // answer (which comes as subtype "success" with is_error).
    if (!kind && result.subtype.starts_with("error")) return std::nullopt;
    if (!kind)
      kind = kind_in_text(result.text.substr(0, std::min<size_t>(result.text.size(), 64 * 1024)));
    if (!kind && usage_event) kind = LimitKind::UsageLimit;
    if (!kind) kind = kind_of_type(result.api_error_type);
    if (!kind && result.api_error_status) kind = kind_of_status(*result.api_error_status);
    if (!kind) return std::nullopt;  // the result says what ended the call; stderr is not asked
    said = result.text;
  }
  if (!kind) {
    // No result line (the client died, or an older output): a line of stderr that says it.
    if (exit_code == 0) return std::nullopt;
    const std::string_view line = limit_line(stderr_text);
    if (line.empty()) return std::nullopt;
    kind = kind_in_text(line);
    said = line;
  }

  LimitAnswer answer;
  answer.kind = *kind;
  answer.message = one_line(said.substr(0, 64 * 1024));
  if (*kind == LimitKind::UsageLimit && usage_event)
    answer.reset_epoch = sane_reset(result.rate_limit->resets_at, now_epoch);
  if (!answer.reset_epoch)
    answer.reset_epoch = sane_reset(reset_in_text(said.substr(0, 64 * 1024), now_epoch), now_epoch);
  return answer;
}

}  // namespace ctxkit::claude
