#include "runtime/checkpoint_room.h"

#include <algorithm>

#include "base/log.h"
#include "os/files.h"
#include "os/mount.h"
#include "runtime/checkpoint_store.h"

namespace adapt::runtime {
namespace {

// "2.5": GiB with one decimal, rounded down.
std::string Gib(uint64_t bytes) {
  return std::to_string(bytes >> 30) + "." + std::to_string(((bytes >> 20) % 1024) * 10 / 1024);
}

}  // namespace

Result<std::shared_ptr<void>> CheckpointRoom::Reserve(uint64_t need, const std::string& what) {
  auto free = free_bytes_();
  if (!free.ok()) return free.status().WithContext("checking the host's free space for " + what);
  uint64_t wanted = need + kCheckpointRoomMargin;
  {
    std::lock_guard lock(state_->mu);
    uint64_t available = *free > state_->reserved ? *free - state_->reserved : 0;
    if (available < wanted) {
      // The host's own figures go to the log: the answer reaches the tenant, whose business
      // the host's disk and other tenants' checkpoints are not.
      spdlog::warn(
          "{} needs {} GiB free with the margin; the host has {} GiB, {} GiB of it held "
          "for other checkpoints under way",
          what, Gib(wanted), Gib(*free), Gib(state_->reserved));
      return Status(Code::kUnavailable,
                    what + " needs " + Gib(wanted) + " GiB free on the host (with a " +
                        Gib(kCheckpointRoomMargin) +
                        " GiB margin), more than it has now; nothing was changed: retry once "
                        "the host has more room");
    }
    state_->reserved += need;
  }
  auto state = state_;
  // The deleter's pointer is unused: any non-null value makes the token a held one.
  return std::shared_ptr<void>(state.get(), [state, need](void*) {
    std::lock_guard lock(state->mu);
    state->reserved -= need;
  });
}

uint64_t CheckpointRoom::reserved() const {
  std::lock_guard lock(state_->mu);
  return state_->reserved;
}

Result<uint64_t> CheckpointFreeBytes(const std::string& state_dir) {
  ASSIGN_OR_RETURN(os::FilesystemUsage host, os::GetFilesystemUsage(state_dir));
  uint64_t free = host.avail_bytes;
  std::string store = CheckpointStoreAt(state_dir).root;
  if (os::Exists(store)) {
    ASSIGN_OR_RETURN(os::FilesystemUsage inside, os::GetFilesystemUsage(store));
    free = std::min(free, inside.avail_bytes);
  }
  return free;
}

}  // namespace adapt::runtime
