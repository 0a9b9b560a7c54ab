// PosixTzRule: the TZif footer's rule, and TimeZone following it past the file's last
// transition (2037 in Debian's files), with fixed instants as the clock.
#include "core/posix_tz_rule.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/automation_schedule.h"
#include "core/time_zone.h"

namespace adapt::core {
namespace {

int64_t UtcAt(int y, unsigned mo, unsigned d, int h, int mi) {
  using namespace std::chrono;
  auto days = sys_days{year{y} / month{mo} / day{d}}.time_since_epoch().count();
  return static_cast<int64_t>(days) * 86400 + h * 3600 + mi * 60;
}

TimeZone LoadedZone(const std::string& name) {
  auto z = TimeZone::Load(name);
  EXPECT_TRUE(z.ok()) << z.status().message();
  return z.ok() ? *z : TimeZone::Utc();
}

std::optional<int64_t> NextSlot(const std::string& cron, int64_t after, const TimeZone& zone) {
  auto c = CronExpression::Parse(cron);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c->NextAfter(after, zone);
}

TEST(PosixTzRule, EuropeanRuleChangesOnTheLastSundays) {
  auto rule = PosixTzRule::Parse("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  EXPECT_EQ(rule->standard_offset(), 3600);
  auto changes = rule->TransitionsIn(2040);
  ASSERT_EQ(changes.size(), 2u);
  // 2040-03-25 02:00 CET and 2040-10-28 03:00 CEST are both 01:00 UTC.
  EXPECT_EQ(changes[0], (std::pair<int64_t, int32_t>{UtcAt(2040, 3, 25, 1, 0), 7200}));
  EXPECT_EQ(changes[1], (std::pair<int64_t, int32_t>{UtcAt(2040, 10, 28, 1, 0), 3600}));
}

TEST(PosixTzRule, SouthernRuleEndsBeforeItStartsInTheYear) {
  auto rule = PosixTzRule::Parse("AEST-10AEDT,M10.1.0,M4.1.0/3");
  ASSERT_TRUE(rule.ok());
  auto changes = rule->TransitionsIn(2040);
  ASSERT_EQ(changes.size(), 2u);
  // 2040-04-01 03:00 AEDT is 16:00 UTC the day before; 2040-10-07 02:00 AEST is 16:00 UTC.
  EXPECT_EQ(changes[0], (std::pair<int64_t, int32_t>{UtcAt(2040, 3, 31, 16, 0), 36000}));
  EXPECT_EQ(changes[1], (std::pair<int64_t, int32_t>{UtcAt(2040, 10, 6, 16, 0), 39600}));
}

TEST(PosixTzRule, JulianDaysQuotedNamesAndNegativeTimes) {
  // J60 is March 1 whether or not the year is a leap year; 59 (zero-based) is February 29 in
  // one. Times may be negative (the day before) and above 24 hours.
  auto julian = PosixTzRule::Parse("<+03>-3<+04>,J60/-1,59/26:30");
  ASSERT_TRUE(julian.ok()) << julian.status().message();
  EXPECT_EQ(julian->standard_offset(), 3 * 3600);
  auto changes = julian->TransitionsIn(2040);  // a leap year
  ASSERT_EQ(changes.size(), 2u);
  // 59/26:30 in +04: 2040-03-01 02:30 local, 2040-02-29 22:30 UTC. J60/-1 in +03: 2040-02-29
  // 23:00 local, 20:00 UTC.
  EXPECT_EQ(changes[0], (std::pair<int64_t, int32_t>{UtcAt(2040, 2, 29, 20, 0), 4 * 3600}));
  EXPECT_EQ(changes[1], (std::pair<int64_t, int32_t>{UtcAt(2040, 2, 29, 22, 30), 3 * 3600}));
}

TEST(PosixTzRule, ZonesWithoutDaylightSavingHaveNoChanges) {
  auto rule = PosixTzRule::Parse("JST-9");
  ASSERT_TRUE(rule.ok());
  EXPECT_EQ(rule->standard_offset(), 9 * 3600);
  EXPECT_FALSE(rule->has_dst());
  EXPECT_TRUE(rule->TransitionsIn(2040).empty());
}

TEST(PosixTzRule, MalformedRulesAreRefused) {
  for (const char* bad :
       {"", "C-1", "CET", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0",
        "CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,J0,J365",
        "CET-1CEST,366,0", "CET-25", "CET-1CEST,M3.5.0/168,M10.5.0", "<+03-3",
        "CET-1CEST,M3.5.0,M10.5.0 "})
    EXPECT_FALSE(PosixTzRule::Parse(bad).ok()) << bad;
}

TEST(TimeZone, BerlinIn2040FollowsTheFootersRuleAcrossBothChanges) {
  auto berlin = LoadedZone("Europe/Berlin");
  EXPECT_EQ(berlin.OffsetAt(UtcAt(2040, 1, 15, 0, 0)), 3600);
  EXPECT_EQ(berlin.OffsetAt(UtcAt(2040, 7, 15, 0, 0)), 7200);
  EXPECT_EQ(berlin.OffsetAt(UtcAt(2099, 7, 15, 0, 0)), 7200);
  // 09:00 local: 08:00 UTC in winter, 07:00 in summer, 08:00 again after October.
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 3, 24, 12, 0), berlin), UtcAt(2040, 3, 25, 7, 0));
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 3, 23, 12, 0), berlin), UtcAt(2040, 3, 24, 8, 0));
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 10, 28, 0, 0), berlin), UtcAt(2040, 10, 28, 8, 0));
  // 02:30 does not exist on 2040-03-25: the end of the gap. It exists twice on 2040-10-28:
  // the first.
  EXPECT_EQ(NextSlot("30 2 * * *", UtcAt(2040, 3, 24, 12, 0), berlin), UtcAt(2040, 3, 25, 1, 0));
  EXPECT_EQ(NextSlot("30 2 * * *", UtcAt(2040, 10, 27, 12, 0), berlin), UtcAt(2040, 10, 28, 0, 30));
  EXPECT_EQ(NextSlot("30 2 * * *", UtcAt(2040, 10, 28, 0, 30), berlin), UtcAt(2040, 10, 29, 1, 30));
}

TEST(TimeZone, NewYorkIn2040FollowsTheFootersRuleAcrossBothChanges) {
  auto ny = LoadedZone("America/New_York");
  // Daylight saving from 2040-03-11 07:00 UTC to 2040-11-04 06:00 UTC.
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 3, 10, 0, 0), ny), UtcAt(2040, 3, 10, 14, 0));
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 3, 11, 0, 0), ny), UtcAt(2040, 3, 11, 13, 0));
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 11, 3, 0, 0), ny), UtcAt(2040, 11, 3, 13, 0));
  EXPECT_EQ(NextSlot("0 9 * * *", UtcAt(2040, 11, 4, 0, 0), ny), UtcAt(2040, 11, 4, 14, 0));
  EXPECT_EQ(NextSlot("15 2 * * *", UtcAt(2040, 3, 10, 12, 0), ny), UtcAt(2040, 3, 11, 7, 0));
}

TEST(TimeZone, SydneyIn2040KeepsSummerAroundNewYear) {
  auto sydney = LoadedZone("Australia/Sydney");
  EXPECT_EQ(sydney.OffsetAt(UtcAt(2040, 1, 15, 0, 0)), 11 * 3600);
  EXPECT_EQ(sydney.OffsetAt(UtcAt(2040, 7, 15, 0, 0)), 10 * 3600);
  EXPECT_EQ(sydney.OffsetAt(UtcAt(2040, 12, 15, 0, 0)), 11 * 3600);
}

}  // namespace
}  // namespace adapt::core
