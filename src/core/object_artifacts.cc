// A sandbox's artifacts (ObjectService): objects under artifacts/<sandbox id>/, and copies of
// workspace files into object storage, refused by name or by content when they look like
// credentials (storage/workspace_copy.h's rules), so that a link never hands out a secret. The
// name rules apply both to the path asked for and to the file the sandbox opened for it.
#include "base/ids.h"
#include "core/object_service.h"
#include "storage/object_key.h"
#include "storage/workspace_copy.h"

namespace adapt::core {

Status ObjectService::CheckSandbox(const Principal& who, const std::string& sandbox_id) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  return sandbox_records_.GetSandbox(who.org_id, sandbox_id).status();
}

Result<SandboxArtifacts> ObjectService::ListArtifacts(const Principal& who,
                                                      const std::string& sandbox_id,
                                                      const PageRequest& page) {
  RETURN_IF_ERROR(CheckSandbox(who, sandbox_id));
  SandboxArtifacts out;
  out.sandbox_id = sandbox_id;
  out.prefix = storage::ArtifactPrefix(sandbox_id);
  ASSIGN_OR_RETURN(ObjectPage listed, List(who, {out.prefix, "", page}));
  out.items = std::move(listed.items);
  out.next_cursor = std::move(listed.next_cursor);
  return out;
}

Result<ObjectText> ObjectService::ReadArtifactText(const Principal& who,
                                                   const std::string& sandbox_id,
                                                   const std::string& name, size_t max_bytes) {
  RETURN_IF_ERROR(CheckSandbox(who, sandbox_id));
  std::string prefix = storage::ArtifactPrefix(sandbox_id);
  return ReadText(who, name.rfind(prefix, 0) == 0 ? name : prefix + name, max_bytes);
}

Result<store::ObjectRecord> ObjectService::CopyFromWorkspace(const Principal& who,
                                                             const CopyWorkspaceFile& request) {
  ASSIGN_OR_RETURN(std::string path, storage::WorkspacePath(request.workspace_path));
  if (storage::LooksLikeSecretPath(path))
    return InvalidArgument("workspace_path", path +
                                                 " looks like a credential file (keys, tokens, "
                                                 ".env); it is not copied to object storage");
  std::string key = request.key;
  if (key.empty())
    key = storage::ArtifactPrefix(request.sandbox_id) +
          request.workspace_path.substr(request.workspace_path.rfind('/') + 1);
  RETURN_IF_ERROR(storage::ValidateObjectKey(key));
  // The name rules again, on the file the sandbox actually opened: a symlink (or a link in a
  // parent directory) must not carry the copy out of /workspace or onto a credential. The
  // path comes from the descriptor the bytes are read from, so swapping the link afterwards
  // changes nothing; a refusal here drops the reader, which stops the read.
  ASSIGN_OR_RETURN(auto reader,
                   files_.Download(who, request.sandbox_id, path, ReportOpenedPath::kYes));
  RETURN_IF_ERROR(storage::CheckOpenedWorkspaceFile(path, reader->opened_path()));
  if (reader->size() && *reader->size() > storage::kMaxWorkspaceCopyBytes)
    return Status(Code::kPayloadTooLarge, path + " is larger than 100 MiB");
  storage::SecretScanner scanner;
  uint64_t total = 0;
  bool too_big = false;
  auto record = objects_.Put(who.org_id, key, storage::ContentTypeFor(path),
                             [&](char* buf, size_t n) -> long {
                               long got = reader->Read(buf, n);
                               if (got <= 0) return got;
                               total += static_cast<uint64_t>(got);
                               if (total > storage::kMaxWorkspaceCopyBytes) {
                                 too_big = true;
                                 return -1;
                               }
                               if (!scanner.Feed(buf, static_cast<size_t>(got))) return -1;
                               return got;
                             });
  if (scanner.found())
    return InvalidArgument("workspace_path", path +
                                                 " looks like it holds a secret (a private key or "
                                                 "token); it is not copied to object storage");
  if (too_big) return Status(Code::kPayloadTooLarge, path + " is larger than 100 MiB");
  RETURN_IF_ERROR(reader->Finish());
  return record;
}

}  // namespace adapt::core
