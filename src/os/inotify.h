// Inotify: files renamed into watched directories, as events (inotify(7)). Used to hear at
// once that a file written atomically (temp file + rename) has changed.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

struct InotifyEvent {
  int watch = -1;     // the watch descriptor of the directory
  std::string name;   // the file renamed into it
  bool gone = false;  // the directory is gone (or the watch removed): the watch has ended
};

class Inotify {
 public:
  static Result<Inotify> Open();
  // Watches `dir` for files renamed into it; the same directory gives the same descriptor.
  Result<int> WatchRenamesInto(const std::string& dir);
  // Ends a watch; one already ended is fine.
  void Remove(int watch);
  // Waits up to `timeout_ms` for events; none when the time runs out.
  Result<std::vector<InotifyEvent>> Read(int timeout_ms);

 private:
  explicit Inotify(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace adapt::os
