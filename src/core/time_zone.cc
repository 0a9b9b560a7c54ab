#include "core/time_zone.h"

#include <algorithm>
#include <chrono>

#include "core/posix_tz_rule.h"
#include "os/files.h"

namespace adapt::core {
namespace {

constexpr const char* kZoneInfo = "/usr/share/zoneinfo/";
// The footer's rule is written out as transitions up to this year: further than any schedule
// looks ahead (cron searches 30 years), and a few hundred entries per zone.
constexpr int kRuleLastYear = 2500;

bool ValidZoneName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '/' || name.front() == '.') return false;
  if (name.find("..") != std::string::npos) return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

// Big-endian reads over the file's bytes; `ok` turns false on a short file.
struct TzifReader {
  const std::string& data;
  size_t pos = 0;
  bool ok = true;
  int64_t Int(int bytes) {
    if (pos + bytes > data.size()) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(data[pos++]);
    if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
    if (bytes == 1) return static_cast<int64_t>(v);
    return static_cast<int64_t>(v);
  }
  void Skip(size_t n) {
    if (pos + n > data.size()) ok = false;
    pos += n;
  }
};

struct TzifCounts {
  int64_t isut, isstd, leap, time, type, chars;
};

bool ReadTzifHeader(TzifReader& r, int& version, TzifCounts& c) {
  if (r.data.compare(r.pos, 4, "TZif") != 0) return false;
  r.Skip(4);
  char v = r.pos < r.data.size() ? r.data[r.pos] : 0;
  version = v == 0 ? 1 : v - '0';
  r.Skip(16);
  c = {r.Int(4), r.Int(4), r.Int(4), r.Int(4), r.Int(4), r.Int(4)};
  return r.ok && c.type > 0 && c.time >= 0 && c.chars >= 0 && c.leap >= 0;
}

}  // namespace

TimeZone TimeZone::Utc() {
  TimeZone z;
  z.name_ = "UTC";
  return z;
}

Result<TimeZone> TimeZone::Load(const std::string& name, const std::string& field) {
  if (name == "UTC") return Utc();
  if (!ValidZoneName(name) || name.rfind("posix", 0) == 0 || name.rfind("right", 0) == 0)
    return InvalidArgument(field, field + " '" + name + "' is not an IANA time zone name");
  auto data = os::ReadFile(kZoneInfo + name);
  if (!data.ok())
    return InvalidArgument(field, field + " '" + name + "' is not a known IANA time zone");
  auto zone = Parse(name, *data);
  if (!zone.ok())
    return InvalidArgument(field, field + " '" + name + "': " + zone.status().message());
  return zone;
}

Result<TimeZone> TimeZone::Parse(const std::string& name, const std::string& tzif) {
  TzifReader r{tzif};
  int version = 1;
  TzifCounts c{};
  if (!ReadTzifHeader(r, version, c)) return InvalidArgument("", "not a TZif file");
  int time_bytes = 4;
  if (version >= 2) {
    // The 64-bit body follows the 32-bit one: skip it and read the second header.
    r.Skip(c.time * 5 + c.type * 6 + c.chars + c.leap * 8 + c.isstd + c.isut);
    if (!r.ok || !ReadTzifHeader(r, version, c)) return InvalidArgument("", "truncated TZif file");
    time_bytes = 8;
  }
  TimeZone z;
  z.name_ = name;
  std::vector<int64_t> times(c.time);
  for (auto& t : times) t = r.Int(time_bytes);
  std::vector<int> index(c.time);
  for (auto& i : index) i = static_cast<int>(r.Int(1));
  std::vector<int32_t> type_offsets(c.type);
  for (auto& o : type_offsets) {
    o = static_cast<int32_t>(r.Int(4));
    r.Skip(2);  // isdst, abbreviation index
  }
  if (!r.ok) return InvalidArgument("", "truncated TZif file");
  z.initial_offset_ = type_offsets[0];
  for (size_t i = 0; i < times.size(); ++i) {
    if (index[i] >= static_cast<int>(type_offsets.size()))
      return InvalidArgument("", "TZif transition names a missing type");
    z.transitions_.push_back(times[i]);
    z.offsets_.push_back(type_offsets[index[i]]);
  }
  if (version >= 2) {
    r.Skip(c.chars + c.leap * 12 + c.isstd + c.isut);
    if (!r.ok || r.pos >= tzif.size() || tzif[r.pos] != '\n')
      return InvalidArgument("", "TZif file has no footer");
    size_t end = tzif.find('\n', r.pos + 1);
    if (end == std::string::npos) return InvalidArgument("", "TZif file's footer is not ended");
    std::string footer = tzif.substr(r.pos + 1, end - r.pos - 1);
    if (!footer.empty()) {
      auto rule = PosixTzRule::Parse(footer);
      if (!rule.ok()) return InvalidArgument("", "TZif footer: " + rule.status().message());
      z.ExtendWith(*rule);
    }
  }
  return z;
}

void TimeZone::ExtendWith(const PosixTzRule& rule) {
  if (!rule.has_dst()) return;
  using namespace std::chrono;
  int64_t last = transitions_.empty() ? 0 : transitions_.back();
  int first_year = static_cast<int>(year_month_day{sys_days{days{last / 86400}}}.year());
  for (int y = first_year; y <= kRuleLastYear; ++y) {
    for (auto [at, offset] : rule.TransitionsIn(y)) {
      if (!transitions_.empty() && at <= transitions_.back()) continue;
      transitions_.push_back(at);
      offsets_.push_back(offset);
    }
  }
}

int32_t TimeZone::OffsetAt(int64_t utc) const {
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc);
  if (it == transitions_.begin()) return initial_offset_;
  return offsets_[it - transitions_.begin() - 1];
}

std::vector<int64_t> TimeZone::InstantsOf(int64_t local) const {
  // A zone changes its offset at most once within a day either side (true of every IANA zone).
  std::vector<int64_t> out;
  for (int32_t offset : {OffsetAt(local - 86400), OffsetAt(local + 86400)}) {
    int64_t utc = local - offset;
    if (OffsetAt(utc) == offset && std::find(out.begin(), out.end(), utc) == out.end())
      out.push_back(utc);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t TimeZone::GapEnd(int64_t local) const {
  // Read with the offset before the gap, `local` lands just after the transition that opened it.
  int64_t utc = local - OffsetAt(local - 86400);
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc);
  if (it == transitions_.begin()) return utc;
  return *(it - 1);
}

}  // namespace adapt::core
