#include "storage/upload_sweeper.h"

#include <algorithm>
#include <chrono>

#include "base/background_work.h"
#include "base/time.h"

namespace adapt::storage {

void UploadSweeper::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread(Guarded("upload sweeper", [this] { Run(); }));
}

void UploadSweeper::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void UploadSweeper::Run() {
  const auto period = std::chrono::seconds(std::clamp<int64_t>(max_age_seconds_ / 4, 1, 15 * 60));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    RunGuarded("upload sweeper pass",
               [this] { objects_.ExpireUploads(NowMillis() - max_age_seconds_ * 1000); });
    lock.lock();
    cv_.wait_for(lock, period, [this] { return stopping_; });
  }
}

}  // namespace adapt::storage
