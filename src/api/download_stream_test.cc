#include "api/download_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "api/stream_threads.h"

namespace adapt::api {
namespace {

// Keeps what the pump queued, as the connection would before writing it.
class RecordingSink : public StreamSink {
 public:
  bool Send(std::string data) override {
    std::lock_guard lock(mu_);
    chunks_.push_back(std::move(data));
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
  bool WaitForRoom(size_t) override { return true; }

  std::vector<std::string> WaitForClose() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return closed_; });
    return std::move(chunks_);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  std::vector<std::string> chunks_;
};

// A source of `total` bytes (i * 31 mod 256) handed out at most `per_read` at a time.
DownloadSource Pattern(size_t total, size_t per_read) {
  auto at = std::make_shared<size_t>(0);
  return {[at, total, per_read](char* buf, size_t n) -> long {
            size_t take = std::min({n, per_read, total - *at});
            for (size_t i = 0; i < take; ++i) buf[i] = static_cast<char>((*at + i) * 31);
            *at += take;
            return static_cast<long>(take);
          },
          nullptr, total, "test"};
}

std::string Joined(const std::vector<std::string>& chunks) {
  std::string all;
  for (const auto& c : chunks) all += c;
  return all;
}

std::vector<std::string> Pump(DownloadSource source) {
  HttpResponse response = StreamDownload(std::move(source), "application/octet-stream");
  auto sink = std::make_shared<RecordingSink>();
  response.stream->Start(sink);
  auto chunks = sink->WaitForClose();
  response.stream->Stop();
  EXPECT_TRUE(WaitForStreamThreads(std::chrono::seconds(10)));  // the pump has ended
  return chunks;
}

TEST(DownloadStream, QueuesEveryByteInOrder) {
  const size_t total = (3u << 20) + 12345;
  std::string all = Joined(Pump(Pattern(total, total)));
  ASSERT_EQ(all.size(), total);
  for (size_t i = 0; i < total; ++i) ASSERT_EQ(all[i], static_cast<char>(i * 31)) << "byte " << i;
}

TEST(DownloadStream, ShortReadsDoNotHoldAWholeChunksMemoryWhileQueued) {
  // The queue's bound counts bytes: a trickling source's chunks must be about their size.
  auto chunks = Pump(Pattern(50000, 100));
  ASSERT_EQ(Joined(chunks).size(), 50000u);
  for (const auto& c : chunks) EXPECT_LT(c.capacity(), 4096u);
}

}  // namespace
}  // namespace adapt::api
