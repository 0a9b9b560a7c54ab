// TimeZone: an IANA zone's UTC offsets, read from the system's TZif files
// (/usr/share/zoneinfo, RFC 8536), because libstdc++ 12 has no chrono time zone database.
// Used by cron schedules (core/automation_schedule.h) to map local wall-clock times to instants.
// Past the file's last transition (2037 in Debian's "fat" files, earlier in "slim" ones) the
// POSIX rule in the file's footer (core/posix_tz_rule.h) gives the daylight-saving changes, up to
// the year 2500. Immutable, so thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::core {

class PosixTzRule;

class TimeZone {
 public:
  static TimeZone Utc();
  // Reads /usr/share/zoneinfo/<name>; kInvalidArgument (field `field`) for a name that is not
  // an IANA zone there.
  static Result<TimeZone> Load(const std::string& name, const std::string& field = "time_zone");
  // Parses a TZif file's bytes (version 1 to 4).
  static Result<TimeZone> Parse(const std::string& name, const std::string& tzif);

  const std::string& name() const { return name_; }
  // Seconds east of UTC in effect at `utc` (seconds since the epoch).
  int32_t OffsetAt(int64_t utc) const;
  // The instants whose wall-clock time is `local` (seconds since the epoch, read as local
  // time), earliest first: none inside a spring-forward gap, two inside a repeated hour.
  std::vector<int64_t> InstantsOf(int64_t local) const;
  // For a `local` time inside a gap: the first instant after the gap (the transition).
  int64_t GapEnd(int64_t local) const;

 private:
  // Appends the rule's changes after the last transition.
  void ExtendWith(const PosixTzRule& rule);

  std::string name_;
  int32_t initial_offset_ = 0;
  std::vector<int64_t> transitions_;  // UTC seconds, ascending
  std::vector<int32_t> offsets_;      // in effect from each transition on
};

}  // namespace adapt::core
