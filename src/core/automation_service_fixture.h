// The fixture of AutomationService's unit tests (automation_service_test.cc: scheduling
// decisions; automation_recovery_test.cc: retries, lost targets and recovery): the service over
// a MemoryStore, a fake clock and a runner the test scripts.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "core/automation_service.h"
#include "store/memory_store.h"

namespace adapt::core::testing_support {

class ScriptedRunner : public AutomationRunner {
 public:
  struct Started {
    store::AutomationRecord automation;
    store::RunRecord run;
    JobAttempts::Done done;
    bool ended = false;
    bool reattached = false;
  };

  Status CheckTarget(const std::string& org_id, const std::string& sandbox_id) override {
    // An empty org_id: any organization's (the deleted-target watch asks so).
    if ((org_id.empty() || org_id == target_org) && sandbox_id == target) return Status::Ok();
    return NotFound("sandbox '" + sandbox_id + "' not found");
  }
  void Start(const store::AutomationRecord& a, const store::RunRecord& run, JobAttempts::Progress,
             JobAttempts::Done done) override {
    started.push_back({a, run, std::move(done)});
  }
  void Reattach(const store::AutomationRecord& a, const store::RunRecord& run,
                JobAttempts::Done done) override {
    started.push_back({a, run, std::move(done), false, true});
  }
  bool Cancel(const std::string& run_id) override {
    for (auto& s : started)
      if (s.run.id == run_id && !s.ended) {
        cancelled.push_back(run_id);
        return true;
      }
    return false;
  }
  Result<std::string> Replace(const std::string& org_id, const std::string& sandbox_id,
                              const std::string& automation_id) override {
    if (org_id != target_org || sandbox_id != target) return NotFound("sandbox gone");
    if (durable) return Conflict("sandbox '" + sandbox_id + "' is durable");
    replaced.push_back(sandbox_id);
    replaced_for.push_back(automation_id);
    target = "sbx_fresh" + std::to_string(replaced.size());
    return target;
  }
  void Discard(const std::string&, const std::string& sandbox_id) override {
    discarded.push_back(sandbox_id);
  }
  Result<std::vector<Replacement>> Replacements() override { return replacements; }
  void End(size_t i, AttemptEnd::Kind kind, std::optional<int> exit_code = std::nullopt,
           std::string error = "", std::string out = "") {
    ASSERT_LT(i, started.size());
    ASSERT_FALSE(started[i].ended);
    started[i].ended = true;
    AttemptEnd end;
    end.kind = kind;
    end.exit_code = exit_code;
    end.error = std::move(error);
    end.stdout_text = std::move(out);
    // Moved out first: a retry's Start appends to `started` while `done` runs.
    auto done = std::move(started[i].done);
    done(std::move(end));
  }

  std::string target_org, target = "sbx_target";
  std::vector<Started> started;
  std::vector<std::string> cancelled;
  std::vector<std::string> replaced, discarded;
  std::vector<std::string> replaced_for;  // the automation each replacement was made for
  std::vector<Replacement> replacements;  // what Replacements lists
  bool durable = false;
};

class AutomationServiceTest : public testing::Test {
 protected:
  void SetUp() override {
    org_.org_id = store_.CreateOrg({NewId("org"), "acme", false, NowMillis()})->id;
    other_.org_id = store_.CreateOrg({NewId("org"), "other", false, NowMillis()})->id;
    runner_.target_org = org_.org_id;
  }

  Automation MustCreate(int64_t interval = 2, std::string overlap = "") {
    CreateAutomationRequest req;
    req.sandbox_id = "sbx_target";
    req.argv = {"/bin/sh", "-c", "date"};
    req.interval_seconds = interval;
    req.overlap = std::move(overlap);
    auto a = service_.Create(org_, req);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return *a;
  }
  // The slot's run as a previous adaptd left it: its command started in `sandbox_id`.
  store::RunRecord LeaveRunning(size_t i, const std::string& command_id) {
    store::RunRecord run = *store_.GetRun(org_.org_id, runner_.started.at(i).run.id);
    run.status = "running";
    run.command_id = command_id;
    EXPECT_TRUE(store_.PutRun(run).ok());
    return run;
  }
  // A new adaptd over the same store, recovered; its runner is after_.
  AutomationService& Restart() {
    after_.target_org = org_.org_id;
    restarted_.emplace(store_, store_, after_, [this] { return now_; });
    restarted_->Recover();
    return *restarted_;
  }
  std::vector<store::RunRecord> Runs(const std::string& automation_id) {
    auto page = store_.ListRuns(org_.org_id, {"", automation_id}, 200, std::nullopt);
    return page.ok() ? page->items : std::vector<store::RunRecord>{};  // newest first
  }

  int64_t now_ = 1'000'000;
  store::MemoryStore store_;
  ScriptedRunner runner_;
  AutomationService service_{store_, store_, runner_, [this] { return now_; }};
  Principal org_, other_;
  ScriptedRunner after_;
  std::optional<AutomationService> restarted_;  // Restart's: goes before what it uses
};

}  // namespace adapt::core::testing_support
