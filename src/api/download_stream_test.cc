#include "api/download_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "api/recording_sink_test_support.h"
#include "api/stream_threads.h"

namespace adapt::api {
namespace {

using testing_support::RecordingSink;

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
  auto chunks = sink->ChunksOnceClosed();
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

TEST(DownloadStream, ABodyEndsAtItsLengthWhateverTheSourceHasMore) {
  // The source announces 1000 bytes and has 5000 (a file that grew, a tool that lied): the
  // client gets exactly its Content-Length, and the source's end is still confirmed.
  DownloadSource source = Pattern(5000, 700);
  source.length = 1000;
  auto finished = std::make_shared<bool>(false);
  source.finish = [finished] {
    *finished = true;
    return Status::Ok();
  };
  std::string all = Joined(Pump(std::move(source)));
  ASSERT_EQ(all.size(), 1000u);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<char>(i * 31));
  EXPECT_TRUE(*finished);
}

TEST(DownloadStream, ASourceShortOfItsLengthEndsTheBodyShort) {
  DownloadSource source = Pattern(300, 100);
  source.length = 1000;
  EXPECT_EQ(Joined(Pump(std::move(source))).size(), 300u);
}

}  // namespace
}  // namespace adapt::api
