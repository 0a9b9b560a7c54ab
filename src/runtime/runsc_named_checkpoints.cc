// RunscRuntime's named checkpoints: <checkpoint home>/checkpoints/<name>/ holds `image/`
// (what runsc checkpoint wrote) and `disk.img` (a sparse copy of the writable layer), written
// as <name>.partial and renamed when complete, so a crash never leaves a half checkpoint that
// passes for a whole one. They live in the sandbox's home in the encrypted checkpoint store
// and go with it, except those taken with `keep` (a `keep` file in theirs): the sandbox's
// deletion moves them to KeptDir(id)/<name>/, where they stay until deleted. `taken_by` records
// the runsc version and platform that took one: only the same pair restores it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "os/files.h"
#include "os/loop_device.h"
#include "os/sparse_copy.h"
#include "runtime/checkpoint_store.h"
#include "runtime/rootfs.h"
#include "runtime/runsc_runtime.h"
#include "runtime/shim_state.h"

namespace adapt::runtime {
namespace {

constexpr char kPartialSuffix[] = ".partial";
// A disk or agent key being put back from a named checkpoint, or copied in by a fork's seed,
// before its rename into place.
constexpr char kReinstatingSuffix[] = ".reinstating";
constexpr char kSeedingSuffix[] = ".seeding";
constexpr char kTakenByFile[] = "taken_by";
constexpr char kKeepFile[] = "keep";

// "runsc <version>\nplatform <platform>\n"
std::string TakenBy(const std::string& version, const std::string& platform) {
  return "runsc " + version + "\nplatform " + platform + "\n";
}

// The value of line "<key> <value>" of `text`; empty when absent.
std::string LineValue(const std::string& text, const std::string& key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.starts_with(key + " ")) return line.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

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
  if (os::LoopDeviceBacks(disk)) {
    // For the operator only (host pids): which process outlived the stop.
    std::string holders;
    for (const auto& h : os::LoopDeviceHolders(disk)) holders += (holders.empty() ? "" : ", ") + h;
    spdlog::warn("disk {} is still mounted 30 s after its sandbox stopped, by: {}", disk,
                 holders.empty() ? std::string("no process found") : holders);
    return Status(Code::kUnavailable,
                  "the sandbox's disk is still in use 30 s after its processes were stopped");
  }
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

void RunscRuntime::RemoveCheckpointLeftovers() {
  auto remove = [](const std::string& path) {
    if (!os::Exists(path)) return;
    Status st = os::RemoveTree(path);
    WarnIfError(st, "removing what an interrupted checkpoint left");
    if (st.ok()) spdlog::info("removed {}, left by an interrupted checkpoint", path);
  };
  for (const auto& id : os::ListDir(options_.state_dir + "/sandboxes")) {
    if (!IsValidId(id, "sbx")) continue;
    std::string disk = RootfsPaths(SandboxDir(id)).disk_image;
    std::string key = SandboxDir(id) + "/" + kAgentKeyFile;
    for (const char* suffix : {kReinstatingSuffix, kSeedingSuffix}) {
      remove(disk + suffix);
      remove(key + suffix);
    }
  }
  if (!CheckpointStoreReady().ok()) return;
  for (const auto& id : os::ListDir(CheckpointStoreAt(options_.state_dir).root + "/sandboxes")) {
    if (!IsValidId(id, "sbx")) continue;
    // Checkpoint() and KeepCheckpoint() start each of these afresh; nothing ever reads one.
    remove(CheckpointDir(id) + kPartialSuffix);
    std::string named = CheckpointHome(id) + "/checkpoints";
    for (const auto& entry : os::ListDir(named))
      if (entry.ends_with(kPartialSuffix)) remove(named + "/" + entry);
  }
}

std::string RunscRuntime::NamedDir(const std::string& id, const std::string& name) const {
  std::string own = CheckpointHome(id) + "/checkpoints/" + name;
  if (os::Exists(own)) return own;
  std::string kept = KeptDir(id) + "/" + name;
  return os::Exists(kept) ? kept : own;
}

Status RunscRuntime::SaveKeptCheckpoints(const std::string& id) {
  std::string root = CheckpointHome(id) + "/checkpoints";
  for (const auto& name : os::ListDir(root)) {
    if (!CheckName(name).ok() || !os::Exists(root + "/" + name + "/" + kKeepFile)) continue;
    RETURN_IF_ERROR(os::MakeDirs(KeptDir(id), 0700));
    RETURN_IF_ERROR(os::RemoveTree(KeptDir(id) + "/" + name));  // a move a crash cut short
    RETURN_IF_ERROR(os::Rename(root + "/" + name, KeptDir(id) + "/" + name)
                        .WithContext("keeping checkpoint '" + name + "' of sandbox " + id));
  }
  if (os::Exists(KeptDir(id))) return os::SyncPath(KeptDir(id));
  return Status::Ok();
}

std::vector<std::string> RunscRuntime::SandboxesWithKeptCheckpoints() {
  std::vector<std::string> out;
  for (const auto& id : os::ListDir(CheckpointStoreAt(options_.state_dir).root + "/kept"))
    if (IsValidId(id, "sbx") && !os::Exists(SandboxDir(id))) out.push_back(id);
  return out;
}

Status RunscRuntime::KeepCheckpoint(const std::string& id, const std::string& name, bool keep) {
  RETURN_IF_ERROR(CheckName(name));
  RETURN_IF_ERROR(CheckpointStoreReady());
  if (!HasCheckpoint(id)) return NotFound("sandbox " + id + " has no checkpoint to keep");
  std::string root = CheckpointHome(id) + "/checkpoints", final_dir = root + "/" + name;
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
  if (st.ok())
    st = os::WriteFileAtomic(partial + "/" + kTakenByFile, TakenBy(version_, options_.platform),
                             0600);
  if (st.ok() && keep) st = os::WriteFileAtomic(partial + "/" + kKeepFile, "", 0600);
  if (st.ok()) st = os::SyncPath(partial);
  if (st.ok()) st = os::Rename(partial, final_dir);
  if (st.ok()) st = os::SyncPath(root);
  if (!st.ok()) {
    IgnoreError(os::RemoveTree(partial), "a failed copy is removed; its error is reported");
    return st.WithContext("keeping checkpoint '" + name + "' of sandbox " + id);
  }
  return Status::Ok();
}

void RunscRuntime::ReadTakenBy(const std::string& dir, NamedCheckpoint& c) const {
  auto text = os::ReadFile(dir + "/" + kTakenByFile);
  if (text.ok()) {
    c.runtime_version = LineValue(*text, "runsc");
    c.platform = LineValue(*text, "platform");
  }
  if (c.runtime_version.empty() || c.platform.empty()) {
    c.incompatibility = "checkpoint '" + c.name +
                        "' records no runsc version and platform, so it cannot be known to "
                        "restore here";
  } else if (c.runtime_version != version_ || c.platform != options_.platform) {
    c.incompatibility = "checkpoint '" + c.name + "' was taken by runsc " + c.runtime_version +
                        " on platform " + c.platform + "; this host runs runsc " + version_ +
                        " on platform " + options_.platform +
                        ", which cannot restore another version's or platform's checkpoint";
  }
}

Status RunscRuntime::ReinstateCheckpoint(const std::string& id, const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  std::string kept = CheckpointHome(id) + "/checkpoints/" + name;
  if (!os::Exists(kept + "/image/checkpoint.img"))
    return NotFound("sandbox " + id + " has no checkpoint '" + name + "'");
  NamedCheckpoint taken;
  taken.name = name;
  ReadTakenBy(kept, taken);
  if (!taken.incompatibility.empty()) return Status(Code::kUnsupported, taken.incompatibility);
  // The disk goes back first, under a temporary name, so the sandbox's own disk is replaced
  // whole or not at all; the image last, since its presence is what a restore looks for.
  std::string disk = RootfsPaths(SandboxDir(id)).disk_image;
  DiscardCheckpoint(id);
  Status st = AwaitDiskReleased(disk);
  if (st.ok()) st = os::CopySparseFile(kept + "/disk.img", disk + kReinstatingSuffix);
  if (st.ok()) st = os::Rename(disk + kReinstatingSuffix, disk);
  std::string key = SandboxDir(id) + "/" + kAgentKeyFile;
  if (st.ok() && os::Exists(kept + "/" + kAgentKeyFile)) {
    st = os::CopySparseFile(kept + "/" + kAgentKeyFile, key + kReinstatingSuffix);
    if (st.ok()) st = os::Rename(key + kReinstatingSuffix, key);
  }
  std::string partial = CheckpointDir(id) + kPartialSuffix;
  if (st.ok()) st = CopyFlatDir(kept + "/image", partial);
  if (st.ok()) st = os::Rename(partial, CheckpointDir(id));
  if (!st.ok()) {
    IgnoreError(os::RemoveTree(disk + kReinstatingSuffix), "the error is reported");
    IgnoreError(os::RemoveTree(key + kReinstatingSuffix), "the error is reported");
    IgnoreError(os::RemoveTree(partial), "the error is reported");
    return st.WithContext("restoring checkpoint '" + name + "' of sandbox " + id);
  }
  return Status::Ok();
}

Status RunscRuntime::SeedFromCheckpoint(const std::string& id, const std::string& source_id,
                                        const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  std::string dir = SandboxDir(id), disk = RootfsPaths(dir).disk_image;
  // The disk goes last: its presence says the seed is whole (or the fork ran since).
  if (os::Exists(disk)) return Status::Ok();
  if (!IsValidId(source_id, "sbx")) return NotFound("sandbox " + source_id + " not found");
  RETURN_IF_ERROR(CheckpointStoreReady());
  std::string kept = NamedDir(source_id, name);
  if (!os::Exists(kept + "/image/checkpoint.img"))
    return NotFound("sandbox " + source_id + " has no checkpoint '" + name + "'");
  NamedCheckpoint taken;
  taken.name = name;
  ReadTakenBy(kept, taken);
  if (!taken.incompatibility.empty()) return Status(Code::kUnsupported, taken.incompatibility);
  RETURN_IF_ERROR(os::MakeDirs(dir, 0700));
  DiscardCheckpoint(id);
  std::string partial = CheckpointDir(id) + kPartialSuffix;
  Status st = os::RemoveTree(partial);
  if (st.ok()) st = CopyFlatDir(kept + "/image", partial);
  if (st.ok()) st = os::Rename(partial, CheckpointDir(id));
  // The agent in the copied memory holds the key of the checkpoint's sandbox.
  std::string key = dir + "/" + kAgentKeyFile;
  if (st.ok() && os::Exists(kept + "/" + kAgentKeyFile)) {
    st = os::CopySparseFile(kept + "/" + kAgentKeyFile, key + kSeedingSuffix);
    if (st.ok()) st = os::Rename(key + kSeedingSuffix, key);
  }
  if (st.ok()) st = os::CopySparseFile(kept + "/disk.img", disk + kSeedingSuffix);
  if (st.ok()) st = os::Rename(disk + kSeedingSuffix, disk);
  if (st.ok()) st = os::SyncPath(dir);
  if (!st.ok()) {
    DiscardCheckpoint(id);
    IgnoreError(os::RemoveTree(disk + kSeedingSuffix), "the error is reported");
    IgnoreError(os::RemoveTree(partial), "the error is reported");
    return st.WithContext("copying checkpoint '" + name + "' of sandbox " + source_id);
  }
  return Status::Ok();
}

Result<std::shared_ptr<void>> RunscRuntime::ReserveRoomToCheckpoint(const std::string& id,
                                                                    uint64_t memory_bytes) {
  RETURN_IF_ERROR(CheckpointStoreReady());
  // runsc's image is at most the memory; the disk is copied with its holes.
  uint64_t disk = os::AllocatedBytes(RootfsPaths(SandboxDir(id)).disk_image);
  return room_.Reserve(memory_bytes + disk,
                       "a checkpoint of sandbox " + id + " (" + std::to_string(memory_bytes >> 20) +
                           " MiB of memory, " + std::to_string(disk >> 20) + " MiB of disk)");
}

Result<std::shared_ptr<void>> RunscRuntime::ReserveRoomToReinstate(const std::string& id,
                                                                   const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  uint64_t bytes = os::AllocatedBytes(NamedDir(id, name));
  return room_.Reserve(bytes, "putting checkpoint '" + name + "' of sandbox " + id + " back (" +
                                  std::to_string(bytes >> 20) + " MiB)");
}

Result<std::shared_ptr<void>> RunscRuntime::ReserveRoomToHibernate(const std::string& id,
                                                                   uint64_t memory_bytes) {
  RETURN_IF_ERROR(CheckpointStoreReady());
  return room_.Reserve(memory_bytes, "saving the processes of sandbox " + id + " (" +
                                         std::to_string(memory_bytes >> 20) + " MiB of memory)");
}

Status RunscRuntime::DeleteNamedCheckpoint(const std::string& id, const std::string& name) {
  RETURN_IF_ERROR(CheckName(name));
  std::string kept = NamedDir(id, name);
  if (!os::Exists(kept)) return NotFound("sandbox " + id + " has no checkpoint '" + name + "'");
  RETURN_IF_ERROR(os::RemoveTree(kept).WithContext("deleting checkpoint '" + name + "'"));
  // The last kept checkpoint of a deleted sandbox takes its directory with it.
  if (os::Exists(KeptDir(id)) && os::ListDir(KeptDir(id)).empty())
    IgnoreError(os::RemoveTree(KeptDir(id)), "an empty directory left is harmless");
  return Status::Ok();
}

std::vector<NamedCheckpoint> RunscRuntime::ListNamedCheckpoints(const std::string& id) {
  std::vector<NamedCheckpoint> out;
  for (const auto& root : {CheckpointHome(id) + "/checkpoints", KeptDir(id)}) {
    for (const auto& name : os::ListDir(root)) {
      if (!CheckName(name).ok()) continue;  // a .partial one being written, or a leftover
      std::string dir = root + "/" + name;
      if (!os::Exists(dir + "/image/checkpoint.img")) continue;
      if (std::any_of(out.begin(), out.end(), [&](const auto& c) { return c.name == name; }))
        continue;  // moved while listing
      NamedCheckpoint c;
      c.name = name;
      c.bytes = os::AllocatedBytes(dir);
      c.keep = os::Exists(dir + "/" + kKeepFile);
      if (auto text = os::ReadFile(dir + "/created_at"); text.ok())
        c.created_at = std::strtoll(text->c_str(), nullptr, 10);
      ReadTakenBy(dir, c);
      out.push_back(std::move(c));
    }
  }
  std::sort(out.begin(), out.end(), [](const NamedCheckpoint& a, const NamedCheckpoint& b) {
    return a.created_at < b.created_at || (a.created_at == b.created_at && a.name < b.name);
  });
  return out;
}

}  // namespace adapt::runtime
