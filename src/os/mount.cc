#include "os/mount.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "os/errno_status.h"
#include "os/files.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

// mountinfo escapes spaces and other bytes as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 1 && i + 3 <= s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct AttachedLoop {
  std::string device;
  // Auto-clear detaches the device when its last opener closes it: hold it until mounted.
  UniqueFd fd;
};

Result<AttachedLoop> AttachLoop(const std::string& image) {
  UniqueFd ctl(::open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!ctl) return ErrnoStatus("opening /dev/loop-control");
  UniqueFd file(::open(image.c_str(), O_RDWR | O_CLOEXEC));
  if (!file) return ErrnoStatus("opening " + image);
  // Another process may take the free device between GET_FREE and CONFIGURE: retry.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int n = ::ioctl(ctl.get(), LOOP_CTL_GET_FREE);
    if (n < 0) return ErrnoStatus("finding a free loop device");
    std::string dev = "/dev/loop" + std::to_string(n);
    UniqueFd loop(::open(dev.c_str(), O_RDWR | O_CLOEXEC));
    if (!loop) return ErrnoStatus("opening " + dev);
    struct loop_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.fd = static_cast<uint32_t>(file.get());
    cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    std::strncpy(reinterpret_cast<char*>(cfg.info.lo_file_name), image.c_str(), LO_NAME_SIZE - 1);
    if (::ioctl(loop.get(), LOOP_CONFIGURE, &cfg) == 0) return AttachedLoop{dev, std::move(loop)};
    if (errno != EBUSY) return ErrnoStatus("configuring " + dev + " for " + image);
  }
  return Status(Code::kUnavailable, "no free loop device for " + image);
}

}  // namespace

Status MountOverlay(const std::string& lower, const std::string& upper, const std::string& work,
                    const std::string& target) {
  std::string opts = "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work;
  if (::mount("overlay", target.c_str(), "overlay", 0, opts.c_str()) != 0)
    return ErrnoStatus("mounting overlay at " + target);
  return Status::Ok();
}

Status MountLoopExt4(const std::string& image, const std::string& target) {
  ASSIGN_OR_RETURN(AttachedLoop loop, AttachLoop(image));
  if (::mount(loop.device.c_str(), target.c_str(), "ext4", MS_NODEV | MS_NOSUID, nullptr) != 0)
    return ErrnoStatus("mounting " + loop.device + " at " + target);
  return Status::Ok();
}

Status Unmount(const std::string& target) {
  if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) == 0) return Status::Ok();
  if (errno == EINVAL || errno == ENOENT) return Status::Ok();
  if (errno == EBUSY && ::umount2(target.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
    return Status::Ok();
  return ErrnoStatus("unmounting " + target);
}

std::vector<std::string> MountsUnder(const std::string& prefix) {
  std::vector<std::string> out;
  auto info = ReadFile("/proc/self/mountinfo");
  if (!info.ok()) return out;
  std::istringstream in(*info);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    point = Unescape(point);
    if (point == prefix || point.rfind(prefix + "/", 0) == 0) out.push_back(point);
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

}  // namespace adapt::os
