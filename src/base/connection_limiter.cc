#include "base/connection_limiter.h"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "base/log.h"

namespace adapt {

struct ConnectionLimiter::Slot::State {
  std::string listener;
  ConnectionLimits limits;
  mutable std::mutex mu;
  int total = 0;                                         // guarded by mu
  std::unordered_map<std::string, int> by_client;        // guarded by mu; no zero entries
  std::chrono::steady_clock::time_point last_warning{};  // guarded by mu

  void Release(const std::string& client) {
    std::lock_guard lock(mu);
    --total;
    auto it = by_client.find(client);
    if (it != by_client.end() && --it->second <= 0) by_client.erase(it);
  }
};

ConnectionLimiter::Slot::Slot(std::shared_ptr<State> state, std::string client)
    : state_(std::move(state)), client_(std::move(client)) {}

ConnectionLimiter::Slot::Slot(Slot&& other) noexcept
    : state_(std::move(other.state_)), client_(std::move(other.client_)) {}

ConnectionLimiter::Slot& ConnectionLimiter::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    if (state_) state_->Release(client_);
    state_ = std::move(other.state_);
    client_ = std::move(other.client_);
  }
  return *this;
}

ConnectionLimiter::Slot::~Slot() {
  if (state_) state_->Release(client_);
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
  const std::string client = ClientOf(address);
  auto& s = *state_;
  std::lock_guard lock(s.mu);
  const int of_client = s.by_client.count(client) ? s.by_client[client] : 0;
  const bool full = s.limits.max_total > 0 && s.total >= s.limits.max_total;
  const bool client_full = s.limits.max_per_client > 0 && of_client >= s.limits.max_per_client;
  if (full || client_full) {
    auto now = std::chrono::steady_clock::now();
    if (now - s.last_warning >= std::chrono::seconds(10)) {
      s.last_warning = now;
      if (full)
        spdlog::warn("{}: refusing connections: {} open, the most it holds", s.listener, s.total);
      else
        spdlog::warn("{}: refusing connections from {}: {} open, the most one client may hold",
                     s.listener, client, of_client);
    }
    return std::nullopt;
  }
  ++s.total;
  ++s.by_client[client];
  return Slot(state_, client);
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
