// REST's words for one-shot jobs and runs (/v1/jobs, /v1/runs): the submit body into
// core::SubmitJob, and core::Job and core::Run into the wire objects (docs/openapi.yaml).
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/field_names.h"
#include "core/job_request.h"
#include "core/job_view.h"

namespace adapt::api {

// REST's names for the core's fields (memoryMiB, timeoutSeconds, maxAttempts, ...).
const core::FieldNames& RestJobFields();
// POST /v1/jobs: the sandbox template (image, cpu, memoryMiB, diskMiB, env, secrets,
// network.egress) and the command (command or argv, cwd, timeoutSeconds), maxAttempts.
Result<core::SubmitJob> SubmitJobFromJson(const nlohmann::json& body);
nlohmann::json JobToJson(const core::Job& job);
nlohmann::json JobPageToJson(const core::JobPage& page);
nlohmann::json RunToJson(const core::Run& run);
nlohmann::json RunPageToJson(const core::RunPage& page);

}  // namespace adapt::api
