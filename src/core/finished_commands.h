// FinishedCommands: the final records the command runner just wrote to the store, kept briefly
// so that the answer to the request waiting on a command's end is built from them instead of
// read back from the store and decoded again (up to megabytes of output). Only a record that
// was durably written is kept, and only while nothing else may rewrite its row; a record not
// found here (pushed out, too old, never kept) is read from the store as before, so what is
// kept changes how fast an answer comes, never what it says. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "store/records.h"

namespace adapt::core {

class FinishedCommands {
 public:
  using Clock = std::chrono::steady_clock;
  // An answer follows its command's end within milliseconds; one that comes later reads the
  // store.
  static constexpr std::chrono::seconds kKeptFor{10};
  // At most this much output is kept (the newest record always, whatever its size).
  static constexpr size_t kKeptOutputBytes = 16 * 1024 * 1024;

  // Keeps `record`, written to the store at `now`, pushing out the oldest beyond the bounds.
  void Keep(std::shared_ptr<const store::CommandRecord> record, Clock::time_point now);
  // The record of command `id` kept within kKeptFor of `now`, if it belongs to this
  // organization's sandbox; else null.
  std::shared_ptr<const store::CommandRecord> Find(const std::string& org_id,
                                                   const std::string& sandbox_id,
                                                   const std::string& id, Clock::time_point now);
  // Drops the records of `sandbox_id`'s commands (their rows are about to be written again).
  void Forget(const std::string& sandbox_id);

 private:
  struct Kept {
    std::shared_ptr<const store::CommandRecord> record;
    Clock::time_point at;
  };
  static size_t OutputBytes(const store::CommandRecord& r) {
    return r.stdout_text.size() + r.stderr_text.size();
  }

  std::mutex mu_;
  std::deque<Kept> kept_;  // oldest first; guarded by mu_
  size_t bytes_ = 0;       // the output kept_ holds; guarded by mu_
};

}  // namespace adapt::core
