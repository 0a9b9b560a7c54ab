// CheckpointRoom: whether the host has the disk space a named checkpoint's copies need before
// they are started, so that a checkpoint fails at once with a clear reason instead of filling
// the host's disk midway (which would also fail the saves of every other sandbox). Checkpoints
// under way at once each reserve their room until they end, so two of them never count the
// same free space. Conservative: a reservation still counts once its copy has begun to use the
// space it reserved. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"

namespace adapt::runtime {

// Kept free beyond what a checkpoint is reckoned to need: the estimate is not exact, and the
// host's other writers (logs, the database) need some room too.
inline constexpr uint64_t kCheckpointRoomMargin = 1ull << 30;

class CheckpointRoom {
 public:
  // What the filesystems the copies go to have free now, in bytes (the least of them).
  using FreeBytes = std::function<Result<uint64_t>()>;
  explicit CheckpointRoom(FreeBytes free_bytes) : free_bytes_(std::move(free_bytes)) {}

  // Reserves `need` bytes for `what` (a phrase: "a checkpoint of sandbox sbx_... (...)"),
  // until the returned token goes. Unavailable, saying what is needed and what is free,
  // unless the free space less what others reserved holds `need` plus kCheckpointRoomMargin;
  // the free space's read error, with context, when it cannot be read.
  Result<std::shared_ptr<void>> Reserve(uint64_t need, const std::string& what);
  // What reservations now hold.
  uint64_t reserved() const;

 private:
  struct State {
    std::mutex mu;
    uint64_t reserved = 0;  // mu
  };
  FreeBytes free_bytes_;
  // Shared with the tokens, which may outlive this.
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

// The free space checkpoints of adaptd's state directory `state_dir` have: the lesser of the
// host filesystem's (the store's sparse image grows there, and sandboxes' disks are put back
// there) and the checkpoint store's own.
Result<uint64_t> CheckpointFreeBytes(const std::string& state_dir);

}  // namespace adapt::runtime
