#include "core/file_transfers.h"

#include <algorithm>

namespace adapt::core {

FileTransfers::Hold::Hold(FileTransfers* transfers, std::string id)
    : transfers_(transfers), id_(std::move(id)) {
  if (!transfers_) return;
  slot_ = std::make_shared<Slot>();
  transfers_->Add(id_, slot_);
}

FileTransfers::Hold::Hold(Hold&& other) noexcept
    : transfers_(other.transfers_), id_(std::move(other.id_)), slot_(std::move(other.slot_)) {
  other.transfers_ = nullptr;
}

FileTransfers::Hold& FileTransfers::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    Release();
    transfers_ = other.transfers_;
    id_ = std::move(other.id_);
    slot_ = std::move(other.slot_);
    other.transfers_ = nullptr;
  }
  return *this;
}

void FileTransfers::Hold::OnCancel(Canceller cancel) {
  if (!slot_) return;
  std::lock_guard lock(slot_->mu);
  slot_->cancel = std::move(cancel);
}

void FileTransfers::Hold::Release() {
  if (transfers_) transfers_->Remove(id_, slot_);
  transfers_ = nullptr;
  slot_.reset();
}

void FileTransfers::Add(const std::string& id, const std::shared_ptr<Hold::Slot>& slot) {
  std::lock_guard lock(mu_);
  in_flight_[id].push_back(slot);
}

void FileTransfers::Remove(const std::string& id, const std::shared_ptr<Hold::Slot>& slot) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  auto& slots = it->second;
  slots.erase(std::remove(slots.begin(), slots.end(), slot), slots.end());
  if (slots.empty()) {
    in_flight_.erase(it);
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
  return it == in_flight_.end() ? 0 : static_cast<int>(it->second.size());
}

bool FileTransfers::Cancel(const std::string& id, std::chrono::milliseconds wait) {
  std::vector<std::shared_ptr<Hold::Slot>> slots;
  {
    std::lock_guard lock(mu_);
    if (auto it = in_flight_.find(id); it != in_flight_.end()) slots = it->second;
  }
  // Called outside mu_: a canceller may take a while (runsc exec's signal), and holds only
  // its own operation's slot, which keeps that operation alive meanwhile.
  const auto until = std::chrono::steady_clock::now() + wait;
  bool all_ended = true;
  for (const auto& slot : slots) {
    std::lock_guard lock(slot->mu);
    auto left = std::max(std::chrono::milliseconds(0),
                         std::chrono::duration_cast<std::chrono::milliseconds>(
                             until - std::chrono::steady_clock::now()));
    if (!slot->cancel || !slot->cancel(left)) all_ended = false;
  }
  return all_ended;
}

}  // namespace adapt::core
