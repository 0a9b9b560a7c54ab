// RunscRuntime's place in the encrypted checkpoint store (checkpoint_store.h):
// <root>/sandboxes/<id>/ holds a sandbox's checkpoint image and its named checkpoints, and
// <root>/kept/<id>/ the checkpoints a deleted sandbox kept. An adaptd from before the store
// kept them in plaintext in the sandbox's directory and <state>/kept-checkpoints/: they are
// moved in at start-up, and the plaintext goes.
#include <spdlog/spdlog.h>

#include "base/ids.h"
#include "base/ignore_error.h"
#include "os/files.h"
#include "runtime/checkpoint_store.h"
#include "runtime/runsc_runtime.h"

namespace adapt::runtime {

std::string RunscRuntime::CheckpointHome(const std::string& id) const {
  return CheckpointStoreAt(options_.state_dir).root + "/sandboxes/" + id;
}

std::string RunscRuntime::KeptDir(const std::string& id) const {
  return CheckpointStoreAt(options_.state_dir).root + "/kept/" + id;
}

Status RunscRuntime::CheckpointStoreReady() const { return checkpoint_store_status_; }

void RunscRuntime::OpenCheckpoints() {
  auto paths = CheckpointStoreAt(options_.state_dir);
  checkpoint_store_status_ =
      options_.checkpoint_key.empty()
          ? Status(Code::kUnavailable, "adaptd has no key for the encrypted checkpoint store")
          : OpenCheckpointStore(paths, options_.checkpoint_key);
  if (!checkpoint_store_status_.ok()) {
    spdlog::error("checkpoints are unavailable: {}", checkpoint_store_status_.message());
    return;
  }
  std::string old_kept = options_.state_dir + "/kept-checkpoints";
  for (const auto& id : os::ListDir(old_kept)) {
    if (IsValidId(id, "sbx"))
      WarnIfError(MoveIntoCheckpointStore(old_kept + "/" + id, KeptDir(id)),
                  "moving kept checkpoints into the encrypted store");
  }
  if (os::Exists(old_kept) && os::ListDir(old_kept).empty())
    IgnoreError(os::RemoveTree(old_kept), "an empty directory left is harmless");
  for (const auto& id : os::ListDir(options_.state_dir + "/sandboxes")) {
    if (!IsValidId(id, "sbx")) continue;
    for (const char* sub : {"/checkpoint", "/checkpoints"})
      WarnIfError(MoveIntoCheckpointStore(SandboxDir(id) + sub, CheckpointHome(id) + sub),
                  "moving checkpoints into the encrypted store");
    IgnoreError(os::RemoveTree(SandboxDir(id) + "/checkpoint.partial"),
                "a partial image is never restored");
  }
  // A home whose sandbox is gone was left by a crash between the two removals of Destroy.
  for (const auto& id : os::ListDir(paths.root + "/sandboxes")) {
    if (!os::Exists(SandboxDir(id)))
      WarnIfError(os::RemoveTree(paths.root + "/sandboxes/" + id),
                  "removing the checkpoints of a deleted sandbox");
  }
}

void RunscRuntime::CloseCheckpoints() {
  if (checkpoint_store_status_.ok())
    WarnIfError(CloseCheckpointStore(CheckpointStoreAt(options_.state_dir)),
                "unmounting the checkpoint store");
}

}  // namespace adapt::runtime
