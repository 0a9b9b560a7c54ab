// SandboxService's verbs that take no request body, over a MemoryStore and a FakeRuntime:
// delete, by the caller's organization only.
#include "core/sandbox_service.h"

#include <gtest/gtest.h>

#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

class SandboxServiceTest : public testing_support::SandboxServiceFixture {};

TEST_F(SandboxServiceTest, TheAssistantsCreateOfAnUntrustedImageIsRefusedAndRecordsNothing) {
  CreateSandbox req;
  req.image = "ghcr.io/acme/app:1";
  req.surface = RequestSurface::kAssistant;
  auto refused = service_->Create(Caller(), req, std::nullopt);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(refused.status().field(), "image");
  auto page = store_.ListSandboxes(org_, "", 10, std::nullopt);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
  // Through the API (seed 001's rule) the policy lets it by; this test's catalog has no
  // registry to pull it from, which is the only refusal left.
  req.surface = RequestSurface::kApi;
  auto api = service_->Create(Caller(), req, std::nullopt);
  EXPECT_NE(api.status().code(), Code::kPermissionDenied) << api.status().message();
}

TEST_F(SandboxServiceTest, TheProfileReachesTheRuntimesSpec) {
  auto record = NewSandbox();
  record.config.security_profile = "developer";
  auto r = Insert(record);
  lifecycle_->Provision(r.id);
  auto launched = runtime_.Get(r.id);
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->request.spec.security_profile, "developer");
}

TEST_F(SandboxServiceTest, DeletingARunningSandboxTearsItDownAndSaysDone) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  ASSERT_TRUE(runtime_.Running(r.id));
  auto out = service_->Delete(Caller(), r.id);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->done);
  EXPECT_EQ(StatusOf(r.id), "deleted");
  EXPECT_EQ(Stored(r.id).termination_reason, "cancelled");
  EXPECT_FALSE(runtime_.Has(r.id));
}

TEST_F(SandboxServiceTest, DeletingTwiceIsDoneBothTimes) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  ASSERT_TRUE(service_->Delete(Caller(), r.id).ok());
  auto again = service_->Delete(Caller(), r.id);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_TRUE(again->done);
  EXPECT_EQ(runtime_.CountCalls(runtime::FakeRuntime::Op::kDestroy, r.id), 1);
}

TEST_F(SandboxServiceTest, AnotherOrganizationsOrAMalformedIdIsNotFoundAndNothingChanges) {
  auto r = Insert(NewSandbox());
  lifecycle_->Provision(r.id);
  Principal stranger{"org_other", "key_2", false};
  EXPECT_EQ(service_->Delete(stranger, r.id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Delete(Caller(), "../" + r.id).status().code(), Code::kNotFound);
  EXPECT_EQ(StatusOf(r.id), "running");
  EXPECT_TRUE(runtime_.Running(r.id));
}

}  // namespace
}  // namespace adapt::core
