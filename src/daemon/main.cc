// adaptd: wires the modules together, reconciles what a previous run left, then serves.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/thread_pool.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "api/http_server.h"
#include "api/object_routes.h"
#include "api/routes.h"
#include "api/stream_threads.h"
#include "base/fault_point.h"
#include "base/log.h"
#include "core/sandbox_monitor.h"
#include "core/secret_cipher.h"
#include "core/waiter.h"
#include "core/warm_pool.h"
#include "daemon/config.h"
#include "daemon/paths.h"
#include "mcp/cors.h"
#include "mcp/mcp_http.h"
#include "mcp/oauth_server.h"
#include "mcp/tools.h"
#include "net/ingress.h"
#include "net/network_manager.h"
#include "os/files.h"
#include "os/open_file_limit.h"
#include "os/process_lock.h"
#include "runtime/runsc_runtime.h"
#include "storage/sandbox_attach.h"
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

int Run(const DaemonConfig& config) {
  RaiseOpenFileLimit();
  auto listen = ParseListenAddress(config.listen);
  if (!listen.ok()) return Fail(listen.status());
  if (Status st = os::MakeDirs(config.state_dir, 0700); !st.ok()) return Fail(st);

  // One daemon per state directory: a second would fight the first over every sandbox.
  std::string lock_path = config.state_dir + "/adaptd.lock";
  auto lock = os::LockFileForProcess(lock_path);
  if (!lock.ok() && lock.status().code() == Code::kUnavailable)
    return Fail(Status(Code::kUnavailable, "another adaptd is using " + config.state_dir));
  if (!lock.ok()) return Fail(lock.status());

  auto helpers = InstallHelpers(config);
  if (!helpers.ok()) return Fail(helpers.status());

  auto store = store::OpenSqliteStore(config.state_dir + "/adapt.db");
  if (!store.ok()) return Fail(store.status());
  // Sandboxes' environments (captured secrets among them) are sealed under the master key,
  // which is therefore loaded before any sandbox is read.
  if (Status st = os::MakeDirs(config.state_dir + "/storage", 0700); !st.ok()) return Fail(st);
  auto master_key =
      storage::LoadMasterKey(config.state_dir + "/storage/master.key", g_storage_master_key_env);
  if (!master_key.ok()) return Fail(master_key.status());
  if (Status st = (*store)->SetValueSealer(core::MakeValueSealer(*master_key)); !st.ok())
    return Fail(st);
  core::Auth auth(**store);
  std::string key_file = config.state_dir + "/admin.key";
  if (Status st = auth.Bootstrap(key_file); !st.ok()) return Fail(st);

  // Object storage (storage/): blobs under <state>/objects, tokens signed with storage.key,
  // and the storage gateway on its own listener, up before the network rules that name its port.
  storage::StorageTokens storage_tokens(**store, config.state_dir + "/storage.key");
  if (Status st = storage_tokens.Init(); !st.ok()) return Fail(st);
  storage::ObjectStore object_store(**store, config.state_dir + "/objects");
  if (Status st = object_store.Init(); !st.ok()) return Fail(st);
  object_store.SetQuotaBytes(config.object_quota_bytes);
  storage::UploadSweeper upload_sweeper(object_store, config.multipart_max_age_seconds);
  upload_sweeper.Start();
  storage::SiteService sites(**store, object_store, config.ingress_domain);
  storage::SandboxStorageAttacher attacher(**store, storage_tokens);
  api::ObjectApi object_api{object_store, storage_tokens, sites, 0, "", &attacher};
  api::StorageGateway gateway(object_api);
  boost::asio::thread_pool storage_workers(8);
  auto storage_listen = ParseListenAddress(config.storage_listen);
  if (!storage_listen.ok()) return Fail(storage_listen.status());
  api::HttpServerOptions storage_http = HttpLimits(config, "storage gateway");
  storage_http.host = storage_listen->host;
  storage_http.port = storage_listen->port;
  storage_http.io_threads = 1;
  storage_http.max_body_bytes = 4 << 20;  // XML bodies; object bodies stream
  storage_http.stream_request_body = [](std::string_view method, std::string_view) {
    return method == "PUT";
  };
  api::HttpServer storage_server(
      storage_http, [&gateway](const api::HttpRequest& r) { return gateway.Handle(r); },
      storage_workers);
  if (Status st = storage_server.Start(); !st.ok()) return Fail(st);
  object_api.gateway_port = storage_server.port();
  attacher.SetGatewayPort(storage_server.port());
  spdlog::info("storage gateway on {}:{}", storage_listen->host, storage_server.port());
  // The static sites' origin: loopback only, reached through the ingress by hostname.
  // Its only client is the ingress (on loopback), which the ingress's own limits bound.
  api::HttpServerOptions site_http = HttpLimits(config, "sites");
  site_http.limits = {0, 0};
  site_http.host = "127.0.0.1";
  site_http.port = 0;
  site_http.io_threads = 1;
  api::HttpServer site_server(
      site_http, [&sites](const api::HttpRequest& r) { return api::ServeSite(sites, r); },
      storage_workers);
  if (Status st = site_server.Start(); !st.ok()) return Fail(st);

  runtime::AgentHub agents;
  runtime::RunscRuntime runtime(
      {config.runsc, config.state_dir, helpers->shim, helpers->helpers_dir, "ptrace", &agents});
  if (Status st = runtime.Init(); !st.ok()) return Fail(st);
  if (*ArmedFaultPoints()) spdlog::warn("fault points armed (ADAPT_FAULT): {}", ArmedFaultPoints());
  spdlog::info("runsc {} ({}; {})", runtime.version(),
               runtime.needs_netns_shim() ? "with the /proc/sys/net shim" : "no shim needed",
               runtime.statx_fix() ? "sandboxes get the statx fix" : "no statx fix needed");

  // Images pulled from registries: blobs, unpacked layers and references (image/).
  auto registries = image::RegistryDestinations::Parse(config.allowed_registries);
  if (!registries.ok()) return Fail(registries.status());
  image::ImageStore image_store(config.state_dir + "/image-store", *registries);
  if (Status st = image_store.Init(); !st.ok()) return Fail(st);
  core::ImageCatalog images(config.images_dir, &image_store);
  core::EventBus bus;
  boost::asio::thread_pool workers(static_cast<size_t>(config.worker_threads));
  // Every wait (waitSeconds, MCP's waits) parks here, on the workers' timers, holding no thread.
  core::Waiter waiter(bus, workers);
  net::NetworkManager network(
      **store, {config.network_pool, config.dns, config.state_dir, config.network_name,
                storage_server.port(), config.network_pool6,
                net::SniProxyLimits{{config.max_connections, config.max_connections_per_client},
                                    std::chrono::seconds(config.proxy_idle_timeout_seconds)}});
  if (Status st = network.Init(); !st.ok()) return Fail(st);
  // Persistent storage: every ready volume is mounted with its key before sandboxes are adopted.
  storage::VolumeService volumes(**store, {config.state_dir + "/storage/volumes", *master_key});
  if (Status st = volumes.Init(); !st.ok()) return Fail(st);
  volumes.Reconcile();
  core::SandboxLifecycle lifecycle(**store, runtime, images, bus, &network);
  lifecycle.set_volume_service(&volumes);
  lifecycle.Reconcile();
  runtime.ResumeAgents();
  // Before the API answers: the rules of every live sandbox are back, the rest is gone.
  // A hibernated sandbox keeps its network for its restore.
  {
    std::set<std::string> live;
    auto running = (*store)->ListSandboxesWithStatus({"provisioning", "running", "hibernated"});
    if (!running.ok()) return Fail(running.status());
    for (const auto& r : *running) live.insert(r.id);
    if (Status st = network.Restore(live); !st.ok()) return Fail(st);
  }
  core::SandboxService sandboxes(**store, runtime, lifecycle, images, workers,
                                 config.default_image);
  attacher.SetRestartHook([&sandboxes](const std::string& org, const std::string& id) {
    return sandboxes.Restart(org, id);
  });
  sandboxes.set_max_sandboxes_per_org(config.max_sandboxes_per_org);
  sandboxes.set_waiter(&waiter);
  core::ImageService image_service(**store, image_store, workers);
  image_service.set_caps(config.max_images_per_org, config.max_imports_per_org);
  image_service.Reconcile();
  sandboxes.set_image_service(&image_service);
  sandboxes.set_volume_service(&volumes);
  // Warm pools: what a previous run left is torn down (after the reconciliation above, which
  // already removed their runtime state and networks); filling starts once the API serves.
  auto pool_specs = core::ParsePoolSpecs(config.warm_pools);
  if (!pool_specs.ok()) return Fail(pool_specs.status());
  core::WarmPool warm_pool(**store, runtime, images, &network, workers, *pool_specs);
  warm_pool.RemoveLeftovers();
  sandboxes.set_warm_pool(&warm_pool);
  // Organization secrets, sealed with a key derived from the master key.
  core::SecretService secrets(**store, *master_key);
  sandboxes.set_secret_service(&secrets);
  image_service.set_secret_service(&secrets);
  core::CommandService commands(**store, runtime, images);
  commands.set_waiter(&bus, &waiter);
  core::FileService files(**store, runtime);
  commands.Reconcile();
  core::EndpointService endpoints(**store, network, {config.ingress_domain});
  auto ingress_http = ParseListenAddress(config.ingress_http);
  if (!ingress_http.ok()) return Fail(ingress_http.status());
  auto ingress_https = ParseListenAddress(config.ingress_https);
  if (!ingress_https.ok()) return Fail(ingress_https.status());
  std::string cert = config.ingress_cert, cert_key = config.ingress_key;
  if (cert.empty()) {
    if (Status st = os::MakeDirs(config.state_dir + "/ingress", 0700); !st.ok()) return Fail(st);
    cert = config.state_dir + "/ingress/cert.pem";
    cert_key = config.state_dir + "/ingress/key.pem";
  }
  net::IngressServer ingress({ingress_http->host,
                              ingress_http->port,
                              ingress_https->port,
                              cert,
                              cert_key,
                              config.ingress_domain,
                              config.io_threads,
                              {config.max_connections, config.max_connections_per_client},
                              std::chrono::seconds(config.header_timeout_seconds),
                              std::chrono::seconds(config.proxy_idle_timeout_seconds)},
                             [&endpoints, &sites, &site_server](const std::string& host) {
                               auto backend = endpoints.Route(host);
                               if (!backend && sites.IsSiteHost(host))
                                 backend = net::IngressBackend{"127.0.0.1", site_server.port()};
                               return backend;
                             });
  if (Status st = ingress.Start(); !st.ok()) return Fail(st);
  endpoints.SetPorts(ingress.http_port(), ingress.https_port());
  sites.SetPorts(ingress.http_port(), ingress.https_port());
  endpoints.OnRemoved([&ingress](const std::string& host) { ingress.Disconnect(host); });
  lifecycle.SetReleaseHook([&endpoints](const std::string& id) { endpoints.RemoveAll(id); });
  // A command lost because its sandbox died, or was deleted or stopped, says why.
  lifecycle.SetEndHook([&commands](const std::string& id, const std::string& why, bool own) {
    commands.SandboxEnded(id, why, own);
  });
  sandboxes.SetEndpointsView([&endpoints](const std::string& org, const std::string& id) {
    return endpoints.ViewsOf(org, id);
  });
  spdlog::info("endpoints: http://*.{}:{} and https://*.{}:{}", config.ingress_domain,
               ingress.http_port(), config.ingress_domain, ingress.https_port());
  core::SandboxMonitor monitor(**store, lifecycle, sandboxes, workers);
  monitor.Start();
  runtime.SetStateListener([&monitor](const std::string& id) { monitor.Wake(id); });
  // Whichever way main ends, the runtime stops calling the monitor before it goes.
  struct StopStateCalls {
    runtime::Runtime& runtime;
    ~StopStateCalls() { runtime.SetStateListener(nullptr); }
  } stop_state_calls{runtime};

  api::Router router(auth);
  api::AddHealthRoutes(router);
  api::AddOrgRoutes(router, auth);
  api::AddSandboxRoutes(router, sandboxes);
  api::AddCommandRoutes(router, commands, workers);
  api::AddEndpointRoutes(router, endpoints);
  api::AddImageRoutes(router, image_service);
  api::AddStorageRoutes(router, volumes);
  api::AddSecretRoutes(router, secrets);
  api::AddEnvironmentRoutes(router, images);
  api::AddEventRoutes(router, **store, bus, sandboxes, workers);
  mcp::ToolRegistry mcp_tools;
  // MCP tool calls run apart from the API workers, so that tools that wait never hold those.
  boost::asio::thread_pool mcp_calls(static_cast<size_t>(config.mcp_call_threads));
  mcp::ToolServices tool_services{sandboxes, commands, images,      files,
                                  endpoints, &volumes, &object_api, &attacher};
  mcp::RegisterTools(mcp_tools, tool_services);
  mcp::OAuthServer oauth(**store, auth, listen->host);
  oauth.AddRoutes(router);
  mcp::McpHttp mcp_http(
      mcp_tools,
      [&auth, &oauth](const std::string& bearer) {
        // OAuth access tokens are good for /mcp only; API keys everywhere.
        if (mcp::OAuthServer::LooksLikeAccessToken(bearer)) {
          auto who = oauth.VerifyAccessToken(bearer);
          if (who.ok()) return who;
        }
        return auth.Authenticate(bearer);
      },
      listen->host, mcp_calls, config.mcp_call_threads);
  mcp::AddMcpRoutes(router, mcp_http);
  mcp::AddCorsPreflights(router, listen->host);
  api::AddFileRoutes(router, files);
  api::AddObjectRoutes(router, object_api);
  api::AddSiteRoutes(router, sites);
  api::HttpServerOptions http = HttpLimits(config, "API");
  http.host = listen->host;
  http.port = listen->port;
  http.io_threads = config.io_threads;
  http.max_body_bytes = config.max_body_bytes;
  http.stream_request_body = [](std::string_view method, std::string_view path) {
    return api::StreamsRequestBody(method, path) || api::StreamsObjectBody(method, path);
  };
  api::HttpServer server(
      http, [&router](const api::HttpRequest& r) { return router.Handle(r); }, workers);
  if (Status st = server.Start(); !st.ok()) return Fail(st);
  warm_pool.StartFilling();

  object_api.api_base = "http://" +
                        (listen->host == "0.0.0.0" ? std::string("127.0.0.1") : listen->host) +
                        ":" + std::to_string(server.port());
  std::printf("adaptd listening on http://%s:%u (admin key: %s)\n", listen->host.c_str(),
              server.port(), key_file.c_str());
  std::fflush(stdout);

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("stopping on signal {}; sandboxes keep running", sig);
  size_t streams = api::RunningStreamThreads();
  server.Stop();
  monitor.Stop();
  warm_pool.Shutdown();
  ingress.Stop();
  storage_server.Stop();
  site_server.Stop();
  // The servers closed every connection, which ends each stream's pump; wait for them
  // before the services they read from go.
  if (streams)
    spdlog::info("stopping: waiting for the {} response stream(s) that were open", streams);
  if (!api::WaitForStreamThreads(std::chrono::seconds(10)))
    spdlog::warn("stopping: {} response streams still running", api::RunningStreamThreads());
  upload_sweeper.Stop();
  waiter.Shutdown();  // its timers would keep the workers busy until their deadlines
  workers.join();
  storage_workers.join();
  volumes.Shutdown();
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
