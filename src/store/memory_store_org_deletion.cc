// MemoryStore: the two steps of deleting an organization (org_store.h).
#include <algorithm>
#include <iterator>
#include <string>
#include <tuple>

#include "store/memory_store.h"

namespace adapt::store {
namespace {

template <typename Records>
void EraseOrgRecords(Records& records, const std::string& org_id) {
  records.erase(std::remove_if(records.begin(), records.end(),
                               [&](const auto& r) { return r.org_id == org_id; }),
                records.end());
}

template <typename Map, typename Owner>
void EraseOrgEntries(Map& map, Owner&& owned) {
  for (auto it = map.begin(); it != map.end();) it = owned(*it) ? map.erase(it) : std::next(it);
}

bool JobEnded(const std::string& status) {
  return status == "succeeded" || status == "failed" || status == "cancelled" ||
         status == "infrastructure_failed";
}

}  // namespace

Status MemoryStore::RefuseIfOrgDeletingLocked(const std::string& org_id) const {
  for (const auto& o : orgs_)
    if (o.id == org_id && o.deleting_at != 0)
      return Conflict("organization " + org_id + " is being deleted");
  return Status::Ok();
}

Status MemoryStore::CloseOrg(const std::string& org_id, int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto org =
      std::find_if(orgs_.begin(), orgs_.end(), [&](const OrgRecord& o) { return o.id == org_id; });
  if (org == orgs_.end()) return NotFound("organization " + org_id + " not found");
  if (org->is_admin) return Conflict("the admin organization cannot be deleted");
  auto of_org = [&](const auto& r) { return r.org_id == org_id; };
  size_t sandboxes = std::count_if(sandboxes_.begin(), sandboxes_.end(), [&](const auto& s) {
    return s.org_id == org_id && s.status != "deleted";
  });
  size_t apps = std::count_if(apps_.begin(), apps_.end(), of_org);
  size_t automations = std::count_if(automations_.begin(), automations_.end(), of_org);
  size_t jobs = std::count_if(jobs_.begin(), jobs_.end(), [&](const auto& j) {
    return j.org_id == org_id && !JobEnded(j.status);
  });
  if (sandboxes + apps + automations + jobs > 0)
    return Conflict("organization '" + org->name + "' still has " + std::to_string(sandboxes) +
                    " sandbox(es) not deleted, " + std::to_string(apps) + " app(s), " +
                    std::to_string(automations) + " automation(s) and " + std::to_string(jobs) +
                    " job(s) that have not ended; delete them first");
  EraseOrgEntries(oauth_grants_, [&](const auto& e) { return e.second.org_id == org_id; });
  EraseOrgEntries(dashboard_sessions_, [&](const auto& e) { return e.second.org_id == org_id; });
  EraseOrgRecords(keys_, org_id);
  EraseOrgRecords(users_, org_id);
  EraseOrgRecords(tokens_, org_id);
  if (org->deleting_at == 0) org->deleting_at = now;
  return Status::Ok();
}

Status MemoryStore::PurgeOrg(const std::string& org_id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto org =
      std::find_if(orgs_.begin(), orgs_.end(), [&](const OrgRecord& o) { return o.id == org_id; });
  if (org == orgs_.end() || org->deleting_at == 0)
    return NotFound("organization " + org_id + " is not being deleted");
  for (const auto& s : sandboxes_)
    if (s.org_id == org_id && s.status != "deleted")
      return Conflict("organization '" + org->name + "' has a sandbox not deleted");
  for (const auto& s : sandboxes_)
    if (s.org_id == org_id) networks_.erase(s.id);
  EraseOrgRecords(sandboxes_, org_id);
  EraseOrgEntries(idempotency_, [&](const auto& e) { return std::get<0>(e.first) == org_id; });
  EraseOrgRecords(events_, org_id);
  EraseOrgRecords(commands_, org_id);
  EraseOrgRecords(endpoints_, org_id);
  EraseOrgRecords(images_, org_id);
  EraseOrgRecords(volumes_, org_id);
  EraseOrgEntries(objects_, [&](const auto& e) { return e.first.first == org_id; });
  EraseOrgRecords(sites_, org_id);
  EraseOrgEntries(releases_, [&](const auto& e) { return e.second.org_id == org_id; });
  EraseOrgRecords(apps_, org_id);
  EraseOrgRecords(app_releases_, org_id);
  EraseOrgRecords(app_replicas_, org_id);
  EraseOrgRecords(app_troubles_, org_id);
  EraseOrgEntries(secrets_, [&](const auto& e) { return e.first.first == org_id; });
  databases_.erase(org_id);
  EraseOrgRecords(operations_, org_id);
  accounts_.erase(org_id);
  EraseOrgRecords(ledger_, org_id);
  EraseOrgRecords(jobs_, org_id);
  EraseOrgRecords(runs_, org_id);
  EraseOrgRecords(automations_, org_id);
  EraseOrgRecords(alerts_, org_id);
  EraseOrgRecords(limit_alerts_, org_id);
  EraseOrgEntries(limits_reached_, [&](const auto& e) { return std::get<0>(e) == org_id; });
  orgs_.erase(org);
  return Status::Ok();
}

}  // namespace adapt::store
