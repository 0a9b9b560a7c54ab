// PosixTzRule: the POSIX TZ string a TZif file (version 2 and later) ends with, such as
// "CET-1CEST,M3.5.0,M10.5.0/3": the zone's standard offset and, where it keeps daylight saving,
// the rule for when it starts and ends each year. TimeZone (core/time_zone.h) extends the file's
// transition table with it, so times after the table's last entry follow the rule (RFC 8536
// section 3.3; the rule forms of POSIX.1-2017 section 8.3 with the RFC's extensions: hours up to
// 167 and negative in a transition time). Immutable, so thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::core {

class PosixTzRule {
 public:
  // kInvalidArgument for a string that is not a POSIX TZ rule.
  static Result<PosixTzRule> Parse(const std::string& text);

  // Seconds east of UTC outside and inside daylight saving.
  int32_t standard_offset() const { return std_offset_; }
  bool has_dst() const { return dst_.has_value(); }
  // The rule's changes in calendar year `year` as (UTC seconds, offset from then on), in time
  // order: none without daylight saving.
  std::vector<std::pair<int64_t, int32_t>> TransitionsIn(int year) const;

 private:
  // One end of daylight saving: a day of the year, and a local time on it (seconds).
  struct Change {
    enum class Form { kJulianNoLeap, kZeroBasedDay, kMonthWeekDay };
    Form form = Form::kMonthWeekDay;
    int day = 0;  // Jn: 1..365; n: 0..365
    int month = 0, week = 0, weekday = 0;
    int64_t time = 2 * 3600;
    // Days since the epoch of this change's day in `year`.
    int64_t DayIn(int year) const;
  };
  struct Dst {
    int32_t offset = 0;
    Change start, end;
  };
  int32_t std_offset_ = 0;
  std::optional<Dst> dst_;
};

}  // namespace adapt::core
