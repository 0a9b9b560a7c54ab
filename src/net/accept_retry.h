// AcceptRetry: what a listener of src/net does after a failed accept (or, for the DNS proxy's
// UDP socket, a failed receive). EMFILE, ENFILE, ENOBUFS and ENOMEM last until something else
// closes, and the connection that met them stays in the backlog: an accept re-armed at once
// fails at once again, and the listener spins a core serving no one. So the listener waits
// kDelay (as the ingress and the API server do) and accepts again; the connection still
// queued is served then. While the failures last, the log gets their first line and then one
// line a minute that counts them, not ten lines a second per listener (a log that fills the
// disk is the next failure).
#pragma once

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace adapt::net {

class AcceptRetry {
 public:
  static constexpr std::chrono::milliseconds kDelay{100};
  static constexpr std::chrono::seconds kLogEvery{60};

  // `listener` names it in the log. Lives on the listener's executor, like its acceptor.
  // `action` says in the log what failed. `log_every`: the least time between two log lines.
  AcceptRetry(const boost::asio::any_io_executor& executor, std::string listener,
              std::string action = "accepting a connection",
              std::chrono::steady_clock::duration log_every = kLogEvery)
      : timer_(executor),
        listener_(std::move(listener)),
        action_(std::move(action)),
        log_every_(log_every) {}

  // After a failed accept: logs `error` (or counts it, within log_every of the last line) and
  // calls `accept` kDelay later (never, once the timer is cancelled or destroyed). On the
  // listener's executor.
  void After(const boost::system::error_code& error, std::function<void()> accept);

 private:
  boost::asio::steady_timer timer_;
  const std::string listener_;
  const std::string action_;
  const std::chrono::steady_clock::duration log_every_;
  std::optional<std::chrono::steady_clock::time_point> logged_at_;
  uint64_t unlogged_ = 0;  // failures since the last line
};

}  // namespace adapt::net
