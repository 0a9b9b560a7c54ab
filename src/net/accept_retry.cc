#include "net/accept_retry.h"

#include "base/log.h"

namespace adapt::net {

void AcceptRetry::After(const boost::system::error_code& error, std::function<void()> accept) {
  spdlog::warn("{}: {} failed: {}; trying again in {} ms", listener_, action_, error.message(),
               kDelay.count());
  timer_.expires_after(kDelay);
  timer_.async_wait([accept = std::move(accept)](const boost::system::error_code& ec) {
    if (!ec) accept();
  });
}

}  // namespace adapt::net
