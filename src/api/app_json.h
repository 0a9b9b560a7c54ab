// REST's words for deployed apps (/v1/apps): the deploy and scale bodies into core requests,
// and core::App and its releases into the wire objects (docs/openapi.yaml).
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/app_service.h"
#include "core/field_names.h"

namespace adapt::api {

// REST's names for the core's fields (sourcePath, startCommand, ...).
const core::FieldNames& RestAppFields();
// POST /v1/apps: sandboxId, startCommand and port; name, sourcePath, buildCommand, buildPath,
// buildTimeoutSeconds, replicas, env, secrets, readinessPath, readinessTimeoutSeconds,
// readinessPeriodSeconds and readinessFailureThreshold optional (waitSeconds is read by
// DeployWaitFromJson).
Result<core::DeployApp> DeployAppFromJson(const nlohmann::json& body);
// How long POST /v1/apps and /v1/apps/{id}/rollback wait before answering 202 with the
// operation.
inline constexpr int64_t kDefaultDeployWaitSeconds = 60;
// Their waitSeconds (0..600, default kDefaultDeployWaitSeconds).
Result<int64_t> DeployWaitFromJson(const nlohmann::json& body);
// POST /v1/apps/{id}/rollback: {"releaseId": "rel_..."} or {} (the release before), and
// waitSeconds (read by DeployWaitFromJson).
Result<std::string> RollbackFromJson(const nlohmann::json& body);
// POST /v1/apps/{id}/scale: {"replicas": n}.
Result<int64_t> ScaleFromJson(const nlohmann::json& body);
nlohmann::json AppToJson(const core::App& app);
nlohmann::json AppReleaseToJson(const core::AppReleaseView& release);
nlohmann::json AppReplicaLogToJson(const core::AppReplicaLog& log);

}  // namespace adapt::api
