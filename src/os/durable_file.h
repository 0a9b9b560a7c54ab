// Streamed file writes that become visible only whole (tmp + fsync + rename + directory
// fsync), and streamed reads: the object store's blobs never sit in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

// Writes to `<final>.tmp-<random>`; Commit makes it `final` durably. Dropped uncommitted,
// the temporary file is removed.
class DurableFileWriter {
 public:
  static Result<std::unique_ptr<DurableFileWriter>> Create(const std::string& final_path,
                                                           int mode = 0600);
  ~DurableFileWriter();
  DurableFileWriter(const DurableFileWriter&) = delete;
  DurableFileWriter& operator=(const DurableFileWriter&) = delete;

  Status Write(const char* data, size_t n);
  // fsync, rename over the final path, fsync the directory.
  Status Commit();
  uint64_t written() const { return written_; }

 private:
  DurableFileWriter(int fd, std::string tmp, std::string final_path)
      : fd_(fd), tmp_(std::move(tmp)), final_(std::move(final_path)) {}
  int fd_;
  std::string tmp_, final_;
  uint64_t written_ = 0;
  bool committed_ = false;
};

class FileReader {
 public:
  static Result<std::unique_ptr<FileReader>> Open(const std::string& path);
  // The file `fd` has open (os/file_in_root.h opens one inside an untrusted tree); `what`
  // names it in errors.
  static Result<std::unique_ptr<FileReader>> FromFd(UniqueFd fd, const std::string& what);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  // Bytes read, 0 at the end, -1 on an error.
  long Read(char* buf, size_t n);
  uint64_t size() const { return size_; }
  // When the file's content last changed (its mtime), in ms since the epoch, as Open found it.
  int64_t modified_ms() const { return modified_ms_; }
  // Moves to `offset` from the start (a ranged read).
  Status Seek(uint64_t offset);

 private:
  FileReader(int fd, uint64_t size, int64_t modified_ms)
      : fd_(fd), size_(size), modified_ms_(modified_ms) {}
  int fd_;
  uint64_t size_;
  int64_t modified_ms_;
};

// Removes one file; no error when it does not exist.
Status RemoveFile(const std::string& path);

}  // namespace adapt::os
