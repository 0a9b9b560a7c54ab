#include "base/fault_point.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace adapt {
namespace {

struct Armed {
  std::string text;
  std::set<std::string> names;
};

// Read once: the tests arm a point by starting adaptd with ADAPT_FAULT set.
const Armed& ArmedSet() {
  static const Armed armed = [] {
    Armed a;
    const char* env = std::getenv("ADAPT_FAULT");
    a.text = env ? env : "";
    std::string::size_type start = 0;
    while (start <= a.text.size()) {
      auto end = a.text.find(',', start);
      if (end == std::string::npos) end = a.text.size();
      if (end > start) a.names.insert(a.text.substr(start, end - start));
      start = end + 1;
    }
    return a;
  }();
  return armed;
}

}  // namespace

void FaultPoint(const char* name) {
  const Armed& armed = ArmedSet();
  if (armed.names.empty() || !armed.names.count(name)) return;
  // stderr is unbuffered: the test reads this line from the daemon's log.
  std::fprintf(stderr, "adaptd: fault point %s reached: exiting with status %d\n", name,
               kFaultExitCode);
  ::_exit(kFaultExitCode);
}

const char* ArmedFaultPoints() { return ArmedSet().text.c_str(); }

}  // namespace adapt
