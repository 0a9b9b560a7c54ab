// SandboxActivity: where the services say that a sandbox is in use (a command, a file
// transfer, an ingress request), so that idle sandboxes can be hibernated (idle_tracker.h).
// Recording is in memory and cheap: a map update under a mutex, no store write.
#pragma once

#include <string>

namespace adapt::core {

class SandboxActivity {
 public:
  virtual ~SandboxActivity() = default;
  // Something reached sandbox `id` just now.
  virtual void Touch(const std::string& id) = 0;
  // Work in sandbox `id` began (a command, a file transfer); it is not idle until the
  // matching End, which counts as activity too.
  virtual void Begin(const std::string& id) = 0;
  virtual void End(const std::string& id) = 0;
};

// Begin on construction, End on destruction; nothing without an activity sink. Movable.
class ActivityHold {
 public:
  ActivityHold() = default;
  ActivityHold(SandboxActivity* activity, std::string id)
      : activity_(activity), id_(std::move(id)) {
    if (activity_) activity_->Begin(id_);
  }
  ActivityHold(ActivityHold&& other) noexcept
      : activity_(other.activity_), id_(std::move(other.id_)) {
    other.activity_ = nullptr;
  }
  ActivityHold& operator=(ActivityHold&& other) noexcept {
    if (this != &other) {
      Release();
      activity_ = other.activity_;
      id_ = std::move(other.id_);
      other.activity_ = nullptr;
    }
    return *this;
  }
  ActivityHold(const ActivityHold&) = delete;
  ActivityHold& operator=(const ActivityHold&) = delete;
  ~ActivityHold() { Release(); }

 private:
  void Release() {
    if (activity_) activity_->End(id_);
    activity_ = nullptr;
  }
  SandboxActivity* activity_ = nullptr;
  std::string id_;
};

}  // namespace adapt::core
