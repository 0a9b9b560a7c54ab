// How often one network address may register OAuth clients: /oauth/register needs no
// credentials, and each registration is a row in the store. A token bucket per client
// address (per /64 for IPv6, which a single host often holds whole): `burst` at once, then
// one per `refill`. At most `max_addresses` buckets are kept; when they are all in use, new
// addresses wait too, so memory stays bounded whatever the number of addresses. Behind a
// reverse proxy every client shares the proxy's address. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace adapt::mcp {

class RegistrationLimit {
 public:
  struct Options {
    int burst = 10;
    std::chrono::seconds refill{60};
    size_t max_addresses = 10000;
  };
  RegistrationLimit() : RegistrationLimit(Options{}) {}
  explicit RegistrationLimit(Options options);

  // 0 when `address` may register now (and counts it); otherwise the seconds until it may.
  int64_t Take(const std::string& address,
               std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point at;
  };
  double TokensAt(const Bucket& b, std::chrono::steady_clock::time_point now) const;

  const Options options_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace adapt::mcp
