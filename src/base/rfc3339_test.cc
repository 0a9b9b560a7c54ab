// FormatRfc3339 writes what gmtime_r and strftime wrote before it formatted digits itself.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <random>

#include "base/time.h"

namespace adapt {
namespace {

// The implementation FormatRfc3339 had, kept as the reference.
std::string ByLibc(int64_t millis) {
  time_t secs = static_cast<time_t>(millis / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(millis % 1000));
  return buf;
}

TEST(FormatRfc3339, KnownInstants) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339(1700000000123), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(FormatRfc3339(951782400000), "2000-02-29T00:00:00.000Z");
}

TEST(FormatRfc3339, EqualsLibcAtBoundaries) {
  const int64_t day = 86400000;
  for (int64_t base : {int64_t{0}, int64_t{951782400000}, int64_t{4107542400000},
                       int64_t{253402300799999}, int64_t{253402300800000}, int64_t{-1},
                       int64_t{-1000}, int64_t{-62135596800000}, int64_t{-30610224000000}})
    for (int64_t delta : std::initializer_list<int64_t>{-day - 1, -day, -1001, -1000, -999, -1, 0,
                                                        1, 999, 1000, day - 1, day})
      ASSERT_EQ(FormatRfc3339(base + delta), ByLibc(base + delta)) << base + delta;
}

TEST(FormatRfc3339, EqualsLibcEveryDayAndAtRandom) {
  // Every day from before year 0 to after 9999.
  for (int64_t d = -800000; d < 3000000; ++d)
    ASSERT_EQ(FormatRfc3339(d * 86400000 + 43210987), ByLibc(d * 86400000 + 43210987)) << d;
  std::mt19937_64 rng(3339);
  std::uniform_int_distribution<int64_t> any(-70000000000000, 260000000000000);
  for (int i = 0; i < 200000; ++i) {
    int64_t ms = any(rng);
    ASSERT_EQ(FormatRfc3339(ms), ByLibc(ms)) << ms;
  }
}

}  // namespace
}  // namespace adapt
