#include "core/release_archive.h"

#include "agent/release_stream.h"
#include "agent/tar_format.h"

namespace adapt::core {

std::string FirstEscapingEntry(const std::function<long(char*, size_t)>& read,
                               uint64_t max_unpacked) {
  agent::ReleaseUnpacker unpacked(read, max_unpacked);
  agent::TarReader tar([&](char* buf, size_t n) { return unpacked.Read(buf, n); });
  agent::TarEntry e;
  for (;;) {
    int r = tar.Next(e);
    if (r == 0) break;
    if (r < 0)
      return unpacked.error().empty() ? "the archive is malformed: " + tar.error()
                                      : unpacked.error();
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
    if (e.type != agent::TarEntry::kFile && e.type != agent::TarEntry::kDirectory &&
        e.type != agent::TarEntry::kSymlink && e.type != agent::TarEntry::kHardLink)
      return name + " is a device, FIFO or other special file (tar type '" +
             std::string(1, e.type) + "'); a release holds files, directories and links";
  }
  // What follows the tar's end is read too: a bomb hidden after it still counts.
  char buf[64 * 1024];
  for (;;) {
    long n = unpacked.Read(buf, sizeof buf);
    if (n == 0) return "";
    if (n < 0) return unpacked.error();
  }
}

}  // namespace adapt::core
