// OAuthStore: OAuth 2.1 clients and grants (MCP authorization). One domain of Store
// (store/store.h): a service that needs only this domain depends on this interface, and a test can
// give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class OAuthStore {
 public:
  virtual ~OAuthStore() = default;

  virtual Status CreateOAuthClient(const OAuthClientRecord& client) = 0;
  virtual Result<OAuthClientRecord> GetOAuthClient(const std::string& id) = 0;
  // Deletes the clients registered before `registered_before` that hold no code or token
  // unexpired at `now` (never authorized, or long unused), and expired grants; returns how
  // many clients remain.
  virtual Result<int64_t> PruneOAuthClients(int64_t registered_before, int64_t now) = 0;
  // With `max_clients_of_org` (0: no cap), in the same transaction: the grants of the
  // organization's other clients beyond the max_clients_of_org - 1 it granted most recently
  // are deleted, so that one organization authorizing many clients cannot keep them all
  // registered (PruneOAuthClients keeps a client with a grant).
  virtual Status PutOAuthGrant(const OAuthGrantRecord& grant, size_t max_clients_of_org = 0) = 0;
  // NotFound when no unexpired grant of `kind` has this hash.
  virtual Result<OAuthGrantRecord> FindOAuthGrant(const std::string& hash, const std::string& kind,
                                                  int64_t now) = 0;
  // Like Find, and deletes it in the same transaction: codes and refresh tokens are single-use.
  virtual Result<OAuthGrantRecord> TakeOAuthGrant(const std::string& hash, const std::string& kind,
                                                  int64_t now) = 0;
};

}  // namespace adapt::store
