// How many connections one listener holds at once: at most `max_total`, at most
// `max_per_client` from one client address. A listener asks for a slot as it accepts a
// connection and closes the connection at once when there is none, so that a few thousand
// idle connections from one address (or from many) cannot use up adaptd's descriptors.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace adapt {

struct ConnectionLimits {
  int max_total = 4096;      // 0: no limit
  int max_per_client = 256;  // 0: no limit
};

// Thread-safe. Slots may outlive the limiter (they keep its counts alive).
class ConnectionLimiter {
 public:
  // `listener` names it in the log ("API", "ingress", ...).
  ConnectionLimiter(std::string listener, ConnectionLimits limits);
  ~ConnectionLimiter();
  ConnectionLimiter(const ConnectionLimiter&) = delete;
  ConnectionLimiter& operator=(const ConnectionLimiter&) = delete;

  // One connection's place; gives it back when destroyed. Movable.
  class Slot {
   public:
    Slot(Slot&&) noexcept;
    Slot& operator=(Slot&&) noexcept;
    ~Slot();

   private:
    friend class ConnectionLimiter;
    struct State;
    Slot(std::shared_ptr<State> state, std::string client);
    std::shared_ptr<State> state_;
    std::string client_;
  };

  // A slot for a connection from `address`, or nullopt when the listener or that client is
  // at its limit. A refusal is logged, at most once per 10 s per listener.
  std::optional<Slot> Admit(const std::string& address);

  int total() const;
  int of(const std::string& address) const;

  // The client an address counts as: itself, or for IPv6 its /64 (one host's whole subnet,
  // which its owner can spread connections over). IPv4-mapped addresses count as IPv4.
  static std::string ClientOf(const std::string& address);

 private:
  std::shared_ptr<Slot::State> state_;
};

}  // namespace adapt
