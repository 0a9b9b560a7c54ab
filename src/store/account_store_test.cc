// Plans, billing accounts, the ledger and the plan limits checked where sandboxes, volumes and
// endpoints are recorded; against both backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

LedgerEntryRecord Entry(const std::string& id, const std::string& org_id, const std::string& kind,
                        int64_t nanos, const std::string& reason, std::optional<int64_t> expires_at,
                        int64_t created_at) {
  LedgerEntryRecord e;
  e.id = id;
  e.org_id = org_id;
  e.kind = kind;
  e.amount_nanos = nanos;
  e.reason = reason;
  e.expires_at = expires_at;
  e.created_at = created_at;
  return e;
}

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
  big.database_mib = 2048;
  big.database_connections = 7;
  big.app_replicas = 4;
  ASSERT_TRUE(store_->PutPlan(big).ok());
  auto got = store_->GetPlan("big");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->app_replicas, 4);
  EXPECT_FALSE(store_->GetPlan("small")->app_replicas.has_value());
  EXPECT_FALSE(got->concurrent_sandboxes.has_value());
  EXPECT_EQ(got->database_mib, 2048);
  EXPECT_EQ(got->database_connections, 7);
  EXPECT_FALSE(store_->GetPlan("small")->database_mib.has_value());
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
  LedgerEntryRecord grant =
      Entry("led_1", org_.id, "credit", 5'000'000'000, "welcome", std::nullopt, 10);
  ASSERT_TRUE(store_->AppendLedgerEntry(grant).ok());
  // A retry with the same id is the first entry, not a second credit.
  auto replay = store_->AppendLedgerEntry(grant);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->reason, "welcome");
  LedgerEntryRecord lapsing = Entry("led_2", org_.id, "credit", 2'000'000'000, "trial", 1000, 20);
  ASSERT_TRUE(store_->AppendLedgerEntry(lapsing).ok());
  LedgerEntryRecord used = Entry("led_3", org_.id, "usage", 500'000'000, "cpu", std::nullopt, 30);
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

TEST_P(StoreTest, TheLedgerIsReadInPagesAfterASequenceNumberPerOrganization) {
  for (int i = 1; i <= 5; ++i) {
    const std::string id = "led_p" + std::to_string(i);
    ASSERT_TRUE(
        store_->AppendLedgerEntry(Entry(id, org_.id, "credit", i, "top-up", std::nullopt, i)).ok());
    if (i == 2) {
      ASSERT_TRUE(store_
                      ->AppendLedgerEntry(
                          Entry("led_other", other_org_.id, "credit", 9, "x", std::nullopt, i))
                      .ok());
    }
  }
  auto first = *store_->ListLedger(org_.id, std::nullopt, 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].id, "led_p1");
  EXPECT_LT(first[0].seq, first[1].seq);
  auto second = *store_->ListLedger(org_.id, first.back().seq, 2);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].id, "led_p3");  // the other organization's entry between is not here
  auto rest = *store_->ListLedger(org_.id, second.back().seq, 0);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].id, "led_p5");
  EXPECT_TRUE(store_->ListLedger(org_.id, rest.back().seq, 2)->empty());
}

LedgerEntryRecord UsageEntry(const std::string& org_id, const std::string& subject, int64_t from,
                             int64_t to, int64_t nanos) {
  LedgerEntryRecord e = Entry("use_" + subject + "_" + std::to_string(from), org_id, "usage", nanos,
                              "compute", std::nullopt, to);
  e.subject_kind = "sandbox";
  e.subject_id = subject;
  e.period_start = from;
  e.period_end = to;
  e.cpu_millis = 2 * (to - from);
  e.memory_mib_millis = 1024 * (to - from);
  return e;
}

TEST_P(StoreTest, UsageEntriesKeepTheirPeriodAndSumPerSubject) {
  EXPECT_EQ(*store_->MeteredUntil("sbx_a"), 0);
  ASSERT_TRUE(store_->AppendLedgerEntry(UsageEntry(org_.id, "sbx_a", 1000, 31000, 70)).ok());
  ASSERT_TRUE(store_->AppendLedgerEntry(UsageEntry(org_.id, "sbx_a", 31000, 61000, 70)).ok());
  ASSERT_TRUE(store_->AppendLedgerEntry(UsageEntry(org_.id, "sbx_b", 5000, 6000, 1)).ok());
  // The same period again is the first entry: nothing is charged twice.
  ASSERT_TRUE(store_->AppendLedgerEntry(UsageEntry(org_.id, "sbx_a", 31000, 61000, 70)).ok());
  EXPECT_EQ(*store_->MeteredUntil("sbx_a"), 61000);
  auto listed = *store_->ListLedger(org_.id);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[1].period_start, 31000);
  EXPECT_EQ(listed[1].cpu_millis, 60000);
  EXPECT_EQ(listed[1].subject_kind, "sandbox");
  auto totals = *store_->LedgerTotals(org_.id, 0);
  EXPECT_EQ(totals.usage_nanos, 141);
  EXPECT_EQ(totals.credits_nanos, 0);
  auto sums = *store_->UsageBetween(org_.id, 0, 40000);
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_EQ(sums[0].subject_id, "sbx_a");
  EXPECT_EQ(sums[0].entries, 2);
  EXPECT_EQ(sums[0].amount_nanos, 140);
  EXPECT_EQ(sums[0].cpu_millis, 120000);
  EXPECT_EQ(sums[1].subject_id, "sbx_b");
  EXPECT_EQ(store_->UsageBetween(org_.id, 31001, 40000)->size(), 0u);
  EXPECT_TRUE(store_->UsageBetween(other_org_.id, 0, 1'000'000)->empty());
  // A job run's sandbox is that run's; an automation run's target sandbox is no one run's.
  RunRecord job_run;
  job_run.id = "run_job";
  job_run.org_id = org_.id;
  job_run.job_id = "job_1";
  job_run.trigger = "manual";
  job_run.status = "succeeded";
  job_run.sandbox_id = "sbx_a";
  ASSERT_TRUE(store_->PutRun(job_run).ok());
  RunRecord scheduled = job_run;
  scheduled.id = "run_auto";
  scheduled.job_id = "";
  scheduled.automation_id = "aut_1";
  scheduled.trigger = "schedule";
  scheduled.sandbox_id = "sbx_b";
  ASSERT_TRUE(store_->PutRun(scheduled).ok());
  sums = *store_->UsageBetween(org_.id, 0, 40000);
  EXPECT_EQ(sums[0].job_id, "job_1");
  EXPECT_EQ(sums[0].run_id, "run_job");
  EXPECT_EQ(sums[1].run_id, "");
  ASSERT_TRUE(store_->SetMeterThrough(61000).ok());
  EXPECT_EQ(*store_->MeterThrough(), 61000);
}

TEST_P(StoreTest, AccountAlertsAreRecordedOncePerCreditsTotal) {
  AccountAlertRecord a{0, org_.id, "balance_80", 1000, 800, 5};
  EXPECT_TRUE(*store_->RecordAccountAlert(a));
  EXPECT_FALSE(*store_->RecordAccountAlert(a));
  a.credits_nanos = 2000;  // after a top-up
  a.usage_nanos = 1600;
  EXPECT_TRUE(*store_->RecordAccountAlert(a));
  auto listed = *store_->ListAccountAlerts(org_.id, 10);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].credits_nanos, 2000);  // newest first
  EXPECT_EQ(store_->ListAccountAlerts(org_.id, 1)->size(), 1u);
  EXPECT_TRUE(store_->ListAccountAlerts(other_org_.id, 10)->empty());
}

TEST_P(StoreTest, LimitAlertsAreRecordedOncePerCrossing) {
  auto observe = [&](int64_t used, int64_t at) {
    std::vector<LimitAlertRecord> now = {{0, "", "cpu", 80, 10, used, at},
                                         {0, "", "cpu", 100, 10, used, at}};
    return *store_->ObserveLimits(org_.id, now);
  };
  EXPECT_TRUE(observe(7, 1).empty());
  auto crossed = observe(8, 2);
  ASSERT_EQ(crossed.size(), 1u);
  EXPECT_EQ(crossed[0].percent, 80);
  EXPECT_EQ(crossed[0].used, 8);
  EXPECT_TRUE(observe(9, 3).empty());    // still over 80%: the same crossing
  ASSERT_EQ(observe(10, 4).size(), 1u);  // 100%
  EXPECT_TRUE(observe(10, 5).empty());
  Reopen();  // where each stands is kept
  EXPECT_TRUE(observe(10, 6).empty());
  EXPECT_TRUE(observe(2, 7).empty());  // back under both: re-armed
  EXPECT_EQ(observe(8, 8).size(), 1u);
  auto listed = *store_->ListLimitAlerts(org_.id, 10);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].at, 8);  // newest first
  EXPECT_EQ(listed[1].percent, 100);
  EXPECT_EQ(listed[1].limit, "cpu");
  EXPECT_EQ(listed[1].limit_value, 10);
  EXPECT_EQ(listed[1].org_id, org_.id);
  EXPECT_TRUE(store_->ListLimitAlerts(other_org_.id, 10)->empty());
  EXPECT_EQ(store_->ListLimitAlerts(org_.id, 1)->size(), 1u);
}

TEST_P(StoreTest, EachAlertRecordedIsAnEventOfItsOrganizationOnlyOnce) {
  auto alerts_of = [&](const std::string& org, int64_t after) {
    std::vector<EventRecord> out;
    auto events = store_->ListEvents(org, "", after, 100);
    if (!events.ok()) return out;
    for (const auto& e : *events)
      if (e.alert) out.push_back(e);
    return out;
  };
  int64_t before = *store_->LatestEventSeq();
  ASSERT_TRUE(*store_->RecordAccountAlert({0, org_.id, "balance_80", 1000, 800, 5}));
  ASSERT_FALSE(*store_->RecordAccountAlert({0, org_.id, "balance_80", 1000, 900, 6}));
  std::vector<LimitAlertRecord> full = {{0, "", "persistent_storage_gib", 100, 1024, 1024, 7}};
  ASSERT_EQ(store_->ObserveLimits(org_.id, full)->size(), 1u);
  ASSERT_TRUE(store_->ObserveLimits(org_.id, full)->empty());  // the same crossing
  auto events = alerts_of(org_.id, before);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].status, "credit_80");
  EXPECT_EQ(events[0].alert_limit, "");
  EXPECT_EQ(events[0].alert_value, 1000);
  EXPECT_EQ(events[0].alert_used, 800);
  EXPECT_EQ(events[0].at, 5);
  EXPECT_EQ(events[0].sandbox_id, "");
  EXPECT_EQ(events[0].app_id, "");
  EXPECT_EQ(events[1].status, "limit_100");
  EXPECT_EQ(events[1].alert_limit, "persistent_storage_gib");
  EXPECT_EQ(events[1].alert_value, 1024);
  EXPECT_GT(events[1].seq, events[0].seq);
  EXPECT_EQ(*store_->LatestEventSeq(), events[1].seq);
  // Resumed after the first: only the second. Another organization sees none of them.
  ASSERT_EQ(alerts_of(org_.id, events[0].seq).size(), 1u);
  EXPECT_TRUE(alerts_of(other_org_.id, 0).empty());
  Reopen();
  EXPECT_EQ(alerts_of(org_.id, before).size(), 2u);
}

TEST_P(StoreTest, UsageOfSubjectSumsItsEntriesWithGpuTime) {
  LedgerEntryRecord a = UsageEntry(org_.id, "sbx_g", 1000, 2000, 7);
  a.gpu_millis = 1000;
  ASSERT_TRUE(store_->AppendLedgerEntry(a).ok());
  ASSERT_TRUE(store_->AppendLedgerEntry(UsageEntry(org_.id, "sbx_g", 2000, 4000, 5)).ok());
  ASSERT_TRUE(store_->AppendLedgerEntry(UsageEntry(org_.id, "sbx_other", 0, 9000, 100)).ok());
  auto u = *store_->UsageOfSubject(org_.id, "sbx_g");
  EXPECT_EQ(u.subject_kind, "sandbox");
  EXPECT_EQ(u.entries, 2);
  EXPECT_EQ(u.cpu_millis, 2 * 3000);
  EXPECT_EQ(u.memory_mib_millis, 1024 * 3000);
  EXPECT_EQ(u.gpu_millis, 1000);
  EXPECT_EQ(u.amount_nanos, 12);
  EXPECT_EQ(store_->ListLedger(org_.id)->front().gpu_millis, 1000);
  EXPECT_EQ(store_->UsageOfSubject(other_org_.id, "sbx_g")->entries, 0);
  EXPECT_EQ(store_->UsageOfSubject(org_.id, "sbx_none")->amount_nanos, 0);
}

TEST_P(StoreTest, SandboxesToMeterAreThoseWithComputeOrARecentChange) {
  SandboxRecord a = Sandbox(org_.id, "a", 1000);  // provisioning
  ASSERT_TRUE(store_->CreateSandbox(a, std::nullopt).ok());
  SandboxRecord b = Sandbox(org_.id, "b", 1000);
  ASSERT_TRUE(store_->CreateSandbox(b, std::nullopt).ok());
  b.status = "hibernated";
  b.updated_at = 2000;
  ASSERT_TRUE(store_->UpdateSandbox(b, {"provisioning"}).ok());
  auto ids = [&](int64_t since) {
    std::vector<std::string> out;
    auto found = store_->SandboxesToMeter(since);
    EXPECT_TRUE(found.ok());
    if (found.ok())
      for (const auto& s : *found) out.push_back(s.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  std::vector<std::string> both = {a.id, b.id};
  std::sort(both.begin(), both.end());
  EXPECT_EQ(ids(1500), both);
  EXPECT_EQ(ids(2001), std::vector<std::string>{a.id});
  auto events = *store_->SandboxEvents(b.id);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].status, "hibernated");
  EXPECT_EQ(events[1].at, 2000);
  auto counts = *store_->CountSandboxesByStatus();
  EXPECT_EQ((counts[{org_.id, "provisioning"}]), 1);
  EXPECT_EQ((counts[{org_.id, "hibernated"}]), 1);
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

// Checked in the inserting transaction: a sandbox that ended (and removed its endpoints after
// its status changed) gets none made while it ended.
TEST_P(StoreTest, AnEndpointIsRecordedOnlyForTheOrganizationsRunningOrProvisioningSandbox) {
  SandboxRecord s = MustCreate(Sandbox(org_.id, "e"));
  EXPECT_TRUE(store_->PutEndpoint({NewId("ep"), org_.id, s.id, 1, NewId("h"), 1}).ok());
  EXPECT_EQ(store_->PutEndpoint({NewId("ep"), other_org_.id, s.id, 2, NewId("h"), 1}).code(),
            Code::kNotFound);
  EXPECT_EQ(store_->PutEndpoint({NewId("ep"), org_.id, "sbx_none", 3, NewId("h"), 1}).code(),
            Code::kNotFound);
  SandboxRecord ended = s;
  ended.status = "completed";
  ASSERT_TRUE(store_->UpdateSandbox(ended, {"provisioning"}).ok());
  Status late = store_->PutEndpoint({NewId("ep"), org_.id, s.id, 4, NewId("h"), 1});
  EXPECT_EQ(late.code(), Code::kConflict) << late.message();
  EXPECT_EQ(store_->ListEndpoints(org_.id, s.id)->size(), 1u);
  EXPECT_TRUE(store_->ListEndpoints(other_org_.id, "")->empty());
}

}  // namespace
}  // namespace adapt::store
