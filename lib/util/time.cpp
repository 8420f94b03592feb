#include "util/time.hpp"

#include <fmt/core.h>

#include <chrono>
#include <ctime>

namespace ctxkit::util {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {
bool digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}
}  // namespace

std::optional<int64_t> parse_iso8601_ms(std::string_view s) {
  // YYYY-MM-DD, then optionally [T ]HH:MM, then optionally :SS, then optionally .fraction,
  // then optionally Z or +HH:MM / -HH:MM. Nothing may follow.
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d)) {
    return std::nullopt;
  }
  size_t pos = 10;
  int ms = 0;
  int64_t offset_min = 0;
  if (pos < s.size()) {
    if ((s[pos] != 'T' && s[pos] != ' ') || !digits(s, pos + 1, 2, h) || pos + 3 >= s.size() ||
        s[pos + 3] != ':' || !digits(s, pos + 4, 2, mi)) {
      return std::nullopt;
    }
    pos += 6;
    if (pos < s.size() && s[pos] == ':') {
      if (!digits(s, pos + 1, 2, se)) return std::nullopt;
      pos += 3;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        const size_t first = pos;
        int scale = 100;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          ms += (s[pos] - '0') * scale;
          scale /= 10;
          ++pos;
        }
        if (pos == first) return std::nullopt;
      }
    }
    if (pos < s.size() && s[pos] == 'Z') {
      ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
      int oh = 0, om = 0;
      if (!digits(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
          !digits(s, pos + 4, 2, om) || oh > 23 || om > 59) {
        return std::nullopt;
      }
      offset_min = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om);
      pos += 6;
    }
    if (pos != s.size()) return std::nullopt;
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || h > 23 || mi > 59 || se > 60)
    return std::nullopt;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  time_t t = ::timegm(&tm);
  return static_cast<int64_t>(t) * 1000 + ms - offset_min * 60 * 1000;
}

std::string format_iso8601_ms(int64_t ms) {
  time_t t = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
}

std::string format_compact_utc(int64_t ms) {
  time_t t = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

}  // namespace ctxkit::util
