// attach_sandbox_object_storage: gives a sandbox an expiring, storage-only token and the
// gateway's address at the sandbox's gateway (the host end of its veth) as
// SANDBOX_STORAGE_ENDPOINT and SANDBOX_STORAGE_TOKEN in its environment. The sandbox record
// keeps them (commands started afterwards get them); the previous token of the sandbox is
// revoked. A running sandbox restarts once (the restart hook: stop without a checkpoint, then
// start) so that its first process sees them too.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "storage/storage_tokens.h"
#include "store/store.h"

namespace adapt::storage {

struct AttachResult {
  std::string sandbox_id;
  std::string endpoint;
  std::string token_id;
  std::string expires_at;  // RFC 3339
  bool restarted = false;
};

class SandboxStorageAttacher {
 public:
  SandboxStorageAttacher(store::Store& store, StorageTokens& tokens)
      : store_(store), tokens_(tokens) {}
  void SetGatewayPort(uint16_t port) { port_ = port; }
  // Restarts a running sandbox once so its init process picks the new environment up.
  // Returns whether it restarted.
  void SetRestartHook(
      std::function<Result<bool>(const std::string& org_id, const std::string& sandbox_id)> hook) {
    restart_ = std::move(hook);
  }
  Result<AttachResult> Attach(const std::string& org_id, const std::string& sandbox_id,
                              int64_t ttl_seconds);

 private:
  store::Store& store_;
  StorageTokens& tokens_;
  uint16_t port_ = 0;
  std::function<Result<bool>(const std::string&, const std::string&)> restart_;
};

}  // namespace adapt::storage
