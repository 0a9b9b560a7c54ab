// Copying a sandbox workspace file into object storage (save_workspace_file_to_object_storage,
// download_workspace_artifact): path rules, a bound on size, a content type from the name,
// and a refusal of files that look like secrets (private keys, tokens, credential files),
// judged by name and by content as it streams.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace adapt::storage {

constexpr uint64_t kMaxWorkspaceCopyBytes = 100ull << 20;  // 100 MiB

// "/workspace/<p>" for a relative path; an absolute path must be under /workspace. No "..".
Result<std::string> WorkspacePath(const std::string& workspace_path);
// The per-sandbox artifact prefix: "artifacts/<sandbox id>/".
std::string ArtifactPrefix(const std::string& sandbox_id);
// A content type for the file name's extension; application/octet-stream when unknown.
std::string ContentTypeFor(std::string_view name);
// True for names credentials are kept in (id_rsa, .env, *.pem, .ssh/, .aws/credentials...).
bool LooksLikeSecretPath(std::string_view path);
// The rules above applied to the file a copy actually opened: `opened` is the path the
// sandbox's kernel gives it (symlinks resolved; a " (deleted)" suffix is judged without
// itself), `requested` the WorkspacePath asked for, which the error names. InvalidArgument
// (workspace_path) when it lies outside /workspace or looks like a credential; Internal when
// `opened` is empty (the sandbox did not say).
Status CheckOpenedWorkspaceFile(const std::string& requested, const std::string& opened);

// Scans a stream for secret markers across chunk boundaries.
class SecretScanner {
 public:
  // False once a marker was seen (in this chunk or before).
  bool Feed(const char* data, size_t n);
  bool found() const { return found_; }

 private:
  std::string tail_;
  bool found_ = false;
};

}  // namespace adapt::storage
