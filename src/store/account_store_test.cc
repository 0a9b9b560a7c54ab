// Plans, billing accounts, the ledger and the plan limits checked where sandboxes, volumes and
// endpoints are recorded; against both backends.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

PlanRecord SmallPlan(const std::string& id) {
  PlanRecord p;
  p.id = id;
  p.name = "Small";
  p.concurrent_sandboxes = 3;
  p.cpu = 4;
  p.memory_mib = 4096;
  p.cpu_second_nanos = 10000;
  p.updated_at = 1;
  return p;
}

TEST_P(StoreTest, PlansArePutReplacedAndListedByIdWithUnsetLimitsKeptUnset) {
  ASSERT_TRUE(store_->PutPlan(SmallPlan("small")).ok());
  PlanRecord big = SmallPlan("big");
  big.concurrent_sandboxes.reset();
  big.gpus = 0;
  ASSERT_TRUE(store_->PutPlan(big).ok());
  auto got = store_->GetPlan("big");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_FALSE(got->concurrent_sandboxes.has_value());
  EXPECT_EQ(got->gpus, 0);
  EXPECT_EQ(got->cpu_second_nanos, 10000);
  big.cpu = 64;
  ASSERT_TRUE(store_->PutPlan(big).ok());
  EXPECT_EQ(store_->GetPlan("big")->cpu, 64);
  auto all = store_->ListPlans();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "big");
  EXPECT_EQ(store_->GetPlan("none").status().code(), Code::kNotFound);
  // InsertPlanIfAbsent keeps what is there.
  PlanRecord again = SmallPlan("big");
  EXPECT_FALSE(*store_->InsertPlanIfAbsent(again));
  EXPECT_EQ(store_->GetPlan("big")->cpu, 64);
  EXPECT_TRUE(*store_->InsertPlanIfAbsent(SmallPlan("third")));
}

TEST_P(StoreTest, EnsureBillingAccountIsIdempotentAndKeepsTheFirstAccount) {
  ASSERT_TRUE(store_->PutPlan(SmallPlan("small")).ok());
  ASSERT_TRUE(store_->PutPlan(SmallPlan("big")).ok());
  EXPECT_EQ(store_->GetBillingAccount(org_.id).status().code(), Code::kNotFound);
  OrgRecord unregistered{NewId("org"), "signed-up", false, 1000, false};
  ASSERT_TRUE(store_->CreateOrg(unregistered).ok());
  ASSERT_FALSE(store_->GetOrg(unregistered.id)->registered);
  ASSERT_TRUE(store_->EnsureBillingAccount({unregistered.id, "small", "v1", 5}).ok());
  EXPECT_TRUE(store_->GetOrg(unregistered.id)->registered);
  auto first = store_->EnsureBillingAccount({org_.id, "small", "v1", 100});
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto second = store_->EnsureBillingAccount({org_.id, "big", "v2", 200});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->plan_id, "small");
  EXPECT_EQ(second->terms_version, "v1");
  EXPECT_EQ(second->registered_at, 100);
  EXPECT_EQ(store_->EnsureBillingAccount({org_.id + "x", "small", "v1", 1}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(store_->EnsureBillingAccount({other_org_.id, "none", "v1", 1}).status().code(),
            Code::kNotFound);
  ASSERT_TRUE(store_->SetAccountPlan(org_.id, "big").ok());
  EXPECT_EQ(store_->GetBillingAccount(org_.id)->plan_id, "big");
  EXPECT_EQ(store_->SetAccountPlan(org_.id, "none").code(), Code::kNotFound);
  EXPECT_EQ(store_->SetAccountPlan(other_org_.id, "big").code(), Code::kNotFound);
}

TEST_P(StoreTest, LedgerAppendsAreIdempotentAndTheBalanceDropsExpiredCredits) {
  LedgerEntryRecord grant{"led_1", org_.id, "credit", 5'000'000'000, "welcome", std::nullopt, 10};
  ASSERT_TRUE(store_->AppendLedgerEntry(grant).ok());
  // A retry with the same id is the first entry, not a second credit.
  auto replay = store_->AppendLedgerEntry(grant);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->reason, "welcome");
  LedgerEntryRecord lapsing{"led_2", org_.id, "credit", 2'000'000'000, "trial", 1000, 20};
  ASSERT_TRUE(store_->AppendLedgerEntry(lapsing).ok());
  LedgerEntryRecord used{"led_3", org_.id, "usage", 500'000'000, "cpu", std::nullopt, 30};
  ASSERT_TRUE(store_->AppendLedgerEntry(used).ok());
  EXPECT_EQ(*store_->Balance(org_.id, 999), 6'500'000'000);
  EXPECT_EQ(*store_->Balance(org_.id, 1000), 4'500'000'000);
  EXPECT_EQ(*store_->Balance(other_org_.id, 0), 0);
  EXPECT_EQ(store_->ListLedger(org_.id)->size(), 3u);
  EXPECT_TRUE(store_->ListLedger(other_org_.id)->empty());
  LedgerEntryRecord other = grant;
  other.amount_nanos = 1;
  EXPECT_EQ(store_->AppendLedgerEntry(other).status().code(), Code::kConflict);
  other.id = "led_4";
  other.org_id = "org_missing";
  EXPECT_EQ(store_->AppendLedgerEntry(other).status().code(), Code::kNotFound);
}

TEST_P(StoreTest, CpuAndMemoryLimitsCountOnlyProvisioningAndRunningSandboxes) {
  SandboxLimits limits = testing_support::Limits(std::nullopt, 4, 4096);
  SandboxRecord a = Sandbox(org_.id, "a");  // 2 cpus, 1024 MiB
  ASSERT_TRUE(store_->CreateSandbox(a, std::nullopt, limits).ok());
  SandboxRecord b = Sandbox(org_.id, "b");
  ASSERT_TRUE(store_->CreateSandbox(b, std::nullopt, limits).ok());
  auto over = store_->CreateSandbox(Sandbox(org_.id, "c"), std::nullopt, limits);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("limit cpu = 4"), std::string::npos)
      << over.status().message();
  // Memory at exactly its value fits; one MiB more does not.
  SandboxRecord big = Sandbox(other_org_.id, "m");
  big.config.memory_mib = 4096;
  ASSERT_TRUE(store_->CreateSandbox(big, std::nullopt, limits).ok());
  SandboxRecord more = Sandbox(other_org_.id, "n");
  more.config.memory_mib = 128;
  auto mem = store_->CreateSandbox(more, std::nullopt, limits);
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().message().find("limit memory_mib = 4096"), std::string::npos);

  // Hibernating `a` frees its cpus; starting it again is checked like a create.
  a.status = "hibernated";
  ASSERT_TRUE(store_->UpdateSandbox(a, {"provisioning"}, limits).ok());
  SandboxRecord c = Sandbox(org_.id, "c");
  ASSERT_TRUE(store_->CreateSandbox(c, std::nullopt, limits).ok());
  a.status = "provisioning";
  Status start = store_->UpdateSandbox(a, {"hibernated"}, limits);
  EXPECT_EQ(start.code(), Code::kResourceExhausted);
  EXPECT_EQ(store_->GetSandbox(org_.id, a.id)->status, "hibernated");
  // Moving between compute states is not a start: never refused.
  b.status = "running";
  EXPECT_TRUE(store_->UpdateSandbox(b, {"provisioning"}, limits).ok());
  c.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(c, {"provisioning"}).ok());
  EXPECT_TRUE(store_->UpdateSandbox(a, {"hibernated"}, limits).ok());
}

TEST_P(StoreTest, FiftyConcurrentCreatesAgainstALimitOfTenMakeExactlyTen) {
  std::atomic<int> created{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 50; ++i)
    threads.emplace_back([&] {
      if (store_
              ->CreateSandbox(Sandbox(org_.id, "x"), std::nullopt,
                              testing_support::Limits(std::nullopt, 20))
              .ok())
        ++created;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 10);  // 2 cpus each
  EXPECT_EQ(store_->GetOrgUsage(org_.id)->cpu, 20);
}

TEST_P(StoreTest, VolumeAndEndpointLimitsAreCheckedWhereTheyAreRecorded) {
  VolumeRecord v{NewId("vol"), org_.id, "default", 1024, "creating", "", 1};
  ASSERT_TRUE(store_->PutVolume(v, 2).ok());
  v.status = "ready";
  ASSERT_TRUE(store_->PutVolume(v, 1).ok());  // an update is not a new allocation
  VolumeRecord w{NewId("vol"), org_.id, "more", 1025, "creating", "", 2};
  Status st = store_->PutVolume(w, 2);
  EXPECT_EQ(st.code(), Code::kResourceExhausted);
  EXPECT_NE(st.message().find("limit persistent_storage_gib = 2"), std::string::npos);
  w.size_mib = 1024;
  EXPECT_TRUE(store_->PutVolume(w, 2).ok());

  SandboxRecord s = MustCreate(Sandbox(org_.id, "e"));
  for (int port = 1; port <= 2; ++port)
    ASSERT_TRUE(store_->PutEndpoint({NewId("ep"), org_.id, s.id, port, NewId("h"), 1}, 2).ok());
  Status ep = store_->PutEndpoint({NewId("ep"), org_.id, s.id, 3, NewId("h"), 1}, 2);
  EXPECT_EQ(ep.code(), Code::kResourceExhausted);
  EXPECT_NE(ep.message().find("limit endpoints = 2"), std::string::npos);
  auto usage = store_->GetOrgUsage(org_.id);
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->endpoints, 2);
  EXPECT_EQ(usage->persistent_storage_mib, 2048);
  EXPECT_EQ(usage->sandboxes, 1);
  EXPECT_EQ(usage->running_sandboxes, 1);
  EXPECT_EQ(store_->GetOrgUsage(other_org_.id)->endpoints, 0);
}

}  // namespace
}  // namespace adapt::store
