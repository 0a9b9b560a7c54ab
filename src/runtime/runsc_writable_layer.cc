// RunscRuntime::ExportWritableLayer: a sandbox's writable layer copied out for a commit.
#include <spdlog/spdlog.h>

#include "base/ignore_error.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/process.h"
#include "os/tree_copy.h"
#include "runtime/oci_spec.h"
#include "runtime/rootfs.h"
#include "runtime/runsc_runtime.h"

namespace adapt::runtime {
namespace {

// In a sandbox's directory while it is paused for an export.
constexpr char kPausedForExport[] = "paused-for-export";

// `argv` bounded: a hung sandbox must not hold the caller (which holds the sandbox) for ever.
std::vector<std::string> Bounded(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"timeout", "--kill-after=5", "60"});
  return argv;
}

}  // namespace

Status RunscRuntime::PauseForExport(const std::string& id) {
  const std::string marker = SandboxDir(id) + "/" + kPausedForExport;
  ASSIGN_OR_RETURN(std::vector<std::string> pause, RunscVerb(id, "pause"));
  // Written first: a crash after the pause must find it (ResumeSandboxesLeftPaused).
  RETURN_IF_ERROR(os::WriteFileAtomic(marker, "", 0600));
  Status paused = os::RunChecked(Bounded(pause));
  if (!paused.ok()) {
    IgnoreError(os::RemoveTree(marker), "the pause failed, which is the error reported");
    return paused.WithContext("pausing the sandbox for the copy of its writable layer");
  }
  return Status::Ok();
}

Status RunscRuntime::ResumeAfterExport(const std::string& id) {
  ASSIGN_OR_RETURN(std::vector<std::string> resume, RunscVerb(id, "resume"));
  RETURN_IF_ERROR(
      os::RunChecked(Bounded(resume)).WithContext("resuming the sandbox after the copy"));
  return os::RemoveTree(SandboxDir(id) + "/" + kPausedForExport);
}

void RunscRuntime::ResumeSandboxesLeftPaused() {
  for (const auto& id : os::ListDir(options_.state_dir + "/sandboxes")) {
    if (!os::Exists(SandboxDir(id) + "/" + kPausedForExport)) continue;
    spdlog::warn(
        "sandbox {}: paused for a copy of its writable layer when adaptd stopped; "
        "resuming it",
        id);
    // A sandbox that is gone (or was never paused) fails the resume: nothing to do then.
    WarnIfError(ResumeAfterExport(id), "resuming sandbox " + id);
    IgnoreError(os::RemoveTree(SandboxDir(id) + "/" + kPausedForExport), "resumed or gone");
  }
}

Status RunscRuntime::ExportWritableLayer(const std::string& id, const std::string& dest) {
  RootfsPaths p(SandboxDir(id));
  std::string upper = p.disk_mount + "/upper";
  if (os::IsMountPoint(p.disk_mount)) {
    // Running: gVisor's kernel caches file data and writes it back to the gofer (the host's
    // overlay) on sync, so the sandbox syncs before the copy. The agent's `sync` needs nothing
    // from the image; an image's own sync is the fallback without it.
    ASSIGN_OR_RETURN(std::vector<std::string> prefix, ExecPrefix(id));
    Status synced = Status::Ok();
    for (const char* program : {kAgentBinaryInSandbox, "sync"}) {
      // Bounded: the sandbox is held (no stop, start or delete) while this runs, and a hung
      // sandbox must not hold it for ever.
      std::vector<std::string> argv{"timeout", "--kill-after=5", "120"};
      argv.insert(argv.end(), prefix.begin(), prefix.end());
      argv.insert(argv.end(), {"--user=0:0", id, program});
      if (program == kAgentBinaryInSandbox) argv.push_back("sync");
      synced = os::RunChecked(argv);
      if (synced.ok()) break;
    }
    RETURN_IF_ERROR(synced.WithContext("writing back the sandbox's cached files"));
    // cp reads the upper directory by path, and the sandbox's root changes that tree through
    // the gofer: a directory swapped for a symlink to / between cp's lstat and its opendir
    // would copy host files into the tenant's image. Paused, nothing in the sandbox runs (as
    // `docker commit` pauses a container).
    RETURN_IF_ERROR(PauseForExport(id));
    Status copied = os::CopyTreeExactly(upper, dest);
    Status resumed = ResumeAfterExport(id);
    RETURN_IF_ERROR(copied);
    return resumed;
  }
  if (!os::Exists(p.disk_image))
    return Status(Code::kConflict, "sandbox " + id + " has no writable layer any more");
  // Stopped with its disk kept: mounted only for the copy (the caller holds the sandbox).
  RETURN_IF_ERROR(os::MakeDirs(p.disk_mount, 0700));
  RETURN_IF_ERROR(os::MountLoopExt4(p.disk_image, p.disk_mount).WithContext("mounting the disk"));
  Status copied = os::Exists(upper) ? os::CopyTreeExactly(upper, dest) : os::MakeDirs(dest, 0755);
  Status unmounted = os::Unmount(p.disk_mount);
  RETURN_IF_ERROR(copied);
  return unmounted.WithContext("unmounting the disk after the copy");
}

}  // namespace adapt::runtime
