// AutomationStore's side of controllers (kind controller), against SQLite and MemoryStore alike:
// their fields survive a reopen, a target's automations are found by its id, and a start makes
// every enabled controller due.
#include <gtest/gtest.h>

#include <string>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

AutomationRecord ControllerRow(const std::string& org_id, const std::string& sandbox_id,
                               int64_t due) {
  AutomationRecord a;
  a.id = NewId("aut");
  a.org_id = org_id;
  a.name = a.id;
  a.kind = "controller";
  a.sandbox_id = sandbox_id;
  a.desired_state = "running";
  a.window_seconds = 32400;
  a.cron = "0 9 * * mon-fri";
  a.time_zone = "Europe/Berlin";
  a.next_due_at = due;
  a.created_at = a.updated_at = 1000;
  return a;
}

TEST_P(StoreTest, ControllerFieldsRoundTrip) {
  AutomationRecord a = ControllerRow(org_.id, "sbx_target", 5'000);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  Reopen();
  auto got = store_->GetAutomation(org_.id, a.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->kind, "controller");
  EXPECT_EQ(got->desired_state, "running");
  EXPECT_EQ(got->window_seconds, 32400);
  EXPECT_EQ(got->cron, "0 9 * * mon-fri");
  EXPECT_TRUE(got->argv.empty());
}

TEST_P(StoreTest, ATargetsAutomationsAreFoundByItsIdAcrossOrganizations) {
  AutomationRecord a = ControllerRow(org_.id, "sbx_one", 5'000);
  AutomationRecord b = ControllerRow(org_.id, "sbx_two", 5'000);
  ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  ASSERT_TRUE(store_->CreateAutomation(b, 100).ok());
  auto one = store_->ListAutomationsOfSandbox("sbx_one");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].id, a.id);
  EXPECT_TRUE(store_->ListAutomationsOfSandbox("sbx_none")->empty());
}

TEST_P(StoreTest, AStartMakesEveryEnabledControllerDueAndNothingElse) {
  AutomationRecord never = ControllerRow(org_.id, "sbx_one", INT64_MAX);
  AutomationRecord paused = ControllerRow(org_.id, "sbx_one", INT64_MAX);
  paused.enabled = false;
  AutomationRecord schedule = ControllerRow(org_.id, "sbx_one", 90'000);
  schedule.kind = "schedule";
  schedule.desired_state.clear();
  schedule.argv = {"true"};
  for (const auto& a : {never, paused, schedule})
    ASSERT_TRUE(store_->CreateAutomation(a, 100).ok());
  auto made = store_->MakeControllersDue(7'000);
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(*made, 1);
  EXPECT_EQ(store_->GetAutomation("", never.id)->next_due_at, 7'000);
  EXPECT_EQ(store_->GetAutomation("", paused.id)->next_due_at, INT64_MAX);
  EXPECT_EQ(store_->GetAutomation("", schedule.id)->next_due_at, 90'000);
  EXPECT_EQ(*store_->NextAutomationDue(), std::optional<int64_t>(7'000));
}

}  // namespace
}  // namespace adapt::store
