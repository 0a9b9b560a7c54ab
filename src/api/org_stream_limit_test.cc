#include "api/org_stream_limit.h"

#include <gtest/gtest.h>

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

TEST(OrgStreamLimit, OtherAnswersAreNotCountedAndZeroMeansNoLimit) {
  OrgStreamLimit limit(1);
  HttpResponse download;
  download.content_type = "application/octet-stream";
  download.stream = std::make_shared<IdleStream>();
  auto a = limit.Admit("org_a", std::move(download));
  auto b = limit.Admit("org_a", HttpResponse());
  EXPECT_EQ(limit.Open("org_a"), 0u);

  OrgStreamLimit unlimited(0);
  std::vector<HttpResponse> held;
  for (int i = 0; i < 300; ++i)
    held.push_back(unlimited.Admit("org_a", EventStream(std::make_shared<IdleStream>())));
  EXPECT_EQ(held.back().status, 200);
  EXPECT_EQ(unlimited.Open("org_a"), 300u);
}

}  // namespace
}  // namespace adapt::api
