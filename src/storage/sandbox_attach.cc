#include "storage/sandbox_attach.h"

#include "base/ids.h"
#include "base/time.h"

namespace adapt::storage {

Result<AttachResult> SandboxStorageAttacher::Attach(const std::string& org_id,
                                                    const std::string& sandbox_id,
                                                    int64_t ttl_seconds) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, store_.GetSandbox(org_id, sandbox_id));
  if (sandbox.status != "running" && sandbox.status != "provisioning")
    return Conflict("sandbox " + sandbox_id + " is " + sandbox.status +
                    "; object storage attaches to a provisioning or running sandbox");
  std::string host_address;
  ASSIGN_OR_RETURN(auto networks, store_.ListNetworks());
  for (const auto& n : networks) {
    if (n.sandbox_id == sandbox_id) host_address = n.data.value("hostAddress", "");
  }
  if (host_address.empty())
    return Conflict("sandbox " + sandbox_id +
                    " has no network, so it cannot reach the storage gateway");
  ASSIGN_OR_RETURN(auto token,
                   tokens_.Create(org_id, "sandbox " + sandbox_id, ttl_seconds, sandbox_id));
  AttachResult out;
  out.sandbox_id = sandbox_id;
  out.endpoint = "http://" + host_address + ":" + std::to_string(port_);
  out.token_id = token.record.id;
  out.expires_at = FormatRfc3339(token.record.expires_at);
  if (Status st = store_.SetSandboxEnv(
          org_id, sandbox_id,
          {{"SANDBOX_STORAGE_ENDPOINT", out.endpoint}, {"SANDBOX_STORAGE_TOKEN", token.token}});
      !st.ok()) {
    (void)tokens_.Revoke(org_id, token.record.id);
    return st;
  }
  // One live token per sandbox: the ones it had before stop working now.
  if (auto all = tokens_.List(org_id); all.ok()) {
    for (const auto& t : *all) {
      if (t.sandbox_id == sandbox_id && t.id != token.record.id && t.revoked_at == 0)
        (void)tokens_.Revoke(org_id, t.id);
    }
  }
  if (restart_ && sandbox.status == "running") {
    ASSIGN_OR_RETURN(out.restarted, restart_(org_id, sandbox_id));
  }
  return out;
}

}  // namespace adapt::storage
