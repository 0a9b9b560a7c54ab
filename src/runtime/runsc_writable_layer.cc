// RunscRuntime::ExportWritableLayer: a sandbox's writable layer copied out for a commit.
#include "base/ignore_error.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/process.h"
#include "os/tree_copy.h"
#include "runtime/oci_spec.h"
#include "runtime/rootfs.h"
#include "runtime/runsc_runtime.h"

namespace adapt::runtime {

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
    return os::CopyTreeExactly(upper, dest);
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
