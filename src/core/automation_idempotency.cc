// AutomationService's create under an Idempotency-Key (Trigger's is beside it in
// automation_service.cc). The key's claim is written in the transaction that stores the object.
#include "core/automation_service.h"

namespace adapt::core {

std::string AutomationKindOf(const std::string& word) {
  if (word == "SandboxSchedule") return "schedule";
  if (word == "SandboxController") return "controller";
  return word;
}

Result<Automation> AutomationService::Create(
    const Principal& who, const CreateAutomationRequest& req, const FieldNames& names,
    const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "automation", idempotency, Now()));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, automations_.FindIdempotentCreate(*claim));
    if (earlier) {
      auto a = automations_.GetAutomation(who.org_id, *earlier);
      if (!a.ok() && a.status().code() == Code::kNotFound)
        return store::IdempotentObjectGone("automation " + *earlier);
      if (!a.ok()) return a.status();
      return ViewOf(*a);
    }
  }
  if (req.kind == "controller") return CreateController(who, req, names, claim);
  return CreateSchedule(who, req, names, claim);
}

Result<Automation> AutomationService::InsertAutomation(
    const Principal& who, const store::AutomationRecord& a,
    const std::optional<store::IdempotencyClaim>& claim) {
  int limit = static_cast<int>(PlanLimit(who.org_id));
  if (!claim) {
    RETURN_IF_ERROR(automations_.CreateAutomation(a, limit));
    Wake();
    return ViewOf(a);
  }
  ASSIGN_OR_RETURN(store::IdempotentCreate made,
                   automations_.CreateOnce(*claim, [&]() -> Result<std::string> {
                     RETURN_IF_ERROR(automations_.CreateAutomation(a, limit));
                     return a.id;
                   }));
  if (made.replayed) {
    ASSIGN_OR_RETURN(store::AutomationRecord earlier,
                     automations_.GetAutomation(who.org_id, made.object_id));
    return ViewOf(earlier);
  }
  Wake();
  return ViewOf(a);
}

}  // namespace adapt::core
