#include "mcp/registration_limit.h"

#include <algorithm>
#include <cmath>

#include "mcp/address_key.h"

namespace adapt::mcp {

RegistrationLimit::RegistrationLimit(Options options) : options_(options) {}

double RegistrationLimit::TokensAt(const Bucket& b,
                                   std::chrono::steady_clock::time_point now) const {
  double refilled =
      std::chrono::duration<double>(now - b.at) / std::chrono::duration<double>(options_.refill);
  return std::min<double>(options_.burst, b.tokens + std::max(0.0, refilled));
}

int64_t RegistrationLimit::Take(const std::string& address,
                                std::chrono::steady_clock::time_point now) {
  std::string key = AddressKey(address);
  std::lock_guard lock(mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_addresses) {
      // A full bucket says nothing a new one would not: drop those.
      std::erase_if(buckets_,
                    [&](const auto& kv) { return TokensAt(kv.second, now) >= options_.burst; });
      if (buckets_.size() >= options_.max_addresses) return options_.refill.count();
    }
    it = buckets_.emplace(key, Bucket{static_cast<double>(options_.burst), now}).first;
  }
  Bucket& b = it->second;
  b.tokens = TokensAt(b, now);
  b.at = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                  (1 - b.tokens) * static_cast<double>(options_.refill.count()))));
}

}  // namespace adapt::mcp
