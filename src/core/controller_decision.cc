#include "core/controller_decision.h"

#include "core/controller_window.h"

namespace adapt::core {

ControllerDecision DecideControllerAction(const std::string& wanted, const std::string& sandbox_id,
                                          const TargetState& target) {
  const std::string& s = target.status;
  if (!target.found || s == "deleting" || s == "deleted")
    return {ControllerAction::kTargetGone, "its sandbox '" + sandbox_id + "' was deleted"};
  bool want_running = wanted == kStateRunning;
  if (s == "running") return {want_running ? ControllerAction::kNone : ControllerAction::kStop, ""};
  if (s == "hibernated") {
    if (target.stopping) return {ControllerAction::kWait, ""};
    return {want_running ? ControllerAction::kStart : ControllerAction::kNone, ""};
  }
  if (s == "failed") {
    // Not running is as good as hibernated; wanted running, only an instant one can be remade.
    if (!want_running) return {ControllerAction::kNone, ""};
    if (target.instant) return {ControllerAction::kRecreate, ""};
    return {ControllerAction::kStuck,
            "its durable sandbox '" + sandbox_id + "' failed and cannot be started again"};
  }
  if (s == "completed") {
    if (!want_running) return {ControllerAction::kNone, ""};
    return {ControllerAction::kStuck, "its sandbox '" + sandbox_id +
                                          "' completed (its startup command ended): there is "
                                          "nothing to hold running"};
  }
  // provisioning, unresolved, anything newer: its next status change is awaited.
  return {ControllerAction::kWait, ""};
}

const char* ControllerActionName(ControllerAction action) {
  switch (action) {
    case ControllerAction::kStart:
      return "start";
    case ControllerAction::kStop:
      return "stop";
    case ControllerAction::kRecreate:
      return "recreate";
    case ControllerAction::kTargetGone:
    case ControllerAction::kStuck:
      return "pause";
    case ControllerAction::kNone:
    case ControllerAction::kWait:
      break;
  }
  return "none";
}

}  // namespace adapt::core
