// RunscRuntime's named checkpoints: <sandbox dir>/checkpoints/<name>/ holds `image/` (what
// runsc checkpoint wrote) and `disk.img` (a sparse copy of the writable layer), written as
// <name>.partial and renamed when complete, so a crash never leaves a half checkpoint that
// passes for a whole one. They live in the sandbox's directory and go with it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "base/ignore_error.h"
#include "base/time.h"
#include "os/files.h"
#include "os/loop_device.h"
#include "os/sparse_copy.h"
#include "runtime/rootfs.h"
#include "runtime/runsc_runtime.h"
#include "runtime/shim_state.h"

namespace adapt::runtime {
namespace {

constexpr char kPartialSuffix[] = ".partial";

// Names become paths: a DNS label only (core checks the same with its own words).
Status CheckName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 63 && name.front() != '-' && name.back() != '-';
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!ok) return InvalidArgument("name", "checkpoint name '" + name + "' is not a DNS label");
  return Status::Ok();
}

// Waits until no loop device is backed by the sandbox's disk: the processes that held its
// mount (runsc's, in their own mount namespaces) are gone and its writes are in the file, so
// a copy of it is whole and a replacement is what the next mount sees.
Status AwaitDiskReleased(const std::string& disk) {
  for (int i = 0; i < 600 && os::LoopDeviceBacks(disk); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (os::LoopDeviceBacks(disk))
    return Status(Code::kUnavailable,
                  "the sandbox's disk is still in use 30 s after its processes were stopped");
  return Status::Ok();
}

// Copies the regular files of directory `from` (runsc's image is flat) into new `to`.
Status CopyFlatDir(const std::string& from, const std::string& to) {
  RETURN_IF_ERROR(os::MakeDirs(to, 0700));
  for (const auto& entry : os::ListDir(from))
    RETURN_IF_ERROR(os::CopySparseFile(from + "/" + entry, to + "/" + entry));
  return os::SyncPath(to);
}

}  // namespace

Status RunscRuntime::KeepCheckpoint(const std::string& id, const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  if (!HasCheckpoint(id)) return NotFound("sandbox " + id + " has no checkpoint to keep");
  std::string root = SandboxDir(id) + "/checkpoints", final_dir = root + "/" + name;
  if (os::Exists(final_dir)) return Conflict("checkpoint '" + name + "' exists");
  std::string partial = final_dir + kPartialSuffix;
  RETURN_IF_ERROR(os::RemoveTree(partial));
  RETURN_IF_ERROR(os::MakeDirs(partial, 0700));
  Status st = AwaitDiskReleased(RootfsPaths(SandboxDir(id)).disk_image);
  if (st.ok()) st = CopyFlatDir(CheckpointDir(id), partial + "/image");
  if (st.ok())
    st = os::CopySparseFile(RootfsPaths(SandboxDir(id)).disk_image, partial + "/disk.img");
  // The agent in the saved memory holds the key the file names now; the file moves on with
  // every later connection, so a roll back needs this one back.
  std::string key = SandboxDir(id) + "/" + kAgentKeyFile;
  if (st.ok() && os::Exists(key)) st = os::CopySparseFile(key, partial + "/" + kAgentKeyFile);
  if (st.ok()) st = os::WriteFileAtomic(partial + "/created_at", std::to_string(NowMillis()), 0600);
  if (st.ok()) st = os::SyncPath(partial);
  if (st.ok()) st = os::Rename(partial, final_dir);
  if (st.ok()) st = os::SyncPath(root);
  if (!st.ok()) {
    IgnoreError(os::RemoveTree(partial), "a failed copy is removed; its error is reported");
    return st.WithContext("keeping checkpoint '" + name + "' of sandbox " + id);
  }
  return Status::Ok();
}

Status RunscRuntime::ReinstateCheckpoint(const std::string& id, const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  std::string kept = SandboxDir(id) + "/checkpoints/" + name;
  if (!os::Exists(kept + "/image/checkpoint.img"))
    return NotFound("sandbox " + id + " has no checkpoint '" + name + "'");
  // The disk goes back first, under a temporary name, so the sandbox's own disk is replaced
  // whole or not at all; the image last, since its presence is what a restore looks for.
  std::string disk = RootfsPaths(SandboxDir(id)).disk_image;
  DiscardCheckpoint(id);
  Status st = AwaitDiskReleased(disk);
  if (st.ok()) st = os::CopySparseFile(kept + "/disk.img", disk + ".reinstating");
  if (st.ok()) st = os::Rename(disk + ".reinstating", disk);
  std::string key = SandboxDir(id) + "/" + kAgentKeyFile;
  if (st.ok() && os::Exists(kept + "/" + kAgentKeyFile)) {
    st = os::CopySparseFile(kept + "/" + kAgentKeyFile, key + ".reinstating");
    if (st.ok()) st = os::Rename(key + ".reinstating", key);
  }
  std::string partial = CheckpointDir(id) + kPartialSuffix;
  if (st.ok()) st = CopyFlatDir(kept + "/image", partial);
  if (st.ok()) st = os::Rename(partial, CheckpointDir(id));
  if (!st.ok()) {
    IgnoreError(os::RemoveTree(disk + ".reinstating"), "the error is reported");
    IgnoreError(os::RemoveTree(key + ".reinstating"), "the error is reported");
    IgnoreError(os::RemoveTree(partial), "the error is reported");
    return st.WithContext("restoring checkpoint '" + name + "' of sandbox " + id);
  }
  return Status::Ok();
}

Status RunscRuntime::DeleteNamedCheckpoint(const std::string& id, const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  std::string kept = SandboxDir(id) + "/checkpoints/" + name;
  if (!os::Exists(kept)) return NotFound("sandbox " + id + " has no checkpoint '" + name + "'");
  return os::RemoveTree(kept).WithContext("deleting checkpoint '" + name + "'");
}

std::vector<NamedCheckpoint> RunscRuntime::ListNamedCheckpoints(const std::string& id) {
  std::string root = SandboxDir(id) + "/checkpoints";
  std::vector<NamedCheckpoint> out;
  for (const auto& name : os::ListDir(root)) {
    if (!CheckName(name).ok()) continue;  // a .partial one being written, or a leftover
    std::string dir = root + "/" + name;
    if (!os::Exists(dir + "/image/checkpoint.img")) continue;
    NamedCheckpoint c;
    c.name = name;
    c.bytes = os::AllocatedBytes(dir);
    if (auto text = os::ReadFile(dir + "/created_at"); text.ok())
      c.created_at = std::strtoll(text->c_str(), nullptr, 10);
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const NamedCheckpoint& a, const NamedCheckpoint& b) {
    return a.created_at < b.created_at || (a.created_at == b.created_at && a.name < b.name);
  });
  return out;
}

}  // namespace adapt::runtime
