// The one check every host-side tar reader applies to an entry's name before it becomes a
// path: image layers and archives (image/), and the CLI's file download (cli/). A name that
// climbs out with ".." is refused; "." and empty components are dropped.
#pragma once

#include <string>

namespace adapt {

// "./a//b/" -> "a/b" (a leading "/" is dropped too); false for a path with "..".
inline bool CleanArchivePath(const std::string& raw, std::string& out) {
  out.clear();
  size_t i = 0;
  while (i <= raw.size()) {
    auto end = raw.find('/', i);
    if (end == std::string::npos) end = raw.size();
    std::string comp = raw.substr(i, end - i);
    i = end + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") return false;
    out += (out.empty() ? "" : "/") + comp;
  }
  return true;
}

}  // namespace adapt
