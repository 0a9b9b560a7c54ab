// StorageFiles: reading a file of an organization's persistent storage from the host, without
// a sandbox: read_workspace_file and GET /v1/storage/{name}/files, also while no sandbox that
// mounts it runs (seed 000: "Read a UTF-8 artifact from the user's persistent workspace").
//
// The tree is the tenant's (a sandbox's root writes it), so adaptd opens it as it opens an
// image's: every component, symlinks included, resolves inside the volume's workspace directory
// as if it were "/" (os/file_in_root.h), so "notes -> /etc/shadow" names the volume's own
// etc/shadow, never the host's; only a regular file is read, a FIFO or device is refused
// without blocking. Paths: relative to /workspace, or absolute under /workspace.
// Errors: 404 no such storage (another organization's included) or file, 400 a path outside
// /workspace / not a regular file / not text, 413 over `max_bytes`. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/auth.h"
#include "core/file_service.h"

namespace adapt::core {

class StorageFiles {
 public:
  // The host directory of an organization's volume `name` that sandboxes see at /workspace,
  // opened (mounted, its key added) when it is not: storage::VolumeService::Attach.
  using WorkspaceOf =
      std::function<Result<std::string>(const std::string& org_id, const std::string& name)>;
  explicit StorageFiles(WorkspaceOf workspace_of) : workspace_of_(std::move(workspace_of)) {}

  // The file `path` of storage `name`, to be read to its end (its size is known at open).
  Result<std::unique_ptr<FileReader>> Open(const Principal& who, const std::string& name,
                                           const std::string& path) const;
  // Its UTF-8 text, at most `max_bytes` bytes: 400 for binary (NUL) or invalid UTF-8.
  Result<std::string> ReadText(const Principal& who, const std::string& name,
                               const std::string& path, size_t max_bytes) const;

 private:
  WorkspaceOf workspace_of_;
};

// The path inside the workspace that `path` names ("a/b" for "a/b" or "/workspace/a/b"); 400
// naming `field` for an absolute path outside /workspace.
Result<std::string> PathInWorkspace(const std::string& path, const std::string& field = "path");

}  // namespace adapt::core
