// ControllerWindows: the state a controller wants at a time, and when that changes, with fixed
// instants (no clock).
#include "core/controller_window.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

constexpr int64_t kSec = 1000;

TEST(ControllerWindowTest, WithoutScheduleTheStateNeverChanges) {
  auto w = ControllerWindows::Of("hibernated", 0, 0, "", "", 0);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_FALSE(w->scheduled());
  EXPECT_EQ(w->StateAt(0), "hibernated");
  EXPECT_EQ(w->StateAt(1'000'000'000'000), "hibernated");
  EXPECT_FALSE(w->NextChangeAfter(123).has_value());
  EXPECT_TRUE(w->NextChanges(0, 5).empty());
}

TEST(ControllerWindowTest, IntervalWindowsOpenAtEachSlotAndCloseAfterTheirLength) {
  // Running for 4 s every 10 s from the anchor (1000 s), hibernated in between.
  int64_t anchor = 1000 * kSec;
  auto w = ControllerWindows::Of("running", 4, 10, "", "", anchor);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->StateAt(anchor), "running");
  EXPECT_EQ(w->StateAt(anchor + 4 * kSec - 1), "running");
  EXPECT_EQ(w->StateAt(anchor + 4 * kSec), "hibernated");
  EXPECT_EQ(w->StateAt(anchor + 10 * kSec - 1), "hibernated");
  EXPECT_EQ(w->StateAt(anchor + 10 * kSec), "running");
  EXPECT_EQ(w->NextChangeAfter(anchor), anchor + 4 * kSec);
  EXPECT_EQ(w->NextChangeAfter(anchor + 5 * kSec), anchor + 10 * kSec);
  auto changes = w->NextChanges(anchor + 1, 3);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].at, anchor + 4 * kSec);
  EXPECT_EQ(changes[0].state, "hibernated");
  EXPECT_EQ(changes[1].at, anchor + 10 * kSec);
  EXPECT_EQ(changes[1].state, "running");
  EXPECT_EQ(changes[2].at, anchor + 14 * kSec);
  EXPECT_EQ(changes[2].state, "hibernated");
}

TEST(ControllerWindowTest, WeekdayOfficeHoursInBerlin) {
  // Running 09:00-18:00 Monday to Friday, Europe/Berlin (UTC+1 in winter).
  auto w = ControllerWindows::Of("running", 9 * 3600, 0, "0 9 * * mon-fri", "Europe/Berlin", 0);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const int64_t mon_0900_berlin = 1796025600LL * kSec;  // 2026-11-30T08:00:00Z
  const int64_t mon_1800_berlin = 1796058000LL * kSec;
  const int64_t fri_1800_berlin = 1796403600LL * kSec;  // 2026-12-04T17:00:00Z
  const int64_t sat_1100_berlin = 1796464800LL * kSec;
  const int64_t next_mon_0900 = 1796630400LL * kSec;
  EXPECT_EQ(w->StateAt(mon_0900_berlin - 1), "hibernated");
  EXPECT_EQ(w->StateAt(mon_0900_berlin), "running");
  EXPECT_EQ(w->StateAt(mon_1800_berlin - 1), "running");
  EXPECT_EQ(w->StateAt(mon_1800_berlin), "hibernated");
  EXPECT_EQ(w->StateAt(sat_1100_berlin), "hibernated");
  EXPECT_EQ(w->NextChangeAfter(mon_0900_berlin + 3600 * kSec), mon_1800_berlin);
  EXPECT_EQ(w->NextChangeAfter(fri_1800_berlin), next_mon_0900);
  EXPECT_EQ(w->NextChangeAfter(sat_1100_berlin), next_mon_0900);
}

TEST(ControllerWindowTest, OverlappingWindowsMerge) {
  // Windows of 90 s opening at minutes 0 and 1 of each hour: one window from :00:00 to :02:30.
  auto w = ControllerWindows::Of("hibernated", 90, 0, "0,1 * * * *", "", 0);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const int64_t hour = 1796025600LL * kSec;
  EXPECT_EQ(w->StateAt(hour + 100 * kSec), "hibernated");
  EXPECT_EQ(w->StateAt(hour + 150 * kSec), "running");
  EXPECT_EQ(w->NextChangeAfter(hour + 30 * kSec), hour + 150 * kSec);
  auto changes = w->NextChanges(hour + 30 * kSec, 2);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].state, "running");
  EXPECT_EQ(changes[1].at, hour + 3600 * kSec);
  EXPECT_EQ(changes[1].state, "hibernated");
}

TEST(ControllerWindowTest, WindowsThatNeverCloseShowNoChange) {
  auto w = ControllerWindows::Of("running", 120, 0, "* * * * *", "", 0);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->StateAt(1796025600LL * kSec), "running");
  EXPECT_TRUE(w->NextChanges(1796025600LL * kSec, 2).empty());
}

TEST(ControllerWindowTest, RefusesWhatIsNotAWindow) {
  FieldNames rest({{"desired_state", "desiredState"}, {"window_seconds", "windowSeconds"}});
  auto bad_state = ControllerWindows::Of("paused", 0, 0, "", "", 0, rest);
  ASSERT_FALSE(bad_state.ok());
  EXPECT_EQ(bad_state.status().field(), "desiredState");
  auto window_alone = ControllerWindows::Of("running", 60, 0, "", "", 0, rest);
  ASSERT_FALSE(window_alone.ok());
  EXPECT_EQ(window_alone.status().field(), "windowSeconds");
  auto no_window = ControllerWindows::Of("running", 0, 60, "", "", 0, rest);
  ASSERT_FALSE(no_window.ok());
  EXPECT_EQ(no_window.status().field(), "windowSeconds");
  auto never_closes = ControllerWindows::Of("running", 60, 60, "", "", 0, rest);
  EXPECT_FALSE(never_closes.ok());
  auto too_long = ControllerWindows::Of("running", kMaxWindowSeconds + 1, 0, "@weekly", "", 0);
  EXPECT_FALSE(too_long.ok());
  auto bad_zone = ControllerWindows::Of("running", 60, 0, "0 9 * * *", "Mars/Olympus", 0);
  EXPECT_FALSE(bad_zone.ok());
  auto zone_alone = ControllerWindows::Of("running", 0, 0, "", "Europe/Berlin", 0);
  EXPECT_FALSE(zone_alone.ok());
}

}  // namespace
}  // namespace adapt::core
