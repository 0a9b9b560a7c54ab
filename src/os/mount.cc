#include "os/mount.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "os/errno_status.h"
#include "os/files.h"
#include "os/loop_device.h"
#include "os/mount_info.h"
#include "os/process.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

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

Status CreateExt4Image(const std::string& path, uint64_t mib, bool encrypt,
                       uint64_t bytes_per_inode) {
  std::string tmp = path + ".new";
  RETURN_IF_ERROR(CreateSparseFile(tmp, mib * 1024 * 1024));
  // -m 0: no blocks reserved for root, so the user gets all of the size.
  std::vector<std::string> argv = {
      "mkfs.ext4", "-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard"};
  if (encrypt) argv.insert(argv.end(), {"-O", "encrypt"});
  if (bytes_per_inode > 0) argv.insert(argv.end(), {"-i", std::to_string(bytes_per_inode)});
  argv.push_back(tmp);
  RETURN_IF_ERROR(RunChecked(argv).WithContext("formatting " + path));
  return Rename(tmp, path);
}

// The loop device already backed by `image`, if any: a mount of it that was detached here
// can live on in a sandbox's private mount namespace. Mounting that device again shares its
// superblock; a second loop device would mount the same ext4 twice and corrupt it.
static std::string ExistingLoopFor(const std::string& image) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(image, ec);
  if (ec) return "";
  for (const auto& dev : ListDir("/sys/block")) {
    if (dev.rfind("loop", 0) != 0) continue;
    auto backing = ReadFile("/sys/block/" + dev + "/loop/backing_file");
    if (!backing.ok()) continue;
    std::string path = *backing;
    while (!path.empty() && path.back() == '\n') path.pop_back();
    if (path == canonical.string()) return "/dev/" + dev;
  }
  return "";
}

bool LoopDeviceBacks(const std::string& image) { return !ExistingLoopFor(image).empty(); }

std::vector<std::string> LoopDeviceHolders(const std::string& image, size_t limit) {
  std::vector<std::string> holders;
  const std::string dev = ExistingLoopFor(image);
  if (dev.empty()) return holders;
  auto numbers = ReadFile("/sys/block/" + dev.substr(dev.rfind('/') + 1) + "/dev");
  if (!numbers.ok()) return holders;
  std::string id = *numbers;
  while (!id.empty() && id.back() == '\n') id.pop_back();
  for (const auto& pid : ListDir("/proc")) {
    if (holders.size() >= limit) break;
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    auto mounts = ReadMountInfo("/proc/" + pid + "/mountinfo");
    if (std::none_of(mounts.begin(), mounts.end(),
                     [&](const MountInfo& m) { return m.device == id; }))
      continue;
    auto read = ReadFile("/proc/" + pid + "/comm");
    std::string comm = read.ok() ? *read : "?";
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    holders.push_back(pid + " (" + comm + ")");
  }
  return holders;
}

Status MountLoopExt4(const std::string& image, const std::string& target,
                     const std::string& options) {
  const char* data = options.empty() ? nullptr : options.c_str();
  // A device still backing the image may be on its way out: auto-clear detaches it some time
  // after its last mount went (a start right after a stop), and a mount of it meanwhile fails
  // (EIO as the kernel takes its backing file away, or ENXIO), as may one of a new device
  // that reads the image while the old one lets go of it (EIO). Such a mount is tried again
  // (up to 5 s); a new device is attached only when none backs the image: never a second
  // one beside it (see ExistingLoopFor).
  constexpr int kWaits = 100;
  for (int wait = 0;; ++wait) {
    std::string dev = ExistingLoopFor(image);
    std::optional<AttachedLoop> attached;  // held until mounted; goes with this pass otherwise
    if (dev.empty()) {
      ASSIGN_OR_RETURN(attached, AttachLoop(image));
      dev = attached->device;
    }
    if (::mount(dev.c_str(), target.c_str(), "ext4", MS_NODEV | MS_NOSUID, data) == 0)
      return Status::Ok();
    const int err = errno;
    // A new device that is not ext4 (EINVAL) is final; an old one's EINVAL may be its going.
    const bool transient =
        attached ? err == EIO : err == ENXIO || err == ENOENT || err == EIO || err == EINVAL;
    if (!transient || wait == kWaits) return ErrnoStatus("mounting " + dev + " at " + target, err);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Status Unmount(const std::string& target) {
  if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) == 0) return Status::Ok();
  if (errno == EINVAL || errno == ENOENT) return Status::Ok();
  if (errno == EBUSY && ::umount2(target.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
    return Status::Ok();
  return ErrnoStatus("unmounting " + target);
}

bool IsMountPoint(const std::string& path) {
  for (const auto& point : MountsUnder(path)) {
    if (point == path) return true;
  }
  return false;
}

Result<FilesystemUsage> GetFilesystemUsage(const std::string& path) {
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) != 0) return ErrnoStatus("reading the usage of " + path);
  FilesystemUsage u;
  u.size_bytes = static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
  u.used_bytes = static_cast<uint64_t>(st.f_blocks - st.f_bfree) * st.f_frsize;
  u.avail_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  return u;
}

std::vector<std::string> MountsUnder(const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& m : ReadMountInfo()) {
    if (m.point == prefix || m.point.starts_with(prefix + "/")) out.push_back(std::move(m.point));
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

}  // namespace adapt::os
