#include "os/tree_copy.h"

#include <filesystem>
#include <system_error>

#include "os/process.h"

namespace adapt::os {

Status CopyTreeExactly(const std::string& from, const std::string& to) {
  // cp -a keeps device nodes, xattrs (trusted.* as root), owners and hard links, and copies
  // symlinks as links; --no-target-directory makes `to` the copy rather than a parent of it.
  return RunChecked({"cp", "-a", "--no-target-directory", "--", from, to})
      .WithContext("copying " + from);
}

uint64_t TreeBytesNoFollow(const std::string& dir) {
  std::error_code ec;
  uint64_t total = 0;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code status_ec;
    if (it->symlink_status(status_ec).type() != std::filesystem::file_type::regular) continue;
    uintmax_t n = it->file_size(status_ec);
    if (!status_ec) total += n;
  }
  return total;
}

}  // namespace adapt::os
