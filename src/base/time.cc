#include "base/time.h"

#include <ctime>

namespace adapt {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string FormatRfc3339(int64_t millis) {
  time_t secs = static_cast<time_t>(millis / 1000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(millis % 1000));
  return buf;
}

}  // namespace adapt
