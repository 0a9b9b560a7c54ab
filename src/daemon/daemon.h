// adaptd as a whole: its parts, started in order (daemon_start.cc: state, storage, runtime,
// networks; daemon_services.cc: the core's services, the ingress, the API) and stopped.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <optional>
#include <string>

#include "api/account_json.h"
#include "api/http_server.h"
#include "api/object_routes.h"
#include "api/routes.h"
#include "api/stream_threads.h"
#include "base/fault_point.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "core/app_service.h"
#include "core/automation_service.h"
#include "core/controller_service.h"
#include "core/database_access.h"
#include "core/database_service.h"
#include "core/environments.h"
#include "core/event_retention.h"
#include "core/file_transfers.h"
#include "core/idle_tracker.h"
#include "core/image_policy.h"
#include "core/job_service.h"
#include "core/object_service.h"
#include "core/operation_service.h"
#include "core/org_deletion.h"
#include "core/sandbox_automation_runner.h"
#include "core/sandbox_controller_runtime.h"
#include "core/sandbox_job_attempts.h"
#include "core/sandbox_monitor.h"
#include "core/secret_cipher.h"
#include "core/storage_files.h"
#include "core/usage_meter.h"
#include "core/waiter.h"
#include "core/warm_pool.h"
#include "daemon/config.h"
#include "daemon/paths.h"
#include "dashboard/dashboard_routes.h"
#include "database/external_postgres.h"
#include "database/postgres_server.h"
#include "mcp/cors.h"
#include "mcp/mcp_http.h"
#include "mcp/oauth_server.h"
#include "mcp/tools.h"
#include "net/database_proxy.h"
#include "net/ingress.h"
#include "net/network_claim.h"
#include "net/network_manager.h"
#include "os/files.h"
#include "os/open_file_limit.h"
#include "os/process_lock.h"
#include "runtime/runsc_runtime.h"
#include "storage/upload_sweeper.h"
#include "storage/volume_key.h"
#include "storage/volume_service.h"

namespace adapt::daemon {

// The limits every HTTP listener of adaptd shares (the config's connection settings).
api::HttpServerOptions HttpLimits(const DaemonConfig& config, std::string name);

// adaptd's parts, in the order they start. Members are destroyed in reverse, so each part
// goes before the parts it uses; Start's steps fill them one after the other, and a step that
// fails leaves the later ones empty.
class Daemon {
 public:
  // storage_master_key_env: ADAPT_STORAGE_MASTER_KEY, taken out of the environment by main.
  Daemon(const DaemonConfig& config, std::string storage_master_key_env)
      : config_(config), storage_master_key_env_(std::move(storage_master_key_env)) {}

  // The start-up checklist: each step returns its failure, which ends adaptd.
  Status Start();

  // Serves until SIGTERM or SIGINT, then stops what serves; sandboxes keep running.
  void ServeUntilStopSignal();

 private:
  Status TakeStateDirectory();
  Status StartOnStateDirectory();
  void ReleaseStateDirectory();
  // The API's address is bound before any listener takes a free port, so that none of them
  // can take it (a restart on the same port); connections wait until StartApi serves them.
  Status HoldApiAddress();
  Status OpenStore();
  // Object storage (storage/): blobs under <state>/objects, tokens signed with storage.key,
  // and the storage gateway on its own listener, up before the network rules that name its port.
  Status StartObjectStorage();
  Status StartRuntime();
  // Images pulled from registries: blobs, unpacked layers and references (image/).
  Status OpenImages();
  // The organizations' PostgreSQL server (made on first use; a cluster made before is started
  // now, or the server a killed adaptd left running is reused), or the operator's external one
  // (--database-admin-url), and the sandboxes' proxy to it.
  Status StartDatabase();
  // What a previous run left: networks, volumes, sandboxes and their agents.
  Status ReconcileSandboxes();
  // The core's services, over the reconciled state.
  Status StartServices();
  // Plans (the built-in default, then --plans-file) and the limits every service checks.
  Status StartAccounts();
  // The ingress: endpoint hostnames to sandbox ports, site hostnames to the sites' origin.
  Status StartIngress();
  void StartMonitor();
  // Idle hibernation (idleTimeoutSeconds): commands, file transfers and ingress connections
  // mark their sandbox used; every status change and, now, every running sandbox is looked at.
  void StartIdleTracker();
  // The REST API and MCP on the main listener; once it serves, warm pools fill.
  Status StartApi();

  // A bus subscription, ended before what it calls goes.
  struct Subscription {
    Subscription(core::EventBus& bus, core::EventBus::Listener listener)
        : bus(bus), token(bus.Subscribe(std::move(listener))) {}
    ~Subscription() { bus.Unsubscribe(token); }
    core::EventBus& bus;
    uint64_t token;
  };

  struct StopStateCalls {
    explicit StopStateCalls(runtime::Runtime& r) : runtime(r) {}
    ~StopStateCalls() { runtime.SetStateListener(nullptr); }
    runtime::Runtime& runtime;
  };

  const DaemonConfig& config_;
  std::string storage_master_key_env_;
  ListenAddress listen_;
  os::UniqueFd lock_;
  // The state directory is a bind of itself, to be unmounted at the stop when nothing is
  // mounted below it (os/mount_propagation.h).
  bool state_dir_bound_ = false;
  // This adaptd's network name and pool among the host's adaptds, held from the start on.
  std::optional<net::NetworkClaim> network_claim_;
  Helpers helpers_;
  std::unique_ptr<store::Store> store_;
  std::string master_key_;
  std::optional<core::Auth> auth_;
  std::optional<core::Users> users_;
  std::optional<dashboard::DashboardSessions> dashboard_sessions_;
  std::string key_file_;
  std::optional<storage::StorageTokens> storage_tokens_;
  std::optional<storage::ObjectStore> object_store_;
  std::optional<storage::UploadSweeper> upload_sweeper_;
  std::optional<storage::SiteService> sites_;
  // Before the router and the storage gateway, which point to it.
  std::optional<api::OrgStreamLimit> stream_limit_;
  // Static sites' downloads: --max-streams-per-org per organization, twice that in all.
  std::optional<api::OrgStreamLimit> site_downloads_;
  std::optional<api::ObjectApi> object_api_;
  std::optional<api::StorageGateway> gateway_;
  std::optional<boost::asio::thread_pool> storage_workers_;
  std::optional<api::HttpServer> storage_server_;
  std::optional<api::HttpServer> site_server_;
  std::optional<runtime::AgentHub> agents_;
  std::optional<runtime::RunscRuntime> runtime_;
  std::optional<image::ImageStore> image_store_;
  std::optional<core::ImageCatalog> images_;
  std::optional<core::EventBus> bus_;
  std::optional<boost::asio::thread_pool> workers_;
  // Image pulls, commits and collections: a registry that drips its blobs holds one of these,
  // never a thread that answers the API.
  std::optional<boost::asio::thread_pool> image_workers_;
  std::optional<core::Waiter> waiter_;
  std::unique_ptr<database::DatabaseServer> postgres_;  // embedded or external
  std::optional<core::DatabaseService> databases_;
  std::optional<net::DatabaseProxy> database_proxy_;
  std::optional<net::NetworkManager> network_;
  std::optional<storage::VolumeService> volumes_;
  std::optional<core::StorageFiles> storage_files_;
  std::optional<core::AccountService> accounts_;
  core::FileTransfers file_transfers_;  // before lifecycle_ and files_, which point to it
  std::optional<core::SandboxLifecycle> lifecycle_;
  std::optional<core::ImagePolicy> image_policy_;
  std::optional<core::SandboxService> sandboxes_;
  std::optional<core::ImageService> image_service_;
  std::optional<core::OperationService> operations_;
  std::optional<core::CheckpointService> checkpoints_;
  std::optional<core::WarmPool> warm_pool_;
  std::optional<core::SecretService> secrets_;
  std::optional<core::CommandService> commands_;
  std::optional<core::SandboxJobAttempts> job_attempts_;
  std::optional<core::JobService> jobs_;
  std::optional<core::SandboxAutomationRunner> automation_runner_;
  std::optional<core::SandboxControllerRuntime> controller_runtime_;
  std::optional<core::ControllerService> controllers_;
  std::optional<core::AutomationService> automations_;
  std::optional<core::FileService> files_;
  std::optional<core::ObjectService> objects_;
  std::optional<core::EndpointService> endpoints_;
  std::optional<core::AppService> apps_;
  std::optional<core::OrgDeletion> org_deletion_;
  std::optional<net::IngressServer> ingress_;
  std::optional<core::SandboxMonitor> monitor_;
  std::optional<core::UsageMeter> meter_;
  std::optional<core::EventRetention> event_retention_;
  std::optional<StopStateCalls> stop_state_calls_;
  std::optional<core::IdleTracker> idle_;
  std::optional<Subscription> idle_changes_;
  std::optional<api::Router> router_;
  std::optional<mcp::ToolRegistry> mcp_tools_;
  std::optional<boost::asio::thread_pool> mcp_calls_;
  std::optional<mcp::ToolServices> tool_services_;
  std::optional<mcp::OAuthServer> oauth_;
  std::optional<mcp::McpHttp> mcp_http_;
  std::optional<api::HttpServer> server_;
};

}  // namespace adapt::daemon
