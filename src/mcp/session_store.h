// MCP sessions of the Streamable HTTP transport: issued at initialize (a random id), bound
// to the organization that initialized them, ended by DELETE or after an hour unused. Also
// tracks each session's calls in flight so notifications/cancelled can stop them. In memory:
// a restarted adaptd answers 404 and the client initializes again, as the spec intends.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace adapt::mcp {

class SessionStore {
 public:
  static constexpr std::chrono::minutes kIdleLimit{60};
  static constexpr size_t kMaxSessions = 10000;

  std::string Create(const std::string& org_id, const std::string& protocol_version);
  // The session's protocol version; nullopt when it is unknown, expired or another
  // organization's. Counts as use.
  std::optional<std::string> Touch(const std::string& id, const std::string& org_id);
  bool End(const std::string& id, const std::string& org_id);

  // Registers the call `request_key` (the JSON of its id) and returns its cancel flag.
  std::shared_ptr<std::atomic<bool>> BeginCall(const std::string& id,
                                               const std::string& request_key);
  void EndCall(const std::string& id, const std::string& request_key);
  // Sets the cancel flag of a call in flight; unknown calls are ignored, as the spec says.
  void Cancel(const std::string& id, const std::string& request_key);

 private:
  struct Session {
    std::string org_id;
    std::string protocol_version;
    std::chrono::steady_clock::time_point last_used;
    std::map<std::string, std::shared_ptr<std::atomic<bool>>> calls;
  };
  void DropExpiredLocked();

  std::mutex mu_;
  std::map<std::string, Session> sessions_;
};

}  // namespace adapt::mcp
