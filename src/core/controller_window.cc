#include "core/controller_window.h"

namespace adapt::core {
namespace {

// Merged windows are followed this far before NextChangeAfter settles for a time to look again.
constexpr int kMaxMergedWindows = 100;
// NextChanges gives up after this many times to look again without a change (windows that
// never close: create refuses them).
constexpr int kMaxIdleLooks = 8;

}  // namespace

std::string OtherState(const std::string& state) {
  return state == kStateRunning ? kStateHibernated : kStateRunning;
}

Result<ControllerWindows> ControllerWindows::Of(const std::string& desired, int64_t window_seconds,
                                                int64_t interval_seconds, const std::string& cron,
                                                const std::string& time_zone, int64_t anchor_ms,
                                                const FieldNames& names) {
  if (desired != kStateRunning && desired != kStateHibernated) {
    return InvalidArgument(names("desired_state"),
                           names("desired_state") + " must be running or hibernated");
  }
  ControllerWindows w;
  w.desired_ = desired;
  bool scheduled = interval_seconds > 0 || !cron.empty();
  if (!scheduled) {
    if (window_seconds != 0) {
      return InvalidArgument(names("window_seconds"),
                             names("window_seconds") + " needs " + names("interval_seconds") +
                                 " or " + names("cron") + " (when the windows open)");
    }
    if (!time_zone.empty() && time_zone != "UTC") {
      return InvalidArgument(names("time_zone"),
                             names("time_zone") + " applies to " + names("cron") + " only");
    }
    return w;
  }
  if (window_seconds < 1 || window_seconds > kMaxWindowSeconds) {
    return InvalidArgument(names("window_seconds"),
                           names("window_seconds") + " must be between 1 and " +
                               std::to_string(kMaxWindowSeconds) + " with a schedule");
  }
  if (interval_seconds > 0 && window_seconds >= interval_seconds) {
    return InvalidArgument(names("window_seconds"),
                           names("window_seconds") + " must be shorter than " +
                               names("interval_seconds") + ": the windows would never close");
  }
  ASSIGN_OR_RETURN(AutomationSchedule schedule,
                   AutomationSchedule::Of(interval_seconds, cron, time_zone, anchor_ms, names));
  w.schedule_ = std::move(schedule);
  w.window_ms_ = window_seconds * 1000;
  return w;
}

std::optional<int64_t> ControllerWindows::OpenWindowAt(int64_t t) const {
  if (!schedule_) return std::nullopt;
  // A window [s, s + w) holds t when s is in (t - w, t].
  auto s = schedule_->NextAfter(t - window_ms_);
  if (s && *s <= t) return s;
  return std::nullopt;
}

std::string ControllerWindows::StateAt(int64_t t) const {
  if (!schedule_) return desired_;
  return OpenWindowAt(t) ? desired_ : OtherState(desired_);
}

std::optional<int64_t> ControllerWindows::NextChangeAfter(int64_t t) const {
  if (!schedule_) return std::nullopt;
  auto open = OpenWindowAt(t);
  if (!open) return schedule_->NextAfter(t);  // the next window opens
  // Inside: the window closes, unless a later one opened meanwhile (then that one's close).
  int64_t close = *open + window_ms_;
  for (int i = 0; i < kMaxMergedWindows; ++i) {
    auto later = OpenWindowAt(close);
    if (!later) return close;
    close = *later + window_ms_;
  }
  return close;
}

std::vector<StateChange> ControllerWindows::NextChanges(int64_t t, int n) const {
  std::vector<StateChange> out;
  for (int looks = 0; static_cast<int>(out.size()) < n && looks < n + kMaxIdleLooks; ++looks) {
    auto next = NextChangeAfter(t);
    if (!next) break;
    std::string state = StateAt(*next);
    if (out.empty() ? state != StateAt(t) : state != out.back().state)
      out.push_back({*next, state});
    t = *next;
  }
  return out;
}

}  // namespace adapt::core
