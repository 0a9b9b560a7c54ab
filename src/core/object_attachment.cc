// Attaching object storage to a sandbox (ObjectService::AttachToSandbox): a storage-only
// token from storage::StorageTokens, the sandbox's environment edited here in the core, and a
// running sandbox restarted once through SandboxService so that its init process sees it.
#include "base/ids.h"
#include "core/object_service.h"

namespace adapt::core {

Result<ObjectStorageAttachment> ObjectService::AttachToSandbox(const Principal& who,
                                                               const std::string& sandbox_id,
                                                               int64_t ttl_seconds) {
  if (ttl_seconds < 1 || ttl_seconds > storage::kMaxTokenTtlSeconds)
    return InvalidArgument("ttl_seconds", "ttl_seconds must be an integer 1.." +
                                              std::to_string(storage::kMaxTokenTtlSeconds));
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  const std::string& org_id = who.org_id;
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, sandbox_records_.GetSandbox(org_id, sandbox_id));
  // A stopped sandbox keeps its network (and so its gateway address) until it is deleted: it
  // gets the variables without a restart, its commands see them once it is started again.
  if (sandbox.status != "running" && sandbox.status != "provisioning" &&
      sandbox.status != "hibernated")
    return Conflict("sandbox " + sandbox_id + " is " + sandbox.status +
                    "; object storage attaches to a provisioning, running or stopped sandbox");
  std::string host_address;
  ASSIGN_OR_RETURN(auto networks, networks_.ListNetworks());
  for (const auto& n : networks) {
    if (n.sandbox_id == sandbox_id) host_address = n.host_address;
  }
  if (host_address.empty())
    return Conflict("sandbox " + sandbox_id +
                    " has no network, so it cannot reach the storage gateway");
  ASSIGN_OR_RETURN(auto token,
                   tokens_.Create(org_id, "sandbox " + sandbox_id, ttl_seconds, sandbox_id));
  ObjectStorageAttachment out;
  out.sandbox_id = sandbox_id;
  out.endpoint = "http://" + host_address + ":" + std::to_string(gateway_port_);
  out.token_id = token.record.id;
  out.expires_at_ms = token.record.expires_at;
  if (Status st = sandbox_records_.SetSandboxEnv(
          org_id, sandbox_id,
          {{kStorageEndpointVariable, out.endpoint}, {kStorageTokenVariable, token.token}});
      !st.ok()) {
    (void)tokens_.Revoke(org_id, token.record.id);  // the token was never handed out
    return st;
  }
  // One live token per sandbox: the ones it had before stop working now. A revocation that
  // fails leaves a token that still expires on its own.
  if (auto all = tokens_.List(org_id); all.ok()) {
    for (const auto& t : *all) {
      if (t.sandbox_id == sandbox_id && t.id != token.record.id && t.revoked_at == 0)
        (void)tokens_.Revoke(org_id, t.id);
    }
  }
  if (sandbox.status == "running") {
    ASSIGN_OR_RETURN(out.restarted, sandboxes_.Restart(org_id, sandbox_id));
  }
  return out;
}

}  // namespace adapt::core
