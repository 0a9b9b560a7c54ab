// The tool set adaptd serves, one Add*Tools per feature file. A feature that lands later
// adds its file and one line to RegisterTools (tools.cc); tools whose feature does not exist
// here are not listed.
#pragma once

#include <string>

#include "base/status.h"
#include "core/account_service.h"
#include "core/app_service.h"
#include "core/automation_service.h"
#include "core/command_service.h"
#include "core/database_service.h"
#include "core/endpoint_service.h"
#include "core/file_service.h"
#include "core/image_catalog.h"
#include "core/job_service.h"
#include "core/object_service.h"
#include "core/operation_service.h"
#include "core/sandbox_service.h"
#include "core/storage_files.h"
#include "mcp/tool_registry.h"
#include "storage/site_service.h"
#include "storage/volume_service.h"

namespace adapt::mcp {

struct ToolServices {
  core::SandboxService& sandboxes;
  core::CommandService& commands;
  const core::ImageCatalog& images;  // what list_sandbox_environments reports
  core::FileService& files;
  core::EndpointService& endpoints;
  storage::VolumeService* volumes = nullptr;  // null: no persistent storage tools
  core::ObjectService* objects = nullptr;     // null: no object storage tools (object_tools.cc)
  storage::SiteService* sites = nullptr;      // null: no publish_static_website
  // What list_sandbox_environments reports of the image policy; null: the default policy.
  const core::ImagePolicy* image_policy = nullptr;
  core::OperationService* operations = nullptr;  // null: no get_checkpoint_operation
  core::AccountService* accounts = nullptr;      // null: no register_user, get_billing_account
  core::JobService* jobs = nullptr;              // null: no job and run tools (job_tools.cc)
  core::AppService* apps = nullptr;  // null: no deployed app tools (deployed_app_tools.cc)
  // null: no automation tools (automation_tools.cc).
  core::AutomationService* automations = nullptr;
  core::DatabaseService* databases = nullptr;  // null: no get_user_database
  // null: read_workspace_file reads through a sandbox only (no `storage`).
  const core::StorageFiles* storage_files = nullptr;
};

void AddSandboxTools(ToolRegistry& registry, const ToolServices& services);
void AddCommandTools(ToolRegistry& registry, const ToolServices& services);
void AddEnvironmentTools(ToolRegistry& registry, const ToolServices& services);
void AddWorkspaceFileTools(ToolRegistry& registry, const ToolServices& services);
void AddAppTools(ToolRegistry& registry, const ToolServices& services);
// stop_sandbox, start_sandbox.
void AddSandboxPowerTools(ToolRegistry& registry, const ToolServices& services);
void AddStorageTools(ToolRegistry& registry, const ToolServices& services);
void AddObjectTools(ToolRegistry& registry, const ToolServices& services);
// register_user, get_billing_account.
void AddAccountTools(ToolRegistry& registry, const ToolServices& services);
// submit_sandbox_job, list_sandbox_jobs, cancel_sandbox_job, delete_sandbox_job,
// list_automation_runs, get_automation_run, cancel_automation_run.
void AddJobTools(ToolRegistry& registry, const ToolServices& services);
// deploy_sandbox_app, scale_deployed_app, delete_deployed_app.
void AddDeployedAppTools(ToolRegistry& registry, const ToolServices& services);
// A deployed app as the tools show it (list_public_apps too).
nlohmann::json DeployedAppJson(const core::App& app);
// create_sandbox_automation, list_sandbox_automations, set_sandbox_automation_enabled,
// delete_sandbox_automation.
void AddAutomationTools(ToolRegistry& registry, const ToolServices& services);
// get_user_database.
void AddDatabaseTools(ToolRegistry& registry, const ToolServices& services);

// Every tool this build serves.
void RegisterTools(ToolRegistry& registry, const ToolServices& services);

// The sentence a model reads for a failed core call: its message as one capitalized
// sentence. Fields are already named as the tool names them (the tool's mapper told the core).
std::string FailureSentence(const Status& status);

}  // namespace adapt::mcp
