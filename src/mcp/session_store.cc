#include "mcp/session_store.h"

#include <vector>

#include "base/ids.h"

namespace adapt::mcp {

SessionStore::SessionStore(size_t max_per_org, size_t max_total)
    : max_per_org_(max_per_org), max_total_(max_total) {}

std::string SessionStore::Create(const std::string& org_id, const std::string& protocol_version) {
  std::lock_guard lock(mu_);
  DropExpiredLocked();
  // Forget least recently used sessions rather than refuse new clients; an organization at
  // its cap gives up its own, and when everyone together is at the total cap, the largest
  // organization gives way, so no one can push out the sessions of a smaller one.
  if (per_org_[org_id] >= max_per_org_) EvictLocked(org_id);
  if (sessions_.size() >= max_total_) {
    auto largest = per_org_.begin();
    for (auto it = per_org_.begin(); it != per_org_.end(); ++it)
      if (it->second > largest->second) largest = it;
    EvictLocked(largest->first);
  }
  std::string id = RandomToken(24);
  sessions_[id] = Session{org_id, protocol_version, std::chrono::steady_clock::now(), {}};
  ++per_org_[org_id];
  return id;
}

void SessionStore::EvictLocked(const std::string& org_id) {
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
    if (it->second.org_id == org_id &&
        (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used))
      oldest = it;
  if (oldest != sessions_.end()) EraseLocked(oldest);
}

void SessionStore::EraseLocked(std::map<std::string, Session>::iterator it) {
  auto count = per_org_.find(it->second.org_id);
  if (count != per_org_.end() && --count->second == 0) per_org_.erase(count);
  sessions_.erase(it);
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
  std::vector<std::shared_ptr<CancelSignal>> calls;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.org_id != org_id) return false;
    for (auto& [_, signal] : it->second.calls) calls.push_back(signal);
    EraseLocked(it);
  }
  for (auto& signal : calls) signal->Set();
  return true;
}

std::shared_ptr<CancelSignal> SessionStore::BeginCall(const std::string& id,
                                                      const std::string& request_key) {
  auto flag = std::make_shared<CancelSignal>();
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
  std::shared_ptr<CancelSignal> signal;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    auto call = it->second.calls.find(request_key);
    if (call != it->second.calls.end()) signal = call->second;
  }
  // Unlocked: what a waiting call registered runs now.
  if (signal) signal->Set();
}

void SessionStore::DropExpiredLocked() {
  auto now = std::chrono::steady_clock::now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    auto next = std::next(it);
    if (now - it->second.last_used > kIdleLimit && it->second.calls.empty()) EraseLocked(it);
    it = next;
  }
}

}  // namespace adapt::mcp
