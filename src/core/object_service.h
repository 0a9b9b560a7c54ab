// Object storage as core verbs: each organization's private objects (list, read as text,
// write, delete), temporary signed download links, a sandbox's artifacts (copies of its
// workspace files, refused when they look like secrets) and attaching the storage gateway to
// a sandbox. REST (api/object_routes.cc), MCP (mcp/object_tools.cc) and the CLI (through
// REST) translate into these; the S3 gateway speaks to storage::ObjectStore itself.
// Thread-safe: every verb may run on any worker.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/list_cursor.h"
#include "base/status.h"
#include "core/auth.h"
#include "core/file_service.h"
#include "core/sandbox_service.h"
#include "os/durable_file.h"
#include "storage/object_store.h"
#include "storage/storage_tokens.h"
#include "store/network_store.h"
#include "store/sandbox_store.h"

namespace adapt::core {

// A page of the organization's objects. Unlike the other lists, in key order (S3's, and the
// only order in which a delimiter's roll-up into directories is a page at a time); the cursor
// is a key cursor (base/list_cursor.h), so objects written between pages after the cursor's
// key appear on a later page and none is repeated or skipped.
struct ListObjects {
  std::string prefix;
  std::string delimiter;  // "/": keys sharing a "/"-ended part after the prefix roll up
  PageRequest page;       // limit 1..200 (objects and directories together)
};

struct ObjectPage {
  std::vector<store::ObjectRecord> items;
  std::vector<std::string> common_prefixes;  // the directories, with a delimiter
  std::optional<std::string> next_cursor;
};

// The organization's use of its object storage quota.
struct ObjectUsage {
  uint64_t used_bytes = 0;
  uint64_t quota_bytes = 0;  // 0: no limit
};

struct ObjectText {
  std::string key;
  std::string text;  // UTF-8, whole
};

struct DownloadLink {
  store::ObjectRecord object;
  std::string name;  // the last segment of the key
  std::string url;   // <base>/v1/objects/download?<signed query>
  int64_t expires_at_ms = 0;
};

struct MakeDownloadLink {
  std::string key;
  int64_t ttl_seconds = storage::kDefaultUrlTtlSeconds;  // 1..kMaxUrlTtlSeconds
  // The origin the link is reached at ("http://host:port"); empty: the API's own address.
  std::string base_url;
};

// What a signed download link carries (its query parameters).
struct SignedDownload {
  std::string org_id;
  std::string key;
  int64_t expires_at = 0;  // seconds since the epoch
  std::string signature;
};

// Copies one workspace file of a running sandbox into object storage.
struct CopyWorkspaceFile {
  std::string sandbox_id;
  std::string workspace_path;  // relative to /workspace, or an absolute /workspace path
  std::string key;             // empty: artifacts/<sandbox id>/<file name>
};

struct SandboxArtifacts {
  std::string sandbox_id;
  std::string prefix;  // artifacts/<sandbox id>/
  // One page in key order, as /v1/objects pages (ListObjects): key cursors.
  std::vector<store::ObjectRecord> items;
  std::optional<std::string> next_cursor;  // unset on the last page
};

struct ObjectStorageAttachment {
  std::string sandbox_id;
  std::string endpoint;  // SANDBOX_STORAGE_ENDPOINT
  std::string token_id;
  int64_t expires_at_ms = 0;
  bool restarted = false;  // a running sandbox restarts once so that its first process sees them
};

// The environment variables an attachment sets.
constexpr const char* kStorageEndpointVariable = "SANDBOX_STORAGE_ENDPOINT";
constexpr const char* kStorageTokenVariable = "SANDBOX_STORAGE_TOKEN";

class ObjectService {
 public:
  ObjectService(store::SandboxStore& sandbox_records, store::NetworkStore& networks,
                storage::ObjectStore& objects, storage::StorageTokens& tokens, FileService& files,
                SandboxService& sandboxes);
  // Set once their listeners are up, before any verb runs.
  void SetGatewayPort(uint16_t port) { gateway_port_ = port; }
  void SetApiBase(std::string base_url) { api_base_ = std::move(base_url); }

  // InvalidArgument for a bad limit or cursor.
  Result<ObjectPage> List(const Principal& who, const ListObjects& request);
  Result<ObjectUsage> Usage(const Principal& who);
  Result<store::ObjectRecord> Head(const Principal& who, const std::string& key);
  Result<std::pair<store::ObjectRecord, std::unique_ptr<os::FileReader>>> Open(
      const Principal& who, const std::string& key);
  Result<store::ObjectRecord> Put(const Principal& who, const std::string& key,
                                  const std::string& content_type,
                                  const storage::ObjectSource& source);
  Status Delete(const Principal& who, const std::string& key);
  // The whole object as text: PayloadTooLarge past `max_bytes`, InvalidArgument (key) when it
  // is not UTF-8 text.
  Result<ObjectText> ReadText(const Principal& who, const std::string& key, size_t max_bytes);
  // A read-only link to exactly one existing object, until it expires.
  Result<DownloadLink> Link(const Principal& who, const MakeDownloadLink& request);

  // The object a signed link names: Unauthenticated when the signature is wrong,
  // PermissionDenied when it expired.
  Result<std::pair<store::ObjectRecord, std::unique_ptr<os::FileReader>>> OpenByLink(
      const SignedDownload& link);

  // One page of the objects under artifacts/<sandbox id>/, for a sandbox of the caller's.
  // InvalidArgument for a bad limit or cursor; NotFound for another organization's sandbox.
  Result<SandboxArtifacts> ListArtifacts(const Principal& who, const std::string& sandbox_id,
                                         const PageRequest& page = {});
  // An artifact's text: `name` relative to artifacts/<sandbox id>/, or its full key.
  Result<ObjectText> ReadArtifactText(const Principal& who, const std::string& sandbox_id,
                                      const std::string& name, size_t max_bytes);
  // Refused (InvalidArgument, workspace_path) when the path or content looks like a
  // credential; PayloadTooLarge past 100 MiB. Nothing is stored when refused.
  Result<store::ObjectRecord> CopyFromWorkspace(const Principal& who,
                                                const CopyWorkspaceFile& request);

  // Gives a provisioning, running or stopped (hibernated) sandbox an expiring, storage-only
  // token and the gateway's address (at the host end of its veth) in its environment; the
  // sandbox's earlier tokens are revoked. A running one restarts once; a stopped one does not
  // (its commands see them after its start; processes restored from its checkpoint keep the
  // environment they had). Conflict when it is in another state or has no network.
  Result<ObjectStorageAttachment> AttachToSandbox(const Principal& who,
                                                  const std::string& sandbox_id,
                                                  int64_t ttl_seconds);

 private:
  Status CheckSandbox(const Principal& who, const std::string& sandbox_id);

  store::SandboxStore& sandbox_records_;
  store::NetworkStore& networks_;
  storage::ObjectStore& objects_;
  storage::StorageTokens& tokens_;
  FileService& files_;
  SandboxService& sandboxes_;
  uint16_t gateway_port_ = 0;
  std::string api_base_;
};

}  // namespace adapt::core
