// A proxy session still waiting for its first bytes (a request head, a ClientHello, a
// startup packet) may be closed by a full listener for a new connection
// (ConnectionLimiter::Slot::OnEvict). The close runs on the session's own executor, where
// bytes read meanwhile keep the session: `close_if_evicted` checks the slot again there.
// The executor is read from the session when the eviction comes, so no copy of it outlives
// the session (a strand copy released after its io_context is a use-after-free).
#pragma once

#include <boost/asio/post.hpp>
#include <memory>

#include "base/connection_limiter.h"

namespace adapt::net {

// `executor_of(session)` names the session's executor; `close_if_evicted(session)` closes it
// unless a read made it busy again (Slot::evicted()). Both are called with the session alive.
template <typename Session, typename ExecutorOf, typename CloseIfEvicted>
void CloseOnEviction(ConnectionLimiter::Slot& slot, std::weak_ptr<Session> session,
                     ExecutorOf executor_of, CloseIfEvicted close_if_evicted) {
  slot.OnEvict([weak = std::move(session), executor_of, close_if_evicted] {
    auto self = weak.lock();
    if (!self) return;
    auto executor = executor_of(*self);
    boost::asio::post(executor,
                      [self = std::move(self), close_if_evicted] { close_if_evicted(*self); });
  });
}

}  // namespace adapt::net
