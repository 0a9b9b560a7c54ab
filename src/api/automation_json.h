// REST's words for automations (/v1/automations): the create body into
// core::CreateAutomationRequest, and core::Automation into the wire object (docs/openapi.yaml).
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/automation_service.h"
#include "core/field_names.h"

namespace adapt::api {

// REST's names for the core's fields (sandboxId, intervalSeconds, timeZone, ...).
const core::FieldNames& RestAutomationFields();
// POST /v1/automations: name, sandboxId, command or argv, cwd, env, timeoutSeconds,
// intervalSeconds or cron (+ timeZone), overlap, catchUpSeconds. Unknown fields are refused.
Result<core::CreateAutomationRequest> CreateAutomationFromJson(const nlohmann::json& body);
nlohmann::json AutomationToJson(const core::Automation& a);

}  // namespace adapt::api
