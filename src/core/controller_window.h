// ControllerWindows: the state a controller holds its target in at a given time. Without a
// schedule, always `desired`. With one (an interval or a cron expression in a time zone, as a
// schedule's slots: core/automation_schedule.h), `desired` inside the windows that open at each
// slot and last window_seconds (windows that overlap merge), and the other state outside them:
// "running 09:00-18:00 on weekdays" is desired running, cron "0 9 * * mon-fri",
// window_seconds 32400. Immutable, so thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/automation_schedule.h"
#include "core/field_names.h"

namespace adapt::core {

inline constexpr const char* kStateRunning = "running";
inline constexpr const char* kStateHibernated = "hibernated";
inline constexpr int64_t kMaxWindowSeconds = 7LL * 24 * 3600;

// The state opposite `state` ("running" <-> "hibernated").
std::string OtherState(const std::string& state);

struct StateChange {
  int64_t at = 0;  // ms since the epoch
  std::string state;
};

class ControllerWindows {
 public:
  // Validates: `desired` is running or hibernated; window_seconds is given (1..604800) exactly
  // when a schedule is (interval_seconds > 0 or cron). Errors name fields as `names` says.
  static Result<ControllerWindows> Of(const std::string& desired, int64_t window_seconds,
                                      int64_t interval_seconds, const std::string& cron,
                                      const std::string& time_zone, int64_t anchor_ms,
                                      const FieldNames& names = {});

  bool scheduled() const { return schedule_.has_value(); }
  // The state wanted at `t` (ms).
  std::string StateAt(int64_t t) const;
  // The first time after `t` at which the wanted state may change (ms); nullopt: never. It is
  // the exact change except behind very many merged windows, where it is a time to look again.
  std::optional<int64_t> NextChangeAfter(int64_t t) const;
  // The next `n` changes after `t`, each with the state from then on.
  std::vector<StateChange> NextChanges(int64_t t, int n) const;

 private:
  // The first window still open at `t`: its opening; nullopt when none is.
  std::optional<int64_t> OpenWindowAt(int64_t t) const;

  std::string desired_;
  int64_t window_ms_ = 0;
  std::optional<AutomationSchedule> schedule_;
};

}  // namespace adapt::core
