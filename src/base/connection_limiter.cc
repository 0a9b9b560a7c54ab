#include "base/connection_limiter.h"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <iterator>
#include <list>
#include <mutex>
#include <unordered_map>

#include "base/log.h"

namespace adapt {

struct ConnectionLimiter::Slot::Entry {
  std::string client;
  std::function<void()> evict;       // guarded by State::mu
  bool idle = false;                 // guarded by State::mu; true while in State::idle
  bool evicted = false;              // guarded by State::mu
  std::list<Entry*>::iterator spot;  // guarded by State::mu; in State::idle while idle
  // Guarded by State::mu: its place in the idle order, from the listener's count of
  // admissions and idle periods: its admission for its first wait (two connections accepted
  // one after the other may reach MarkIdle in the other order, on two threads), the moment it
  // became idle again for a later one (a kept-alive connection between requests).
  uint64_t since = 0;
  bool waited = false;  // guarded by State::mu: it has been idle or busy before
};

struct ConnectionLimiter::Slot::State {
  using Clock = std::chrono::steady_clock;

  std::string listener;
  ConnectionLimits limits;
  mutable std::mutex mu;
  int total = 0;                                   // guarded by mu
  int evicting = 0;                                // guarded by mu; evicted, not yet ended
  std::unordered_map<std::string, int> by_client;  // guarded by mu; no zero entries
  std::list<Entry*> idle;                          // guarded by mu; by Entry::since
  uint64_t ticks = 0;                              // guarded by mu; Entry::since's count
  Clock::time_point last_refusal{};                // guarded by mu
  Clock::time_point last_eviction{};               // guarded by mu

  // True at most once per 10 s for each `last`. REQUIRES: mu held.
  static bool TimeToLog(Clock::time_point& last) {
    auto now = Clock::now();
    if (now - last < std::chrono::seconds(10)) return false;
    last = now;
    return true;
  }

  void Release(Entry& e) {
    std::lock_guard lock(mu);
    --total;
    auto it = by_client.find(e.client);
    if (it != by_client.end() && --it->second <= 0) by_client.erase(it);
    if (e.idle) idle.erase(e.spot);
    if (e.evicted) --evicting;
    e.idle = e.evicted = false;
  }
};

ConnectionLimiter::Slot::Slot(std::shared_ptr<State> state, std::unique_ptr<Entry> entry)
    : state_(std::move(state)), entry_(std::move(entry)) {}

ConnectionLimiter::Slot::Slot(Slot&& other) noexcept = default;

ConnectionLimiter::Slot& ConnectionLimiter::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    entry_ = std::move(other.entry_);
  }
  return *this;
}

ConnectionLimiter::Slot::~Slot() { Release(); }

void ConnectionLimiter::Slot::Release() {
  if (state_ && entry_) state_->Release(*entry_);
}

void ConnectionLimiter::Slot::OnEvict(std::function<void()> evict) {
  if (!entry_) return;
  std::lock_guard lock(state_->mu);
  entry_->evict = std::move(evict);
}

void ConnectionLimiter::Slot::MarkIdle() {
  // Without a listener cap nothing is ever evicted: no need to keep the order.
  if (!entry_ || state_->limits.max_total <= 0) return;
  auto& s = *state_;
  auto& e = *entry_;
  std::lock_guard lock(s.mu);
  if (e.idle || e.evicted || !e.evict) return;
  if (e.waited) e.since = ++s.ticks;
  e.waited = true;
  // From the back: the place is nearly always there.
  auto at = s.idle.end();
  while (at != s.idle.begin() && (*std::prev(at))->since > e.since) --at;
  e.spot = s.idle.insert(at, &e);
  e.idle = true;
}

void ConnectionLimiter::Slot::MarkBusy() {
  if (!entry_ || state_->limits.max_total <= 0) return;
  auto& s = *state_;
  auto& e = *entry_;
  std::lock_guard lock(s.mu);
  if (e.idle) s.idle.erase(e.spot);
  if (e.evicted) --s.evicting;
  e.idle = e.evicted = false;
  e.waited = true;  // its next wait counts from its own start, not from the admission
}

bool ConnectionLimiter::Slot::evicted() const {
  if (!entry_) return false;
  std::lock_guard lock(state_->mu);
  return entry_->evicted;
}

ConnectionLimiter::ConnectionLimiter(std::string listener, ConnectionLimits limits)
    : state_(std::make_shared<Slot::State>()) {
  state_->listener = std::move(listener);
  state_->limits = limits;
}

ConnectionLimiter::~ConnectionLimiter() = default;

std::string ConnectionLimiter::ClientOf(const std::string& address) {
  in6_addr a{};
  if (address.find(':') == std::string::npos || ::inet_pton(AF_INET6, address.c_str(), &a) != 1)
    return address;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[INET6_ADDRSTRLEN];
  if (std::memcmp(a.s6_addr, kMapped, sizeof kMapped) == 0) {
    ::inet_ntop(AF_INET, a.s6_addr + 12, text, sizeof text);
    return text;
  }
  std::memset(a.s6_addr + 8, 0, 8);
  ::inet_ntop(AF_INET6, &a, text, sizeof text);
  return std::string(text) + "/64";
}

std::optional<ConnectionLimiter::Slot> ConnectionLimiter::Admit(const std::string& address) {
  auto entry = std::make_unique<Slot::Entry>();
  entry->client = ClientOf(address);
  const std::string& client = entry->client;
  std::function<void()> evict;
  auto& s = *state_;
  {
    std::lock_guard lock(s.mu);
    auto it = s.by_client.find(client);
    const int of_client = it == s.by_client.end() ? 0 : it->second;
    // Checked first: a client at its own cap does not get to push others out.
    if (s.limits.max_per_client > 0 && of_client >= s.limits.max_per_client) {
      if (Slot::State::TimeToLog(s.last_refusal))
        spdlog::warn("{}: refusing connections from {}: {} open, the most one client may hold",
                     s.listener, client, of_client);
      return std::nullopt;
    }
    // Evicted connections that have not ended yet already gave their place up.
    if (s.limits.max_total > 0 && s.total - s.evicting >= s.limits.max_total) {
      if (s.idle.empty() || s.total >= s.limits.max_total + kEvictionHeadroom) {
        if (Slot::State::TimeToLog(s.last_refusal))
          spdlog::warn("{}: refusing connections: {} open, the most it holds, {}", s.listener,
                       s.total,
                       s.idle.empty() ? "and none of them waiting for its client to begin"
                                      : "and too many of them still closing to make room");
        return std::nullopt;
      }
      Slot::Entry& oldest = *s.idle.front();
      s.idle.pop_front();
      oldest.idle = false;
      oldest.evicted = true;
      ++s.evicting;
      evict = oldest.evict;
      if (Slot::State::TimeToLog(s.last_eviction))
        spdlog::warn(
            "{}: {} open, the most it holds: closing the connections idle longest to make room "
            "for new ones (the first from {})",
            s.listener, s.total, oldest.client);
    }
    ++s.total;
    ++s.by_client[client];
    entry->since = ++s.ticks;
  }
  if (evict) evict();
  return Slot(state_, std::move(entry));
}

int ConnectionLimiter::total() const {
  std::lock_guard lock(state_->mu);
  return state_->total;
}

int ConnectionLimiter::of(const std::string& address) const {
  std::lock_guard lock(state_->mu);
  auto it = state_->by_client.find(ClientOf(address));
  return it == state_->by_client.end() ? 0 : it->second;
}

}  // namespace adapt
