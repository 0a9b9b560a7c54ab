#include "core/file_transfers.h"

namespace adapt::core {

FileTransfers::Hold::Hold(FileTransfers* transfers, std::string id)
    : transfers_(transfers), id_(std::move(id)) {
  if (transfers_) transfers_->Add(id_, 1);
}

FileTransfers::Hold::Hold(Hold&& other) noexcept
    : transfers_(other.transfers_), id_(std::move(other.id_)) {
  other.transfers_ = nullptr;
}

FileTransfers::Hold& FileTransfers::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    Release();
    transfers_ = other.transfers_;
    id_ = std::move(other.id_);
    other.transfers_ = nullptr;
  }
  return *this;
}

void FileTransfers::Hold::Release() {
  if (transfers_) transfers_->Add(id_, -1);
  transfers_ = nullptr;
}

void FileTransfers::Add(const std::string& id, int delta) {
  std::lock_guard lock(mu_);
  int& n = in_flight_[id];
  n += delta;
  if (n <= 0) {
    in_flight_.erase(id);
    ended_.notify_all();
  }
}

bool FileTransfers::AwaitNone(const std::string& id, std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  return ended_.wait_for(lock, wait, [&] { return in_flight_.count(id) == 0; });
}

int FileTransfers::InFlight(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(id);
  return it == in_flight_.end() ? 0 : it->second;
}

}  // namespace adapt::core
