// MemoryStore: organizations' PostgreSQL databases (database_store.h).
#include "store/memory_store.h"

namespace adapt::store {

Status MemoryStore::PutDatabase(const DatabaseRecord& d) {
  std::lock_guard lock(mu_);
  DatabaseRecord row = d;
  if (auto it = databases_.find(d.org_id); it != databases_.end()) {
    row.created_at = it->second.created_at;
  } else {
    RETURN_IF_ERROR(RefuseIfOrgDeletingLocked(d.org_id));
  }
  databases_[d.org_id] = row;
  return Status::Ok();
}

Result<DatabaseRecord> MemoryStore::GetDatabase(const std::string& org_id) {
  std::lock_guard lock(mu_);
  auto it = databases_.find(org_id);
  if (it == databases_.end()) return NotFound("the organization has no database yet");
  return it->second;
}

Result<std::vector<DatabaseRecord>> MemoryStore::ListDatabases() {
  std::lock_guard lock(mu_);
  std::vector<DatabaseRecord> out;
  for (const auto& [_, d] : databases_) out.push_back(d);
  return out;
}

Status MemoryStore::DeleteDatabase(const std::string& org_id) {
  std::lock_guard lock(mu_);
  if (databases_.erase(org_id) == 0) return NotFound("the organization has no database");
  return Status::Ok();
}

}  // namespace adapt::store
