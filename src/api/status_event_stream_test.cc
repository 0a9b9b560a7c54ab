// StatusEventStream over a store whose event list the test scripts: events go out in order,
// each once, when the bus says to look; a pass whose read throws, or a heartbeat that throws,
// ends the stream rather than leaving it open and silent (the client then reconnects from the
// last event it got); a credential that no longer signs in ends it before anything more is sent.
#include "api/status_event_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/recording_sink_test_support.h"
#include "store/memory_store.h"

namespace adapt::api {
namespace {

using namespace std::chrono_literals;
using testing_support::RecordingSink;

class ScriptedEvents : public store::MemoryStore {
 public:
  Result<std::vector<store::EventRecord>> ListEvents(const std::string&, const std::string&,
                                                     int64_t after_seq, int limit) override {
    std::lock_guard lock(mu_);
    if (throws_) throw std::runtime_error("the event table is unreadable");
    std::vector<store::EventRecord> out;
    for (const auto& e : events_)
      if (e.seq > after_seq && static_cast<int>(out.size()) < limit) out.push_back(e);
    return out;
  }
  void Add(int64_t seq, const std::string& status) {
    std::lock_guard lock(mu_);
    events_.push_back({seq, "org_1", "sbx_1", status, 0});
  }
  void Throw() {
    std::lock_guard lock(mu_);
    throws_ = true;
  }

 private:
  std::mutex mu_;
  std::vector<store::EventRecord> events_;
  bool throws_ = false;
};

class StatusEventStreamTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (stream_) stream_->Stop();
    stream_.reset();
    workers_.join();
  }
  void Open(int64_t after) {
    stream_ = std::make_shared<StatusEventStream>(store_, bus_, workers_, "org_1", "sbx_1", after);
    stream_->Start(sink_);
  }
  void Look() { bus_.Notify({core::Change::Kind::kSandboxStatus, "sbx_1"}); }

  ScriptedEvents store_;
  core::EventBus bus_;
  boost::asio::thread_pool workers_{2};
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
  std::shared_ptr<StatusEventStream> stream_;
};

TEST_F(StatusEventStreamTest, SendsEachEventAfterTheResumePointOnceInOrder) {
  store_.Add(1, "provisioning");
  store_.Add(2, "running");
  Open(1);
  std::string sent = sink_->SentOnceItHas("id: 2\n");
  EXPECT_EQ(sent.find("id: 1\n"), std::string::npos) << sent;
  EXPECT_NE(sent.find("id: 2\nevent: status\ndata: {"), std::string::npos) << sent;
  EXPECT_NE(sent.find("\"sandboxId\":\"sbx_1\",\"status\":\"running\"}\n\n"), std::string::npos)
      << sent;
  store_.Add(3, "completed");
  Look();
  Look();
  sent = sink_->SentOnceItHas("id: 3\n");
  EXPECT_NE(sent.find("\"status\":\"completed\""), std::string::npos) << sent;
  EXPECT_EQ(sent.find("id: 2\n"), sent.rfind("id: 2\n")) << "sent twice: " << sent;
  EXPECT_FALSE(sink_->Closed());
}

TEST_F(StatusEventStreamTest, AReadThatThrowsEndsTheStreamInsteadOfLeavingItSilent) {
  store_.Add(1, "running");
  Open(0);
  sink_->SentOnceItHas("id: 1\n");
  EXPECT_FALSE(sink_->Closed());
  store_.Throw();
  store_.Add(2, "completed");
  Look();
  EXPECT_TRUE(sink_->WaitClosed());
  EXPECT_EQ(sink_->Sent().find("id: 2\n"), std::string::npos);
}

// A sink whose heartbeats throw (as a failed allocation in the connection's queue would).
class SinkThatThrowsOnHeartbeats : public RecordingSink {
 public:
  bool Send(std::string data) override {
    if (data.rfind(": heartbeat", 0) == 0) throw std::runtime_error("out of memory");
    return RecordingSink::Send(std::move(data));
  }
};

TEST_F(StatusEventStreamTest, AHeartbeatThatThrowsEndsTheStreamInsteadOfLeavingItSilent) {
  auto sink = std::make_shared<SinkThatThrowsOnHeartbeats>();
  store_.Add(1, "running");
  stream_ = std::make_shared<StatusEventStream>(store_, bus_, workers_, "org_1", "sbx_1", 0);
  stream_->SetHeartbeatInterval(20ms);
  stream_->Start(sink);
  sink->SentOnceItHas("id: 1\n");
  EXPECT_TRUE(sink->WaitClosed());
}

TEST_F(StatusEventStreamTest, AKeyRevokedWhileTheStreamIsOpenEndsItBeforeTheNextEvent) {
  auto signed_in = std::make_shared<std::atomic<bool>>(true);
  store_.Add(1, "running");
  stream_ = std::make_shared<StatusEventStream>(store_, bus_, workers_, "org_1", "sbx_1", 0);
  stream_->SetStillSignedIn([signed_in] { return signed_in->load(); });
  stream_->Start(sink_);
  sink_->SentOnceItHas("id: 1\n");
  signed_in->store(false);
  // The check is made at most once a second between heartbeats: the next look is past it.
  std::this_thread::sleep_for(1100ms);
  store_.Add(2, "completed");
  Look();
  EXPECT_TRUE(sink_->WaitClosed());
  EXPECT_EQ(sink_->Sent().find("id: 2\n"), std::string::npos) << sink_->Sent();
}

TEST_F(StatusEventStreamTest, AQuietStreamWhoseKeyWasRevokedEndsAtItsNextHeartbeat) {
  auto signed_in = std::make_shared<std::atomic<bool>>(true);
  stream_ = std::make_shared<StatusEventStream>(store_, bus_, workers_, "org_1", "sbx_1", 0);
  stream_->SetHeartbeatInterval(20ms);
  stream_->SetStillSignedIn([signed_in] { return signed_in->load(); });
  stream_->Start(sink_);
  sink_->SentOnceItHas(": heartbeat\n");
  EXPECT_FALSE(sink_->Closed());
  signed_in->store(false);
  EXPECT_TRUE(sink_->WaitClosed());
}

}  // namespace
}  // namespace adapt::api
