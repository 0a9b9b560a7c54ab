#include "api/body_read_step.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

TEST(NextBodyReadStep, KeepsFillingWhileTheClientsBytesAreWaiting) {
  EXPECT_EQ(NextBodyReadStep(65536, 1 << 20, false, 1), BodyReadStep::kReadMore);
  EXPECT_EQ(NextBodyReadStep(65536, 1 << 20, false, 500000), BodyReadStep::kReadMore);
}

TEST(NextBodyReadStep, HandsOverWhatCameOnceNothingMoreIsWaiting) {
  // A slow client's few bytes go to the handler at once, not after the buffer is full.
  EXPECT_EQ(NextBodyReadStep(10, 1 << 20, false, 0), BodyReadStep::kDeliver);
}

TEST(NextBodyReadStep, HandsOverAFullBufferWhateverIsWaiting) {
  EXPECT_EQ(NextBodyReadStep(4096, 4096, false, 100000), BodyReadStep::kDeliver);
}

TEST(NextBodyReadStep, HandsOverAtTheBodysEndEvenWithNothingRead) {
  EXPECT_EQ(NextBodyReadStep(0, 4096, true, 0), BodyReadStep::kDeliver);
  EXPECT_EQ(NextBodyReadStep(100, 4096, true, 50), BodyReadStep::kDeliver);
}

TEST(NextBodyReadStep, ReadsAgainWhenOnlyFramingCame) {
  // 0 bytes would tell the handler the body ended.
  EXPECT_EQ(NextBodyReadStep(0, 4096, false, 0), BodyReadStep::kReadMore);
}

}  // namespace
}  // namespace adapt::api
