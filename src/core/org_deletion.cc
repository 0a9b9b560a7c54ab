#include "core/org_deletion.h"

#include "base/fault_point.h"
#include "base/log.h"
#include "base/time.h"

namespace adapt::core {
namespace {

// A part already gone (a repeat, or a crash after it went) is not a failure.
Status GoneIsDone(Status st) { return st.code() == Code::kNotFound ? Status::Ok() : st; }

}  // namespace

Status OrgDeletion::Delete(const Principal& who, const std::string& org_id,
                           const std::string& confirm) {
  if (!who.is_admin) return Status(Code::kPermissionDenied, "this action needs the admin key");
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(store::OrgRecord org, store_.GetOrg(org_id));
  if (confirm != org.name)
    return InvalidArgument("confirm", "deleting organization '" + org.name +
                                          "' is permanent: set confirm to exactly its name");
  RETURN_IF_ERROR(store_.CloseOrg(org_id, NowMillis()));
  spdlog::info("organization {}: deleting '{}'", org_id, org.name);
  ADAPT_FAULT_POINT("org.delete.after_close");
  return Finish(org_id).WithContext("deleting organization '" + org.name +
                                    "' (it is closed; repeat the delete to finish)");
}

void OrgDeletion::Resume() {
  auto orgs = store_.ListOrgs();
  if (!orgs.ok()) {
    spdlog::error("organizations: finishing deletions: {}", orgs.status().message());
    return;
  }
  std::lock_guard lock(mu_);
  for (const auto& org : *orgs) {
    if (org.deleting_at == 0) continue;
    Status st = Finish(org.id);
    if (!st.ok())
      spdlog::error("organization {}: finishing its deletion: {}", org.id, st.message());
  }
}

Status OrgDeletion::Finish(const std::string& org_id) {
  RETURN_IF_ERROR(DeleteSites(org_id));
  RETURN_IF_ERROR(DeleteObjects(org_id));
  ADAPT_FAULT_POINT("org.delete.after_objects");
  RETURN_IF_ERROR(volumes_.DeleteAllOf(org_id));
  RETURN_IF_ERROR(DeleteCheckpoints(org_id));
  Principal org{org_id, "", false, true};
  RETURN_IF_ERROR(GoneIsDone(databases_.Delete(org, org_id)));
  RETURN_IF_ERROR(GoneIsDone(store_.PurgeOrg(org_id)));
  // Its image records went with its rows; what only they used goes now.
  images_.CollectGarbage();
  spdlog::info("organization {}: deleted", org_id);
  return Status::Ok();
}

Status OrgDeletion::DeleteSites(const std::string& org_id) {
  ASSIGN_OR_RETURN(auto sites, store_.ListSites(org_id));
  for (const auto& s : sites) RETURN_IF_ERROR(GoneIsDone(sites_.Delete(org_id, s.id)));
  return Status::Ok();
}

Status OrgDeletion::DeleteCheckpoints(const std::string& org_id) {
  Principal org{org_id, "", false, true};
  ListCheckpointsRequest first;
  first.limit = kMaxPageLimit;
  // Always the first page: what was deleted is listed no more.
  for (;;) {
    ASSIGN_OR_RETURN(CheckpointPage page, checkpoints_.ListOrganization(org, first));
    if (page.items.empty()) return Status::Ok();
    for (const auto& c : page.items)
      RETURN_IF_ERROR(GoneIsDone(checkpoints_.Delete(org, c.sandbox_id, c.name))
                          .WithContext("deleting checkpoint " + c.name + " of " + c.sandbox_id));
  }
}

Status OrgDeletion::DeleteObjects(const std::string& org_id) {
  // Past the last key seen, so that a key that cannot be deleted is not listed again forever.
  std::string after;
  for (;;) {
    ASSIGN_OR_RETURN(auto page, objects_.List(org_id, "", "", after, storage::kMaxListLimit));
    if (page.objects.empty()) return Status::Ok();
    for (const auto& o : page.objects) RETURN_IF_ERROR(GoneIsDone(objects_.Delete(org_id, o.key)));
    after = page.objects.back().key;
  }
}

}  // namespace adapt::core
