#include "net/database_session_count.h"

namespace adapt::net {

DatabaseSessionCount::Admission DatabaseSessionCount::Admit(const std::string& database,
                                                            int64_t connection_limit) {
  const int64_t of_database = open(database);
  // The database's own cap first: a tenant at its limit is told about its limit, not the
  // server's.
  if (connection_limit > 0 && of_database >= connection_limit + kSessionMargin)
    return Admission::kDatabaseFull;
  if (server_limit_ > 0 && open_ >= server_limit_) return Admission::kServerFull;
  ++by_database_[database];
  ++open_;
  return Admission::kAdmitted;
}

void DatabaseSessionCount::Release(const std::string& database) {
  auto it = by_database_.find(database);
  if (it == by_database_.end()) return;
  if (--it->second <= 0) by_database_.erase(it);
  --open_;
}

int64_t DatabaseSessionCount::open(const std::string& database) const {
  auto it = by_database_.find(database);
  return it == by_database_.end() ? 0 : it->second;
}

}  // namespace adapt::net
