#include "core/automation_schedule.h"

#include <chrono>
#include <sstream>

namespace adapt::core {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool ParseCronNumber(const std::string& s, int& out) {
  if (s.empty() || s.size() > 2) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// Names a field accepts instead of numbers (month and day-of-week), three letters each,
// matched without regard to case; `first` is the value of names[0].
struct CronNames {
  std::vector<std::string> names;
  int first = 0;
};

const CronNames kMonthNames{
    {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}, 1};
const CronNames kWeekdayNames{{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}, 0};
const CronNames kNoNames{};

bool ParseCronValue(const std::string& s, const CronNames& names, int& out) {
  if (ParseCronNumber(s, out)) return true;
  if (s.size() != 3) return false;
  std::string upper;
  for (char c : s) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  for (size_t i = 0; i < names.names.size(); ++i) {
    if (names.names[i] == upper) {
      out = names.first + static_cast<int>(i);
      return true;
    }
  }
  return false;
}

// One field's values in [lo, hi] into `bits`; false on a malformed field. Steps are numbers;
// values and range ends may be `names`.
template <size_t N>
bool ParseCronField(const std::string& text, int lo, int hi, const CronNames& names,
                    std::bitset<N>& bits, bool& any) {
  any = text == "*";
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    int step = 1;
    if (auto slash = part.find('/'); slash != std::string::npos) {
      if (!ParseCronNumber(part.substr(slash + 1), step) || step < 1) return false;
      part = part.substr(0, slash);
    }
    int first = lo, last = hi;
    if (part != "*") {
      if (auto dash = part.find('-'); dash != std::string::npos) {
        if (!ParseCronValue(part.substr(0, dash), names, first) ||
            !ParseCronValue(part.substr(dash + 1), names, last))
          return false;
      } else {
        if (!ParseCronValue(part, names, first)) return false;
        last = first;
        if (step > 1) last = hi;  // "5/15": from 5 to the end
      }
    }
    if (first < lo || last > hi || first > last) return false;
    for (int v = first; v <= last; v += step) bits.set(v);
  }
  return !text.empty() && text.back() != ',';
}

// The five fields an @ shortcut stands for, as in Vixie cron; empty for an unknown one.
std::string CronShortcut(const std::string& word) {
  std::string lower;
  for (char c : word) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "@yearly" || lower == "@annually") return "0 0 1 1 *";
  if (lower == "@monthly") return "0 0 1 * *";
  if (lower == "@weekly") return "0 0 * * 0";
  if (lower == "@daily" || lower == "@midnight") return "0 0 * * *";
  if (lower == "@hourly") return "0 * * * *";
  return "";
}

}  // namespace

Result<CronExpression> CronExpression::Parse(const std::string& text, const std::string& field) {
  if (text.find("TZ=") != std::string::npos) {
    return InvalidArgument(field, field +
                                      " must not set a time zone (TZ= or CRON_TZ=): give it "
                                      "in the time zone field");
  }
  std::stringstream in(text);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (!fields.empty() && fields[0].front() == '@') {
    std::string expanded = fields.size() == 1 ? CronShortcut(fields[0]) : "";
    if (expanded.empty()) {
      return InvalidArgument(field, field + " '" + text +
                                        "' is not a known shortcut: use @yearly, @annually, "
                                        "@monthly, @weekly, @daily, @midnight or @hourly");
    }
    return Parse(expanded, field);
  }
  if (fields.size() != 5) {
    return InvalidArgument(field, field +
                                      " must have five fields: minute hour day-of-month month "
                                      "day-of-week");
  }
  CronExpression c;
  bool any = false;
  std::bitset<8> weekdays;
  if (!ParseCronField(fields[0], 0, 59, kNoNames, c.minutes_, any))
    return InvalidArgument(field, field + "'s minute field '" + fields[0] + "' is not valid");
  if (!ParseCronField(fields[1], 0, 23, kNoNames, c.hours_, any))
    return InvalidArgument(field, field + "'s hour field '" + fields[1] + "' is not valid");
  if (!ParseCronField(fields[2], 1, 31, kNoNames, c.days_, c.days_any_))
    return InvalidArgument(field, field + "'s day-of-month field '" + fields[2] + "' is not valid");
  if (!ParseCronField(fields[3], 1, 12, kMonthNames, c.months_, any)) {
    return InvalidArgument(
        field, field + "'s month field '" + fields[3] + "' is not valid (1-12 or JAN-DEC)");
  }
  if (!ParseCronField(fields[4], 0, 7, kWeekdayNames, weekdays, c.weekdays_any_)) {
    return InvalidArgument(
        field, field + "'s day-of-week field '" + fields[4] + "' is not valid (0-7 or SUN-SAT)");
  }
  for (int d = 0; d < 7; ++d) c.weekdays_[d] = weekdays[d] || (d == 0 && weekdays[7]);
  return c;
}

bool CronExpression::DayMatches(int64_t days) const {
  using namespace std::chrono;
  year_month_day ymd{sys_days{std::chrono::days{days}}};
  if (!months_[static_cast<unsigned>(ymd.month())]) return false;
  bool dom = days_[static_cast<unsigned>(ymd.day())];
  bool dow = weekdays_[weekday{sys_days{std::chrono::days{days}}}.c_encoding()];
  if (days_any_ && weekdays_any_) return true;
  if (days_any_) return dow;
  if (weekdays_any_) return dom;
  return dom || dow;
}

std::optional<int64_t> CronExpression::NextAfter(int64_t after, const TimeZone& zone) const {
  int64_t local_after = after + zone.OffsetAt(after);
  // Start a few hours back: within a repeated hour a later local time can be an earlier
  // instant's first occurrence (skipped below when it is not after `after`).
  int64_t day = FloorDiv(local_after - 2 * 3600, 86400);
  for (int64_t end = day + 366 * 30; day < end; ++day) {
    if (!DayMatches(day)) continue;
    for (int h = 0; h < 24; ++h) {
      if (!hours_[h]) continue;
      for (int m = 0; m < 60; ++m) {
        if (!minutes_[m]) continue;
        int64_t local = day * 86400 + h * 3600 + m * 60;
        auto instants = zone.InstantsOf(local);
        int64_t at = instants.empty() ? zone.GapEnd(local) : instants.front();
        if (at > after) return at;
      }
    }
  }
  return std::nullopt;
}

AutomationSchedule AutomationSchedule::Interval(int64_t seconds, int64_t anchor_ms) {
  AutomationSchedule s;
  s.interval_ms_ = seconds * 1000;
  s.anchor_ms_ = anchor_ms;
  return s;
}

AutomationSchedule AutomationSchedule::Cron(CronExpression cron, TimeZone zone) {
  AutomationSchedule s;
  s.cron_ = std::move(cron);
  s.zone_ = std::move(zone);
  return s;
}

Result<AutomationSchedule> AutomationSchedule::Of(int64_t interval_seconds, const std::string& cron,
                                                  const std::string& time_zone, int64_t anchor_ms,
                                                  const FieldNames& names) {
  if (interval_seconds > 0) {
    if (!cron.empty())
      return InvalidArgument(names("cron"), "give either " + names("interval_seconds") + " or " +
                                                names("cron") + ", not both");
    if (interval_seconds > kMaxIntervalSeconds)
      return InvalidArgument(names("interval_seconds"),
                             names("interval_seconds") + " must be at most 31622400 (366 days)");
    return Interval(interval_seconds, anchor_ms);
  }
  if (cron.empty())
    return InvalidArgument(names("interval_seconds"), "give " + names("interval_seconds") +
                                                          " (at least 1) or " + names("cron"));
  ASSIGN_OR_RETURN(CronExpression parsed, CronExpression::Parse(cron, names("cron")));
  ASSIGN_OR_RETURN(TimeZone zone,
                   TimeZone::Load(time_zone.empty() ? "UTC" : time_zone, names("time_zone")));
  return Cron(std::move(parsed), std::move(zone));
}

std::optional<int64_t> AutomationSchedule::NextAfter(int64_t after_ms) const {
  if (interval_ms_ > 0) {
    if (after_ms < anchor_ms_) return anchor_ms_;
    return anchor_ms_ + (FloorDiv(after_ms - anchor_ms_, interval_ms_) + 1) * interval_ms_;
  }
  auto next = cron_->NextAfter(FloorDiv(after_ms, 1000), zone_);
  if (!next) return std::nullopt;
  return *next * 1000;
}

std::vector<int64_t> AutomationSchedule::Next(int64_t after_ms, int n) const {
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) {
    auto next = NextAfter(after_ms);
    if (!next) break;
    out.push_back(*next);
    after_ms = *next;
  }
  return out;
}

}  // namespace adapt::core
