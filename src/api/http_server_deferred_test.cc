// DeferredResponse: answered when it replies or at its deadline, holding no worker meanwhile.
#include <atomic>
#include <vector>

#include "api/http_server_test_support.h"

namespace adapt::api {
namespace {

using namespace std::chrono_literals;

// Replies when the test says so; Expire answers 202 "expired".
class Parked : public DeferredResponse {
 public:
  explicit Parked(std::chrono::steady_clock::time_point deadline) : deadline_(deadline) {}
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void Start(Reply reply) override {
    std::lock_guard lock(mu_);
    reply_ = std::move(reply);
    started_.notify_all();
  }
  // The connection runs Start on its strand a moment after the handler returned.
  bool WaitStarted() {
    std::unique_lock lock(mu_);
    return started_.wait_for(lock, 5s, [&] { return reply_ != nullptr; });
  }
  void Expire() override { Answer(202, "expired"); }
  void Cancel() override { cancelled_ = true; }

  void Answer(int status, std::string body) {
    ASSERT_TRUE(WaitStarted());
    Reply reply;
    {
      std::lock_guard lock(mu_);
      reply = reply_;
    }
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    reply(std::move(r));
  }
  bool cancelled() const { return cancelled_; }

 private:
  const std::chrono::steady_clock::time_point deadline_;
  std::mutex mu_;
  std::condition_variable started_;
  Reply reply_;
  std::atomic<bool> cancelled_{false};
};

class DeferredTest : public HttpServerTest {
 protected:
  // /park?i=N parks its request as parked_[N] (deadline `wait` ahead); the rest echo.
  void ServeParking(std::chrono::milliseconds wait) {
    Serve([this, wait](const HttpRequest& request) {
      if (request.path != "/park") return Echo(request);
      auto parked = std::make_shared<Parked>(std::chrono::steady_clock::now() + wait);
      {
        std::lock_guard lock(mu_);
        parked_[std::stoi(request.query.at("i"))] = parked;
      }
      arrived_.notify_all();
      HttpResponse r;
      r.deferred = parked;
      return r;
    });
  }
  // The first n parked requests, once their connections started waiting for them.
  std::vector<std::shared_ptr<Parked>> WaitParked(size_t n) {
    std::vector<std::shared_ptr<Parked>> out;
    {
      std::unique_lock lock(mu_);
      arrived_.wait_for(lock, 5s, [&] { return parked_.size() >= n; });
      for (auto& [i, parked] : parked_) out.push_back(parked);
    }
    for (auto& parked : out) EXPECT_TRUE(parked->WaitStarted());
    return out;
  }

  std::mutex mu_;
  std::condition_variable arrived_;
  std::map<int, std::shared_ptr<Parked>> parked_;
};

TEST_F(DeferredTest, ParkedRequestsHoldNoWorkerAndGetTheirAnswerOnTheirConnection) {
  ServeParking(60s);
  // Twice as many parked requests as the fixture has workers.
  std::vector<std::unique_ptr<Client>> waiting;
  for (int i = 0; i < 8; ++i) {
    waiting.push_back(std::make_unique<Client>(port()));
    waiting.back()->Send("GET /park?i=" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  auto parked = WaitParked(8);
  ASSERT_EQ(parked.size(), 8u);
  Client other(port());
  other.Send("GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
  auto answer = other.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->body, "GET /other");

  for (int i = 0; i < 8; ++i) parked[i]->Answer(200, "answer " + std::to_string(i));
  for (int i = 0; i < 8; ++i) {
    auto r = waiting[i]->ReadResponse();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "answer " + std::to_string(i));
  }
  // Only the first reply counts, and the connection serves its next request.
  parked[0]->Answer(500, "late");
  waiting[0]->Send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  auto next = waiting[0]->ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "GET /next");
}

TEST_F(DeferredTest, DeadlineExpiresTheWait) {
  ServeParking(200ms);
  Client client(port());
  client.Send("GET /park?i=0 HTTP/1.1\r\nHost: x\r\n\r\n");
  auto r = client.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_EQ(r->body, "expired");
}

TEST_F(DeferredTest, StopCancelsParkedRequestsPromptly) {
  ServeParking(60s);
  Client client(port());
  client.Send("GET /park?i=0 HTTP/1.1\r\nHost: x\r\n\r\n");
  auto parked = WaitParked(1);
  ASSERT_EQ(parked.size(), 1u);
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(parked[0]->cancelled());
  EXPECT_TRUE(client.ReadsEof());
  parked[0]->Answer(200, "after stop");  // goes nowhere, harmlessly
}

}  // namespace
}  // namespace adapt::api
