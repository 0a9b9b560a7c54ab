// How many connections one listener holds at once: at most `max_total`, at most
// `max_per_client` from one client address. A listener asks for a slot as it accepts a
// connection and closes the connection at once when there is none, so that a few thousand
// idle connections from one address (or from many) cannot use up adaptd's descriptors.
//
// A full listener makes room by evicting: a connection whose client has not yet begun (no
// complete request head, ClientHello or startup packet) marks its slot idle, and a new
// connection past max_total closes the one that has been idle longest instead of being refused.
// Otherwise idle connections from a few addresses (17 x 256 > 4096) would keep every other
// client out for as long as they reconnect within the head's deadline; now such a flood can
// only push out connections that wait longer than it takes the flood to cycle the whole cap.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace adapt {

struct ConnectionLimits {
  int max_total = 4096;      // 0: no limit
  int max_per_client = 256;  // 0: no limit
};

// How many of a listener's connections shared by every organization one organization may
// hold at once (its routes' on the ingress, its sandboxes' on the TLS hostname proxy): a
// quarter, so that one tenant's busy sessions never fill it for the others. 0: no cap.
inline int PerOrganizationLimit(const ConnectionLimits& limits) { return limits.max_total / 4; }

// Thread-safe. Slots may outlive the limiter (they keep its counts alive).
class ConnectionLimiter {
 public:
  // At most this many evicted connections that have not ended yet are held beyond max_total:
  // an eviction is carried out on the connection's own thread, a moment after Admit.
  static constexpr int kEvictionHeadroom = 64;

  // `listener` names it in the log ("API", "ingress", ...).
  ConnectionLimiter(std::string listener, ConnectionLimits limits);
  ~ConnectionLimiter();
  ConnectionLimiter(const ConnectionLimiter&) = delete;
  ConnectionLimiter& operator=(const ConnectionLimiter&) = delete;

  // One connection's place; gives it back when destroyed. Movable. Its methods may be called
  // from any thread (the connection's own, normally).
  class Slot {
   public:
    Slot(Slot&&) noexcept;
    Slot& operator=(Slot&&) noexcept;
    ~Slot();

    // How the listener asks this connection to close to make room for a new one. `evict` is
    // called at most once, on the thread calling Admit and with no lock held: it must not
    // touch the connection's socket, only ask the connection's own strand or executor to close
    // it, where the connection checks evicted() first (its client may have begun meanwhile).
    // A slot without one is never evicted. Set it before the first MarkIdle.
    void OnEvict(std::function<void()> evict);

    // The connection waits for its client to begin (a request head, a ClientHello, a startup
    // packet), or, on HTTP, for the next request of a kept-alive connection: it may be evicted,
    // the longest waiting first, counted from its admission for a wait that begins at once
    // (nothing marked before it) and from this call for a later one (after MarkBusy). A slot
    // already idle keeps its place in that order.
    void MarkIdle();

    // The client's work is under way (a request, a response or stream being written, a proxied
    // session): never evicted. Withdraws an eviction the connection has not carried out yet.
    void MarkBusy();

    // True once Admit chose this connection to make room and no MarkBusy came since.
    bool evicted() const;

   private:
    friend class ConnectionLimiter;
    struct State;
    struct Entry;
    Slot(std::shared_ptr<State> state, std::unique_ptr<Entry> entry);
    void Release();
    std::shared_ptr<State> state_;
    std::unique_ptr<Entry> entry_;
  };

  // A slot for a connection from `address`, or nullopt when that client is at its own limit,
  // or when the listener is at its limit and no connection is idle. A full listener with an
  // idle connection evicts the one idle longest (see Slot::OnEvict) and admits this one; that
  // one's slot is counted until its connection ends. Refusals and evictions are logged, each
  // at most once per 10 s per listener.
  std::optional<Slot> Admit(const std::string& address);

  // Open connections, evicted ones that have not ended yet included.
  int total() const;
  int of(const std::string& address) const;

  // The client an address counts as: itself, or for IPv6 its /64 (one host's whole subnet,
  // which its owner can spread connections over). IPv4-mapped addresses count as IPv4.
  static std::string ClientOf(const std::string& address);

 private:
  std::shared_ptr<Slot::State> state_;
};

}  // namespace adapt
