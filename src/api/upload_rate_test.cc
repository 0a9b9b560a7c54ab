#include "api/upload_rate.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

using std::chrono::milliseconds;

UploadRateLimits Limits() { return {1000, milliseconds(2000), milliseconds(60000)}; }

TEST(UploadRate, NothingAtAllIsTooSlowOnceTheGraceIsOver) {
  UploadRate rate(Limits());
  EXPECT_EQ(rate.NextReadDeadline(), milliseconds(2000));
  rate.Record(0, milliseconds(2001));
  EXPECT_TRUE(rate.TooSlow());
  EXPECT_NE(rate.Why().find("1000 bytes/s"), std::string::npos) << rate.Why();
}

TEST(UploadRate, ATrickleIsCutAfterTheGrace) {
  UploadRate rate(Limits());
  for (int i = 0; i < 8; ++i) rate.Record(1, milliseconds(250));
  EXPECT_FALSE(rate.TooSlow());  // 2 s: still the grace
  rate.Record(1, milliseconds(250));
  EXPECT_TRUE(rate.TooSlow());
}

TEST(UploadRate, ASteadyBodyAboveTheMinimumPasses) {
  UploadRate rate(Limits());
  for (int i = 0; i < 600; ++i) rate.Record(300, milliseconds(100));  // 3000 bytes/s, a minute
  EXPECT_FALSE(rate.TooSlow());
}

TEST(UploadRate, BytesAlreadySentBuyTimeForTheNextRead) {
  UploadRate rate(Limits());
  rate.Record(10000, milliseconds(1000));  // 10 s worth at the minimum
  EXPECT_EQ(rate.NextReadDeadline(), milliseconds(9000));
  rate.Record(0, milliseconds(9001));
  EXPECT_TRUE(rate.TooSlow());
}

TEST(UploadRate, NoReadWaitsLongerThanTheMaximum) {
  UploadRate rate(Limits());
  rate.Record(100'000'000, milliseconds(1000));
  EXPECT_EQ(rate.NextReadDeadline(), milliseconds(60000));
}

TEST(UploadRate, ZeroMeansNoMinimum) {
  UploadRate rate({0, milliseconds(2000), milliseconds(60000)});
  rate.Record(0, milliseconds(50000));
  EXPECT_FALSE(rate.TooSlow());
  EXPECT_EQ(rate.NextReadDeadline(), milliseconds(60000));
}

}  // namespace
}  // namespace adapt::api
