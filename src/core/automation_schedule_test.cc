// AutomationSchedule: cron fields, time zones and the daylight-saving rules, with fixed
// instants as the clock (nothing here reads the real time).
#include "core/automation_schedule.h"

#include <gtest/gtest.h>

#include <chrono>

namespace adapt::core {
namespace {

// Seconds since the epoch of a UTC date and time.
int64_t Utc(int y, unsigned mo, unsigned d, int h, int mi) {
  using namespace std::chrono;
  auto days = sys_days{year{y} / month{mo} / day{d}}.time_since_epoch().count();
  return static_cast<int64_t>(days) * 86400 + h * 3600 + mi * 60;
}

TimeZone Zone(const std::string& name) {
  auto z = TimeZone::Load(name);
  EXPECT_TRUE(z.ok()) << z.status().message();
  return z.ok() ? *z : TimeZone::Utc();
}

CronExpression Cron(const std::string& text) {
  auto c = CronExpression::Parse(text);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

TEST(CronExpression, WeekdayMorningsInUtc) {
  auto c = Cron("0 9 * * 1-5");
  // Friday 2026-01-02 10:00: the next is Monday 2026-01-05 09:00.
  EXPECT_EQ(c.NextAfter(Utc(2026, 1, 2, 10, 0), TimeZone::Utc()), Utc(2026, 1, 5, 9, 0));
  EXPECT_EQ(c.NextAfter(Utc(2026, 1, 5, 8, 59), TimeZone::Utc()), Utc(2026, 1, 5, 9, 0));
  // Strictly after: the slot itself is not its own next.
  EXPECT_EQ(c.NextAfter(Utc(2026, 1, 5, 9, 0), TimeZone::Utc()), Utc(2026, 1, 6, 9, 0));
}

TEST(CronExpression, StepsListsAndSundayAsSeven) {
  auto c = Cron("*/20 1,3 * * 7");
  // 2026-01-04 is a Sunday.
  EXPECT_EQ(c.NextAfter(Utc(2026, 1, 3, 0, 0), TimeZone::Utc()), Utc(2026, 1, 4, 1, 0));
  EXPECT_EQ(c.NextAfter(Utc(2026, 1, 4, 1, 40), TimeZone::Utc()), Utc(2026, 1, 4, 3, 0));
}

TEST(CronExpression, DayOfMonthOrDayOfWeekWhenBothAreRestricted) {
  auto c = Cron("0 0 13 * 5");  // the 13th, or any Friday
  // 2026-02-06 is a Friday, before the 13th.
  EXPECT_EQ(c.NextAfter(Utc(2026, 2, 1, 0, 0), TimeZone::Utc()), Utc(2026, 2, 6, 0, 0));
}

TEST(CronExpression, MalformedExpressionsAreRefusedNamingTheField) {
  for (const char* bad :
       {"* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *",
        "* * * * 8", "*/0 * * * *", "a * * * *", "1-0 * * * *", "1, * * * *"}) {
    auto c = CronExpression::Parse(bad, "schedule");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().field(), "schedule") << bad;
  }
}

TEST(CronExpression, MonthAndWeekdayNamesInAnyCaseInRangesAndLists) {
  // mon-FRI equals 1-5; 2026-01-02 is a Friday.
  auto names = Cron("0 9 * * mon-FRI");
  EXPECT_EQ(names.NextAfter(Utc(2026, 1, 2, 10, 0), TimeZone::Utc()), Utc(2026, 1, 5, 9, 0));
  // Sundays and Wednesdays of March and December only, a list of names in both fields.
  auto lists = Cron("0 0 * Mar,dec Sun,wed");
  // 2026-03-01 is a Sunday; after it comes Wednesday the 4th.
  EXPECT_EQ(lists.NextAfter(Utc(2026, 2, 1, 0, 0), TimeZone::Utc()), Utc(2026, 3, 1, 0, 0));
  EXPECT_EQ(lists.NextAfter(Utc(2026, 3, 1, 0, 0), TimeZone::Utc()), Utc(2026, 3, 4, 0, 0));
  // After March's last Wednesday (the 25th) and Sunday (the 29th): December's first Wednesday.
  EXPECT_EQ(lists.NextAfter(Utc(2026, 3, 29, 0, 0), TimeZone::Utc()), Utc(2026, 12, 2, 0, 0));
  // A range of months with a step: JAN-DEC/6 is January and July.
  auto stepped = Cron("0 0 1 JAN-DEC/6 *");
  EXPECT_EQ(stepped.NextAfter(Utc(2026, 1, 1, 0, 0), TimeZone::Utc()), Utc(2026, 7, 1, 0, 0));
  EXPECT_EQ(stepped.NextAfter(Utc(2026, 7, 1, 0, 0), TimeZone::Utc()), Utc(2027, 1, 1, 0, 0));
}

TEST(CronExpression, NamesOutsideTheirFieldOrMisspelledAreRefused) {
  // Weekday names in the month field and month names in the day-of-week field, names in
  // minute, hour and day-of-month, a name as a step, a backwards range, a misspelling.
  for (const char* bad :
       {"0 0 * MON *", "0 0 * * JAN", "JAN 0 * * *", "0 MON * * *", "0 0 SUN * *", "0 0 * */JAN *",
        "0 0 * * FRI-MON", "0 0 * * Monday", "0 0 * JANUARY *", "0 0 * * M"}) {
    auto c = CronExpression::Parse(bad, "cron");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().field(), "cron") << bad;
  }
  auto month = CronExpression::Parse("0 0 * * JAN", "cron");
  EXPECT_NE(month.status().message().find("SUN-SAT"), std::string::npos);
}

TEST(CronExpression, ShortcutsStandForTheirFiveFields) {
  int64_t from = Utc(2026, 5, 13, 10, 30);  // a Wednesday
  auto utc = TimeZone::Utc();
  EXPECT_EQ(Cron("@yearly").NextAfter(from, utc), Utc(2027, 1, 1, 0, 0));
  EXPECT_EQ(Cron("@ANNUALLY").NextAfter(from, utc), Utc(2027, 1, 1, 0, 0));
  EXPECT_EQ(Cron("@monthly").NextAfter(from, utc), Utc(2026, 6, 1, 0, 0));
  EXPECT_EQ(Cron("@weekly").NextAfter(from, utc), Utc(2026, 5, 17, 0, 0));  // Sunday
  EXPECT_EQ(Cron("@daily").NextAfter(from, utc), Utc(2026, 5, 14, 0, 0));
  EXPECT_EQ(Cron(" @Midnight ").NextAfter(from, utc), Utc(2026, 5, 14, 0, 0));
  EXPECT_EQ(Cron("@hourly").NextAfter(from, utc), Utc(2026, 5, 13, 11, 0));
  // A shortcut reads in the schedule's zone like any expression: midnight in Tokyo.
  EXPECT_EQ(Cron("@daily").NextAfter(from, Zone("Asia/Tokyo")), Utc(2026, 5, 13, 15, 0));
}

TEST(CronExpression, UnknownShortcutsAreRefusedNamingTheKnownOnes) {
  for (const char* bad : {"@reboot", "@every 5m", "@daily 1", "@", "@minutely"}) {
    auto c = CronExpression::Parse(bad, "cron");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().field(), "cron") << bad;
    EXPECT_NE(c.status().message().find("@hourly"), std::string::npos) << bad;
  }
}

TEST(CronExpression, TimeZoneInsideTheExpressionIsRefused) {
  auto c = CronExpression::Parse("TZ=Europe/Berlin 0 9 * * *");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("time zone"), std::string::npos);
  EXPECT_FALSE(CronExpression::Parse("CRON_TZ=UTC 0 9 * * *").ok());
}

TEST(CronExpression, AnImpossibleDateNeverMatches) {
  EXPECT_FALSE(Cron("0 0 31 2 *").NextAfter(Utc(2026, 1, 1, 0, 0), TimeZone::Utc()));
}

TEST(TimeZone, UnknownOrUnsafeNamesAreRefused) {
  for (const char* bad : {"Mars/Olympus", "../etc/passwd", "/etc/localtime", "Europe/../UTC", ""})
    EXPECT_EQ(TimeZone::Load(bad).status().code(), Code::kInvalidArgument) << bad;
  EXPECT_EQ(Zone("Europe/Berlin").OffsetAt(Utc(2026, 1, 1, 0, 0)), 3600);
  EXPECT_EQ(Zone("Europe/Berlin").OffsetAt(Utc(2026, 7, 1, 0, 0)), 7200);
}

TEST(Dst, ANonexistentLocalTimeRunsAtTheNextValidInstant) {
  // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00 UTC); 02:30 does not exist.
  auto berlin = Zone("Europe/Berlin");
  auto c = Cron("30 2 * * *");
  EXPECT_EQ(c.NextAfter(Utc(2026, 3, 28, 12, 0), berlin), Utc(2026, 3, 29, 1, 0));
  EXPECT_EQ(c.NextAfter(Utc(2026, 3, 29, 1, 0), berlin), Utc(2026, 3, 30, 0, 30));
}

TEST(Dst, SlotsInsideOneGapCollapseIntoOneRun) {
  auto berlin = Zone("Europe/Berlin");
  auto c = Cron("*/15 2 * * *");
  EXPECT_EQ(c.NextAfter(Utc(2026, 3, 28, 12, 0), berlin), Utc(2026, 3, 29, 1, 0));
  // The next is the next day's 02:00 CEST, not 02:15 of the gap again.
  EXPECT_EQ(c.NextAfter(Utc(2026, 3, 29, 1, 0), berlin), Utc(2026, 3, 30, 0, 0));
}

TEST(Dst, ARepeatedHourRunsOnce) {
  // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET; 02:30 happens at 00:30 and 01:30
  // UTC. It runs at the first only.
  auto berlin = Zone("Europe/Berlin");
  auto c = Cron("30 2 * * *");
  EXPECT_EQ(c.NextAfter(Utc(2026, 10, 24, 12, 0), berlin), Utc(2026, 10, 25, 0, 30));
  EXPECT_EQ(c.NextAfter(Utc(2026, 10, 25, 0, 30), berlin), Utc(2026, 10, 26, 1, 30));
  // Every ten minutes of the repeated hour: the second pass is skipped entirely.
  auto every = Cron("*/10 2 * * *");
  EXPECT_EQ(every.NextAfter(Utc(2026, 10, 25, 0, 50), berlin), Utc(2026, 10, 26, 1, 0));
}

TEST(Dst, NewYorkSpringForward) {
  // 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00 UTC).
  auto ny = Zone("America/New_York");
  auto c = Cron("15 2 * * *");
  EXPECT_EQ(c.NextAfter(Utc(2026, 3, 7, 12, 0), ny), Utc(2026, 3, 8, 7, 0));
  EXPECT_EQ(Cron("0 9 * * *").NextAfter(Utc(2026, 3, 8, 0, 0), ny), Utc(2026, 3, 8, 13, 0));
}

TEST(AutomationSchedule, IntervalSlotsCountFromTheAnchor) {
  auto s = AutomationSchedule::Interval(2, 1000);
  EXPECT_EQ(s.NextAfter(1000), 3000);
  EXPECT_EQ(s.NextAfter(2999), 3000);
  EXPECT_EQ(s.NextAfter(3000), 5000);
  EXPECT_EQ(s.Next(1000, 3), (std::vector<int64_t>{3000, 5000, 7000}));
}

TEST(AutomationSchedule, CronOrIntervalNotBothNorNeither) {
  EXPECT_FALSE(AutomationSchedule::Of(5, "* * * * *", "", 0).ok());
  EXPECT_FALSE(AutomationSchedule::Of(0, "", "", 0).ok());
  EXPECT_EQ(AutomationSchedule::Of(0, "* * * * *", "Nowhere/City", 0).status().field(),
            "time_zone");
  auto s = AutomationSchedule::Of(0, "0 12 * * *", "Asia/Tokyo", 0);
  ASSERT_TRUE(s.ok());
  // Noon in Tokyo is 03:00 UTC.
  EXPECT_EQ(s->NextAfter(Utc(2026, 5, 1, 0, 0) * 1000), Utc(2026, 5, 1, 3, 0) * 1000);
}

}  // namespace
}  // namespace adapt::core
