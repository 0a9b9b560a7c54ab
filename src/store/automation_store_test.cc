// AutomationStore's contract (store/automation_store.h), against SQLite and MemoryStore alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

AutomationRecord Automation(const std::string& org_id, int64_t due = 10'000) {
  AutomationRecord a;
  a.id = NewId("aut");
  a.org_id = org_id;
  a.name = "nightly";
  a.sandbox_id = "sbx_target";
  a.argv = {"/bin/sh", "-c", "echo hi"};
  a.cwd = "/workspace";
  a.env = {{"TOKEN", "automation-secret"}};
  a.timeout_seconds = 30;
  a.cron = "30 2 * * *";
  a.time_zone = "Europe/Berlin";
  a.overlap = "allow";
  a.catch_up_seconds = 120;
  a.max_attempts = 5;
  a.next_due_at = due;
  a.created_at = a.updated_at = 1000;
  return a;
}

RunRecord SlotRun(const AutomationRecord& a, int64_t slot) {
  RunRecord r;
  r.id = NewId("run");
  r.org_id = a.org_id;
  r.automation_id = a.id;
  r.trigger = "schedule";
  r.status = "queued";
  r.scheduled_at = r.created_at = slot;
  return r;
}

TEST_P(StoreTest, AClaimThatKeepsRunsForgetsTheAutomationsEndedRunsPastTheNewest) {
  AutomationRecord a = Automation(org_.id, 1'000), other = Automation(org_.id);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  ASSERT_TRUE(store_->CreateAutomation(other, 100).ok());
  ASSERT_TRUE(store_->ClaimAutomationSlot(other.id, 10'000, 20'000, {SlotRun(other, 10'000)}).ok());
  RunRecord executing = SlotRun(a, 1'000);
  executing.status = "running";
  ASSERT_TRUE(store_->ClaimAutomationSlot(a.id, 1'000, 2'000, {executing}).ok());
  // Slots skipped one after another (a spent balance): each claim ends its run at once.
  std::vector<std::string> skipped;
  for (int64_t slot = 2'000; slot <= 7'000; slot += 1'000) {
    RunRecord r = SlotRun(a, slot);
    r.status = "skipped_quota";
    r.started_at = r.ended_at = slot;
    skipped.push_back(r.id);
    SlotClaim claim{a.id, slot, slot + 1'000, {r}};
    claim.keep_runs = 3;
    auto claimed = store_->ClaimAutomationSlots({claim});
    ASSERT_TRUE(claimed.at(0).ok()) << claimed.at(0).message();
  }
  Reopen();
  auto runs = store_->ListRuns(org_.id, {"", a.id}, 100, std::nullopt);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  std::vector<std::string> ids;
  for (const auto& r : runs->items) ids.push_back(r.id);  // newest first
  // The newest three, and the executing run (never removed) however old.
  EXPECT_EQ(ids, (std::vector<std::string>{skipped[5], skipped[4], skipped[3], executing.id}));
  EXPECT_EQ(store_->ListRuns(org_.id, {"", other.id}, 10, std::nullopt)->items.size(), 1u);
}

TEST_P(StoreTest, AutomationRoundTripsEveryFieldAndIsScopedToItsOrganization) {
  AutomationRecord a = Automation(org_.id);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  Reopen();
  auto got = store_->GetAutomation(org_.id, a.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->argv, a.argv);
  EXPECT_EQ(got->cwd, "/workspace");
  EXPECT_EQ(got->env.at("TOKEN"), "automation-secret");
  EXPECT_EQ(got->cron, "30 2 * * *");
  EXPECT_EQ(got->time_zone, "Europe/Berlin");
  EXPECT_EQ(got->overlap, "allow");
  EXPECT_EQ(got->catch_up_seconds, 120);
  EXPECT_EQ(got->max_attempts, 5);
  EXPECT_EQ(got->timeout_seconds, 30);
  EXPECT_EQ(got->next_due_at, 10'000);
  EXPECT_EQ(got->version, 1);
  EXPECT_TRUE(got->enabled);
  EXPECT_EQ(store_->GetAutomation(other_org_.id, a.id).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->DeleteAutomation(other_org_.id, a.id).code(), Code::kNotFound);
  EXPECT_TRUE(store_->ListAutomations(other_org_.id)->empty());
  EXPECT_EQ(store_->ListAutomations(org_.id)->size(), 1u);
}

TEST_P(StoreTest, AutomationLimitIsCheckedWhereTheAutomationIsInserted) {
  ASSERT_TRUE(store_->CreateAutomation(Automation(org_.id), 2).ok());
  ASSERT_TRUE(store_->CreateAutomation(Automation(org_.id), 2).ok());
  EXPECT_EQ(store_->CreateAutomation(Automation(org_.id), 2).code(), Code::kResourceExhausted);
  EXPECT_TRUE(store_->CreateAutomation(Automation(other_org_.id), 2).ok());
  EXPECT_EQ(store_->ListAutomations(org_.id)->size(), 2u);
}

TEST_P(StoreTest, AutomationUpdateWithAStaleVersionChangesNothing) {
  AutomationRecord a = Automation(org_.id);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  a.enabled = false;
  ASSERT_TRUE(store_->UpdateAutomation(a, 1).ok());
  a.enabled = true;
  EXPECT_EQ(store_->UpdateAutomation(a, 1).code(), Code::kConflict);
  auto got = store_->GetAutomation(org_.id, a.id);
  EXPECT_FALSE(got->enabled);
  EXPECT_EQ(got->version, 2);
}

TEST_P(StoreTest, AutomationSlotFiresAtMostOnce) {
  AutomationRecord a = Automation(org_.id, 10'000);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  EXPECT_EQ(*store_->NextAutomationDue(), 10'000);
  EXPECT_TRUE(store_->ListDueAutomations(9'999, 10)->empty());
  ASSERT_EQ(store_->ListDueAutomations(10'000, 10)->size(), 1u);
  ASSERT_TRUE(store_->ClaimAutomationSlot(a.id, 10'000, 20'000, {SlotRun(a, 10'000)}).ok());
  // A second claim of the same slot (another scheduler, a replay after a crash) loses.
  EXPECT_EQ(store_->ClaimAutomationSlot(a.id, 10'000, 20'000, {SlotRun(a, 10'000)}).code(),
            Code::kConflict);
  // Even with the due time reset, the slot's run is unique: nothing is inserted.
  a.next_due_at = 10'000;
  ASSERT_TRUE(store_->UpdateAutomation(a, 1).ok());
  EXPECT_EQ(store_->ClaimAutomationSlot(a.id, 10'000, 20'000, {SlotRun(a, 10'000)}).code(),
            Code::kConflict);
  EXPECT_EQ(store_->ListRuns(org_.id, {"", a.id}, 10, std::nullopt)->items.size(), 1u);
  EXPECT_EQ(store_->GetAutomation(org_.id, a.id)->next_due_at, 10'000);
  // The claimed slot's run wrote its event; the refused claims wrote none.
  int run_events = 0;
  auto events = store_->ListEvents(org_.id, "", 0, 100);
  ASSERT_TRUE(events.ok()) << events.status().message();
  for (const auto& e : *events) {
    if (e.run_id.empty()) continue;
    ++run_events;
    EXPECT_EQ(e.automation_id, a.id);
  }
  EXPECT_EQ(run_events, 1);
}

TEST_P(StoreTest, ASchedulerPassClaimsItsSlotsTogetherAndARefusedClaimLeavesNothing) {
  AutomationRecord a = Automation(org_.id), b = Automation(org_.id), c = Automation(org_.id);
  for (const auto* x : {&a, &b, &c}) ASSERT_TRUE(store_->CreateAutomation(*x, 100).ok());
  // c's slot fired already (a replay): its claim is refused, the pass's others stand.
  ASSERT_TRUE(store_->ClaimAutomationSlot(c.id, 10'000, 20'000, {SlotRun(c, 10'000)}).ok());
  c.next_due_at = 10'000;
  ASSERT_TRUE(store_->UpdateAutomation(c, 1).ok());
  RunRecord missed = SlotRun(b, 4'000);
  missed.status = "missed";
  auto claimed = store_->ClaimAutomationSlots({{a.id, 10'000, 20'000, {SlotRun(a, 10'000)}},
                                               {c.id, 10'000, 30'000, {SlotRun(c, 10'000)}},
                                               {b.id, 10'000, 20'000, {missed, SlotRun(b, 10'000)}},
                                               {a.id, 10'000, 40'000, {SlotRun(a, 12'000)}}});
  ASSERT_EQ(claimed.size(), 4u);
  EXPECT_TRUE(claimed[0].ok()) << claimed[0].message();
  EXPECT_EQ(claimed[1].code(), Code::kConflict);
  EXPECT_TRUE(claimed[2].ok()) << claimed[2].message();
  // The same automation again in the pass: its due time moved with the first claim.
  EXPECT_EQ(claimed[3].code(), Code::kConflict);
  Reopen();
  EXPECT_EQ(store_->GetAutomation(org_.id, a.id)->next_due_at, 20'000);
  EXPECT_EQ(store_->GetAutomation(org_.id, b.id)->next_due_at, 20'000);
  EXPECT_EQ(store_->GetAutomation(org_.id, c.id)->next_due_at, 10'000);
  EXPECT_EQ(store_->ListRuns(org_.id, {"", a.id}, 10, std::nullopt)->items.size(), 1u);
  EXPECT_EQ(store_->ListRuns(org_.id, {"", b.id}, 10, std::nullopt)->items.size(), 2u);
  EXPECT_EQ(store_->ListRuns(org_.id, {"", c.id}, 10, std::nullopt)->items.size(), 1u);
  // Events for the runs written, none for the refused claims.
  int run_events = 0;
  auto events = store_->ListEvents(org_.id, "", 0, 100);
  ASSERT_TRUE(events.ok()) << events.status().message();
  for (const auto& e : *events) run_events += e.run_id.empty() ? 0 : 1;
  EXPECT_EQ(run_events, 4);
}

TEST_P(StoreTest, ASuccessAfterASuccessLeavesTheAutomationAsItWas) {
  AutomationRecord a = Automation(org_.id);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  auto before = store_->GetAutomation(org_.id, a.id);
  auto after = store_->RecordAutomationOutcome(a.id, false, 3, "three failures", 99'000);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->consecutive_failures, 0);
  EXPECT_EQ(after->version, before->version);
  EXPECT_EQ(after->updated_at, before->updated_at);
  EXPECT_TRUE(after->enabled);
  EXPECT_EQ(store_->RecordAutomationOutcome("aut_missing", false, 3, "x", 1).status().code(),
            Code::kNotFound);
}

TEST_P(StoreTest, AutomationPausesAfterConsecutiveFailuresAndASuccessResetsTheCount) {
  AutomationRecord a = Automation(org_.id);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  ASSERT_EQ(store_->RecordAutomationOutcome(a.id, true, 3, "three failures", 5)->version, 1);
  ASSERT_EQ(
      store_->RecordAutomationOutcome(a.id, false, 3, "three failures", 5)->consecutive_failures,
      0);
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE(store_->RecordAutomationOutcome(a.id, true, 3, "three failures", 5).ok());
  auto paused = store_->RecordAutomationOutcome(a.id, true, 3, "three failures", 5);
  ASSERT_TRUE(paused.ok());
  EXPECT_FALSE(paused->enabled);
  EXPECT_EQ(paused->paused_reason, "three failures");
  EXPECT_EQ(paused->version, 2);
  EXPECT_FALSE(store_->NextAutomationDue()->has_value());
}

TEST_P(StoreTest, AutomationsOfADeletedSandboxArePaused) {
  AutomationRecord a = Automation(org_.id), b = Automation(org_.id);
  b.sandbox_id = "sbx_other";
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  ASSERT_TRUE(store_->CreateAutomation(b, 100).ok());
  EXPECT_EQ(*store_->PauseAutomationsOfSandbox("sbx_target", "its sandbox was deleted", 7), 1);
  EXPECT_FALSE(store_->GetAutomation(org_.id, a.id)->enabled);
  EXPECT_EQ(store_->GetAutomation(org_.id, a.id)->paused_reason, "its sandbox was deleted");
  EXPECT_TRUE(store_->GetAutomation(org_.id, b.id)->enabled);
}

TEST_P(StoreTest, AutomationsFollowTheirReplacedSandboxWithANewVersion) {
  AutomationRecord a = Automation(org_.id), b = Automation(org_.id), c = Automation(org_.id);
  c.sandbox_id = "sbx_other";
  for (const auto& x : {a, b, c}) ASSERT_TRUE(store_->CreateAutomation(x, 100).ok());
  EXPECT_EQ(*store_->FollowReplacedSandbox("sbx_target", "sbx_fresh", 9), 2);
  Reopen();
  for (const auto& id : {a.id, b.id}) {
    auto got = store_->GetAutomation(org_.id, id);
    EXPECT_EQ(got->sandbox_id, "sbx_fresh");
    EXPECT_EQ(got->version, 2);
    EXPECT_EQ(got->updated_at, 9);
  }
  EXPECT_EQ(store_->GetAutomation(org_.id, c.id)->sandbox_id, "sbx_other");
  EXPECT_EQ(store_->GetAutomation(org_.id, c.id)->version, 1);
  // A deleted target then pauses the automations under their new target only.
  EXPECT_EQ(*store_->PauseAutomationsOfSandbox("sbx_target", "gone", 10), 0);
}

}  // namespace
}  // namespace adapt::store
