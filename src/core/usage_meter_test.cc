// UsageMeter over a MemoryStore: entries written while a sandbox runs, never twice for the
// same period, time while the meter was not running charged later, storage per interval,
// alerts once at 80% and 100%, and a used-up balance stopping running sandboxes of priced
// plans only.
#include "core/usage_meter.h"

#include <gtest/gtest.h>

#include "core/usage_arithmetic.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

constexpr int64_t kT0 = 1'800'000'000'000;

class UsageMeterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_.CreateOrg({"org_a", "a", false, kT0, true}).ok());
    ASSERT_TRUE(accounts_.LoadPlans({}).ok());
    store::PlanRecord priced = AccountService::BuiltInDefaultPlan(50);
    priced.id = "priced";
    priced.cpu_second_nanos = 1000;         // 1 cpu-second: 1,000 nanos
    priced.memory_gib_second_nanos = 1024;  // 1 MiB-second: 1 nano
    priced.storage_gib_month_nanos = 0;
    ASSERT_TRUE(store_.PutPlan(priced).ok());
  }

  void OnPricedPlan() {
    ASSERT_TRUE(store_.EnsureBillingAccount({"org_a", "default", "1", kT0}).ok());
    ASSERT_TRUE(store_.SetAccountPlan("org_a", "priced").ok());
  }

  void Credit(const std::string& id, int64_t nanos) {
    store::LedgerEntryRecord e;
    e.id = id;
    e.org_id = "org_a";
    e.kind = "credit";
    e.amount_nanos = nanos;
    e.reason = "test";
    e.created_at = kT0;
    ASSERT_TRUE(store_.AppendLedgerEntry(e).ok());
  }

  // A sandbox of 2 cpus and 1,024 MiB, provisioning at `at` and running 1 ms later.
  void Run(const std::string& id, int64_t at) {
    store::SandboxRecord s;
    s.id = id;
    s.org_id = "org_a";
    s.status = "provisioning";
    s.config.cpu = 2;
    s.config.memory_mib = 1024;
    s.created_at = s.updated_at = at;
    ASSERT_TRUE(store_.CreateSandbox(s, std::nullopt).ok());
    SetStatus(id, "running", at + 1);
  }

  void SetStatus(const std::string& id, const std::string& status, int64_t at) {
    auto s = store_.GetSandbox("", id);
    ASSERT_TRUE(s.ok());
    std::string before = s->status;
    s->status = status;
    s->updated_at = at;
    ASSERT_TRUE(store_.UpdateSandbox(*s, {before}).ok());
  }

  std::vector<store::LedgerEntryRecord> Usage() {
    std::vector<store::LedgerEntryRecord> out;
    auto all = store_.ListLedger("org_a");
    EXPECT_TRUE(all.ok());
    if (!all.ok()) return out;
    for (const auto& e : *all)
      if (e.kind == "usage") out.push_back(e);
    return out;
  }

  store::MemoryStore store_;
  AccountService accounts_{store_, AccountOptions{"1", 50}};
  std::vector<std::string> stopped_;
  UsageMeter meter_{store_, accounts_, MeteringOptions{30, 3600},
                    [this](const std::string&, const std::string& id) { stopped_.push_back(id); }};
};

TEST_F(UsageMeterTest, ARunningSandboxGetsOneEntryPerPassCoveringItsPeriod) {
  Run("sbx_a", kT0);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 30'000).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 60'000).ok());
  auto usage = Usage();
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].id, "use_sbx_a_" + std::to_string(kT0));
  EXPECT_EQ(usage[0].subject_id, "sbx_a");
  EXPECT_EQ(usage[0].period_start, kT0);
  EXPECT_EQ(usage[0].period_end, kT0 + 30'000);
  EXPECT_EQ(usage[0].cpu_millis, 2 * 30'000);
  EXPECT_EQ(usage[0].memory_mib_millis, 1024 * 30'000);
  EXPECT_EQ(usage[0].amount_nanos, 0);  // the default plan is free
  EXPECT_EQ(usage[1].period_start, kT0 + 30'000);
  EXPECT_EQ(usage[1].period_end, kT0 + 60'000);
}

TEST_F(UsageMeterTest, APassRepeatedAtTheSameTimeChargesNothingTwice) {
  Run("sbx_a", kT0);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 30'000).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 30'000).ok());
  EXPECT_EQ(Usage().size(), 1u);
}

TEST_F(UsageMeterTest, TimeWithoutPassesIsChargedByTheNextFromTheEvents) {
  // The meter was not running (adaptd down) while the sandbox ran, stopped, and was deleted.
  Run("sbx_a", kT0);
  SetStatus("sbx_a", "hibernated", kT0 + 50'000);
  SetStatus("sbx_a", "deleting", kT0 + 60'000);
  SetStatus("sbx_a", "deleted", kT0 + 60'001);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 500'000).ok());
  auto usage = Usage();
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].cpu_millis, 2 * 50'000);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 600'000).ok());
  EXPECT_EQ(Usage().size(), 1u);
}

TEST_F(UsageMeterTest, PricesComeFromThePlan) {
  OnPricedPlan();
  Credit("c1", 1'000'000'000);
  Run("sbx_a", kT0);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 10'000).ok());
  // 2 cpus x 10 s x 1,000 + 1,024 MiB x 10 s x 1.
  EXPECT_EQ(Usage().at(0).amount_nanos, 20'000 + 10'240);
  EXPECT_EQ(*store_.Balance("org_a", kT0), 1'000'000'000 - 30'240);
}

TEST_F(UsageMeterTest, AlertsAt80And100PercentOnceAndAUsedUpBalanceStopsRunningSandboxes) {
  OnPricedPlan();
  Credit("c1", 100'000);  // 3,024 nanos a second: used up in about 33 s
  Run("sbx_a", kT0);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 10'000).ok());
  EXPECT_TRUE(store_.ListAccountAlerts("org_a", 10)->empty());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 27'000).ok());  // 81,648 used
  auto alerts = *store_.ListAccountAlerts("org_a", 10);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "balance_80");
  EXPECT_TRUE(stopped_.empty());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 34'000).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 35'000).ok());
  alerts = *store_.ListAccountAlerts("org_a", 10);
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].kind, "balance_100");
  EXPECT_EQ(stopped_, (std::vector<std::string>{"sbx_a", "sbx_a"}));
  // A top-up: the same credits basis no longer holds, nothing is stopped.
  stopped_.clear();
  SetStatus("sbx_a", "hibernated", kT0 + 35'500);
  Credit("c2", 1'000'000'000);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 40'000).ok());
  EXPECT_TRUE(stopped_.empty());
  EXPECT_GT(*store_.Balance("org_a", kT0 + 40'000), 0);
}

TEST_F(UsageMeterTest, AFreePlanNeverStopsAnything) {
  Run("sbx_a", kT0);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 30'000).ok());
  EXPECT_TRUE(stopped_.empty());
  EXPECT_TRUE(store_.ListAccountAlerts("org_a", 10)->empty());
}

TEST_F(UsageMeterTest, VolumesAreChargedOncePerStorageInterval) {
  store::PlanRecord priced = *store_.GetPlan("priced");
  priced.storage_gib_month_nanos = 30LL * 24 * 1'000'000'000;  // 1 GiB-hour: 1e9 nanos
  ASSERT_TRUE(store_.PutPlan(priced).ok());
  OnPricedPlan();
  Credit("c1", 1'000'000'000'000);
  store::VolumeRecord v;
  v.id = "vol_a";
  v.org_id = "org_a";
  v.name = "default";
  v.size_mib = 2048;
  v.status = "ready";
  v.created_at = kT0;
  ASSERT_TRUE(store_.PutVolume(v).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 1'800'000).ok());
  EXPECT_TRUE(Usage().empty());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 3'600'000).ok());
  auto usage = Usage();
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].subject_kind, "volume");
  EXPECT_EQ(usage[0].storage_mib_millis, 2048LL * 3'600'000);
  EXPECT_EQ(usage[0].amount_nanos, 2'000'000'000);
}

TEST_F(UsageMeterTest, NamedCheckpointsAreChargedAsStorageOncePerStorageInterval) {
  store::PlanRecord priced = *store_.GetPlan("priced");
  priced.storage_gib_month_nanos = 30LL * 24 * 1'000'000'000;  // 1 GiB-hour: 1e9 nanos
  ASSERT_TRUE(store_.PutPlan(priced).ok());
  OnPricedPlan();
  Credit("c1", 1'000'000'000'000);
  // 1.5 MiB: charged as 2 MiB, from its making.
  meter_.set_checkpoint_lister([] {
    return std::vector<MeteredCheckpoint>{{"org_a", "sbx_a", "kept", 3u << 19, kT0}};
  });
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 1'800'000).ok());
  EXPECT_TRUE(Usage().empty());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 3'600'000).ok());
  auto usage = Usage();
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].subject_kind, "checkpoint");
  EXPECT_EQ(usage[0].subject_id, "sbx_a/kept");
  EXPECT_EQ(usage[0].storage_mib_millis, 2LL * 3'600'000);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 3'600'000).ok());  // nothing twice
  EXPECT_EQ(Usage().size(), 1u);
  // Deleted 55 minutes later, before the next hourly entry: the 55 minutes are charged at once
  // (taking a new checkpoint and deleting the old one each hour was storage never charged).
  MeteredCheckpoint kept{"org_a", "sbx_a", "kept", 3u << 19, kT0};
  ASSERT_TRUE(meter_.ChargeDeletedCheckpoint(kept, kT0 + 6'900'000).ok());
  ASSERT_TRUE(meter_.ChargeDeletedCheckpoint(kept, kT0 + 6'900'000).ok());  // a retry: once
  usage = Usage();
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[1].period_start, kT0 + 3'600'000);
  EXPECT_EQ(usage[1].period_end, kT0 + 6'900'000);
  EXPECT_EQ(usage[1].storage_mib_millis, 2LL * 3'300'000);
}

TEST_F(UsageMeterTest, UsageBetweenSumsPerSubject) {
  Run("sbx_a", kT0);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 30'000).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 60'000).ok());
  auto usage = accounts_.Usage(Principal{"org_a", "key", false}, kT0, kT0 + 60'000);
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->items.size(), 1u);
  EXPECT_EQ(usage->items[0].entries, 2);
  EXPECT_EQ(usage->total.cpu_millis, 2 * 60'000);
  auto other = accounts_.Usage(Principal{"org_b", "key", false}, kT0, kT0 + 60'000);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->items.empty());
  EXPECT_FALSE(accounts_.Usage(Principal{"org_a", "key", false}, kT0, kT0).ok());
}

TEST_F(UsageMeterTest, EachPlanLimitAlertsAt80And100PercentOncePerCrossing) {
  store::PlanRecord small = AccountService::BuiltInDefaultPlan(50);
  small.id = "small";
  small.cpu = 5;
  ASSERT_TRUE(store_.PutPlan(small).ok());
  ASSERT_TRUE(store_.EnsureBillingAccount({"org_a", "small", "1", kT0}).ok());
  Run("sbx_a", kT0);  // 2 of 5 cpus
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 1000).ok());
  EXPECT_TRUE(store_.ListLimitAlerts("org_a", 10)->empty());
  Run("sbx_b", kT0 + 1000);  // 4 of 5: 80%
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 2000).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 3000).ok());
  auto alerts = *store_.ListLimitAlerts("org_a", 10);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].limit, "cpu");
  EXPECT_EQ(alerts[0].percent, 80);
  EXPECT_EQ(alerts[0].used, 4);
  EXPECT_EQ(alerts[0].limit_value, 5);
  SetStatus("sbx_b", "hibernated", kT0 + 3500);  // 2 of 5: re-armed
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 4000).ok());
  SetStatus("sbx_b", "running", kT0 + 4500);
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 5000).ok());
  EXPECT_EQ(store_.ListLimitAlerts("org_a", 10)->size(), 2u);
}

// No sandbox here has a GPU (runsc has no --nvproxy): a record with one is made directly, to
// check the GPU-seconds arithmetic.
TEST_F(UsageMeterTest, AGpuSandboxAccruesGpuMillisecondsPricedPerGpuSecond) {
  store::PlanRecord priced = *store_.GetPlan("priced");
  priced.cpu_second_nanos = 0;
  priced.memory_gib_second_nanos = 0;
  priced.gpu_second_nanos = 2'500'000;  // 0.0025 a GPU-second
  ASSERT_TRUE(store_.PutPlan(priced).ok());
  OnPricedPlan();
  Credit("c1", 1'000'000'000'000);
  store::SandboxRecord s;
  s.id = "sbx_gpu";
  s.org_id = "org_a";
  s.status = "provisioning";
  s.config.cpu = 1;
  s.config.memory_mib = 512;
  s.config.gpus = 1;
  s.created_at = s.updated_at = kT0;
  ASSERT_TRUE(store_.CreateSandbox(s, std::nullopt).ok());
  SetStatus("sbx_gpu", "running", kT0 + 1);
  Run("sbx_cpu", kT0);  // no GPU: no GPU time
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 10'001).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 20'001).ok());
  int64_t gpu = 0, amount = 0, cpu_only_gpu = 0;
  for (const auto& e : Usage()) {
    if (e.subject_id == "sbx_gpu") {
      gpu += e.gpu_millis;
      amount += e.amount_nanos;
    } else {
      cpu_only_gpu += e.gpu_millis;
    }
  }
  EXPECT_EQ(gpu, 20'001);               // 1 GPU x 20.001 s
  EXPECT_EQ(amount, 20'001LL * 2'500);  // 2,500,000 nanos / 1000 ms, exact
  EXPECT_EQ(cpu_only_gpu, 0);
  EXPECT_EQ(accounts_.Usage(Principal{"org_a", "key", false}, kT0, kT0 + 30'000)->total.gpu_millis,
            20'001);
  // 2 GPUs for 1 ms at 1 nano a GPU-second is 0.002 nanos: rounded down once, to 0.
  priced.gpu_second_nanos = 1;
  EXPECT_EQ(UsageCostNanos({0, 0, 0, 2}, priced), 0);
  EXPECT_EQ(UsageCostNanos({0, 0, 0, 1000}, priced), 1);
}

TEST_F(UsageMeterTest, ADeletedVolumeIsChargedUpToItsDeletionOnce) {
  store::PlanRecord priced = *store_.GetPlan("priced");
  priced.storage_gib_month_nanos = 30LL * 24 * 1'000'000'000;  // 1 GiB-hour: 1e9 nanos
  ASSERT_TRUE(store_.PutPlan(priced).ok());
  OnPricedPlan();
  Credit("c1", 1'000'000'000'000);
  store::VolumeRecord v;
  v.id = "vol_a";
  v.org_id = "org_a";
  v.name = "scratch";
  v.size_mib = 1024;
  v.status = "ready";
  v.created_at = kT0;
  ASSERT_TRUE(store_.PutVolume(v).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 3'600'000).ok());  // one interval: one entry
  ASSERT_EQ(Usage().size(), 1u);
  // Deleted half an interval later: the half is charged at once, not lost.
  ASSERT_TRUE(store_.BeginDeleteVolume("org_a", "vol_a").ok());
  ASSERT_TRUE(meter_.ChargeDeletedVolume(v, kT0 + 5'400'000).ok());
  ASSERT_TRUE(meter_.ChargeDeletedVolume(v, kT0 + 5'400'000).ok());  // a retry: nothing twice
  auto usage = Usage();
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[1].id, "use_vol_a_" + std::to_string(kT0 + 3'600'000));
  EXPECT_EQ(usage[1].period_start, kT0 + 3'600'000);
  EXPECT_EQ(usage[1].period_end, kT0 + 5'400'000);
  EXPECT_EQ(usage[1].storage_mib_millis, 1024LL * 1'800'000);
  EXPECT_EQ(usage[1].amount_nanos, 500'000'000);  // half a GiB-hour
  // Nothing after it: passes skip a volume being deleted, and once it is gone it is not listed.
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 9'000'000).ok());
  ASSERT_TRUE(store_.DeleteVolume("vol_a").ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 20'000'000).ok());
  EXPECT_EQ(Usage().size(), 2u);
}

TEST_F(UsageMeterTest, AlertsAreEventsOfTheOrganizationAndTheBusIsTold) {
  EventBus bus;
  std::vector<Change> told;
  bus.Subscribe([&](const Change& c) { told.push_back(c); });
  meter_.set_event_bus(&bus);
  store::PlanRecord small = AccountService::BuiltInDefaultPlan(50);
  small.id = "small";
  small.cpu = 2;
  ASSERT_TRUE(store_.PutPlan(small).ok());
  ASSERT_TRUE(store_.EnsureBillingAccount({"org_a", "small", "1", kT0}).ok());
  int64_t before = *store_.LatestEventSeq();
  Run("sbx_a", kT0);  // 2 of 2 cpus: 80% and 100% at once
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 1000).ok());
  ASSERT_TRUE(meter_.MeterOnce(kT0 + 2000).ok());
  std::vector<std::string> types;
  auto events = store_.ListEvents("org_a", "", before, 100);
  ASSERT_TRUE(events.ok());
  for (const auto& e : *events)
    if (e.alert) types.push_back(e.status + ":" + e.alert_limit);
  EXPECT_EQ(types, (std::vector<std::string>{"limit_80:cpu", "limit_100:cpu"}));
  std::vector<Change> alerts;
  for (const auto& c : told)
    if (c.kind == Change::Kind::kAccountAlert) alerts.push_back(c);
  ASSERT_EQ(alerts.size(), 1u);  // one pass recorded both
  EXPECT_EQ(alerts[0].id, "org_a");
}

}  // namespace
}  // namespace adapt::core
