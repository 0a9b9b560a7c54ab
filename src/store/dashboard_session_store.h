// DashboardSessionStore: the web dashboard's sign-in sessions, kept so that they outlive an
// adaptd restart. Only the SHA-256 of a session's token is stored. A session ends when it
// expires, when it is revoked (sign-out), and with its user or API key: deleting either, or
// changing the user's password, deletes its sessions in the same transaction. One domain of
// Store (store/store.h). Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class DashboardSessionStore {
 public:
  virtual ~DashboardSessionStore() = default;

  // Deletes the expired and revoked sessions, then stores `s`. ResourceExhausted when
  // `max_open` sessions are still open; NotFound when its user or API key (`s.key_id`) is gone.
  virtual Status CreateDashboardSession(const DashboardSessionRecord& s, int64_t max_open) = 0;
  // NotFound unless a session has this hash, unrevoked and unexpired at `now`.
  virtual Result<DashboardSessionRecord> FindDashboardSession(const std::string& token_hash,
                                                              int64_t now) = 0;
  // Marks the session revoked at `now`; an unknown or revoked one: nothing.
  virtual Status RevokeDashboardSession(const std::string& token_hash, int64_t now) = 0;
};

}  // namespace adapt::store
