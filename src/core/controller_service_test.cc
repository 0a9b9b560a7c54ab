// Controllers: the reconcile decisions, and ControllerService (with AutomationService's create,
// pause and scheduler hand-over) over a MemoryStore, a fake clock and a scripted runtime.
#include "core/controller_service.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "core/automation_service.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

TargetState FoundTarget(std::string status, bool instant = true) {
  TargetState t;
  t.found = true;
  t.status = std::move(status);
  t.instant = instant;
  return t;
}

TEST(ControllerDecisionTest, TheTargetsStateAndTheWantedOneGiveTheAction) {
  auto decide = [](const std::string& want, const TargetState& t) {
    return DecideControllerAction(want, "sbx_t", t).action;
  };
  EXPECT_EQ(decide("running", FoundTarget("running")), ControllerAction::kNone);
  EXPECT_EQ(decide("hibernated", FoundTarget("running")), ControllerAction::kStop);
  EXPECT_EQ(decide("running", FoundTarget("hibernated")), ControllerAction::kStart);
  EXPECT_EQ(decide("hibernated", FoundTarget("hibernated")), ControllerAction::kNone);
  TargetState stopping = FoundTarget("hibernated", false);
  stopping.stopping = true;
  EXPECT_EQ(decide("running", stopping), ControllerAction::kWait);
  EXPECT_EQ(decide("running", FoundTarget("provisioning")), ControllerAction::kWait);
  EXPECT_EQ(decide("hibernated", FoundTarget("provisioning")), ControllerAction::kWait);
  EXPECT_EQ(decide("running", FoundTarget("failed")), ControllerAction::kRecreate);
  EXPECT_EQ(decide("hibernated", FoundTarget("failed")), ControllerAction::kNone);
  EXPECT_EQ(decide("running", FoundTarget("failed", false)), ControllerAction::kStuck);
  EXPECT_EQ(decide("running", FoundTarget("completed")), ControllerAction::kStuck);
  EXPECT_EQ(decide("running", TargetState{}), ControllerAction::kTargetGone);
  EXPECT_EQ(decide("hibernated", FoundTarget("deleting")), ControllerAction::kTargetGone);
  auto stuck = DecideControllerAction("running", "sbx_t", FoundTarget("failed", false));
  EXPECT_NE(stuck.why.find("durable"), std::string::npos) << stuck.why;
}

// Sandboxes by id; every action is recorded and changes the state as the real one would.
class ScriptedTargets : public ControllerRuntime {
 public:
  Result<TargetState> Observe(const std::string& org_id, const std::string& id) override {
    auto it = sandboxes.find(id);
    if (it == sandboxes.end() || org_id != org) return TargetState{};
    return it->second;
  }
  Status Start(const std::string&, const std::string& id) override {
    calls.push_back("start " + id);
    if (!start_error.ok()) return start_error;
    sandboxes[id].status = "provisioning";
    return Status::Ok();
  }
  Status Stop(const std::string&, const std::string& id) override {
    calls.push_back("stop " + id);
    if (!stop_error.ok()) return stop_error;
    sandboxes[id].status = "hibernated";
    return Status::Ok();
  }
  Result<std::string> Replace(const std::string&, const std::string& id,
                              const std::string& automation_id) override {
    calls.push_back("replace " + id + " for " + automation_id);
    std::string fresh = "sbx_fresh" + std::to_string(++replaced);
    sandboxes[fresh] = FoundTarget("provisioning");
    return fresh;
  }
  void Discard(const std::string&, const std::string& id) override {
    calls.push_back("discard " + id);
    sandboxes.erase(id);
  }
  void AwaitRunning(const std::string&, const std::string& id,
                    std::function<void(Status)> done) override {
    // It comes up (as the lifecycle would) unless told otherwise.
    if (!comes_up) return done(Internal("it is failed"));
    sandboxes[id].status = "running";
    done(Status::Ok());
  }

  std::string org;
  std::map<std::string, TargetState> sandboxes;
  std::vector<std::string> calls;
  Status start_error, stop_error;
  bool comes_up = true;
  int replaced = 0;
};

// AutomationService checks a target through its runner; controllers use none of the rest.
class TargetsRunner : public AutomationRunner {
 public:
  explicit TargetsRunner(ScriptedTargets& t) : t_(t) {}
  Status CheckTarget(const std::string& org_id, const std::string& id) override {
    auto s = t_.Observe(org_id.empty() ? t_.org : org_id, id);
    if (!s.ok() || !s->found) return NotFound("sandbox '" + id + "' not found");
    return Status::Ok();
  }
  void Start(const store::AutomationRecord&, const store::RunRecord&, JobAttempts::Progress,
             JobAttempts::Done) override {
    ADD_FAILURE() << "a controller ran a command";
  }
  void Reattach(const store::AutomationRecord&, const store::RunRecord&,
                JobAttempts::Done) override {
    ADD_FAILURE() << "a controller's action was re-attached";
  }
  bool Cancel(const std::string&) override { return false; }
  Result<std::string> Replace(const std::string&, const std::string&, const std::string&) override {
    return Internal("not here");
  }
  Result<std::vector<Replacement>> Replacements() override { return std::vector<Replacement>{}; }
  void Discard(const std::string&, const std::string&) override {}

 private:
  ScriptedTargets& t_;
};

class ControllerServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    org_.org_id = store_.CreateOrg({NewId("org"), "acme", false, NowMillis()})->id;
    other_.org_id = store_.CreateOrg({NewId("org"), "other", false, NowMillis()})->id;
    targets_.org = org_.org_id;
    targets_.sandboxes["sbx_t"] = FoundTarget("running");
    automations_.set_controllers(&controllers_);
  }

  Automation MustCreate(const std::string& desired, int64_t interval = 0, int64_t window = 0) {
    CreateAutomationRequest req;
    req.kind = "controller";
    req.sandbox_id = "sbx_t";
    req.desired_state = desired;
    if (interval) req.interval_seconds = interval;
    if (window) req.window_seconds = window;
    auto a = automations_.Create(org_, req);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return a.ok() ? *a : Automation{};
  }
  store::AutomationRecord Stored(const std::string& id) { return *store_.GetAutomation("", id); }
  std::vector<store::RunRecord> Runs(const std::string& automation_id) {
    auto page = store_.ListRuns(org_.org_id, {"", automation_id}, 200, std::nullopt);
    return page.ok() ? page->items : std::vector<store::RunRecord>{};  // newest first
  }

  int64_t now_ = 1'000'000;
  store::MemoryStore store_;
  ScriptedTargets targets_;
  TargetsRunner runner_{targets_};
  ControllerService controllers_{store_, store_, targets_, [this] { return now_; }};
  AutomationService automations_{store_, store_, runner_, [this] { return now_; }};
  Principal org_, other_;
};

TEST_F(ControllerServiceTest, HibernatedWantedStopsTheRunningTargetOnceAsARun) {
  Automation a = MustCreate("hibernated");
  EXPECT_EQ(a.kind, "controller");
  EXPECT_TRUE(a.next_changes.empty());
  EXPECT_EQ(Stored(a.id).next_due_at, now_);  // reconciled at once
  automations_.Tick(now_);
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"stop sbx_t"}));
  EXPECT_EQ(Stored(a.id).next_due_at, kControllerNeverDue);
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trigger, "controller");
  EXPECT_EQ(runs[0].status, "succeeded");
  EXPECT_EQ(runs[0].sandbox_id, "sbx_t");
  EXPECT_NE(runs[0].stdout_text.find("stop: sandbox sbx_t was running"), std::string::npos)
      << runs[0].stdout_text;
  // Its own change comes back as a status change: nothing more to do.
  controllers_.TargetChanged("sbx_t");
  EXPECT_EQ(targets_.calls.size(), 1u);
  EXPECT_EQ(Runs(a.id).size(), 1u);
}

TEST_F(ControllerServiceTest, RunningWantedStartsATargetStoppedByHand) {
  Automation a = MustCreate("running");
  automations_.Tick(now_);
  EXPECT_TRUE(targets_.calls.empty());  // already running
  targets_.sandboxes["sbx_t"].status = "hibernated";
  controllers_.TargetChanged("sbx_t");
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"start sbx_t"}));
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "succeeded");
  EXPECT_EQ(targets_.sandboxes["sbx_t"].status, "running");
  // A change of another sandbox is not this controller's.
  targets_.sandboxes["sbx_t"].status = "hibernated";
  controllers_.TargetChanged("sbx_other");
  EXPECT_EQ(targets_.calls.size(), 1u);
}

TEST_F(ControllerServiceTest, WindowsFlipTheTargetAtTheirBoundaries) {
  // Running for 4 s of every 10 s from creation.
  Automation a = MustCreate("running", 10, 4);
  ASSERT_EQ(a.next_changes.size(), 5u);
  EXPECT_EQ(a.next_changes[0].at, now_ + 4'000);
  EXPECT_EQ(a.next_changes[0].state, "hibernated");
  EXPECT_EQ(a.next_changes[1].at, now_ + 10'000);
  EXPECT_EQ(a.next_changes[1].state, "running");
  int64_t created = now_;
  automations_.Tick(now_);
  EXPECT_TRUE(targets_.calls.empty());
  EXPECT_EQ(Stored(a.id).next_due_at, created + 4'000);
  now_ = created + 3'999;
  automations_.Tick(now_);
  EXPECT_TRUE(targets_.calls.empty());
  now_ = created + 4'000;
  automations_.Tick(now_);
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"stop sbx_t"}));
  EXPECT_EQ(Stored(a.id).next_due_at, created + 10'000);
  now_ = created + 10'000;
  automations_.Tick(now_);
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"stop sbx_t", "start sbx_t"}));
  EXPECT_EQ(Stored(a.id).next_due_at, created + 14'000);
  EXPECT_EQ(Runs(a.id).size(), 2u);
}

TEST_F(ControllerServiceTest, AFailedInstantTargetIsRecreatedAndFollowed) {
  Automation a = MustCreate("running");
  // A schedule of the same target follows it too.
  CreateAutomationRequest schedule;
  schedule.sandbox_id = "sbx_t";
  schedule.argv = {"true"};
  schedule.interval_seconds = 60;
  auto s = automations_.Create(org_, schedule);
  ASSERT_TRUE(s.ok()) << s.status().message();
  targets_.sandboxes["sbx_t"] = FoundTarget("failed");
  targets_.sandboxes["sbx_t"].created_at = now_ - 3'600'000;
  controllers_.TargetChanged("sbx_t");
  EXPECT_EQ(targets_.calls,
            (std::vector<std::string>{"replace sbx_t for " + a.id, "discard sbx_t"}));
  store::AutomationRecord after = Stored(a.id);
  EXPECT_EQ(after.sandbox_id, "sbx_fresh1");
  EXPECT_EQ(after.version, a.version + 1);
  EXPECT_EQ(Stored(s->id).sandbox_id, "sbx_fresh1");
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "succeeded");
  EXPECT_EQ(runs[0].sandbox_id, "sbx_fresh1");
  EXPECT_EQ(after.consecutive_failures, 0);
}

TEST_F(ControllerServiceTest, ATargetThatKeepsFailingSoonPausesItsController) {
  Automation a = MustCreate("running");
  for (int i = 0; i < ControllerService::kPauseAfterFailures; ++i) {
    std::string current = Stored(a.id).sandbox_id;
    targets_.sandboxes[current] = FoundTarget("failed");
    targets_.sandboxes[current].created_at = now_ - 1'000;  // lived a second
    controllers_.TargetChanged(current);
  }
  store::AutomationRecord after = Stored(a.id);
  EXPECT_FALSE(after.enabled);
  EXPECT_NE(after.paused_reason.find("consecutive failed runs"), std::string::npos);
  EXPECT_EQ(targets_.replaced, ControllerService::kPauseAfterFailures);
}

TEST_F(ControllerServiceTest, TheBalanceStopSkipsAStartAndLooksAgainLater) {
  controllers_.set_run_admission(
      [](const std::string&) { return Status(Code::kPaymentRequired, "the balance is 0"); });
  targets_.sandboxes["sbx_t"].status = "hibernated";
  Automation a = MustCreate("running");
  automations_.Tick(now_);
  EXPECT_TRUE(targets_.calls.empty());
  auto runs = Runs(a.id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "skipped_quota");
  EXPECT_EQ(runs[0].error, "the balance is 0");
  store::AutomationRecord after = Stored(a.id);
  EXPECT_TRUE(after.enabled);
  EXPECT_EQ(after.consecutive_failures, 0);
  EXPECT_EQ(after.next_due_at, now_ + ControllerService::kRetryAfterMillis);
  // A stop saves money: it is not held back.
  targets_.sandboxes["sbx_t"].status = "running";
  Automation b = MustCreate("hibernated");
  automations_.Tick(now_);
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"stop sbx_t"}));
  EXPECT_EQ(Runs(b.id).at(0).status, "succeeded");
}

TEST_F(ControllerServiceTest, FailedActionsAreTriedAgainAndFivePause) {
  targets_.stop_error = Internal("runsc said no");
  Automation a = MustCreate("hibernated");
  automations_.Tick(now_);
  EXPECT_EQ(Stored(a.id).next_due_at, now_ + ControllerService::kRetryAfterMillis);
  EXPECT_EQ(Runs(a.id).at(0).status, "failed");
  EXPECT_EQ(Runs(a.id).at(0).error, "stopping the sandbox: runsc said no");
  for (int i = 1; i < ControllerService::kPauseAfterFailures; ++i) {
    now_ += ControllerService::kRetryAfterMillis;
    automations_.Tick(now_);
  }
  EXPECT_EQ(targets_.calls.size(), static_cast<size_t>(ControllerService::kPauseAfterFailures));
  store::AutomationRecord after = Stored(a.id);
  EXPECT_FALSE(after.enabled);
  EXPECT_EQ(after.paused_reason, "paused after 5 consecutive failed runs");
  // Paused: no more actions, whatever happens to the target.
  now_ += ControllerService::kRetryAfterMillis;
  automations_.Tick(now_);
  controllers_.TargetChanged("sbx_t");
  EXPECT_EQ(targets_.calls.size(), static_cast<size_t>(ControllerService::kPauseAfterFailures));
}

TEST_F(ControllerServiceTest, AStopWithoutAFreePlaceOfCheckpointWorkIsTriedAgainUncounted) {
  targets_.stop_error = Status(Code::kResourceExhausted, "the organization already has 4 stops");
  Automation a = MustCreate("hibernated");
  for (int i = 0; i < ControllerService::kPauseAfterFailures + 1; ++i) {
    automations_.Tick(now_);
    EXPECT_EQ(Stored(a.id).next_due_at, now_ + ControllerService::kRetryAfterMillis);
    now_ += ControllerService::kRetryAfterMillis;
  }
  EXPECT_EQ(targets_.calls.size(), static_cast<size_t>(ControllerService::kPauseAfterFailures + 1));
  EXPECT_TRUE(Runs(a.id).empty());
  store::AutomationRecord waiting = Stored(a.id);
  EXPECT_TRUE(waiting.enabled);
  EXPECT_EQ(waiting.consecutive_failures, 0);
  // A place is free again: the next look stops it.
  targets_.stop_error = Status::Ok();
  automations_.Tick(now_);
  EXPECT_EQ(targets_.sandboxes["sbx_t"].status, "hibernated");
  ASSERT_EQ(Runs(a.id).size(), 1u);
  EXPECT_EQ(Runs(a.id)[0].status, "succeeded");
}

TEST_F(ControllerServiceTest, ADurableTargetThatFailedPausesWithTheReason) {
  targets_.sandboxes["sbx_t"] = FoundTarget("failed", false);
  Automation a = MustCreate("running");
  automations_.Tick(now_);
  EXPECT_TRUE(targets_.calls.empty());
  store::AutomationRecord after = Stored(a.id);
  EXPECT_FALSE(after.enabled);
  EXPECT_NE(after.paused_reason.find("durable sandbox 'sbx_t' failed"), std::string::npos);
  EXPECT_EQ(after.version, a.version + 1);
  EXPECT_EQ(Runs(a.id).at(0).status, "failed");
}

TEST_F(ControllerServiceTest, ADeletedTargetPausesItsControllers) {
  Automation a = MustCreate("running");
  targets_.sandboxes.erase("sbx_t");
  controllers_.TargetChanged("sbx_t");
  store::AutomationRecord after = Stored(a.id);
  EXPECT_FALSE(after.enabled);
  EXPECT_EQ(after.paused_reason, "its sandbox 'sbx_t' was deleted");
  // A resume with the version read is refused while the target is gone.
  EXPECT_EQ(automations_.SetEnabled(org_, a.id, true, after.version).status().code(),
            Code::kConflict);
}

TEST_F(ControllerServiceTest, PauseAndResumeWithVersionsReconcileAtOnce) {
  Automation a = MustCreate("hibernated");
  auto paused = automations_.SetEnabled(org_, a.id, false, a.version);
  ASSERT_TRUE(paused.ok());
  automations_.Tick(now_);
  EXPECT_TRUE(targets_.calls.empty());
  EXPECT_EQ(automations_.SetEnabled(org_, a.id, true, a.version).status().code(),
            Code::kConflict);  // stale
  now_ += 5'000;
  auto resumed = automations_.SetEnabled(org_, a.id, true, paused->version);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  EXPECT_EQ(Stored(a.id).next_due_at, now_);
  automations_.Tick(now_);
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"stop sbx_t"}));
}

TEST_F(ControllerServiceTest, CreateRefusesCommandsAndBadStatesAndOtherTenantsTargets) {
  CreateAutomationRequest req;
  req.kind = "controller";
  req.sandbox_id = "sbx_t";
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "desired_state");
  req.desired_state = "asleep";
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "desired_state");
  req.desired_state = "running";
  req.argv = {"true"};
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "command");
  req.argv.clear();
  req.overlap = "allow";
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "overlap");
  req.overlap.clear();
  req.window_seconds = 30;
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "window_seconds");
  req.cron = "0 9 * * *" + std::string(248, ' ');  // 257 bytes
  req.window_seconds = 3600;
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "cron");
  req.cron = "* * * * *";
  req.window_seconds = 120;  // windows that never close
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "window_seconds");
  req.cron.clear();
  req.window_seconds.reset();
  EXPECT_EQ(automations_.Create(other_, req).status().code(), Code::kNotFound);
  req.kind = "watcher";
  EXPECT_EQ(automations_.Create(org_, req).status().field(), "kind");
  // A schedule takes no desired state.
  CreateAutomationRequest schedule;
  schedule.sandbox_id = "sbx_t";
  schedule.argv = {"true"};
  schedule.interval_seconds = 5;
  schedule.desired_state = "running";
  EXPECT_EQ(automations_.Create(org_, schedule).status().field(), "desired_state");
  EXPECT_TRUE(automations_.List(org_, {})->items.empty());
}

TEST_F(ControllerServiceTest, AControllerHasNoManualRunAndCountsTowardTheLimit) {
  Automation a = MustCreate("running");
  EXPECT_EQ(automations_.Trigger(org_, a.id).status().code(), Code::kConflict);
  EXPECT_EQ(automations_.Get(other_, a.id).status().code(), Code::kNotFound);
  automations_.set_plan_limit([](const std::string&) { return std::optional<int64_t>(1); });
  CreateAutomationRequest req;
  req.kind = "controller";
  req.sandbox_id = "sbx_t";
  req.desired_state = "hibernated";
  EXPECT_EQ(automations_.Create(org_, req).status().code(), Code::kResourceExhausted);
}

TEST_F(ControllerServiceTest, ARestartReconcilesEveryEnabledController) {
  Automation a = MustCreate("hibernated");
  automations_.Tick(now_);
  EXPECT_EQ(Stored(a.id).next_due_at, kControllerNeverDue);
  // Started again by hand while adaptd was down: the restart finds the drift.
  targets_.sandboxes["sbx_t"].status = "running";
  now_ += 60'000;
  controllers_.Recover(now_);
  EXPECT_EQ(Stored(a.id).next_due_at, now_);
  automations_.Tick(now_);
  EXPECT_EQ(targets_.calls, (std::vector<std::string>{"stop sbx_t", "stop sbx_t"}));
}

}  // namespace
}  // namespace adapt::core
