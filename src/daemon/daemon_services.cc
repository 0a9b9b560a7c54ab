// adaptd's services over the reconciled state: the core, the ingress, the API and MCP.
#include <algorithm>
#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "daemon/daemon.h"
#include "dashboard/signup_routes.h"

namespace adapt::daemon {
namespace {

// Threads for image pulls (a create's too), commits and collections: sixteen times an
// organization's --max-imports-per-org pulls and imports in progress, so that it takes sixteen
// organizations whose registries stall (each pull cut after its deadline or 60 s under 1 KiB/s)
// to fill them; beyond that many at once, pulls wait their turn in the queue (a slow registry
// delays other pulls, never the API). A pull's thread mostly waits on its socket: 64 of them
// (the default) cost about a MiB. At least 16; at most 256 (a cap of 0, none, takes 256).
size_t ImageWorkerThreads(int max_imports_per_org) {
  if (max_imports_per_org <= 0) return 256;
  return static_cast<size_t>(std::clamp(16 * max_imports_per_org, 16, 256));
}

// The MCP module's routes (/mcp, OAuth, preflights) on the API's router.
void AddPublicRoutes(api::Router& router, const mcp::HttpRoutes& routes) {
  for (const auto& route : routes)
    router.AddPublic(route.method, route.path,
                     [handle = route.handle](const api::HttpRequest& req, const api::PathParams&) {
                       return handle(req);
                     });
}

}  // namespace

Status Daemon::StartServices() {
  sandboxes_.emplace(*store_, *runtime_, *lifecycle_, *images_, *workers_, config_.default_image);
  sandboxes_->set_max_sandboxes_per_org(config_.max_sandboxes_per_org);
  sandboxes_->set_default_dns(config_.dns);
  sandboxes_->set_waiter(&*waiter_);
  RETURN_IF_ERROR(StartAccounts());
  image_workers_.emplace(ImageWorkerThreads(config_.max_imports_per_org));
  image_service_.emplace(*store_, *image_store_, *image_workers_);
  image_service_->set_caps(config_.max_images_per_org, config_.max_imports_per_org);
  image_service_->Reconcile();
  image_service_->set_commit_source(&*lifecycle_, &*images_);
  sandboxes_->set_image_service(&*image_service_);
  std::vector<std::string> operator_images = core::EnvironmentImages();
  operator_images.push_back(config_.default_image);
  ASSIGN_OR_RETURN(image_policy_,
                   core::ImagePolicy::Make({config_.trusted_image_sources,
                                            config_.developer_public_images, config_.image_policy},
                                           operator_images));
  sandboxes_->set_image_policy(&*image_policy_);
  image_service_->set_image_policy(&*image_policy_);
  operations_.emplace(*store_, &*image_service_);
  checkpoints_.emplace(*store_, *runtime_, *lifecycle_, *sandboxes_);
  // Half the API's workers, as file operations (file_service.h): one organization's stops,
  // checkpoints and roll backs, minutes each for a large sandbox, cannot hold them all.
  OrgCounter checkpoint_work(std::max(1, config_.worker_threads / 2));
  sandboxes_->set_checkpoint_work(checkpoint_work);
  checkpoints_->set_checkpoint_work(checkpoint_work);
  // Checkpoints count against the persistent storage limit, with the volumes.
  checkpoints_->set_storage_limit(
      [this](const std::string& org_id) -> Result<std::optional<int64_t>> {
        ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(org_id));
        return plan.persistent_storage_gib;
      });
  sandboxes_->set_volume_service(&*volumes_);
  // Warm pools: what a previous run left is torn down (after the reconciliation above, which
  // already removed their runtime state and networks); filling starts once the API serves.
  ASSIGN_OR_RETURN(auto pool_specs, core::ParsePoolSpecs(config_.warm_pools));
  warm_pool_.emplace(*store_, *runtime_, *images_, &*network_, *workers_, std::move(pool_specs));
  warm_pool_->RemoveLeftovers();
  sandboxes_->set_warm_pool(&*warm_pool_);
  // Organization secrets, sealed with a key derived from the master key.
  secrets_.emplace(*store_, master_key_);
  sandboxes_->set_secret_service(&*secrets_);
  image_service_->set_secret_service(&*secrets_);
  commands_.emplace(*store_, *runtime_, *images_);
  commands_->set_waiter(&*bus_, &*waiter_);
  files_.emplace(*store_, *runtime_);
  files_->set_transfers(&file_transfers_);
  lifecycle_->set_file_transfers(&file_transfers_);
  storage_files_.emplace(
      [volumes = &*volumes_](const std::string& org_id, const std::string& name) {
        return volumes->OpenForReading(org_id, name);
      });
  files_->set_storage_files(&*storage_files_);
  // Half the API's workers: one organization whose sandbox stalls its file tool cannot hold
  // them all (file_service.h).
  files_->set_max_in_flight_per_org(std::max(1, config_.worker_threads / 2));
  objects_.emplace(*store_, *store_, *object_store_, *storage_tokens_, *files_, *sandboxes_);
  objects_->SetGatewayPort(storage_server_->port());
  commands_->Reconcile();
  job_attempts_.emplace(*sandboxes_, *commands_, *runtime_, *workers_);
  job_attempts_->set_cancel_grace(std::chrono::seconds(config_.run_cancel_grace_seconds));
  jobs_.emplace(*store_, *job_attempts_, config_.default_image, config_.job_concurrency_per_org);
  jobs_->set_usage_store(store_.get());
  jobs_->set_image_check([this](const core::Principal& who, const core::CreateSandbox& sandbox,
                                const core::FieldNames& names) {
    return sandboxes_->CheckImageChoice(who, sandbox, names);
  });
  automation_runner_.emplace(*sandboxes_, *commands_, *runtime_, *store_, *workers_);
  automation_runner_->set_cancel_grace(std::chrono::seconds(config_.run_cancel_grace_seconds));
  automations_.emplace(*store_, *store_, *automation_runner_);
  automations_->set_plan_limit([this](const std::string& org_id) -> std::optional<int64_t> {
    auto plan = accounts_->PlanOf(org_id);
    return plan.ok() ? plan->automations : std::nullopt;
  });
  jobs_->set_queued_limit([this](const std::string& org_id) -> Result<std::optional<int64_t>> {
    ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(org_id));
    return plan.queued_jobs;
  });
  // The balance stop: at a used-up balance on a priced plan a run is skipped_quota.
  automations_->set_run_admission([this](const std::string& org_id) {
    auto plan = accounts_->PlanOf(org_id);
    if (!plan.ok()) return plan.status();
    return accounts_->RequireBalance(org_id, *plan);
  });
  jobs_->set_automation_cancel(
      [this](const std::string& run_id) { return automations_->CancelRun(run_id); });
  automations_->WatchTargets(*bus_, *workers_);
  // Controllers: reconciled on the workers when their target's status changes or a window
  // opens or closes (the scheduler above hands those over).
  controller_runtime_.emplace(*sandboxes_);
  controllers_.emplace(*store_, *store_, *controller_runtime_, core::ControllerService::Clock{},
                       [this](std::function<void()> work) {
                         boost::asio::post(*workers_,
                                           Guarded("controller reconcile", std::move(work)));
                       });
  controllers_->set_run_admission([this](const std::string& org_id) {
    auto plan = accounts_->PlanOf(org_id);
    if (!plan.ok()) return plan.status();
    return accounts_->RequireBalance(org_id, *plan);
  });
  automations_->set_controllers(&*controllers_);
  controllers_->Watch(*bus_);
  endpoints_.emplace(*store_, *store_, *network_, core::EndpointOptions{config_.ingress_domain});
  endpoints_->set_account_service(&*accounts_);
  core::AppOptions app_options{config_.ingress_domain};
  app_options.release_grace = std::chrono::seconds(config_.app_release_grace_seconds);
  apps_.emplace(*store_, *sandboxes_, *commands_, *files_, *object_store_, *network_, app_options);
  apps_->SetReleaseGateway(&*storage_tokens_, object_api_->gateway_port);
  apps_->set_account_service(&*accounts_);
  // Half the API's workers, as file operations (file_service.h): a tenant's slow rollouts
  // cannot hold them all.
  apps_->set_max_waiting_per_org(std::max(1, config_.worker_threads / 2));
  apps_->set_secret_service(&*secrets_);
  apps_->set_event_bus(&*bus_);
  org_deletion_.emplace(*store_, *volumes_, *object_store_, *sites_, *databases_, *image_service_,
                        *checkpoints_);
  org_deletion_->Resume();
  return Status::Ok();
}

Status Daemon::StartAccounts() {
  accounts_.emplace(*store_,
                    core::AccountOptions{config_.terms_version, config_.max_sandboxes_per_org});
  std::vector<store::PlanRecord> plans;
  if (!config_.plans_file.empty()) {
    ASSIGN_OR_RETURN(std::string text, os::ReadFile(config_.plans_file));
    auto parsed = api::PlansFileFromJson(text);
    if (!parsed.ok()) return parsed.status().WithContext(config_.plans_file);
    plans = std::move(*parsed);
  }
  RETURN_IF_ERROR(accounts_->LoadPlans(plans).WithContext("loading plans"));
  accounts_->set_volume_service(&*volumes_);
  sandboxes_->set_account_service(&*accounts_);
  object_store_->SetOrgQuota([this](const std::string& org_id) -> std::optional<uint64_t> {
    auto plan = accounts_->PlanOf(org_id);
    if (!plan.ok() || !plan->object_storage_gib) return std::nullopt;
    return static_cast<uint64_t>(*plan->object_storage_gib) << 30;
  });
  volumes_->set_storage_limit([this](const std::string& org_id) -> Result<std::optional<int64_t>> {
    ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(org_id));
    return plan.persistent_storage_gib;
  });
  // A plan without database limits leaves DatabaseLimits' defaults.
  databases_->set_limits([this](const std::string& org_id) {
    core::DatabaseLimits limits = databases_->defaults();
    auto plan = accounts_->PlanOf(org_id);
    if (plan.ok() && plan->database_mib) limits.quota_bytes = *plan->database_mib << 20;
    if (plan.ok() && plan->database_connections)
      limits.connection_limit = *plan->database_connections;
    return limits;
  });
  return Status::Ok();
}

Status Daemon::StartIngress() {
  ASSIGN_OR_RETURN(ListenAddress ingress_http, ParseListenAddress(config_.ingress_http));
  ASSIGN_OR_RETURN(ListenAddress ingress_https, ParseListenAddress(config_.ingress_https));
  std::string cert = config_.ingress_cert, cert_key = config_.ingress_key;
  if (cert.empty()) {
    RETURN_IF_ERROR(os::MakeDirs(config_.state_dir + "/ingress", 0700));
    cert = config_.state_dir + "/ingress/cert.pem";
    cert_key = config_.state_dir + "/ingress/key.pem";
  }
  ingress_.emplace(
      net::IngressOptions{ingress_http.host,
                          ingress_http.port,
                          ingress_https.port,
                          cert,
                          cert_key,
                          config_.ingress_domain,
                          config_.io_threads,
                          {config_.max_connections, config_.max_connections_per_client},
                          std::chrono::seconds(config_.header_timeout_seconds),
                          std::chrono::seconds(config_.proxy_idle_timeout_seconds)},
      [endpoints = &*endpoints_, sites = &*sites_, apps = &*apps_,
       site_server = &*site_server_](const std::string& host) {
        auto backend = endpoints->Route(host);
        if (!backend) backend = apps->Route(host);
        if (!backend && sites->IsSiteHost(host))
          backend = net::IngressBackend{"127.0.0.1", site_server->port(), {}, {}, {}};
        return backend;
      });
  RETURN_IF_ERROR(ingress_->Start());
  endpoints_->SetPorts(ingress_->http_port(), ingress_->https_port());
  sites_->SetPorts(ingress_->http_port(), ingress_->https_port());
  apps_->SetPorts(ingress_->http_port(), ingress_->https_port());
  apps_->OnRemoved([ingress = &*ingress_](const std::string& host) { ingress->Disconnect(host); });
  endpoints_->OnRemoved(
      [ingress = &*ingress_](const std::string& host) { ingress->Disconnect(host); });
  // Called before the sandbox's network is detached: its address is still known.
  lifecycle_->SetReleaseHook([endpoints = &*endpoints_, network = &*network_,
                              database_proxy = &*database_proxy_](const std::string& id) {
    endpoints->RemoveAll(id);
    if (auto address = network->AddressOf(id)) database_proxy->Disconnect(*address);
  });
  // A command lost because its sandbox died, or was deleted or stopped, says why; a request
  // in flight through the ingress to it is answered (502) rather than left to the idle
  // timeout; an app whose replica it was is reconciled at once.
  lifecycle_->SetEndHook([commands = &*commands_, network = &*network_, ingress = &*ingress_,
                          apps = &*apps_](const std::string& id, const std::string& why, bool own) {
    commands->SandboxEnded(id, why, own);
    if (auto address = network->AddressOf(id)) ingress->BackendGone(*address);
    apps->SandboxEnded(id);
  });
  sandboxes_->SetEndpointsView(
      [endpoints = &*endpoints_](const std::string& org, const std::string& id) {
        return endpoints->EndpointsOf(org, id);
      });
  spdlog::info("endpoints: http://*.{}:{} and https://*.{}:{}", config_.ingress_domain,
               ingress_->http_port(), config_.ingress_domain, ingress_->https_port());
  return Status::Ok();
}

void Daemon::StartMonitor() {
  monitor_.emplace(*store_, *lifecycle_, *sandboxes_, *workers_);
  monitor_->Start();
  // Metering: usage into the ledger while it runs; a used-up balance on a priced plan stops
  // the organization's running sandboxes as stop_sandbox does (durable ones hibernate).
  meter_.emplace(*store_, *accounts_,
                 core::MeteringOptions{config_.metering_interval_seconds,
                                       config_.storage_metering_interval_seconds},
                 [sandboxes = &*sandboxes_](const std::string& org_id, const std::string& id) {
                   core::Principal who{org_id, "metering", false, true};
                   WarnIfError(sandboxes->Stop(who, id).status(),
                               "stopping " + id + " (balance used up)");
                 });
  meter_->set_checkpoint_lister(
      [checkpoints = &*checkpoints_] { return checkpoints->AllForMetering(); });
  checkpoints_->set_on_deleting([meter = &*meter_](const core::MeteredCheckpoint& c, int64_t at) {
    WarnIfError(meter->ChargeDeletedCheckpoint(c, at),
                "charging checkpoint '" + c.name + "' of " + c.sandbox_id + " to its deletion");
  });
  meter_->set_event_bus(&*bus_);
  volumes_->set_on_deleting([meter = &*meter_](const store::VolumeRecord& v, int64_t at) {
    WarnIfError(meter->ChargeDeletedVolume(v, at), "charging storage " + v.id + " to its deletion");
  });
  meter_->Start();
  // Events past their retention go, at most 10,000 a pass (a minute apart by default).
  event_retention_.emplace(*store_, config_.event_retention_seconds);
  event_retention_->Start();
  databases_->set_object_store(&*object_store_);
  // After the plans' limits are known (StartAccounts): a finished database gets its own.
  databases_->Reconcile();
  databases_->StartQuotaChecks(std::chrono::seconds(config_.database_quota_interval_seconds));
  runtime_->SetStateListener([monitor = &*monitor_](const std::string& id) { monitor->Wake(id); });
  // Whichever way adaptd ends, the runtime stops calling the monitor before it goes.
  stop_state_calls_.emplace(*runtime_);
  StartIdleTracker();
}

void Daemon::StartIdleTracker() {
  idle_.emplace(*store_, [workers = &*workers_, sandboxes = &*sandboxes_](const std::string& id,
                                                                          int64_t idle_ms) {
    auto hibernation = sandboxes->IdleHibernation(id, idle_ms);
    if (!hibernation) return false;
    boost::asio::post(*workers, Guarded("hibernating idle sandbox " + id, std::move(*hibernation)));
    return true;
  });
  commands_->set_activity(&*idle_);
  files_->set_activity(&*idle_);
  endpoints_->set_activity(&*idle_);
  idle_changes_.emplace(*bus_, [idle = &*idle_](const core::Change& change) {
    if (change.kind == core::Change::Kind::kSandboxStatus) idle->Refresh(change.id);
  });
  if (auto running = store_->ListSandboxesWithStatus({"running"}); running.ok())
    for (const auto& r : *running) idle_->Refresh(r.id);
  idle_->Start();
}

Status Daemon::StartApi() {
  router_.emplace(*auth_);
  router_->SetStreamLimit(&*stream_limit_);
  api::AddHealthRoutes(*router_);
  api::AddOrgRoutes(*router_, *auth_, *org_deletion_);
  users_.emplace(*store_);
  api::AddUserRoutes(*router_, *users_);
  dashboard_sessions_.emplace(*store_, *auth_, *users_, [] { return NowMillis(); });
  dashboard::AddDashboardRoutes(*router_, *dashboard_sessions_);
  api::AddSandboxRoutes(*router_, *sandboxes_, *workers_);
  api::AddCheckpointRoutes(*router_, *checkpoints_);
  api::AddCommandRoutes(*router_, *sandboxes_, *commands_, *workers_);
  api::AddEndpointRoutes(*router_, *endpoints_);
  api::AddImageRoutes(*router_, *image_service_);
  api::AddOperationRoutes(*router_, *operations_);
  api::AddStorageRoutes(*router_, *volumes_, *storage_files_);
  api::AddSecretRoutes(*router_, *secrets_);
  api::AddAccountRoutes(*router_, *accounts_);
  api::AddMetricsRoutes(*router_, *accounts_);
  api::AddEnvironmentRoutes(*router_, *images_, *image_policy_);
  api::AddJobRoutes(*router_, *jobs_);
  api::AddAppRoutes(*router_, *apps_);
  api::AddStatsRoutes(*router_, *sandboxes_);
  api::AddStartupStreamRoutes(*router_, *sandboxes_);
  api::AddAutomationRoutes(*router_, *automations_);
  api::AddDatabaseRoutes(*router_, *databases_);
  api::AddEventRoutes(*router_, *store_, *bus_, *sandboxes_, *workers_);
  mcp_tools_.emplace();
  // MCP tool calls run apart from the API workers, so that tools that wait never hold those.
  mcp_calls_.emplace(static_cast<size_t>(config_.mcp_call_threads));
  tool_services_.emplace(mcp::ToolServices{*sandboxes_, *commands_, *images_, *files_, *endpoints_,
                                           &*volumes_, &*objects_, &*sites_, &*image_policy_,
                                           &*operations_});
  tool_services_->accounts = &*accounts_;
  tool_services_->jobs = &*jobs_;
  tool_services_->apps = &*apps_;
  tool_services_->automations = &*automations_;
  tool_services_->databases = &*databases_;
  tool_services_->storage_files = &*storage_files_;
  mcp::RegisterTools(*mcp_tools_, *tool_services_);
  oauth_.emplace(*store_, *auth_, *users_, listen_.host, config_.allow_signup);
  dashboard::AddSignUpRoutes(*router_, *users_, oauth_->signup_limit(), config_.allow_signup);
  AddPublicRoutes(*router_, oauth_->Routes());
  mcp_http_.emplace(
      *mcp_tools_,
      [auth = &*auth_, oauth = &*oauth_](const std::string& bearer) {
        // OAuth access tokens are good for /mcp only; API keys everywhere.
        if (mcp::OAuthServer::LooksLikeAccessToken(bearer)) {
          auto who = oauth->VerifyAccessToken(bearer);
          if (who.ok()) return who;
        }
        return auth->Authenticate(bearer);
      },
      listen_.host, *mcp_calls_, config_.mcp_call_threads);
  mcp_http_->SetStreamAdmission(
      [limit = &*stream_limit_](const std::string& org_id, api::HttpResponse stream) {
        return limit->TryAdmit(org_id, std::move(stream));
      });
  AddPublicRoutes(*router_, mcp::McpRoutes(*mcp_http_));
  AddPublicRoutes(*router_, mcp::CorsPreflights(listen_.host));
  api::AddFileRoutes(*router_, *files_);
  api::AddObjectRoutes(*router_, *object_api_, *objects_);
  api::AddSiteRoutes(*router_, *sites_);
  // Before the API answers: a GET right after a restart shows the apps' kept failures.
  apps_->Recover();
  RETURN_IF_ERROR(server_->Start());
  warm_pool_->StartFilling();
  // Runs a previous adaptd left executing: those whose command the agent still runs are
  // followed to their end, the others end infrastructure_failed; the queue resumes.
  jobs_->Recover();
  // Apps' replicas: ended ones replaced, cut-short deliveries redone, orphans deleted.
  apps_->Start();
  automations_->Start();

  // Links made outside a request (MCP's) point at the API's own address.
  objects_->SetApiBase("http://" +
                       (listen_.host == "0.0.0.0" ? std::string("127.0.0.1") : listen_.host) + ":" +
                       std::to_string(server_->port()));
  std::printf("adaptd listening on http://%s:%u (admin key: %s)\n", listen_.host.c_str(),
              server_->port(), key_file_.c_str());
  std::fflush(stdout);
  return Status::Ok();
}

}  // namespace adapt::daemon
