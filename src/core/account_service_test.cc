// AccountService over a MemoryStore, and the plan limits SandboxService hands the store:
// registration, lazy accounts for operator-made organizations, admin-only plan changes and
// credits, and creates and starts refused at exactly the plan's values.
#include "core/account_service.h"

#include <gtest/gtest.h>

#include <boost/asio/thread_pool.hpp>

#include "core/core_test_fixture.h"
#include "core/sandbox_service.h"

namespace adapt::core {
namespace {

class AccountServiceTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    accounts_ = std::make_unique<AccountService>(store_, AccountOptions{"2026-01", 50});
    ASSERT_TRUE(accounts_->LoadPlans({}).ok());
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
    sandboxes_ = std::make_unique<SandboxService>(store_, runtime_, *lifecycle_, *images_, workers_,
                                                  testing_support::kTestImage);
    sandboxes_->set_account_service(accounts_.get());
  }
  void TearDown() override {
    workers_.join();
    CoreTest::TearDown();
  }

  Principal Caller() { return Principal{org_, "key_1", false}; }
  Principal Admin() { return Principal{"org_admin", "key_admin", true}; }

  store::PlanRecord Tiny() {
    store::PlanRecord p;
    p.id = "tiny";
    p.name = "Tiny";
    p.concurrent_sandboxes = 2;
    p.cpu = 2;
    p.memory_mib = 1024;
    p.max_run_seconds = 600;
    return p;
  }

  CreateSandbox Small(int64_t ttl = 60) {
    CreateSandbox c;
    c.cpu = 1;
    c.memory_mib = 256;
    c.ttl_seconds = ttl;
    c.image = testing_support::kTestImage;
    return c;
  }

  boost::asio::thread_pool workers_{1};
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<SandboxLifecycle> lifecycle_;
  std::unique_ptr<SandboxService> sandboxes_;
};

TEST_F(AccountServiceTest, TheBuiltInDefaultPlanAllowsTheCapAtSeedMaxima) {
  auto plan = store_.GetPlan(kDefaultPlanId);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->concurrent_sandboxes, 50);
  EXPECT_EQ(plan->cpu, 50 * 32);
  EXPECT_EQ(plan->memory_mib, 50 * 65536);
  EXPECT_FALSE(plan->max_run_seconds.has_value());
  EXPECT_EQ(plan->queued_jobs, 1000);
  // An operator's changes to the stored default survive the next start.
  store::PlanRecord changed = *plan;
  changed.cpu = 8;
  ASSERT_TRUE(store_.PutPlan(changed).ok());
  ASSERT_TRUE(accounts_->LoadPlans({}).ok());
  EXPECT_EQ(store_.GetPlan(kDefaultPlanId)->cpu, 8);
}

TEST_F(AccountServiceTest, RegisterIsIdempotentAndMarksTheOrganizationRegistered) {
  auto org = store_.CreateOrg({NewId("org"), "signed-up", false, 1, false});
  ASSERT_TRUE(org.ok());
  Principal who{org->id, "key_2", false};
  auto before = accounts_->Get(who);
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_FALSE(before->registered);
  EXPECT_EQ(store_.GetBillingAccount(org->id).status().code(), Code::kNotFound);
  auto first = accounts_->Register(who);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->registered);
  EXPECT_EQ(first->terms_version, "2026-01");
  EXPECT_EQ(first->plan.id, kDefaultPlanId);
  EXPECT_TRUE(store_.GetOrg(org->id)->registered);
  auto second = accounts_->Register(who);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->registered_at, first->registered_at);
}

TEST_F(AccountServiceTest, AnOperatorMadeOrganizationGetsItsAccountOnFirstRead) {
  auto account = accounts_->Get(Caller());
  ASSERT_TRUE(account.ok()) << account.status().message();
  EXPECT_TRUE(account->registered);
  EXPECT_TRUE(store_.GetBillingAccount(org_).ok());
}

TEST_F(AccountServiceTest, PlansAndCreditsNeedTheAdminKeyAndValidValues) {
  EXPECT_EQ(accounts_->PutPlan(Caller(), Tiny()).status().code(), Code::kPermissionDenied);
  EXPECT_EQ(accounts_->ListPlans(Caller()).status().code(), Code::kPermissionDenied);
  EXPECT_EQ(accounts_->Credit(Caller(), {org_, 5, "gift", std::nullopt, ""}).status().code(),
            Code::kPermissionDenied);
  store::PlanRecord bad = Tiny();
  bad.cpu = -1;
  EXPECT_EQ(accounts_->PutPlan(Admin(), bad).status().field(), "cpu");
  store::PlanRecord odd_name = Tiny();
  odd_name.name = std::string("tiny\0plan", 9);
  EXPECT_EQ(accounts_->PutPlan(Admin(), odd_name).status().field(), "name");
  ASSERT_TRUE(accounts_->PutPlan(Admin(), Tiny()).ok());
  EXPECT_EQ(accounts_->SetOrgPlan(Admin(), org_, "nope").status().code(), Code::kNotFound);
  EXPECT_EQ(accounts_->SetOrgPlan(Admin(), "org_missing", "tiny").status().code(), Code::kNotFound);
  auto moved = accounts_->SetOrgPlan(Admin(), org_, "tiny");
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  EXPECT_EQ(moved->plan.id, "tiny");
  EXPECT_EQ(accounts_->Credit(Admin(), {org_, 0, "gift", std::nullopt, ""}).status().field(),
            "amount");
  EXPECT_EQ(accounts_->Credit(Admin(), {org_, 5, "", std::nullopt, ""}).status().field(), "reason");
  ASSERT_TRUE(accounts_->Credit(Admin(), {org_, 7'000'000'000, "gift", std::nullopt, "c1"}).ok());
  ASSERT_TRUE(accounts_->Credit(Admin(), {org_, 7'000'000'000, "gift", std::nullopt, "c1"}).ok());
  EXPECT_EQ(accounts_->Get(Caller())->balance_nanos, 7'000'000'000);
}

TEST_F(AccountServiceTest, CreatesAreRefusedAtExactlyThePlansValues) {
  ASSERT_TRUE(accounts_->PutPlan(Admin(), Tiny()).ok());
  ASSERT_TRUE(accounts_->SetOrgPlan(Admin(), org_, "tiny").ok());
  // Run time: at the limit is fine, one second more and "no expiry" are not.
  auto too_long = sandboxes_->Create(Caller(), Small(601), std::nullopt, FieldNames());
  EXPECT_EQ(too_long.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(too_long.status().field(), "ttl_seconds");
  EXPECT_NE(too_long.status().message().find("max_run_seconds = 600"), std::string::npos);
  CreateSandbox forever = Small();
  forever.ttl_seconds.reset();
  forever.no_expiry = true;
  EXPECT_EQ(sandboxes_->Create(Caller(), forever, std::nullopt, FieldNames()).status().code(),
            Code::kResourceExhausted);
  auto a = sandboxes_->Create(Caller(), Small(600), std::nullopt, FieldNames());
  ASSERT_TRUE(a.ok()) << a.status().message();
  // The second one as the store has it while it runs (the first may fail to boot on the fake
  // runtime meanwhile, and a failed sandbox no longer counts).
  Insert(NewSandbox("running"));
  Insert(NewSandbox("running"));
  auto c = sandboxes_->Create(Caller(), Small(), std::nullopt, FieldNames());
  EXPECT_EQ(c.status().code(), Code::kResourceExhausted);
  EXPECT_NE(c.status().message().find("concurrent_sandboxes = 2"), std::string::npos)
      << c.status().message();
}

TEST_F(AccountServiceTest, StartingAHibernatedSandboxIsCheckedAgainstThePlan) {
  store::PlanRecord p = Tiny();
  p.concurrent_sandboxes = 5;
  ASSERT_TRUE(accounts_->PutPlan(Admin(), p).ok());
  ASSERT_TRUE(accounts_->SetOrgPlan(Admin(), org_, "tiny").ok());
  store::SandboxRecord hibernated = NewSandbox();
  hibernated.config.cpu = 2;
  Insert(hibernated);
  lifecycle_->Provision(hibernated.id);
  auto stopped = sandboxes_->Stop(Caller(), hibernated.id);
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  ASSERT_EQ(StatusOf(hibernated.id), "hibernated");
  Insert(NewSandbox("running"));  // 1 cpu
  auto start = sandboxes_->Start(Caller(), hibernated.id);
  EXPECT_EQ(start.status().code(), Code::kResourceExhausted);
  EXPECT_NE(start.status().message().find("limit cpu = 2"), std::string::npos);
  EXPECT_EQ(StatusOf(hibernated.id), "hibernated");
}

}  // namespace
}  // namespace adapt::core
