#include "net/accept_retry.h"

#include "base/log.h"

namespace adapt::net {

void AcceptRetry::After(const boost::system::error_code& error, std::function<void()> accept) {
  ++unlogged_;
  auto now = std::chrono::steady_clock::now();
  if (!logged_at_ || now - *logged_at_ >= log_every_) {
    if (unlogged_ == 1)
      spdlog::warn("{}: {} failed: {}; trying again in {} ms", listener_, action_, error.message(),
                   kDelay.count());
    else
      spdlog::warn(
          "{}: {} failed {} times since the last line, the last: {}; trying again "
          "every {} ms",
          listener_, action_, unlogged_, error.message(), kDelay.count());
    logged_at_ = now;
    unlogged_ = 0;
  }
  timer_.expires_after(kDelay);
  timer_.async_wait([accept = std::move(accept)](const boost::system::error_code& ec) {
    if (!ec) accept();
  });
}

}  // namespace adapt::net
