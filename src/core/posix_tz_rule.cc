#include "core/posix_tz_rule.h"

#include <algorithm>
#include <chrono>

namespace adapt::core {
namespace {

// A cursor over the rule's text; every reader returns false on malformed input.
struct RuleReader {
  const std::string& s;
  size_t pos = 0;

  bool AtEnd() const { return pos >= s.size(); }
  bool Peek(char c) const { return pos < s.size() && s[pos] == c; }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++pos;
    return true;
  }
  // A zone abbreviation: three or more letters, or anything but '>' inside <...>.
  bool Name() {
    if (Eat('<')) {
      size_t close = s.find('>', pos);
      if (close == std::string::npos || close - pos < 3) return false;
      pos = close + 1;
      return true;
    }
    size_t start = pos;
    while (pos < s.size() && ((s[pos] >= 'A' && s[pos] <= 'Z') || (s[pos] >= 'a' && s[pos] <= 'z')))
      ++pos;
    return pos - start >= 3;
  }
  bool Number(int max_digits, int64_t& out) {
    size_t start = pos;
    out = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < size_t(max_digits))
      out = out * 10 + (s[pos++] - '0');
    return pos > start;
  }
  // [+-]hh[:mm[:ss]] in seconds; hours up to `max_hours`.
  bool Duration(int64_t max_hours, int64_t& out) {
    int sign = 1;
    if (Eat('-'))
      sign = -1;
    else
      Eat('+');
    int64_t h = 0, m = 0, sec = 0;
    if (!Number(3, h) || h > max_hours) return false;
    if (Eat(':')) {
      if (!Number(2, m) || m > 59) return false;
      if (Eat(':') && (!Number(2, sec) || sec > 59)) return false;
    }
    out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
};

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int64_t DaysOf(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return sys_days{year{y} / month{m} / day{d}}.time_since_epoch().count();
}

}  // namespace

int64_t PosixTzRule::Change::DayIn(int y) const {
  int64_t jan1 = DaysOf(y, 1, 1);
  switch (form) {
    case Form::kJulianNoLeap:
      // February 29 is never counted: day 60 is March 1 in every year.
      return jan1 + day - 1 + (IsLeap(y) && day >= 60 ? 1 : 0);
    case Form::kZeroBasedDay:
      return jan1 + day;
    case Form::kMonthWeekDay: {
      int64_t first = DaysOf(y, month, 1);
      unsigned first_weekday =
          std::chrono::weekday{std::chrono::sys_days{std::chrono::days{first}}}.c_encoding();
      int64_t d = first + (weekday - static_cast<int>(first_weekday) + 7) % 7 + 7 * (week - 1);
      // Week 5 is the last such weekday of the month, which may be the fourth.
      int64_t next_month = month == 12 ? DaysOf(y + 1, 1, 1) : DaysOf(y, month + 1, 1);
      while (d >= next_month) d -= 7;
      return d;
    }
  }
  return jan1;
}

Result<PosixTzRule> PosixTzRule::Parse(const std::string& text) {
  auto bad = [&text] { return InvalidArgument("", "'" + text + "' is not a POSIX TZ rule"); };
  RuleReader r{text};
  PosixTzRule rule;
  int64_t std_west = 0;
  if (!r.Name() || !r.Duration(24, std_west)) return bad();
  rule.std_offset_ = static_cast<int32_t>(-std_west);
  if (r.AtEnd()) return rule;
  if (!r.Name()) return bad();
  Dst dst;
  dst.offset = rule.std_offset_ + 3600;  // an hour ahead unless it says otherwise
  if (!r.Peek(',')) {
    int64_t dst_west = 0;
    if (!r.Duration(24, dst_west)) return bad();
    dst.offset = static_cast<int32_t>(-dst_west);
  }
  // Without a rule POSIX leaves the dates to the implementation; TZif footers always give one.
  for (Change* c : {&dst.start, &dst.end}) {
    if (!r.Eat(',')) return bad();
    int64_t v = 0;
    if (r.Eat('J')) {
      if (!r.Number(3, v) || v < 1 || v > 365) return bad();
      c->form = Change::Form::kJulianNoLeap;
      c->day = static_cast<int>(v);
    } else if (r.Eat('M')) {
      int64_t w = 0, d = 0;
      if (!r.Number(2, v) || v < 1 || v > 12 || !r.Eat('.') || !r.Number(1, w) || w < 1 || w > 5 ||
          !r.Eat('.') || !r.Number(1, d) || d > 6)
        return bad();
      c->form = Change::Form::kMonthWeekDay;
      c->month = static_cast<int>(v);
      c->week = static_cast<int>(w);
      c->weekday = static_cast<int>(d);
    } else {
      if (!r.Number(3, v) || v > 365) return bad();
      c->form = Change::Form::kZeroBasedDay;
      c->day = static_cast<int>(v);
    }
    if (r.Eat('/') && !r.Duration(167, c->time)) return bad();
  }
  if (!r.AtEnd()) return bad();
  rule.dst_ = dst;
  return rule;
}

std::vector<std::pair<int64_t, int32_t>> PosixTzRule::TransitionsIn(int year) const {
  std::vector<std::pair<int64_t, int32_t>> out;
  if (!dst_) return out;
  // Each change's time is local time in the offset in effect before it.
  out.emplace_back(dst_->start.DayIn(year) * 86400 + dst_->start.time - std_offset_, dst_->offset);
  out.emplace_back(dst_->end.DayIn(year) * 86400 + dst_->end.time - dst_->offset, std_offset_);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace adapt::core
