#include "api/event_resume.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

TEST(ResumeEvents, AKeptPointResumesRightAfterIt) {
  EventResume r = ResumeEvents(40, 50, 10);
  EXPECT_FALSE(r.reset);
  EXPECT_EQ(r.after, 40);
  EXPECT_TRUE(r.reason.empty());
}

TEST(ResumeEvents, TheLimitItselfIsStillReplayed) {
  EventResume r = ResumeEvents(1, 5000, kEventReplayLimit);
  EXPECT_FALSE(r.reset);
  EXPECT_EQ(r.after, 1);
}

TEST(ResumeEvents, FurtherBehindThanTheLimitResetsToNow) {
  EventResume r = ResumeEvents(1, 5000, kEventReplayLimit + 1);
  EXPECT_TRUE(r.reset);
  EXPECT_EQ(r.after, 5000);
  EXPECT_NE(r.reason.find("older than what the stream replays"), std::string::npos);
}

TEST(ResumeEvents, AnIdThisStoreNeverSentResetsToNow) {
  EventResume r = ResumeEvents(900, 50, 0);
  EXPECT_TRUE(r.reset);
  EXPECT_EQ(r.after, 50);
  EXPECT_NE(r.reason.find("newer than any event"), std::string::npos);
}

TEST(ResumeEvents, AnIdBehindPrunedEventsResetsToNow) {
  EventResume r = ResumeEvents(10, 50, 3, 11);
  EXPECT_TRUE(r.reset);
  EXPECT_EQ(r.after, 50);
  EXPECT_NE(r.reason.find("older than the events kept"), std::string::npos);
}

TEST(ResumeEvents, AnIdAtOrPastThePrunedOnesResumes) {
  EXPECT_FALSE(ResumeEvents(11, 50, 3, 11).reset);
  EventResume r = ResumeEvents(20, 50, 3, 11);
  EXPECT_FALSE(r.reset);
  EXPECT_EQ(r.after, 20);
}

}  // namespace
}  // namespace adapt::api
