// MemoryStore: the users who sign in to organizations.
#include <algorithm>

#include "store/memory_store.h"

namespace adapt::store {

Status MemoryStore::CreateUser(const UserRecord& user) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  if (std::none_of(orgs_.begin(), orgs_.end(), [&](const auto& o) { return o.id == user.org_id; }))
    return NotFound("organization " + user.org_id + " not found");
  RETURN_IF_ERROR(RefuseIfOrgDeletingLocked(user.org_id));
  for (const auto& u : users_)
    if (u.email == user.email) return Conflict("a user with this email exists");
  users_.push_back(user);
  users_.back().seq = next_seq_++;
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
  orgs_.back().seq = next_seq_++;
  users_.push_back(user);
  users_.back().seq = next_seq_++;
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
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

Result<UserRecord> MemoryStore::GetUser(const std::string& id) {
  std::lock_guard lock(mu_);
  for (const auto& u : users_)
    if (u.id == id) return u;
  return NotFound("user '" + id + "' not found");
}

void MemoryStore::DropGrantsOfLocked(const std::string& key_id) {
  std::erase_if(oauth_grants_, [&](const auto& g) { return g.second.key_id == key_id; });
  std::erase_if(dashboard_sessions_, [&](const auto& s) { return s.second.key_id == key_id; });
}

Result<UserRecord> MemoryStore::DeleteUser(const std::string& id) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = std::find_if(users_.begin(), users_.end(), [&](const auto& u) { return u.id == id; });
  if (it == users_.end()) return NotFound("user '" + id + "' not found");
  UserRecord user = *it;
  if (std::count_if(users_.begin(), users_.end(),
                    [&](const auto& u) { return u.org_id == user.org_id; }) <= 1)
    return Conflict("user '" + id + "' is the last user of organization '" + user.org_id +
                    "', its owner; add another user first");
  users_.erase(it);
  DropGrantsOfLocked(id);
  return user;
}

Status MemoryStore::SetUserPassword(const std::string& id, const std::string& password_hash) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  for (auto& u : users_) {
    if (u.id != id) continue;
    u.password_hash = password_hash;
    DropGrantsOfLocked(id);
    return Status::Ok();
  }
  return NotFound("user '" + id + "' not found");
}

Status MemoryStore::CreateDashboardSession(const DashboardSessionRecord& s, int64_t max_open) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  bool exists =
      std::any_of(users_.begin(), users_.end(), [&](auto& u) { return u.id == s.key_id; }) ||
      std::any_of(keys_.begin(), keys_.end(), [&](auto& k) { return k.id == s.key_id; });
  if (!exists) return NotFound("'" + s.key_id + "' no longer exists");
  std::erase_if(dashboard_sessions_, [&](const auto& kv) {
    return kv.second.expires_at <= s.created_at || kv.second.revoked_at != 0;
  });
  // As SqliteStore: room is made, never refused (an organization at a tenth of the whole gives
  // up its oldest session; a full table, the organization holding the most).
  auto drop_oldest_of = [&](const std::string& org_id) {
    auto oldest = dashboard_sessions_.end();
    for (auto it = dashboard_sessions_.begin(); it != dashboard_sessions_.end(); ++it)
      if (it->second.org_id == org_id && (oldest == dashboard_sessions_.end() ||
                                          it->second.created_at < oldest->second.created_at))
        oldest = it;
    if (oldest != dashboard_sessions_.end()) dashboard_sessions_.erase(oldest);
  };
  std::map<std::string, int64_t> per_org;
  for (const auto& [_, open] : dashboard_sessions_) ++per_org[open.org_id];
  if (per_org[s.org_id] >= std::max<int64_t>(1, max_open / 10)) drop_oldest_of(s.org_id);
  if (static_cast<int64_t>(dashboard_sessions_.size()) >= max_open) {
    auto most = std::max_element(per_org.begin(), per_org.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most != per_org.end()) drop_oldest_of(most->first);
  }
  if (!dashboard_sessions_.emplace(s.token_hash, s).second)
    return Conflict("a dashboard session has this token");
  return Status::Ok();
}

Result<DashboardSessionRecord> MemoryStore::FindDashboardSession(const std::string& token_hash,
                                                                 int64_t now) {
  std::lock_guard lock(mu_);
  auto it = dashboard_sessions_.find(token_hash);
  if (it == dashboard_sessions_.end() || it->second.revoked_at != 0 || it->second.expires_at <= now)
    return NotFound("no such dashboard session");
  return it->second;
}

Status MemoryStore::RevokeDashboardSession(const std::string& token_hash, int64_t now) {
  std::lock_guard lock(mu_);
  if (auto fault = WriteFaultLocked()) return *fault;
  auto it = dashboard_sessions_.find(token_hash);
  if (it != dashboard_sessions_.end() && it->second.revoked_at == 0) it->second.revoked_at = now;
  return Status::Ok();
}

}  // namespace adapt::store
