// How many failed sign-ins the OAuth authorize page accepts before it stops checking
// passwords for a while: per email (a guessed account) and per client address (one guesser
// trying many accounts; per /64 for IPv6, as RegistrationLimit). A key with `max_failures`
// failures inside the last `window` is refused until the oldest of them leaves the window;
// refusals are counted whether or not the email has an account, so the answer tells nothing
// about which emails exist. Entries of quiet keys are dropped; at most `max_keys` are kept,
// and past that every new key waits a window, so memory stays bounded. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace adapt::mcp {

class SignInLimit {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    int max_failures_per_email = 5;
    int max_failures_per_address = 20;
    std::chrono::seconds window{15 * 60};
    size_t max_keys = 100000;
  };
  SignInLimit() : SignInLimit(Options{}) {}
  explicit SignInLimit(Options options) : options_(options) {}

  // 0 when a sign-in for `email` from `address` may be checked now; otherwise the seconds
  // until it may.
  int64_t WaitSeconds(const std::string& email, const std::string& address,
                      Clock::time_point now = Clock::now());
  // Counts a failed sign-in against both.
  void Failed(const std::string& email, const std::string& address,
              Clock::time_point now = Clock::now());

 private:
  int64_t WaitLocked(const std::string& key, int max, Clock::time_point now);
  void PruneLocked(Clock::time_point now);

  const Options options_;
  std::mutex mu_;
  std::map<std::string, std::deque<Clock::time_point>> failures_;  // key: "e:" email, "a:" address
};

}  // namespace adapt::mcp
