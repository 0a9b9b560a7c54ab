// MCP sessions of the Streamable HTTP transport: issued at initialize (a random id), bound
// to the organization that initialized them, ended by DELETE or after an hour unused. Also
// tracks each session's calls in flight so notifications/cancelled can stop them. In memory:
// a restarted adaptd answers 404 and the client initializes again, as the spec intends.
// Bounded per organization: an organization past its cap loses its own least recently used
// session, never another's; the total cap is a backstop that takes from the organization
// holding the most. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mcp/cancel_signal.h"

namespace adapt::mcp {

class SessionStore {
 public:
  static constexpr std::chrono::minutes kIdleLimit{60};
  static constexpr size_t kMaxSessionsPerOrg = 1000;
  static constexpr size_t kMaxSessions = 10000;

  explicit SessionStore(size_t max_per_org = kMaxSessionsPerOrg, size_t max_total = kMaxSessions);

  std::string Create(const std::string& org_id, const std::string& protocol_version);
  // The session's protocol version; nullopt when it is unknown, expired or another
  // organization's. Counts as use.
  std::optional<std::string> Touch(const std::string& id, const std::string& org_id);
  bool End(const std::string& id, const std::string& org_id);

  // Registers the call `request_key` (the JSON of its id) and returns its cancel signal.
  std::shared_ptr<CancelSignal> BeginCall(const std::string& id, const std::string& request_key);
  void EndCall(const std::string& id, const std::string& request_key);
  // Sets the cancel signal of a call in flight; unknown calls are ignored, as the spec says.
  void Cancel(const std::string& id, const std::string& request_key);

 private:
  struct Session {
    std::string org_id;
    std::string protocol_version;
    std::chrono::steady_clock::time_point last_used;
    std::map<std::string, std::shared_ptr<CancelSignal>> calls;
  };
  void DropExpiredLocked();
  // Forgets the least recently used session of `org_id`.
  void EvictLocked(const std::string& org_id);
  void EraseLocked(std::map<std::string, Session>::iterator it);

  const size_t max_per_org_;
  const size_t max_total_;
  std::mutex mu_;
  std::map<std::string, Session> sessions_;
  std::map<std::string, size_t> per_org_;  // sessions held by each organization
};

}  // namespace adapt::mcp
