// What a controller does about its target, from the state it wants and the state it finds: a
// pure function, so the decisions are tested without sandboxes (controller_service_test.cc).
#pragma once

#include <cstdint>
#include <string>

namespace adapt::core {

// The target as a controller sees it (ControllerRuntime::Observe).
struct TargetState {
  bool found = false;     // false: not found, deleting or deleted
  std::string status;     // the sandbox's status
  bool stopping = false;  // hibernated, but its stop has not finished
  bool instant = true;    // instant (its runtime can be made afresh) or durable
  int64_t created_at = 0;
};

enum class ControllerAction {
  kNone,        // the target is in the wanted state
  kWait,        // it is on its way somewhere (provisioning, stopping): its next change is awaited
  kStart,       // hibernated, wanted running
  kStop,        // running, wanted hibernated (durable keeps its storage, as stop_sandbox does)
  kRecreate,    // an instant target that failed, wanted running: a fresh one with its settings
  kTargetGone,  // deleted or expired: its automations pause
  kStuck,       // nothing a controller may do brings it to the wanted state: it pauses
};

struct ControllerDecision {
  ControllerAction action = ControllerAction::kNone;
  std::string why;  // for kStuck and kTargetGone: the pause's reason
};

ControllerDecision DecideControllerAction(const std::string& wanted, const std::string& sandbox_id,
                                          const TargetState& target);

// The action's name in a run's output ("start", "stop", "recreate").
const char* ControllerActionName(ControllerAction action);

}  // namespace adapt::core
