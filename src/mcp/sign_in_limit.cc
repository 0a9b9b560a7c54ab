#include "mcp/sign_in_limit.h"

#include <algorithm>

#include "mcp/address_key.h"

namespace adapt::mcp {

void SignInLimit::PruneLocked(Clock::time_point now) {
  for (auto it = failures_.begin(); it != failures_.end();) {
    auto& times = it->second;
    while (!times.empty() && now - times.front() >= options_.window) times.pop_front();
    it = times.empty() ? failures_.erase(it) : std::next(it);
  }
}

int64_t SignInLimit::WaitLocked(const std::string& key, int max, Clock::time_point now) {
  auto it = failures_.find(key);
  if (it == failures_.end()) {
    // A key that could not be tracked (the table is full) waits, rather than guessing freely.
    if (failures_.size() >= options_.max_keys) PruneLocked(now);
    return failures_.size() >= options_.max_keys ? options_.window.count() : 0;
  }
  auto& times = it->second;
  while (!times.empty() && now - times.front() >= options_.window) times.pop_front();
  if (static_cast<int>(times.size()) < max) return 0;
  auto left = std::chrono::ceil<std::chrono::seconds>(times.front() + options_.window - now);
  return std::max<int64_t>(1, left.count());
}

int64_t SignInLimit::WaitSeconds(const std::string& email, const std::string& address,
                                 Clock::time_point now) {
  std::lock_guard lock(mu_);
  return std::max(WaitLocked("e:" + email, options_.max_failures_per_email, now),
                  WaitLocked("a:" + AddressKey(address), options_.max_failures_per_address, now));
}

void SignInLimit::Failed(const std::string& email, const std::string& address,
                         Clock::time_point now) {
  std::lock_guard lock(mu_);
  for (const std::string& key : {"e:" + email, "a:" + AddressKey(address)}) {
    auto it = failures_.find(key);
    if (it == failures_.end()) {
      if (failures_.size() >= options_.max_keys) PruneLocked(now);
      // Still full: not tracked; WaitSeconds makes untracked keys wait meanwhile.
      if (failures_.size() >= options_.max_keys) continue;
      it = failures_.emplace(key, std::deque<Clock::time_point>{}).first;
    }
    it->second.push_back(now);
    // Only the last max of them matter.
    while (it->second.size() > static_cast<size_t>(std::max(options_.max_failures_per_email,
                                                            options_.max_failures_per_address)))
      it->second.pop_front();
  }
}

}  // namespace adapt::mcp
