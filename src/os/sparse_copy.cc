#include "os/sparse_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include "os/errno_status.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

// Through a buffer: copy_file_range refuses two filesystems (EXDEV, e.g. a disk copied into
// the checkpoint store) on kernels since 5.19.
Status CopyRangeThroughBuffer(int in, int out, off_t start, off_t end, const std::string& what) {
  std::string buf(1 << 20, '\0');
  for (off_t at = start; at < end;) {
    ssize_t n =
        ::pread(in, buf.data(), static_cast<size_t>(std::min<off_t>(end - at, buf.size())), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("copying " + what);
    if (n == 0) break;  // the source shrank meanwhile
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::pwrite(out, buf.data() + done, static_cast<size_t>(n - done), at + done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return ErrnoStatus("copying " + what);
      done += w;
    }
    at += n;
  }
  return Status::Ok();
}

Status CopyRange(int in, int out, off_t start, off_t end, const std::string& what) {
  off_t in_off = start, out_off = start;
  while (in_off < end) {
    ssize_t n = ::copy_file_range(in, &in_off, out, &out_off, static_cast<size_t>(end - in_off), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EXDEV || errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)
        return CopyRangeThroughBuffer(in, out, in_off, end, what);
      return ErrnoStatus("copying " + what);
    }
    if (n == 0) break;  // the source shrank meanwhile
  }
  return Status::Ok();
}

}  // namespace

Status CopySparseFile(const std::string& from, const std::string& to, CopySync sync) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) return ErrnoStatus("opening " + from);
  struct stat st;
  if (::fstat(in.get(), &st) != 0) return ErrnoStatus("stat " + from);
  UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!out) return ErrnoStatus("creating " + to);
  if (::ftruncate(out.get(), st.st_size) != 0) return ErrnoStatus("sizing " + to);
  off_t pos = 0;
  while (pos < st.st_size) {
    off_t data = ::lseek(in.get(), pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole is left
      return ErrnoStatus("reading the extents of " + from);
    }
    off_t hole = ::lseek(in.get(), data, SEEK_HOLE);
    if (hole < 0) return ErrnoStatus("reading the extents of " + from);
    RETURN_IF_ERROR(CopyRange(in.get(), out.get(), data, hole, from + " to " + to));
    pos = hole;
  }
  if (sync == CopySync::kFsync && ::fsync(out.get()) != 0) return ErrnoStatus("syncing " + to);
  return Status::Ok();
}

uint64_t AllocatedBytes(const std::string& path) {
  auto blocks = [](const std::string& p) -> uint64_t {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return static_cast<uint64_t>(st.st_blocks) * 512;
  };
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return blocks(path);
  uint64_t total = 0;
  for (std::filesystem::recursive_directory_iterator it(path, ec), end; !ec && it != end;
       it.increment(ec))
    total += blocks(it->path().string());
  return total;
}

Status SyncPath(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoStatus("opening " + path);
  if (::fsync(fd.get()) != 0) return ErrnoStatus("syncing " + path);
  return Status::Ok();
}

}  // namespace adapt::os
