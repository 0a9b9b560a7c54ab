#include "os/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/ids.h"
#include "os/errno_status.h"

namespace adapt::os {
namespace {

// How many written bytes a blob gathers before Write starts their writeback.
constexpr uint64_t kWritebackWindow = 8 << 20;

}  // namespace

Result<std::unique_ptr<DurableFileWriter>> DurableFileWriter::Create(const std::string& final_path,
                                                                     int mode) {
  std::string tmp = final_path + ".tmp-" + NewId("w").substr(2);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus("creating " + tmp);
  return std::unique_ptr<DurableFileWriter>(new DurableFileWriter(fd, tmp, final_path));
}

DurableFileWriter::~DurableFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

Status DurableFileWriter::Write(const char* data, size_t n) {
  size_t off = 0;
  while (off < n) {
    ssize_t w = ::write(fd_, data + off, n - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("writing " + tmp_);
    }
    off += static_cast<size_t>(w);
  }
  const uint64_t before = written_;
  written_ += n;
  // Each full window starts its writeback now, so that the disk writes while the caller
  // receives and hashes the rest, and Commit's fsync waits only for the tail: a large blob
  // (the storage gateway's PUT) would otherwise reach the disk only inside that fsync
  // (bench/README.md, "storage"). Durability is still Commit's fsync; a failure here is
  // harmless (writeback happens anyway) and fsync reports any that matters.
  if (before / kWritebackWindow != written_ / kWritebackWindow) {
    const uint64_t from = before / kWritebackWindow * kWritebackWindow;
    const uint64_t to = written_ / kWritebackWindow * kWritebackWindow;
    (void)::sync_file_range(fd_, static_cast<off64_t>(from), static_cast<off64_t>(to - from),
                            SYNC_FILE_RANGE_WRITE);
  }
  return Status::Ok();
}

Status DurableFileWriter::Commit() {
  if (::fsync(fd_) != 0) return ErrnoStatus("fsync " + tmp_);
  ::close(fd_);
  fd_ = -1;
  if (::rename(tmp_.c_str(), final_.c_str()) != 0) return ErrnoStatus("renaming " + tmp_);
  committed_ = true;
  std::string dir = final_.substr(0, final_.rfind('/'));
  int dfd = ::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Result<std::unique_ptr<FileReader>> FileReader::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ErrnoStatus("opening " + path);
  return FromFd(UniqueFd(fd), path);
}

Result<std::unique_ptr<FileReader>> FileReader::FromFd(UniqueFd fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus("stat " + what);
  const int64_t modified_ms =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  return std::unique_ptr<FileReader>(
      new FileReader(fd.release(), static_cast<uint64_t>(st.st_size), modified_ms));
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

long FileReader::Read(char* buf, size_t n) {
  for (;;) {
    ssize_t r = ::read(fd_, buf, n);
    if (r < 0 && errno == EINTR) continue;
    return static_cast<long>(r);
  }
}

Status FileReader::Seek(uint64_t offset) {
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) return ErrnoStatus("seeking");
  return Status::Ok();
}

Status RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("removing " + path);
  return Status::Ok();
}

}  // namespace adapt::os
