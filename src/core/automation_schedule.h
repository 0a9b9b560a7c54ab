// AutomationSchedule: when an automation's slots fall. Either a fixed interval (>= 1 s,
// slots at anchor + k * interval) or a 5-field cron expression (minute hour day-of-month month
// day-of-week; *, lists, ranges and steps; month names JAN-DEC and weekday names SUN-SAT in any
// case; day-of-month and day-of-week both restricted: either matches, as in Vixie cron) or one of
// Vixie cron's shortcuts (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly),
// read in an IANA time zone (default UTC).
//
// Daylight saving: a local time that does not exist (inside a spring-forward gap) runs at the
// next valid instant, the end of the gap; slots of one gap collapse into that one instant. A
// local time that exists twice (a repeated hour) runs once, at its first occurrence.
// Immutable once parsed, so thread-safe.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/field_names.h"
#include "core/time_zone.h"

namespace adapt::core {

inline constexpr int64_t kMaxIntervalSeconds = 366LL * 24 * 3600;

class CronExpression {
 public:
  // kInvalidArgument naming `field` for anything but five valid fields or a known shortcut
  // (@reboot is not one: a schedule has no boot); `TZ=` or `CRON_TZ=` inside the expression is
  // refused (the zone is its own field).
  static Result<CronExpression> Parse(const std::string& text, const std::string& field = "cron");
  // The first slot strictly after `after` (UTC seconds) in `zone`; nullopt when none comes
  // within 30 years (an impossible date such as 31 February).
  std::optional<int64_t> NextAfter(int64_t after, const TimeZone& zone) const;

 private:
  bool DayMatches(int64_t days_since_epoch) const;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1..31
  std::bitset<13> months_;   // 1..12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool days_any_ = true, weekdays_any_ = true;
};

class AutomationSchedule {
 public:
  static AutomationSchedule Interval(int64_t seconds, int64_t anchor_ms);
  static AutomationSchedule Cron(CronExpression cron, TimeZone zone);
  // From an automation's stored fields (interval_seconds > 0: an interval from created_at).
  static Result<AutomationSchedule> Of(int64_t interval_seconds, const std::string& cron,
                                       const std::string& time_zone, int64_t anchor_ms,
                                       const FieldNames& names = {});

  // The first slot strictly after `after_ms` (ms since the epoch); nullopt: none comes.
  std::optional<int64_t> NextAfter(int64_t after_ms) const;
  // The next `n` slots after `after_ms`.
  std::vector<int64_t> Next(int64_t after_ms, int n) const;

 private:
  int64_t interval_ms_ = 0;
  int64_t anchor_ms_ = 0;
  std::optional<CronExpression> cron_;
  TimeZone zone_ = TimeZone::Utc();
};

}  // namespace adapt::core
