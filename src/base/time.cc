#include "base/time.h"

#include <ctime>

namespace adapt {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

namespace {

// The civil date of a day counted from 1970-01-01 (H. Hinnant's days_from_civil, inverted).
void CivilFromDays(int64_t days, int64_t& y, unsigned& m, unsigned& d) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

void Digits(char* at, unsigned value, int width) {
  for (int i = width - 1; i >= 0; --i, value /= 10) at[i] = static_cast<char>('0' + value % 10);
}

// What gmtime_r and strftime write, for any time.
std::string FormatRfc3339ByLibc(int64_t millis) {
  time_t secs = static_cast<time_t>(millis / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(millis % 1000));
  return buf;
}

}  // namespace

// Written digit by digit for the years 1000 to 9999: gmtime_r takes glibc's time zone lock
// and strftime reads the locale, and every sandbox in an API answer formats two to four
// times (bench/README.md, "api"). Other times (before 1970 among them) go through libc as
// before; rfc3339_test.cc holds the two equal.
std::string FormatRfc3339(int64_t millis) {
  if (millis < 0 || millis >= 253402300800000) return FormatRfc3339ByLibc(millis);
  const int64_t secs = millis / 1000;
  int64_t year;
  unsigned month, day;
  CivilFromDays(secs / 86400, year, month, day);
  if (year < 1000) return FormatRfc3339ByLibc(millis);
  const unsigned in_day = static_cast<unsigned>(secs % 86400);
  std::string out(24, '\0');  // 2026-12-02T21:00:03.123Z
  char* p = out.data();
  Digits(p, static_cast<unsigned>(year), 4);
  p[4] = '-';
  Digits(p + 5, month, 2);
  p[7] = '-';
  Digits(p + 8, day, 2);
  p[10] = 'T';
  Digits(p + 11, in_day / 3600, 2);
  p[13] = ':';
  Digits(p + 14, in_day / 60 % 60, 2);
  p[16] = ':';
  Digits(p + 17, in_day % 60, 2);
  p[19] = '.';
  Digits(p + 20, static_cast<unsigned>(millis % 1000), 3);
  p[23] = 'Z';
  return out;
}

}  // namespace adapt
