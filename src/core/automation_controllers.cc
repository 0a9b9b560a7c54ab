// AutomationService's side of controllers (kind controller): their create, and the hand-over
// to ControllerService, which reconciles them (core/controller_service.h).
#include <algorithm>

#include "base/ids.h"
#include "core/automation_service.h"
#include "core/controller_service.h"

namespace adapt::core {

void AutomationService::set_controllers(ControllerService* controllers) {
  controllers_ = controllers;
  if (controllers_) controllers_->set_wake([this] { Wake(); });
}

int64_t AutomationService::PlanLimit(const std::string& org_id) const {
  int64_t limit = kMaxPerOrg;
  if (plan_limit_)
    if (auto plan = plan_limit_(org_id)) limit = std::clamp<int64_t>(*plan, 0, kMaxPerOrg);
  return limit;
}

Result<Automation> AutomationService::CreateController(
    const Principal& who, const CreateAutomationRequest& req, const FieldNames& names,
    const std::optional<store::IdempotencyClaim>& claim) {
  if (!controllers_) return Status(Code::kUnsupported, "controllers are not served here");
  if (req.name.size() > 128)
    return InvalidArgument(names("name"), names("name") + " must be at most 128 bytes");
  if (req.cron.size() > kMaxCronBytes) {
    return InvalidArgument(names("cron"), names("cron") + " must be at most " +
                                              std::to_string(kMaxCronBytes) + " bytes");
  }
  if (req.sandbox_id.empty())
    return InvalidArgument(names("sandbox_id"), names("sandbox_id") + " is required");
  if (req.desired_state.empty())
    return InvalidArgument(names("desired_state"), names("desired_state") + " is required");
  // A controller runs nothing: the command and a schedule's policies are refused.
  std::vector<std::pair<bool, std::string>> schedule_only = {
      {!req.argv.empty(), "command"},
      {!req.cwd.empty(), "cwd"},
      {!req.env.empty(), "env"},
      {req.timeout_seconds.has_value(), "timeout_seconds"},
      {!req.overlap.empty(), "overlap"},
      {req.catch_up_seconds.has_value(), "catch_up_seconds"},
      {req.max_attempts.has_value(), "max_attempts"}};
  for (const auto& [given, field] : schedule_only) {
    if (given)
      return InvalidArgument(names(field), names(field) +
                                               " applies to schedules, not to a "
                                               "controller (it runs no command)");
  }
  if (req.interval_seconds && *req.interval_seconds < 1) {
    return InvalidArgument(names("interval_seconds"),
                           names("interval_seconds") + " must be at least 1");
  }
  int64_t now = Now();
  int64_t interval = req.interval_seconds.value_or(0);
  ASSIGN_OR_RETURN(ControllerWindows windows,
                   ControllerWindows::Of(req.desired_state, req.window_seconds.value_or(0),
                                         interval, req.cron, req.time_zone, now, names));
  if (windows.scheduled() && windows.NextChanges(now, 2).size() < 2) {
    return InvalidArgument(names("window_seconds"),
                           "the windows never open or never close: give no schedule to hold " +
                               req.desired_state + " always");
  }
  if (Status st = runner_.CheckTarget(who.org_id, req.sandbox_id); !st.ok()) {
    if (st.code() == Code::kNotFound) return NotFound("sandbox '" + req.sandbox_id + "' not found");
    return st;
  }
  store::AutomationRecord a;
  a.id = NewId("aut");
  a.org_id = who.org_id;
  a.name = req.name.empty() ? a.id : req.name;
  a.kind = "controller";
  a.sandbox_id = req.sandbox_id;
  a.interval_seconds = interval;
  a.cron = interval ? "" : req.cron;
  a.time_zone = req.time_zone.empty() ? "UTC" : req.time_zone;
  a.desired_state = req.desired_state;
  a.window_seconds = req.window_seconds.value_or(0);
  a.max_attempts = 1;
  a.next_due_at = now;  // reconciled at once
  a.created_at = a.updated_at = now;
  return InsertAutomation(who, a, claim);
}

}  // namespace adapt::core
