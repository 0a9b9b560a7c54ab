#include "daemon/paths.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>

#include "os/files.h"

namespace adapt::daemon {

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
    return Status(Code::kUnavailable,
                  "cannot find adapt-shim, adapt-pause and adapt-agent (looked beside adaptd and in "
                  "../libexec/adapt; set --libexec-dir)");
  Helpers h{found + "/adapt-shim", config.state_dir + "/helpers"};
  RETURN_IF_ERROR(os::MakeDirs(h.helpers_dir, 0755));
  for (const char* name : {"adapt-pause", "adapt-agent"}) {
    std::string target = h.helpers_dir + "/" + name;
    std::string tmp = target + ".new";
    std::filesystem::copy_file(found + "/" + name, tmp,
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) return Internal(std::string("installing ") + name + ": " + ec.message());
    std::filesystem::permissions(tmp, std::filesystem::perms(0755), ec);
    std::filesystem::rename(tmp, target, ec);
    if (ec) return Internal(std::string("installing ") + name + ": " + ec.message());
  }
  // Optional: without it (an install from before it existed) sandboxes get no statx fix.
  std::string statx = found + "/adapt-statx.so";
  if (os::Exists(statx)) {
    std::string target = h.helpers_dir + "/adapt-statx.so";
    std::filesystem::copy_file(statx, target + ".new",
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (!ec) std::filesystem::permissions(target + ".new", std::filesystem::perms(0755), ec);
    if (!ec) std::filesystem::rename(target + ".new", target, ec);
    if (ec) return Internal("installing adapt-statx.so: " + ec.message());
  }
  return h;
}

}  // namespace adapt::daemon
