#include "core/image_commit.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/sandbox_hibernation.h"

namespace adapt::core {
namespace {

template <typename R>
std::string CommitNameText(const R& r) {
  return r.ok() ? *r : "error: " + r.status().message();
}

store::SandboxRecord Sandbox(const std::string& status) {
  store::SandboxRecord r;
  r.id = "sbx_1";
  r.status = status;
  return r;
}

store::SandboxRecord Stopped(bool durable, HibernationPhase phase) {
  store::SandboxRecord r = Sandbox("hibernated");
  Hibernation h;
  h.phase = phase;
  h.workspace_kept = durable;
  WriteHibernation(r, h);
  return r;
}

TEST(CommitName, NameAndTagBecomeNameColonTagWithLatestByDefault) {
  EXPECT_EQ(CommitNameText(CommitName({"my-env", std::nullopt})), "my-env:latest");
  EXPECT_EQ(CommitNameText(CommitName({"a", "v1.2_RC-3"})), "a:v1.2_RC-3");
  EXPECT_EQ(CommitNameText(CommitName({std::string(63, 'x'), std::string(128, 'T')})),
            std::string(63, 'x') + ":" + std::string(128, 'T'));
}

TEST(CommitName, BadNamesAndTagsAreInvalidArgumentsNamingTheField) {
  for (std::string name :
       std::vector<std::string>{"", "Upper", "under_score", "-lead", "trail-", "a/b", "a:b", "../x",
                                "dot.ted", std::string(64, 'x')}) {
    auto r = CommitName({name, std::nullopt});
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << name;
    EXPECT_EQ(r.status().field(), "name") << name;
  }
  for (std::string tag : std::vector<std::string>{"", ".hidden", "-dash", "a/b", "a:b", "sp ace",
                                                  std::string(129, 't')}) {
    auto r = CommitName({"ok", tag});
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << tag;
    EXPECT_EQ(r.status().field(), "tag") << tag;
  }
}

TEST(CheckCommittable, RunningAndStoppedDurableSandboxesCanBeSaved) {
  EXPECT_TRUE(CheckCommittable(Sandbox("running")).ok());
  EXPECT_TRUE(CheckCommittable(Stopped(true, HibernationPhase::kStopped)).ok());
}

TEST(CheckCommittable, OtherStatesAreConflictsSayingWhy) {
  Status instant = CheckCommittable(Stopped(false, HibernationPhase::kStopped));
  EXPECT_EQ(instant.code(), Code::kConflict);
  EXPECT_NE(instant.message().find("instant"), std::string::npos) << instant.message();
  Status stopping = CheckCommittable(Stopped(true, HibernationPhase::kStopping));
  EXPECT_EQ(stopping.code(), Code::kConflict);
  EXPECT_NE(stopping.message().find("stopping"), std::string::npos) << stopping.message();
  for (std::string status :
       std::vector<std::string>{"provisioning", "completed", "failed", "deleting", "deleted"}) {
    Status st = CheckCommittable(Sandbox(status));
    EXPECT_EQ(st.code(), Code::kConflict) << status;
    EXPECT_NE(st.message().find("is " + status), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace adapt::core
