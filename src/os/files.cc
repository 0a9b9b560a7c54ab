#include "os/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <system_error>

#include "os/errno_status.h"
#include "os/unique_fd.h"

namespace adapt::os {

Status WriteFileAtomic(const std::string& path, const std::string& data, int mode) {
  // A fixed name would be shared by concurrent writers of the path: one's O_TRUNC cut the
  // other's bytes, and the second rename found the file gone.
  static std::atomic<uint64_t> next{0};
  std::string tmp = path + "." + std::to_string(::getpid()) + "-" + std::to_string(next++) + ".tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd) return ErrnoStatus("creating " + tmp);
  // Whatever fails from here leaves no temporary file behind.
  bool renamed = false;
  struct Cleanup {
    const std::string& tmp;
    const bool& renamed;
    ~Cleanup() {
      if (!renamed) ::unlink(tmp.c_str());
    }
  } cleanup{tmp, renamed};
  if (::fchmod(fd.get(), mode) != 0) return ErrnoStatus("chmod " + tmp);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("writing " + tmp);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return ErrnoStatus("fsync " + tmp);
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) return ErrnoStatus("renaming " + tmp);
  renamed = true;
  return Status::Ok();
}

Status WriteExistingFile(const std::string& path, const std::string& data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return ErrnoStatus("opening " + path);
  if (::write(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size()))
    return ErrnoStatus("writing " + path);
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoStatus("opening " + path);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("reading " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status MakeDirs(const std::string& path, int mode) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  // Through ErrnoStatus: a full disk reads as one to the client, not as an internal failure.
  if (ec) return ErrnoStatus("creating directory " + path, ec.value());
  ::chmod(path.c_str(), mode);
  return Status::Ok();
}

Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return Internal("removing " + path + ": " + ec.message());
  return Status::Ok();
}

uint64_t TreeBytes(const std::string& dir) {
  std::error_code ec;
  uint64_t total = 0;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      uintmax_t n = it->file_size(size_ec);
      if (!size_ec) total += n;
    }
  }
  return total;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Status CreateSparseFile(const std::string& path, uint64_t bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) return ErrnoStatus("creating " + path);
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) return ErrnoStatus("sizing " + path);
  return Status::Ok();
}

Status MakeWhiteout(const std::string& path) {
  if (::mknod(path.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0)
    return ErrnoStatus("creating whiteout " + path);
  return Status::Ok();
}

Status SetXattr(const std::string& path, const std::string& name, const std::string& value) {
  if (::lsetxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) != 0)
    return ErrnoStatus("setting " + name + " on " + path);
  return Status::Ok();
}

Status Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus("renaming " + from + " to " + to);
  return Status::Ok();
}

Status HardLinkReplacing(const std::string& from, const std::string& to) {
  std::string tmp = to + ".linking";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("removing " + tmp);
  if (::link(from.c_str(), tmp.c_str()) != 0) return ErrnoStatus("linking " + from + " to " + tmp);
  if (::rename(tmp.c_str(), to.c_str()) != 0) {
    Status failed = ErrnoStatus("renaming " + tmp + " to " + to);
    ::unlink(tmp.c_str());
    return failed;
  }
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa = {};
  struct stat sb = {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace adapt::os
