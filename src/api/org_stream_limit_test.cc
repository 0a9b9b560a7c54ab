#include "api/org_stream_limit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace adapt::api {
namespace {

class IdleStream : public ResponseStream {
 public:
  void Start(std::shared_ptr<StreamSink>) override { started = true; }
  void Stop() override { stopped = true; }
  bool started = false;
  bool stopped = false;
};

HttpResponse EventStream(std::shared_ptr<IdleStream> stream) {
  HttpResponse r;
  r.content_type = "text/event-stream";
  r.stream = std::move(stream);
  return r;
}

TEST(OrgStreamLimit, AnOrganizationPastItsEventStreamsGets429AndOthersDoNot) {
  OrgStreamLimit limit(2);
  auto first = limit.Admit("org_a", EventStream(std::make_shared<IdleStream>()));
  auto second = limit.Admit("org_a", EventStream(std::make_shared<IdleStream>()));
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(limit.Open("org_a"), 2u);

  auto third = limit.Admit("org_a", EventStream(std::make_shared<IdleStream>()));
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(third.stream, nullptr);
  EXPECT_NE(third.body.find("--max-streams-per-org"), std::string::npos) << third.body;
  EXPECT_EQ(limit.Open("org_a"), 2u);
  EXPECT_EQ(limit.Admit("org_b", EventStream(std::make_shared<IdleStream>())).status, 200);

  // A stream the connection let go gives its place back.
  first = HttpResponse();
  EXPECT_EQ(limit.Open("org_a"), 1u);
  EXPECT_EQ(limit.Admit("org_a", EventStream(std::make_shared<IdleStream>())).status, 200);
}

// A total across organizations (the static sites' downloads, open to anyone): past it every
// organization is refused, each within its own cap, until a place comes back.
TEST(OrgStreamLimit, ATotalCapsAllOrganizationsTogether) {
  OrgStreamLimit limit(2, 3);
  auto a1 = limit.Admit("org_a", EventStream(std::make_shared<IdleStream>()));
  auto a2 = limit.Admit("org_a", EventStream(std::make_shared<IdleStream>()));
  auto b1 = limit.Admit("org_b", EventStream(std::make_shared<IdleStream>()));
  EXPECT_EQ(a1.status, 200);
  EXPECT_EQ(a2.status, 200);
  EXPECT_EQ(b1.status, 200);
  EXPECT_EQ(limit.Admit("org_c", EventStream(std::make_shared<IdleStream>())).status, 429);
  a1 = HttpResponse();
  EXPECT_EQ(limit.Admit("org_c", EventStream(std::make_shared<IdleStream>())).status, 200);
}

TEST(OrgStreamLimit, TheCountedStreamPassesStartAndStopThrough) {
  OrgStreamLimit limit(1);
  auto inner = std::make_shared<IdleStream>();
  auto admitted = limit.Admit("org_a", EventStream(inner));
  ASSERT_NE(admitted.stream, nullptr);
  admitted.stream->Start(nullptr);
  admitted.stream->Stop();
  EXPECT_TRUE(inner->started);
  EXPECT_TRUE(inner->stopped);
}

TEST(OrgStreamLimit, DownloadsCountPlainAnswersDoNotAndZeroMeansNoLimit) {
  OrgStreamLimit limit(1);
  auto plain = limit.Admit("org_a", HttpResponse());
  EXPECT_EQ(limit.Open("org_a"), 0u);
  // A download holds a thread (and a sandbox's tool) as long as its client reads: counted.
  auto download = [] {
    HttpResponse r;
    r.content_type = "application/octet-stream";
    r.stream = std::make_shared<IdleStream>();
    return r;
  };
  auto a = limit.Admit("org_a", download());
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(limit.Open("org_a"), 1u);
  auto b = limit.Admit("org_a", download());
  EXPECT_EQ(b.status, 429);
  EXPECT_EQ(b.stream, nullptr);

  OrgStreamLimit unlimited(0);
  std::vector<HttpResponse> held;
  for (int i = 0; i < 300; ++i)
    held.push_back(unlimited.Admit("org_a", EventStream(std::make_shared<IdleStream>())));
  EXPECT_EQ(held.back().status, 200);
  EXPECT_EQ(unlimited.Open("org_a"), 300u);
}

class Parked : public DeferredResponse {
 public:
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void Start(Reply) override { started = true; }
  void Expire() override { expired = true; }
  void Cancel() override { cancelled = true; }
  std::chrono::steady_clock::time_point deadline_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool started = false, expired = false, cancelled = false;
};

HttpResponse Wait(std::shared_ptr<Parked> parked) {
  HttpResponse r;
  r.deferred = std::move(parked);
  return r;
}

TEST(OrgStreamLimit, WaitsCountWithStreamsAndPastTheCapAnswerAtOnce) {
  OrgStreamLimit limit(2);
  auto inner = std::make_shared<Parked>();
  auto held = limit.Admit("org_a", Wait(inner));
  ASSERT_NE(held.deferred, nullptr);
  EXPECT_EQ(held.deferred->deadline(), inner->deadline_);
  held.deferred->Start(nullptr);
  held.deferred->Expire();
  held.deferred->Cancel();
  EXPECT_TRUE(inner->started && inner->expired && inner->cancelled);
  auto stream = limit.Admit("org_a", EventStream(std::make_shared<IdleStream>()));
  EXPECT_EQ(limit.Open("org_a"), 2u);

  // Past the cap: a stream is refused, a wait is kept but not held (its deadline is now).
  EXPECT_EQ(limit.Admit("org_a", EventStream(std::make_shared<IdleStream>())).status, 429);
  auto before = std::chrono::steady_clock::now();
  auto short_wait = limit.Admit("org_a", Wait(std::make_shared<Parked>()));
  ASSERT_NE(short_wait.deferred, nullptr);
  EXPECT_EQ(short_wait.status, 200);
  EXPECT_GE(short_wait.deferred->deadline(), before);
  EXPECT_LE(short_wait.deferred->deadline(), std::chrono::steady_clock::now());
  EXPECT_EQ(limit.Open("org_a"), 2u);
  short_wait = HttpResponse();
  EXPECT_EQ(limit.Open("org_a"), 2u);  // it was never counted

  // Another organization is not touched; an answered wait gives its place back.
  auto other = limit.Admit("org_b", Wait(std::make_shared<Parked>()));
  EXPECT_GT(other.deferred->deadline(), std::chrono::steady_clock::now());
  held = HttpResponse();
  EXPECT_EQ(limit.Open("org_a"), 1u);
  auto again = limit.Admit("org_a", Wait(std::make_shared<Parked>()));
  EXPECT_GT(again.deferred->deadline(), std::chrono::steady_clock::now());
}

}  // namespace
}  // namespace adapt::api
