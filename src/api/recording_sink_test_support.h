// RecordingSink: a StreamSink for unit tests. It keeps what a response's producer queued, in
// order, as the connection would before writing it, and says when the response was ended.
// Thread-safe: the producer sends from its own thread while the test waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "api/http_types.h"

namespace adapt::api::testing_support {

class RecordingSink : public StreamSink {
 public:
  bool Send(std::string data) override {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    chunks_.push_back(std::move(data));
    cv_.notify_all();
    return true;
  }
  bool Closed() const override {
    std::lock_guard lock(mu_);
    return closed_;
  }
  void Close() override {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  bool WaitForRoom(size_t) override { return !Closed(); }

  // Every chunk sent, once the response has ended (or 30 s passed).
  std::vector<std::string> ChunksOnceClosed() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [&] { return closed_; });
    return chunks_;
  }
  // Whether the response ended within 5 s.
  bool WaitClosed() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return closed_; });
  }
  // What was sent so far, as one text.
  std::string Sent() {
    std::lock_guard lock(mu_);
    return JoinedLocked();
  }
  // What was sent once it holds `text` (or 5 s passed).
  std::string SentOnceItHas(const std::string& text) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(5),
                 [&] { return JoinedLocked().find(text) != std::string::npos; });
    return JoinedLocked();
  }

 private:
  std::string JoinedLocked() const {
    std::string out;
    for (const auto& c : chunks_) out += c;
    return out;
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  std::vector<std::string> chunks_;
};

}  // namespace adapt::api::testing_support
