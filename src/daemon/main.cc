// adaptd: wires the modules together, reconciles what a previous run left, then serves.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

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
#include "core/database_access.h"
#include "core/database_service.h"
#include "core/environments.h"
#include "core/idle_tracker.h"
#include "core/image_policy.h"
#include "core/job_service.h"
#include "core/object_service.h"
#include "core/operation_service.h"
#include "core/sandbox_automation_runner.h"
#include "core/sandbox_job_attempts.h"
#include "core/sandbox_monitor.h"
#include "core/secret_cipher.h"
#include "core/usage_meter.h"
#include "core/waiter.h"
#include "core/warm_pool.h"
#include "daemon/config.h"
#include "daemon/paths.h"
#include "dashboard/dashboard_routes.h"
#include "database/postgres_server.h"
#include "mcp/cors.h"
#include "mcp/mcp_http.h"
#include "mcp/oauth_server.h"
#include "mcp/tools.h"
#include "net/database_proxy.h"
#include "net/ingress.h"
#include "net/network_manager.h"
#include "os/files.h"
#include "os/open_file_limit.h"
#include "os/process_lock.h"
#include "runtime/runsc_runtime.h"
#include "storage/upload_sweeper.h"
#include "storage/volume_key.h"
#include "storage/volume_service.h"

namespace adapt::daemon {
namespace {

// ADAPT_STORAGE_MASTER_KEY, taken out of the environment before any thread or child starts.
std::string g_storage_master_key_env;

int Fail(const Status& st) {
  std::fprintf(stderr, "adaptd: %s\n", st.message().c_str());
  return 1;
}

// The limits every HTTP listener of adaptd shares (the config's connection settings).
api::HttpServerOptions HttpLimits(const DaemonConfig& config, std::string name) {
  api::HttpServerOptions o;
  o.name = std::move(name);
  o.limits = {config.max_connections, config.max_connections_per_client};
  o.header_timeout = std::chrono::seconds(config.header_timeout_seconds);
  o.idle_timeout = std::chrono::seconds(config.idle_timeout_seconds);
  o.upload_rate = {config.min_upload_bytes_per_second,
                   std::chrono::seconds(config.upload_grace_seconds), o.idle_timeout};
  return o;
}

// The MCP module's routes (/mcp, OAuth, preflights) on the API's router.
void AddPublicRoutes(api::Router& router, const mcp::HttpRoutes& routes) {
  for (const auto& route : routes)
    router.AddPublic(route.method, route.path,
                     [handle = route.handle](const api::HttpRequest& req, const api::PathParams&) {
                       return handle(req);
                     });
}

// Every connection, sandbox disk and agent socket is a descriptor: the usual soft limit of
// 1024 is a few hundred idle connections away.
void RaiseOpenFileLimit() {
  auto limit = os::RaiseOpenFileLimit(uint64_t{1} << 20);
  if (!limit.ok()) return spdlog::warn("open file limit: {}", limit.status().message());
  spdlog::info("open file limit: {} (hard {})", limit->soft, limit->hard);
  if (limit->soft < 65536)
    spdlog::warn("open file limit {} is low for adaptd: raise RLIMIT_NOFILE (LimitNOFILE=)",
                 limit->soft);
}

// adaptd's parts, in the order they start. Members are destroyed in reverse, so each part
// goes before the parts it uses; Start's steps fill them one after the other, and a step that
// fails leaves the later ones empty.
class Daemon {
 public:
  explicit Daemon(const DaemonConfig& config) : config_(config) {}

  // The start-up checklist: each step returns its failure, which ends adaptd.
  Status Start() {
    RETURN_IF_ERROR(TakeStateDirectory());
    RETURN_IF_ERROR(OpenStore());
    RETURN_IF_ERROR(StartObjectStorage());
    RETURN_IF_ERROR(StartRuntime());
    RETURN_IF_ERROR(OpenImages());
    RETURN_IF_ERROR(ReconcileSandboxes());
    RETURN_IF_ERROR(StartServices());
    RETURN_IF_ERROR(StartIngress());
    StartMonitor();
    return StartApi();
  }

  // Serves until SIGTERM or SIGINT, then stops what serves; sandboxes keep running.
  void ServeUntilStopSignal() {
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    int sig = 0;
    sigwait(&stop_signals, &sig);
    spdlog::info("stopping on signal {}; sandboxes keep running", sig);
    size_t streams = api::RunningStreamThreads();
    server_->Stop();
    monitor_->Stop();
    idle_->Stop();
    meter_->Stop();
    warm_pool_->Shutdown();
    ingress_->Stop();
    storage_server_->Stop();
    site_server_->Stop();
    // The servers closed every connection, which ends each stream's pump; wait for them
    // before the services they read from go.
    if (streams)
      spdlog::info("stopping: waiting for the {} response stream(s) that were open", streams);
    if (!api::WaitForStreamThreads(std::chrono::seconds(10)))
      spdlog::warn("stopping: {} response streams still running", api::RunningStreamThreads());
    upload_sweeper_->Stop();
    apps_->Stop();
    // Attempts in flight stay recorded as they are: the next adaptd's Recover ends them.
    job_attempts_->Shutdown();
    if (automations_) {
      automation_runner_->Shutdown();
      automations_->Shutdown();
    }
    waiter_->Shutdown();  // its timers would keep the workers busy until their deadlines
    workers_->join();
    storage_workers_->join();
    volumes_->Shutdown();
    database_proxy_->Stop();
    WarnIfError(postgres_->Stop(), "stopping the organizations' PostgreSQL server");
  }

 private:
  Status TakeStateDirectory() {
    ASSIGN_OR_RETURN(listen_, ParseListenAddress(config_.listen));
    RETURN_IF_ERROR(os::MakeDirs(config_.state_dir, 0700));

    // One daemon per state directory: a second would fight the first over every sandbox.
    std::string lock_path = config_.state_dir + "/adaptd.lock";
    auto lock = os::LockFileForProcess(lock_path);
    if (!lock.ok() && lock.status().code() == Code::kUnavailable)
      return Status(Code::kUnavailable, "another adaptd is using " + config_.state_dir);
    if (!lock.ok()) return lock.status();
    lock_ = std::move(*lock);

    ASSIGN_OR_RETURN(helpers_, InstallHelpers(config_));
    return Status::Ok();
  }

  Status OpenStore() {
    ASSIGN_OR_RETURN(store_, store::OpenSqliteStore(config_.state_dir + "/adapt.db"));
    // Sandboxes' environments (captured secrets among them) are sealed under the master key,
    // which is therefore loaded before any sandbox is read.
    RETURN_IF_ERROR(os::MakeDirs(config_.state_dir + "/storage", 0700));
    ASSIGN_OR_RETURN(master_key_, storage::LoadMasterKey(config_.state_dir + "/storage/master.key",
                                                         g_storage_master_key_env));
    RETURN_IF_ERROR(store_->SetValueSealer(core::MakeValueSealer(master_key_)));
    auth_.emplace(*store_);
    key_file_ = config_.state_dir + "/admin.key";
    return auth_->Bootstrap(key_file_);
  }

  // Object storage (storage/): blobs under <state>/objects, tokens signed with storage.key,
  // and the storage gateway on its own listener, up before the network rules that name its port.
  Status StartObjectStorage() {
    storage_tokens_.emplace(*store_, config_.state_dir + "/storage.key");
    RETURN_IF_ERROR(storage_tokens_->Init());
    object_store_.emplace(*store_, config_.state_dir + "/objects");
    RETURN_IF_ERROR(object_store_->Init());
    object_store_->SetQuotaBytes(config_.object_quota_bytes);
    upload_sweeper_.emplace(*object_store_, config_.multipart_max_age_seconds);
    upload_sweeper_->Start();
    sites_.emplace(*store_, *object_store_, config_.ingress_domain);
    object_api_.emplace(api::ObjectApi{*object_store_, *storage_tokens_, *sites_, 0});
    gateway_.emplace(*object_api_);
    storage_workers_.emplace(8);
    ASSIGN_OR_RETURN(ListenAddress storage_listen, ParseListenAddress(config_.storage_listen));
    api::HttpServerOptions storage_http = HttpLimits(config_, "storage gateway");
    storage_http.host = storage_listen.host;
    storage_http.port = storage_listen.port;
    storage_http.io_threads = 1;
    storage_http.max_body_bytes = 4 << 20;  // XML bodies; object bodies stream
    storage_http.stream_request_body = [](std::string_view method, std::string_view) {
      return method == "PUT";
    };
    storage_server_.emplace(
        storage_http,
        [gateway = &*gateway_](const api::HttpRequest& r) { return gateway->Handle(r); },
        *storage_workers_);
    RETURN_IF_ERROR(storage_server_->Start());
    object_api_->gateway_port = storage_server_->port();
    spdlog::info("storage gateway on {}:{}", storage_listen.host, storage_server_->port());
    // The static sites' origin: loopback only, reached through the ingress by hostname.
    // Its only client is the ingress (on loopback), which the ingress's own limits bound.
    api::HttpServerOptions site_http = HttpLimits(config_, "sites");
    site_http.limits = {0, 0};
    site_http.host = "127.0.0.1";
    site_http.port = 0;
    site_http.io_threads = 1;
    site_server_.emplace(
        site_http,
        [sites = &*sites_](const api::HttpRequest& r) { return api::ServeSite(*sites, r); },
        *storage_workers_);
    return site_server_->Start();
  }

  Status StartRuntime() {
    agents_.emplace();
    runtime_.emplace(runtime::RunscOptions{config_.runsc, config_.state_dir, helpers_.shim,
                                           helpers_.helpers_dir, "ptrace", &*agents_});
    RETURN_IF_ERROR(runtime_->Init());
    if (*ArmedFaultPoints())
      spdlog::warn("fault points armed (ADAPT_FAULT): {}", ArmedFaultPoints());
    spdlog::info("runsc {} ({}; {})", runtime_->version(),
                 runtime_->needs_netns_shim() ? "with the /proc/sys/net shim" : "no shim needed",
                 runtime_->statx_fix() ? "sandboxes get the statx fix" : "no statx fix needed");
    return Status::Ok();
  }

  // Images pulled from registries: blobs, unpacked layers and references (image/).
  Status OpenImages() {
    ASSIGN_OR_RETURN(auto registries,
                     image::RegistryDestinations::Parse(config_.allowed_registries));
    image_store_.emplace(config_.state_dir + "/image-store", std::move(registries));
    RETURN_IF_ERROR(image_store_->Init());
    images_.emplace(config_.images_dir, &*image_store_);
    return Status::Ok();
  }

  // What a previous run left: networks, volumes, sandboxes and their agents.
  // The organizations' PostgreSQL server (made on first use; a cluster made before is started
  // now, or the server a killed adaptd left running is reused) and the sandboxes' proxy to it.
  Status StartDatabase() {
    database::PostgresOptions options;
    options.root = config_.state_dir + "/postgres";
    postgres_.emplace(options);
    if (os::ReadFile(options.root + "/data/PG_VERSION").ok())
      WarnIfError(postgres_->Start(), "starting the organizations' PostgreSQL server");
    databases_.emplace(*store_, &*postgres_, master_key_);
    ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress(config_.database_listen));
    database_proxy_.emplace(
        [store = store_.get()](const std::string& address) {
          return core::DatabaseForAddress(*store, *store, address);
        },
        postgres_->SocketDir() + "/.s.PGSQL." + std::to_string(postgres_->port()),
        ConnectionLimits{config_.max_connections, config_.max_connections_per_client});
    RETURN_IF_ERROR(database_proxy_->Start(listen.host, listen.port));
    databases_->SetProxyPort(database_proxy_->port());
    spdlog::info("database proxy on {}:{}", listen.host, database_proxy_->port());
    return Status::Ok();
  }

  Status ReconcileSandboxes() {
    bus_.emplace();
    workers_.emplace(static_cast<size_t>(config_.worker_threads));
    // Every wait (waitSeconds, MCP's waits) parks here, on the workers' timers, holding no thread.
    waiter_.emplace(*bus_, *workers_);
    RETURN_IF_ERROR(StartDatabase());
    net::NetworkOptions network_options{
        config_.network_pool,
        config_.dns,
        config_.state_dir,
        config_.network_name,
        storage_server_->port(),
        config_.network_pool6,
        net::SniProxyLimits{{config_.max_connections, config_.max_connections_per_client},
                            std::chrono::seconds(config_.proxy_idle_timeout_seconds)}};
    network_options.database_port = database_proxy_->port();
    network_.emplace(*store_, network_options);
    RETURN_IF_ERROR(network_->Init());
    // Persistent storage: every ready volume is mounted with its key before sandboxes are adopted.
    volumes_.emplace(*store_,
                     storage::VolumeOptions{config_.state_dir + "/storage/volumes", master_key_});
    RETURN_IF_ERROR(volumes_->Init());
    volumes_->Reconcile();
    lifecycle_.emplace(*store_, *runtime_, *images_, *bus_, &*network_);
    lifecycle_->set_volume_service(&*volumes_);
    lifecycle_->set_database_environment(
        [this](const std::string& org_id,
               const std::string& gateway) -> Result<std::map<std::string, std::string>> {
          ASSIGN_OR_RETURN(core::DatabaseCredentials credentials, databases_->Credentials(org_id));
          return core::DatabaseEnvironment(credentials, gateway);
        });
    lifecycle_->Reconcile();
    runtime_->ResumeAgents();
    // Before the API answers: the rules of every live sandbox are back, the rest is gone.
    // A hibernated sandbox keeps its network for its restore.
    std::set<std::string> live;
    ASSIGN_OR_RETURN(auto running,
                     store_->ListSandboxesWithStatus({"provisioning", "running", "hibernated"}));
    for (const auto& r : running) live.insert(r.id);
    return network_->Restore(live);
  }

  // The core's services, over the reconciled state.
  Status StartServices() {
    sandboxes_.emplace(*store_, *runtime_, *lifecycle_, *images_, *workers_, config_.default_image);
    sandboxes_->set_max_sandboxes_per_org(config_.max_sandboxes_per_org);
    sandboxes_->set_waiter(&*waiter_);
    RETURN_IF_ERROR(StartAccounts());
    image_service_.emplace(*store_, *image_store_, *workers_);
    image_service_->set_caps(config_.max_images_per_org, config_.max_imports_per_org);
    image_service_->Reconcile();
    sandboxes_->set_image_service(&*image_service_);
    std::vector<std::string> operator_images = core::EnvironmentImages();
    operator_images.push_back(config_.default_image);
    ASSIGN_OR_RETURN(image_policy_, core::ImagePolicy::Make(
                                        {config_.trusted_image_sources,
                                         config_.developer_public_images, config_.image_policy},
                                        operator_images));
    sandboxes_->set_image_policy(&*image_policy_);
    image_service_->set_image_policy(&*image_policy_);
    operations_.emplace(*store_, &*image_service_);
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
    objects_.emplace(*store_, *store_, *object_store_, *storage_tokens_, *files_, *sandboxes_);
    objects_->SetGatewayPort(storage_server_->port());
    commands_->Reconcile();
    job_attempts_.emplace(*sandboxes_, *commands_, *workers_);
    jobs_.emplace(*store_, *job_attempts_, config_.default_image, config_.job_concurrency_per_org);
    automation_runner_.emplace(*sandboxes_, *commands_, *workers_);
    automations_.emplace(*store_, *store_, *automation_runner_);
    automations_->set_plan_limit([this](const std::string& org_id) -> std::optional<int64_t> {
      auto plan = accounts_->PlanOf(org_id);
      return plan.ok() ? plan->automations : std::nullopt;
    });
    jobs_->set_automation_cancel(
        [this](const std::string& run_id) { return automations_->CancelRun(run_id); });
    // A deleted target pauses its automations (they never run against nothing).
    bus_->Subscribe([this](const core::Change& change) {
      if (change.kind != core::Change::Kind::kSandboxStatus) return;
      boost::asio::post(*workers_, [this, id = change.id] {
        auto sandbox = store_->GetSandbox("", id);
        if (sandbox.ok() && sandbox->status != "deleting" && sandbox->status != "deleted") return;
        automations_->TargetGone(id, "its sandbox '" + id + "' was deleted");
      });
    });
    endpoints_.emplace(*store_, *store_, *network_, core::EndpointOptions{config_.ingress_domain});
    endpoints_->set_account_service(&*accounts_);
    apps_.emplace(*store_, *sandboxes_, *commands_, *files_, *object_store_, *network_,
                  core::AppOptions{config_.ingress_domain});
    return Status::Ok();
  }

  // Plans (the built-in default, then --plans-file) and the limits every service checks.
  Status StartAccounts() {
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
    volumes_->set_storage_limit(
        [this](const std::string& org_id) -> Result<std::optional<int64_t>> {
          ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(org_id));
          return plan.persistent_storage_gib;
        });
    return Status::Ok();
  }

  // The ingress: endpoint hostnames to sandbox ports, site hostnames to the sites' origin.
  Status StartIngress() {
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
            backend = net::IngressBackend{"127.0.0.1", site_server->port(), {}};
          return backend;
        });
    RETURN_IF_ERROR(ingress_->Start());
    endpoints_->SetPorts(ingress_->http_port(), ingress_->https_port());
    sites_->SetPorts(ingress_->http_port(), ingress_->https_port());
    apps_->SetPorts(ingress_->http_port(), ingress_->https_port());
    apps_->OnRemoved(
        [ingress = &*ingress_](const std::string& host) { ingress->Disconnect(host); });
    endpoints_->OnRemoved(
        [ingress = &*ingress_](const std::string& host) { ingress->Disconnect(host); });
    lifecycle_->SetReleaseHook(
        [endpoints = &*endpoints_](const std::string& id) { endpoints->RemoveAll(id); });
    // A command lost because its sandbox died, or was deleted or stopped, says why.
    lifecycle_->SetEndHook(
        [commands = &*commands_](const std::string& id, const std::string& why, bool own) {
          commands->SandboxEnded(id, why, own);
        });
    sandboxes_->SetEndpointsView(
        [endpoints = &*endpoints_](const std::string& org, const std::string& id) {
          return endpoints->EndpointsOf(org, id);
        });
    spdlog::info("endpoints: http://*.{}:{} and https://*.{}:{}", config_.ingress_domain,
                 ingress_->http_port(), config_.ingress_domain, ingress_->https_port());
    return Status::Ok();
  }

  void StartMonitor() {
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
    meter_->Start();
    runtime_->SetStateListener(
        [monitor = &*monitor_](const std::string& id) { monitor->Wake(id); });
    // Whichever way adaptd ends, the runtime stops calling the monitor before it goes.
    stop_state_calls_.emplace(*runtime_);
    StartIdleTracker();
  }

  // Idle hibernation (idleTimeoutSeconds): commands, file transfers and ingress connections
  // mark their sandbox used; every status change and, now, every running sandbox is looked at.
  void StartIdleTracker() {
    idle_.emplace(*store_, [workers = &*workers_, sandboxes = &*sandboxes_](const std::string& id,
                                                                            int64_t idle_ms) {
      boost::asio::post(*workers,
                        [sandboxes, id, idle_ms] { sandboxes->HibernateIdle(id, idle_ms); });
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

  // The REST API and MCP on the main listener; once it serves, warm pools fill.
  Status StartApi() {
    router_.emplace(*auth_);
    api::AddHealthRoutes(*router_);
    api::AddOrgRoutes(*router_, *auth_);
    users_.emplace(*store_);
    api::AddUserRoutes(*router_, *users_);
    dashboard_sessions_.emplace(*store_, *auth_, *users_, [] { return NowMillis(); });
    dashboard::AddDashboardRoutes(*router_, *dashboard_sessions_);
    api::AddSandboxRoutes(*router_, *sandboxes_);
    api::AddCommandRoutes(*router_, *commands_, *workers_);
    api::AddEndpointRoutes(*router_, *endpoints_);
    api::AddImageRoutes(*router_, *image_service_);
    api::AddOperationRoutes(*router_, *operations_);
    api::AddStorageRoutes(*router_, *volumes_);
    api::AddSecretRoutes(*router_, *secrets_);
    api::AddAccountRoutes(*router_, *accounts_);
    api::AddMetricsRoutes(*router_, *accounts_);
    api::AddEnvironmentRoutes(*router_, *images_, *image_policy_);
    api::AddJobRoutes(*router_, *jobs_);
    api::AddAppRoutes(*router_, *apps_);
    api::AddStatsRoutes(*router_, *sandboxes_);
    api::AddAutomationRoutes(*router_, *automations_);
    api::AddDatabaseRoutes(*router_, *databases_);
    api::AddEventRoutes(*router_, *store_, *bus_, *sandboxes_, *workers_);
    mcp_tools_.emplace();
    // MCP tool calls run apart from the API workers, so that tools that wait never hold those.
    mcp_calls_.emplace(static_cast<size_t>(config_.mcp_call_threads));
    tool_services_.emplace(mcp::ToolServices{*sandboxes_, *commands_, *images_, *files_,
                                             *endpoints_, &*volumes_, &*objects_, &*sites_,
                                             &*image_policy_, &*operations_});
    tool_services_->accounts = &*accounts_;
    tool_services_->jobs = &*jobs_;
    tool_services_->apps = &*apps_;
    tool_services_->automations = &*automations_;
    tool_services_->databases = &*databases_;
    mcp::RegisterTools(*mcp_tools_, *tool_services_);
    oauth_.emplace(*store_, *auth_, *users_, listen_.host, config_.allow_signup);
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
    AddPublicRoutes(*router_, mcp::McpRoutes(*mcp_http_));
    AddPublicRoutes(*router_, mcp::CorsPreflights(listen_.host));
    api::AddFileRoutes(*router_, *files_);
    api::AddObjectRoutes(*router_, *object_api_, *objects_);
    api::AddSiteRoutes(*router_, *sites_);
    api::HttpServerOptions http = HttpLimits(config_, "API");
    http.host = listen_.host;
    http.port = listen_.port;
    http.io_threads = config_.io_threads;
    http.max_body_bytes = config_.max_body_bytes;
    http.stream_request_body = [](std::string_view method, std::string_view path) {
      return api::StreamsRequestBody(method, path) || api::StreamsObjectBody(method, path);
    };
    server_.emplace(
        http, [router = &*router_](const api::HttpRequest& r) { return router->Handle(r); },
        *workers_);
    RETURN_IF_ERROR(server_->Start());
    warm_pool_->StartFilling();
    // Runs a previous adaptd left executing end infrastructure_failed; the queue resumes.
    jobs_->Recover();
    // Apps' replicas: ended ones replaced, cut-short deliveries redone, orphans deleted.
    apps_->Start();
    automations_->Start();

    // Links made outside a request (MCP's) point at the API's own address.
    objects_->SetApiBase("http://" +
                         (listen_.host == "0.0.0.0" ? std::string("127.0.0.1") : listen_.host) +
                         ":" + std::to_string(server_->port()));
    std::printf("adaptd listening on http://%s:%u (admin key: %s)\n", listen_.host.c_str(),
                server_->port(), key_file_.c_str());
    std::fflush(stdout);
    return Status::Ok();
  }

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
  ListenAddress listen_;
  os::UniqueFd lock_;
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
  std::optional<core::Waiter> waiter_;
  std::optional<database::PostgresServer> postgres_;
  std::optional<core::DatabaseService> databases_;
  std::optional<net::DatabaseProxy> database_proxy_;
  std::optional<net::NetworkManager> network_;
  std::optional<storage::VolumeService> volumes_;
  std::optional<core::AccountService> accounts_;
  std::optional<core::SandboxLifecycle> lifecycle_;
  std::optional<core::ImagePolicy> image_policy_;
  std::optional<core::SandboxService> sandboxes_;
  std::optional<core::ImageService> image_service_;
  std::optional<core::OperationService> operations_;
  std::optional<core::WarmPool> warm_pool_;
  std::optional<core::SecretService> secrets_;
  std::optional<core::CommandService> commands_;
  std::optional<core::SandboxJobAttempts> job_attempts_;
  std::optional<core::JobService> jobs_;
  std::optional<core::SandboxAutomationRunner> automation_runner_;
  std::optional<core::AutomationService> automations_;
  std::optional<core::FileService> files_;
  std::optional<core::ObjectService> objects_;
  std::optional<core::EndpointService> endpoints_;
  std::optional<core::AppService> apps_;
  std::optional<net::IngressServer> ingress_;
  std::optional<core::SandboxMonitor> monitor_;
  std::optional<core::UsageMeter> meter_;
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

int Run(const DaemonConfig& config) {
  RaiseOpenFileLimit();
  Daemon daemon(config);
  if (Status st = daemon.Start(); !st.ok()) return Fail(st);
  daemon.ServeUntilStopSignal();
  return 0;
}

}  // namespace
}  // namespace adapt::daemon

int main(int argc, char** argv) {
  // Block the stop signals before any thread starts, so that only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  // Children (runsc, shims) must not inherit the storage master key.
  if (const char* key = std::getenv("ADAPT_STORAGE_MASTER_KEY")) {
    adapt::daemon::g_storage_master_key_env = key;
    ::unsetenv("ADAPT_STORAGE_MASTER_KEY");
  }

  auto config = adapt::daemon::LoadConfig(argc, argv);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  return adapt::daemon::Run(*config);
}
