#include "daemon/paths.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>

#include "os/files.h"

namespace adapt::daemon {

namespace {

// Copies `src` to `target` (tmp + rename, mode 0755) unless `target` already holds the same
// bytes. Running sandboxes see the helpers through a mount of this folder: replacing an
// unchanged file would give it a new inode under them, and gVisor cannot checkpoint a process
// that maps a file whose inode went away (a stop after an adaptd restart lost its processes).
Status InstallHelper(const std::string& src, const std::string& target) {
  auto wanted = os::ReadFile(src);
  if (!wanted.ok()) return Internal("installing " + target + ": " + wanted.status().message());
  if (auto current = os::ReadFile(target); current.ok() && *current == *wanted) return Status::Ok();
  Status written = os::WriteFileAtomic(target, *wanted, 0755);
  if (!written.ok()) return Internal("installing " + target + ": " + written.message());
  return Status::Ok();
}

}  // namespace

Result<ListenAddress> ParseListenAddress(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return InvalidArgument("listen", "--listen must be HOST:PORT, got '" + text + "'");
  ListenAddress a;
  a.host = text.substr(0, colon);
  if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') {
    a.host = a.host.substr(1, a.host.size() - 2);
  } else if (a.host.find(':') != std::string::npos) {
    return InvalidArgument("listen", "--listen needs brackets around an IPv6 address: [::1]:8080");
  }
  std::string port = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (ec != std::errc() || ptr != port.data() + port.size() || port.empty())
    return InvalidArgument("listen", "--listen has a bad port: '" + port + "'");
  return a;
}

Result<Helpers> InstallHelpers(const DaemonConfig& config) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> dirs;
  if (!config.libexec_dir.empty()) dirs.push_back(config.libexec_dir);
  dirs.push_back(exe.parent_path());
  dirs.push_back(exe.parent_path() / "../libexec/adapt");
  std::string found;
  for (const auto& d : dirs) {
    if (os::Exists((d / "adapt-shim").string()) && os::Exists((d / "adapt-pause").string()) &&
        os::Exists((d / "adapt-agent").string())) {
      found = std::filesystem::weakly_canonical(d).string();
      break;
    }
  }
  if (found.empty())
    return Status(
        Code::kUnavailable,
        "cannot find adapt-shim, adapt-pause and adapt-agent (looked beside adaptd and in "
        "../libexec/adapt; set --libexec-dir)");
  Helpers h{found + "/adapt-shim", config.state_dir + "/helpers"};
  RETURN_IF_ERROR(os::MakeDirs(h.helpers_dir, 0755));
  for (const char* name : {"adapt-pause", "adapt-agent"})
    RETURN_IF_ERROR(InstallHelper(found + "/" + name, h.helpers_dir + "/" + name));
  // Optional: without it (an install from before it existed) sandboxes get no statx fix.
  std::string statx = found + "/adapt-statx.so";
  if (os::Exists(statx)) RETURN_IF_ERROR(InstallHelper(statx, h.helpers_dir + "/adapt-statx.so"));
  return h;
}

std::vector<std::string> HostDirectoriesForMessages(const DaemonConfig& config,
                                                    const Helpers& helpers) {
  std::vector<std::string> dirs = {config.state_dir, config.images_dir, "/sys/fs/cgroup",
                                   "/run/netns", "/run/adapt"};
  if (!helpers.shim.empty())
    dirs.push_back(std::filesystem::path(helpers.shim).parent_path().string());
  return dirs;
}

}  // namespace adapt::daemon
