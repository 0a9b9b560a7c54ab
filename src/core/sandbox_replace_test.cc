// SandboxService::Replace over a MemoryStore and a FakeRuntime: the fresh sandbox an
// automation's retry runs in keeps the settings, env and expiry time of the one it replaces;
// durable, deleted and other organizations' sandboxes are not replaced.
#include <gtest/gtest.h>

#include "core/sandbox_service.h"
#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

class SandboxReplaceTest : public testing_support::SandboxServiceFixture {};

TEST_F(SandboxReplaceTest, AFreshSandboxKeepsTheSettingsEnvAndExpiryOfTheOneItReplaces) {
  store::SandboxRecord failed = NewSandbox("failed");
  failed.config.cpu = 2;
  // A replacement of a replacement: the old automation's label is not carried over.
  failed.config.labels = {{"team", "data"}, {"platform.automation", "aut_old"}};
  failed.config.startup = store::StartupConfig{};
  failed.config.startup->mode = "command";
  failed.config.startup->argv = std::vector<std::string>{"/bin/sleep", "600"};
  failed.env = {{"TOKEN", "kept"}};
  failed.expires_at = NowMillis() + 600'000;
  Insert(failed);
  auto fresh = service_->Replace(org_, failed.id, {{"platform.automation", "aut_new"}});
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_NE(fresh->id, failed.id);
  store::SandboxRecord made = Stored(fresh->id);
  EXPECT_EQ(made.org_id, org_);
  EXPECT_EQ(made.config.cpu, 2);
  EXPECT_EQ(made.config.memory_mib, 512);
  EXPECT_EQ(made.config.image, testing_support::kTestImage);
  EXPECT_EQ(made.config.labels, (std::map<std::string, std::string>{
                                    {"team", "data"}, {"platform.automation", "aut_new"}}));
  auto labelled = service_->ListLabelled("platform.automation");
  ASSERT_TRUE(labelled.ok());
  ASSERT_EQ(labelled->size(), 2u) << "the failed one and its replacement";
  EXPECT_EQ(made.config.network.egress, "none");
  EXPECT_EQ(made.config.startup, failed.config.startup);
  EXPECT_EQ(made.config.startup_class, "instant");
  EXPECT_EQ(made.env.at("TOKEN"), "kept");
  // The same deadline (to within the second kept back for the create), not a new TTL.
  ASSERT_TRUE(made.expires_at.has_value());
  EXPECT_LE(*made.expires_at, *failed.expires_at);
  EXPECT_GE(*made.expires_at, *failed.expires_at - 3'000);
  // The old one is left as it was: the caller deletes it.
  EXPECT_EQ(StatusOf(failed.id), "failed");
}

TEST_F(SandboxReplaceTest, DurableExpiredDeletedAndOtherOrganizationsSandboxesAreNotReplaced) {
  auto durable = Insert(NewSandbox("failed", false, true));
  EXPECT_EQ(service_->Replace(org_, durable.id, {}).status().code(), Code::kConflict);
  store::SandboxRecord expired = NewSandbox("failed");
  expired.expires_at = NowMillis() - 1;
  Insert(expired);
  EXPECT_EQ(service_->Replace(org_, expired.id, {}).status().code(), Code::kNotFound);
  auto other = Insert(NewSandbox("failed"));
  EXPECT_EQ(service_->Replace("org_someone_else", other.id, {}).status().code(), Code::kNotFound);
  auto deleted = Insert(NewSandbox("deleted"));
  auto before = store_.ListSandboxes(org_, "", 50, std::nullopt);
  EXPECT_EQ(service_->Replace(org_, deleted.id, {}).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Replace(org_, durable.id, {}).status().code(), Code::kConflict);
  auto after = store_.ListSandboxes(org_, "", 50, std::nullopt);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(after->items.size(), before->items.size());  // nothing made
}

}  // namespace
}  // namespace adapt::core
