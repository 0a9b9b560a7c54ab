// MemoryStore: the users who sign in to organizations.
#include <algorithm>

#include "store/memory_store.h"

namespace adapt::store {

Status MemoryStore::CreateUser(const UserRecord& user) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::none_of(orgs_.begin(), orgs_.end(), [&](const auto& o) { return o.id == user.org_id; }))
    return NotFound("organization " + user.org_id + " not found");
  for (const auto& u : users_)
    if (u.email == user.email) return Conflict("a user with this email exists");
  users_.push_back(user);
  return Status::Ok();
}

Status MemoryStore::CreateOrgWithUser(const OrgRecord& org, const UserRecord& user) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (const auto& o : orgs_)
    if (o.name == org.name) return Conflict("an organization named '" + org.name + "' exists");
  for (const auto& u : users_)
    if (u.email == user.email) return Conflict("a user with this email exists");
  orgs_.push_back(org);
  users_.push_back(user);
  return Status::Ok();
}

Result<UserRecord> MemoryStore::FindUserByEmail(const std::string& email) {
  std::lock_guard lock(mu_);
  for (const auto& u : users_)
    if (u.email == email) return u;
  return NotFound("no user with this email");
}

Result<std::vector<UserRecord>> MemoryStore::ListUsers(const std::string& org_id) {
  std::lock_guard lock(mu_);
  std::vector<UserRecord> out;
  for (const auto& u : users_)
    if (org_id.empty() || u.org_id == org_id) out.push_back(u);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
  });
  return out;
}

}  // namespace adapt::store
