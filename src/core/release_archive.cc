#include "core/release_archive.h"

#include "agent/tar_format.h"

namespace adapt::core {

std::string FirstEscapingEntry(const std::function<long(char*, size_t)>& read) {
  agent::TarReader tar(read);
  agent::TarEntry e;
  for (;;) {
    int r = tar.Next(e);
    if (r == 0) return "";
    if (r < 0) return "the archive is malformed: " + tar.error();
    std::string why;
    std::string name = agent::CleanArchiveName(e.name, why);
    if (!why.empty()) return e.name + " " + why;
    if (e.type == agent::TarEntry::kSymlink && !agent::SymlinkStaysInside(name, e.link))
      return name + " is a symlink pointing outside source_path (" + e.link + ")";
    if (e.type == agent::TarEntry::kHardLink) {
      std::string target = agent::CleanArchiveName(e.link, why);
      if (!why.empty() || target.empty())
        return name + " is a hard link outside source_path (" + e.link + ")";
    }
  }
}

}  // namespace adapt::core
