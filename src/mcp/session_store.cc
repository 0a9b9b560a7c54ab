#include "mcp/session_store.h"

#include "base/ids.h"

namespace adapt::mcp {

std::string SessionStore::Create(const std::string& org_id, const std::string& protocol_version) {
  std::lock_guard lock(mu_);
  DropExpiredLocked();
  if (sessions_.size() >= kMaxSessions) {
    // Forget the least recently used session rather than refuse new clients.
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
      if (it->second.last_used < oldest->second.last_used) oldest = it;
    sessions_.erase(oldest);
  }
  std::string id = RandomToken(24);
  sessions_[id] = Session{org_id, protocol_version, std::chrono::steady_clock::now(), {}};
  return id;
}

std::optional<std::string> SessionStore::Touch(const std::string& id, const std::string& org_id) {
  std::lock_guard lock(mu_);
  DropExpiredLocked();
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.org_id != org_id) return std::nullopt;
  it->second.last_used = std::chrono::steady_clock::now();
  return it->second.protocol_version;
}

bool SessionStore::End(const std::string& id, const std::string& org_id) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.org_id != org_id) return false;
  for (auto& [_, flag] : it->second.calls) flag->store(true);
  sessions_.erase(it);
  return true;
}

std::shared_ptr<std::atomic<bool>> SessionStore::BeginCall(const std::string& id,
                                                           const std::string& request_key) {
  auto flag = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it != sessions_.end()) it->second.calls[request_key] = flag;
  return flag;
}

void SessionStore::EndCall(const std::string& id, const std::string& request_key) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it != sessions_.end()) it->second.calls.erase(request_key);
}

void SessionStore::Cancel(const std::string& id, const std::string& request_key) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto call = it->second.calls.find(request_key);
  if (call != it->second.calls.end()) call->second->store(true);
}

void SessionStore::DropExpiredLocked() {
  auto now = std::chrono::steady_clock::now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > kIdleLimit && it->second.calls.empty())
      it = sessions_.erase(it);
    else
      ++it;
  }
}

}  // namespace adapt::mcp
