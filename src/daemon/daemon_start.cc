// adaptd's start up to its reconciled state, and its stop.
#include <signal.h>

#include <set>

#include "base/client_message.h"
#include "base/hkdf.h"
#include "base/request_fingerprint.h"
#include "daemon/daemon.h"
#include "database/connection_budget.h"
#include "os/files.h"
#include "os/mount_propagation.h"
#include "runtime/checkpoint_store.h"

namespace adapt::daemon {

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

Status Daemon::Start() {
  Status st = TakeStateDirectory();
  if (st.ok()) st = StartOnStateDirectory();
  if (!st.ok()) ReleaseStateDirectory();  // a refused start leaves no bind (none before its lock)
  return st;
}

Status Daemon::StartOnStateDirectory() {
  RETURN_IF_ERROR(HoldApiAddress());
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

void Daemon::ServeUntilStopSignal() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("stopping on signal {}; sandboxes keep running", sig);
  size_t streams = api::RunningStreamThreads();
  // Before the server's stop, which waits for every handler: one waiting on an app's deploy
  // answers it as it is now instead of after its waitSeconds.
  apps_->BeginStop();
  server_->Stop();
  monitor_->Stop();
  idle_->Stop();
  meter_->Stop();
  event_retention_->Stop();
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
    controllers_->Shutdown();
  }
  waiter_->Shutdown();  // its timers would keep the workers busy until their deadlines
  // The bus goes before the store.
  store_->SetRunEventListener({});
  workers_->join();
  if (image_workers_) image_workers_->join();
  storage_workers_->join();
  volumes_->Shutdown();
  // Sandboxes keep running: one restored from the store still holds its mount (lazy).
  runtime_->CloseCheckpoints();
  databases_->StopQuotaChecks();
  database_proxy_->Stop();
  WarnIfError(postgres_->Stop(), "stopping the organizations' PostgreSQL server");
  ReleaseStateDirectory();
}

void Daemon::ReleaseStateDirectory() {
  if (state_dir_bound_)
    WarnIfError(os::ReleaseBindOfItself(config_.state_dir),
                "unmounting the state directory's bind of itself");
}

Status Daemon::TakeStateDirectory() {
  ASSIGN_OR_RETURN(listen_, ParseListenAddress(config_.listen));
  RETURN_IF_ERROR(os::MakeDirs(config_.state_dir, 0700));
  // What a tenant reads of its own work's failures never shows where adaptd keeps things
  // (the helpers' directory added once they are found, below).
  SetHostDirectoriesForMessages(HostDirectoriesForMessages(config_, Helpers{}));

  // One daemon per state directory: a second would fight the first over every sandbox.
  std::string lock_path = config_.state_dir + "/adaptd.lock";
  auto lock = os::LockFileForProcess(lock_path);
  if (!lock.ok() && lock.status().code() == Code::kUnavailable)
    return Status(Code::kUnavailable, "another adaptd is using " + config_.state_dir);
  if (!lock.ok()) return lock.status();
  lock_ = std::move(*lock);
  // Before the first mount below it (os/mount_propagation.h). Without it a child's copy of
  // the mounts can hold a sandbox's disk after its stop: degraded, not broken.
  auto sharing = os::ShareMountsBelow(config_.state_dir);
  WarnIfError(sharing.status(), "sharing the mounts below the state directory");
  state_dir_bound_ = sharing.ok() && *sharing == os::MountSharing::kBoundOntoItself;
  if (sharing.ok() && *sharing == os::MountSharing::kLeftPrivate)
    spdlog::warn(
        "the mounts below {} were made before this start and are private: a child's copy of "
        "them (runsc's, the database server's) can keep a sandbox's disk after its stop; stop "
        "adaptd while no sandbox runs and start it again to have them shared",
        config_.state_dir);
  // Before anything of the host is touched: another running adaptd's nftables table (its
  // name) or addresses (its pool) are not this one's to take.
  ASSIGN_OR_RETURN(net::AddressPool pool, net::AddressPool::Parse(config_.network_pool));
  ASSIGN_OR_RETURN(net::NetworkClaim claim,
                   net::NetworkClaim::Take(net::kNetworkClaimsDir, config_.network_name, pool));
  network_claim_.emplace(std::move(claim));

  ASSIGN_OR_RETURN(helpers_, InstallHelpers(config_));
  SetHostDirectoriesForMessages(HostDirectoriesForMessages(config_, helpers_));
  return Status::Ok();
}

Status Daemon::HoldApiAddress() {
  workers_.emplace(static_cast<size_t>(config_.worker_threads));
  api::HttpServerOptions http = HttpLimits(config_, "API");
  http.host = listen_.host;
  http.port = listen_.port;
  http.io_threads = config_.io_threads;
  http.max_body_bytes = config_.max_body_bytes;
  http.stream_request_body = [](std::string_view method, std::string_view path) {
    return api::StreamsRequestBody(method, path) || api::StreamsObjectBody(method, path);
  };
  http.oversized_body = mcp::OversizedMcpBody;
  // No request is read before StartApi, by which time the router is made.
  server_.emplace(
      http, [this](const api::HttpRequest& r) { return router_->Handle(r); }, *workers_);
  return server_->Listen();
}

Status Daemon::OpenStore() {
  ASSIGN_OR_RETURN(store_, store::OpenSqliteStore(config_.state_dir + "/adapt.db"));
  // Sandboxes' environments (captured secrets among them) are sealed under the master key,
  // which is therefore loaded before any sandbox is read.
  RETURN_IF_ERROR(os::MakeDirs(config_.state_dir + "/storage", 0700));
  ASSIGN_OR_RETURN(master_key_, storage::LoadMasterKey(config_.state_dir + "/storage/master.key",
                                                       storage_master_key_env_));
  RETURN_IF_ERROR(store_->SetValueSealer(core::MakeValueSealer(master_key_)));
  // Requests sent with an Idempotency-Key are remembered by an HMAC under a key of their own
  // (base/request_fingerprint.h), before any is served.
  ASSIGN_OR_RETURN(std::string fingerprint_key,
                   HkdfSha512(master_key_, "adapt-idempotency-v1", "request fingerprints", 32));
  SetRequestFingerprintKey(std::move(fingerprint_key));
  auth_.emplace(*store_);
  key_file_ = config_.state_dir + "/admin.key";
  return auth_->Bootstrap(key_file_);
}

Status Daemon::StartObjectStorage() {
  storage_tokens_.emplace(*store_, config_.state_dir + "/storage.key");
  RETURN_IF_ERROR(storage_tokens_->Init());
  object_store_.emplace(*store_, config_.state_dir + "/objects");
  RETURN_IF_ERROR(object_store_->Init());
  object_store_->SetQuotaBytes(config_.object_quota_bytes);
  upload_sweeper_.emplace(*object_store_, config_.multipart_max_age_seconds);
  upload_sweeper_->Start();
  sites_.emplace(*store_, *object_store_, config_.ingress_domain);
  // Shared with the API (StartApi): an organization's gateway downloads count with its
  // other streams.
  stream_limit_.emplace(static_cast<size_t>(config_.max_streams_per_org));
  // An organization's uploads (bodies streamed on a worker) are capped so that its slow ones
  // cannot hold every worker; the cap is above awscli's default of 10 parts at once. All
  // organizations' uploads together leave kWorkersBesideUploads workers free, so that several
  // organizations' slow uploads (four would hold 48) still leave downloads, listings and
  // deletes served.
  constexpr size_t kStorageWorkers = 40;
  constexpr size_t kUploadsPerOrg = 12;
  constexpr size_t kWorkersBesideUploads = 8;
  object_api_.emplace(
      api::ObjectApi{*object_store_, *storage_tokens_, *sites_, 0, &*stream_limit_,
                     OrgCounter(kUploadsPerOrg, kStorageWorkers - kWorkersBesideUploads)});
  gateway_.emplace(*object_api_);
  storage_workers_.emplace(kStorageWorkers);
  ASSIGN_OR_RETURN(ListenAddress storage_listen, ParseListenAddress(config_.storage_listen));
  api::HttpServerOptions storage_http = HttpLimits(config_, "storage gateway");
  storage_http.host = storage_listen.host;
  storage_http.port = storage_listen.port;
  storage_http.io_threads = 1;
  // Every body streams: the gateway reads one (an object's, or a POST's XML, up to its own
  // bound) only once it has authenticated the request from its head, so an unauthenticated
  // client makes adaptd hold no more of a body than the connection's read buffer.
  storage_http.stream_request_body = [](std::string_view, std::string_view) { return true; };
  storage_server_.emplace(
      storage_http,
      [gateway = &*gateway_](const api::HttpRequest& r) { return gateway->Handle(r); },
      *storage_workers_);
  RETURN_IF_ERROR(storage_server_->Start());
  object_api_->gateway_port = storage_server_->port();
  spdlog::info("storage gateway on {}:{}", storage_listen.host, storage_server_->port());
  // The static sites' origin: loopback only, reached through the ingress by hostname.
  // Its only client is the ingress (on loopback), which the ingress's own limits bound; its
  // downloads are counted (each holds a thread and a queue for as long as its client, anyone
  // on the internet, takes to read): per organization, and in all.
  const auto per_org = static_cast<size_t>(config_.max_streams_per_org);
  site_downloads_.emplace(per_org, 2 * per_org);
  api::HttpServerOptions site_http = HttpLimits(config_, "sites");
  site_http.limits = {0, 0};
  site_http.host = "127.0.0.1";
  site_http.port = 0;
  site_http.io_threads = 1;
  site_server_.emplace(
      site_http,
      [sites = &*sites_, downloads = &*site_downloads_](const api::HttpRequest& r) {
        return api::ServeSite(*sites, downloads, r);
      },
      *storage_workers_);
  return site_server_->Start();
}

Status Daemon::StartRuntime() {
  agents_.emplace();
  ASSIGN_OR_RETURN(std::string checkpoint_key, runtime::DeriveCheckpointStoreKey(master_key_));
  // runsc checkpoint's time limit: the one scaled to each sandbox's memory (std::nullopt).
  runtime_.emplace(runtime::RunscOptions{config_.runsc, config_.state_dir, helpers_.shim,
                                         helpers_.helpers_dir, "ptrace", &*agents_,
                                         std::move(checkpoint_key), std::nullopt});
  RETURN_IF_ERROR(runtime_->Init());
  if (*ArmedFaultPoints()) spdlog::warn("fault points armed (ADAPT_FAULT): {}", ArmedFaultPoints());
  spdlog::info("runsc {} ({}; {})", runtime_->version(),
               runtime_->needs_netns_shim() ? "with the /proc/sys/net shim" : "no shim needed",
               runtime_->statx_fix() ? "sandboxes get the statx fix" : "no statx fix needed");
  return Status::Ok();
}

Status Daemon::OpenImages() {
  ASSIGN_OR_RETURN(auto registries, image::RegistryDestinations::Parse(config_.allowed_registries));
  image_store_.emplace(config_.state_dir + "/image-store", std::move(registries));
  RETURN_IF_ERROR(image_store_->Init());
  images_.emplace(config_.images_dir, &*image_store_);
  return Status::Ok();
}

Status Daemon::StartDatabase() {
  net::DatabaseUpstream upstream;
  database::ExternalPostgres* sized_by_server = nullptr;
  if (!config_.database_admin_url.empty()) {
    ASSIGN_OR_RETURN(database::AdminUrl url, database::ParseAdminUrl(config_.database_admin_url));
    auto external =
        std::make_unique<database::ExternalPostgres>(url, config_.state_dir + "/database-scratch");
    upstream.host = external->host();
    upstream.port = external->port();
    IgnoreError(external->Start(),
                "a server that does not answer yet is no reason not to start: the databases are "
                "unavailable until it does (Start logs why)");
    // Unless the operator says, the server's own size: read at each of its checks, so that a
    // resized server is followed (0 until it first answers: no cap of the proxy's).
    upstream.session_limit = config_.database_max_sessions > 0
                                 ? config_.database_max_sessions
                                 : external->sandbox_sessions().value_or(0);
    if (config_.database_max_sessions <= 0) sized_by_server = external.get();
    postgres_ = std::move(external);
  } else {
    database::PostgresOptions options;
    options.root = config_.state_dir + "/postgres";
    auto embedded = std::make_unique<database::PostgresServer>(options);
    if (os::ReadFile(options.root + "/data/PG_VERSION").ok())
      WarnIfError(embedded->Start(), "starting the organizations' PostgreSQL server");
    upstream.socket_path = embedded->SocketDir() + "/.s.PGSQL." + std::to_string(embedded->port());
    // Ours has room for this many in all; an operator's server is sized by its operator.
    upstream.session_limit =
        config_.database_max_sessions > 0
            ? std::min(config_.database_max_sessions, database::kSandboxSessions)
            : database::kSandboxSessions;
    postgres_ = std::move(embedded);
  }
  databases_.emplace(*store_, postgres_.get(), master_key_);
  ASSIGN_OR_RETURN(ListenAddress listen, ParseListenAddress(config_.database_listen));
  ASSIGN_OR_RETURN(net::AddressPool pool, net::AddressPool::Parse(config_.network_pool));
  database_proxy_.emplace(
      [store = store_.get(), databases = &*databases_,
       pool](const std::string& address) -> std::optional<net::DatabaseGrant> {
        auto org = core::DatabaseOrgForAddress(*store, *store, pool, address);
        if (!org) return std::nullopt;
        return net::DatabaseGrant{core::DatabaseName(*org),
                                  databases->LimitsOf(*org).connection_limit};
      },
      upstream, ConnectionLimits{config_.max_connections, config_.max_connections_per_client},
      pool);
  RETURN_IF_ERROR(database_proxy_->Start(listen.host, listen.port));
  if (sized_by_server) {
    sized_by_server->OnSandboxSessions(
        [proxy = &*database_proxy_](int64_t sessions) { proxy->SetSessionLimit(sessions); });
    // A check that ran between the proxy's making and the line above.
    if (auto sessions = sized_by_server->sandbox_sessions())
      database_proxy_->SetSessionLimit(*sessions);
  }
  databases_->SetProxyPort(database_proxy_->port());
  spdlog::info("database proxy on {}:{}", listen.host, database_proxy_->port());
  return Status::Ok();
}

Status Daemon::ReconcileSandboxes() {
  bus_.emplace();
  // A run's status change (its event already stored) wakes the organization's event streams.
  store_->SetRunEventListener([bus = &*bus_](const std::string& run_id) {
    bus->Notify({core::Change::Kind::kRunStatus, run_id});
  });
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
  network_->set_owner_of(
      [store = &*store_](const std::string& sandbox_id) -> std::optional<std::string> {
        auto sandbox = store->GetSandbox("", sandbox_id);
        if (!sandbox.ok()) return std::nullopt;
        return sandbox->org_id;
      });
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

}  // namespace adapt::daemon
