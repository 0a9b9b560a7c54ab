// The REST API's routes, one file per resource. Each only translates HTTP to the core's
// typed verbs and back.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "api/router.h"
#include "core/account_service.h"
#include "core/app_service.h"
#include "core/automation_service.h"
#include "core/checkpoint_service.h"
#include "core/command_service.h"
#include "core/database_service.h"
#include "core/endpoint_service.h"
#include "core/environments.h"
#include "core/event_bus.h"
#include "core/file_service.h"
#include "core/image_service.h"
#include "core/job_service.h"
#include "core/operation_service.h"
#include "core/org_deletion.h"
#include "core/sandbox_service.h"
#include "core/secret_service.h"
#include "core/storage_files.h"
#include "core/users.h"
#include "storage/volume_service.h"
#include "store/store.h"

namespace adapt::api {

void AddSandboxRoutes(Router& router, core::SandboxService& sandboxes,
                      boost::asio::thread_pool& workers);
// /v1/sandboxes/{id}/checkpoints (named checkpoints, restore in place) and /v1/checkpoints
// (the organization's, every sandbox's).
void AddCheckpointRoutes(Router& router, core::CheckpointService& checkpoints);
void AddCommandRoutes(Router& router, core::SandboxService& sandboxes,
                      core::CommandService& commands, boost::asio::thread_pool& workers);
// /v1/orgs and their keys (the admin key), and /v1/keys: the caller's own organization's keys.
void AddOrgRoutes(Router& router, core::Auth& auth, core::OrgDeletion& deletion);
// POST /v1/orgs/{id}/users and GET /v1/users (admin key).
void AddUserRoutes(Router& router, core::Users& users);
// /v1/images.
void AddImageRoutes(Router& router, core::ImageService& images);
// GET /v1/operations/{id}: sandbox checkpoints and restores, image pulls and imports.
void AddOperationRoutes(Router& router, core::OperationService& operations);
// GET /v1/environments.
void AddEnvironmentRoutes(Router& router, const core::ImageCatalog& catalog,
                          const core::ImagePolicy& policy);
void AddEventRoutes(Router& router, store::Store& store, core::EventBus& bus,
                    core::SandboxService& sandboxes, boost::asio::thread_pool& workers);
void AddFileRoutes(Router& router, core::FileService& files);
// For HttpServerOptions::stream_request_body: the file, archive and image archive uploads.
bool StreamsRequestBody(std::string_view method, std::string_view path);
void AddEndpointRoutes(Router& router, core::EndpointService& endpoints);
// /v1/storage (persistent storage volumes).
void AddStorageRoutes(Router& router, storage::VolumeService& volumes,
                      const core::StorageFiles& files);
// GET /healthz, without a key.
void AddHealthRoutes(Router& router);
// /v1/account[/ledger|/usage], /v1/plans, /v1/orgs/{id}/plan and /v1/orgs/{id}/credits.
void AddAccountRoutes(Router& router, core::AccountService& accounts);
// GET /metrics (admin key): Prometheus text format.
void AddMetricsRoutes(Router& router, core::AccountService& accounts);
// /v1/secrets (organization secrets; values go in, never out).
void AddSecretRoutes(Router& router, core::SecretService& secrets);
// /v1/jobs and /v1/runs (one-shot jobs and their runs).
void AddJobRoutes(Router& router, core::JobService& jobs);
// /v1/apps: deployed apps (app_routes.cc).
void AddAppRoutes(Router& router, core::AppService& apps);
// GET /v1/sandboxes/{id}/stats.
void AddStatsRoutes(Router& router, core::SandboxService& sandboxes);
// GET /v1/sandboxes/{id}/startup/stream (startup output as it is produced).
void AddStartupStreamRoutes(Router& router, core::SandboxService& sandboxes);
// /v1/automations (schedules; their runs are read through /v1/runs).
void AddAutomationRoutes(Router& router, core::AutomationService& automations);
// /v1/database[/rotate] (the organization's PostgreSQL database; never its host or password).
void AddDatabaseRoutes(Router& router, core::DatabaseService& databases);

}  // namespace adapt::api
