// StartupOutputFollower: what is new between two reads of a sandbox's startup output, from
// scripted reads; SandboxService::FollowStartup over a FakeRuntime that prints.
#include "core/startup_output.h"

#include <gtest/gtest.h>

#include <deque>

#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

Sandbox WithOutput(const std::string& status, const std::string& out, const std::string& err) {
  Sandbox s;
  s.status = status;
  s.startup = StartupView{};
  s.startup->stdout_text = out;
  s.startup->stderr_text = err;
  return s;
}

class ScriptedReads {
 public:
  void Add(Sandbox s) { reads_.push_back(std::move(s)); }
  StartupOutputFollower Follower() {
    return StartupOutputFollower([this]() -> Result<Sandbox> {
      if (reads_.empty()) return NotFound("sandbox gone");
      Sandbox s = reads_.front();
      reads_.pop_front();
      return s;
    });
  }

 private:
  std::deque<Sandbox> reads_;
};

TEST(StartupOutputFollower, SaysWhatWasAppendedOnEachStreamAndNothingWhenNothingChanged) {
  ScriptedReads reads;
  reads.Add(WithOutput("provisioning", "", ""));
  reads.Add(WithOutput("running", "first\n", ""));
  reads.Add(WithOutput("running", "first\n", ""));
  reads.Add(WithOutput("running", "first\nsecond\n", "warn\n"));
  reads.Add(WithOutput("completed", "first\nsecond\nthird\n", "warn\n"));
  auto f = reads.Follower();
  auto u = f.Next();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->stdout_text, "");
  EXPECT_FALSE(u->ended);
  u = f.Next();
  EXPECT_EQ(u->stdout_text, "first\n");
  u = f.Next();
  EXPECT_EQ(u->stdout_text, "");
  EXPECT_EQ(u->stderr_text, "");
  u = f.Next();
  EXPECT_EQ(u->stdout_text, "second\n");
  EXPECT_EQ(u->stderr_text, "warn\n");
  EXPECT_FALSE(u->replaced);
  EXPECT_FALSE(u->ended);
  u = f.Next();
  EXPECT_EQ(u->stdout_text, "third\n");
  EXPECT_EQ(u->stderr_text, "");
  ASSERT_TRUE(u->ended.has_value());
  EXPECT_EQ(u->ended->status, "completed");
  EXPECT_EQ(f.Next().status().code(), Code::kNotFound);
}

TEST(StartupOutputFollower, DroppedOldOutputReplacesAndAnOlderReadChangesNothing) {
  ScriptedReads reads;
  reads.Add(WithOutput("running", "aaaa", "e"));
  reads.Add(WithOutput("running", "aa", "e"));      // a read from before the last one
  reads.Add(WithOutput("running", "aabbbb", "e"));  // the ring dropped "aa"
  reads.Add(WithOutput("running", "aabbbbc", "e"));
  auto f = reads.Follower();
  EXPECT_EQ(f.Next()->stdout_text, "aaaa");
  auto u = f.Next();
  EXPECT_EQ(u->stdout_text, "");
  EXPECT_FALSE(u->replaced);
  u = f.Next();
  EXPECT_TRUE(u->replaced);
  EXPECT_EQ(u->stdout_text, "aabbbb");
  EXPECT_EQ(u->stderr_text, "e");  // both streams, whole, on a replace
  u = f.Next();
  EXPECT_FALSE(u->replaced);
  EXPECT_EQ(u->stdout_text, "c");
}

class FollowStartupTest : public testing_support::SandboxServiceFixture {};

TEST_F(FollowStartupTest, FollowsTheRunningCommandsOutputToItsRecordedEnd) {
  auto r = Insert(NewSandbox("provisioning", /*startup=*/true));
  lifecycle_->Provision(r.id);
  ASSERT_EQ(StatusOf(r.id), "running");
  auto f = service_->FollowStartup(Caller(), r.id);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->Next()->stdout_text, "");
  runtime_.Print(r.id, runtime::Stream::kStdout, "first\n");
  auto u = f->Next();
  EXPECT_EQ(u->stdout_text, "first\n");
  EXPECT_FALSE(u->ended);
  runtime_.Print(r.id, runtime::Stream::kStderr, "oops\n");
  runtime_.Print(r.id, runtime::Stream::kStdout, "second\n");
  runtime_.Exit(r.id, 0);
  lifecycle_->CheckRunning(r.id);
  u = f->Next();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->stdout_text, "second\n");
  EXPECT_EQ(u->stderr_text, "oops\n");
  ASSERT_TRUE(u->ended.has_value());
  EXPECT_EQ(u->ended->status, "completed");
  ASSERT_TRUE(u->ended->startup.has_value());
  EXPECT_EQ(u->ended->startup->exit_code, 0);
  EXPECT_EQ(u->ended->startup->stdout_text, "first\nsecond\n");
}

TEST_F(FollowStartupTest, AnotherOrganizationsOrAnInteractiveSandboxIsRefused) {
  auto startup = Insert(NewSandbox("running", /*startup=*/true));
  EXPECT_EQ(
      service_->FollowStartup(Principal{"org_other", "key_2", false}, startup.id).status().code(),
      Code::kNotFound);
  EXPECT_EQ(service_->FollowStartup(Caller(), "sbx_missing").status().code(), Code::kNotFound);
  auto interactive = Insert(NewSandbox("running"));
  EXPECT_EQ(service_->FollowStartup(Caller(), interactive.id).status().code(), Code::kConflict);
}

}  // namespace
}  // namespace adapt::core
