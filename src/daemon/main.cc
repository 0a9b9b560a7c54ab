// adaptd: wires the modules together, reconciles what a previous run left, then serves.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/asio/thread_pool.hpp>
#include <cstdio>
#include <filesystem>

#include "api/http_server.h"
#include "api/routes.h"
#include "base/log.h"
#include "core/sandbox_monitor.h"
#include "daemon/config.h"
#include "daemon/paths.h"
#include "os/files.h"
#include "runtime/runsc_runtime.h"

namespace adapt::daemon {
namespace {

int Fail(const Status& st) {
  std::fprintf(stderr, "adaptd: %s\n", st.message().c_str());
  return 1;
}

int Run(const DaemonConfig& config) {
  auto listen = ParseListenAddress(config.listen);
  if (!listen.ok()) return Fail(listen.status());
  if (Status st = os::MakeDirs(config.state_dir, 0700); !st.ok()) return Fail(st);

  // One daemon per state directory: a second would fight the first over every sandbox.
  std::string lock_path = config.state_dir + "/adaptd.lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0)
    return Fail(Status(Code::kUnavailable, "another adaptd is using " + config.state_dir));

  auto helpers = InstallHelpers(config);
  if (!helpers.ok()) return Fail(helpers.status());

  auto store = store::OpenSqliteStore(config.state_dir + "/adapt.db");
  if (!store.ok()) return Fail(store.status());
  core::Auth auth(**store);
  std::string key_file = config.state_dir + "/admin.key";
  if (Status st = auth.Bootstrap(key_file); !st.ok()) return Fail(st);

  runtime::RunscRuntime runtime(
      {config.runsc, config.state_dir, helpers->shim, helpers->helpers_dir});
  if (Status st = runtime.Init(); !st.ok()) return Fail(st);
  spdlog::info("runsc {} ({})", runtime.version(),
               runtime.needs_netns_shim() ? "with the /proc/sys/net shim" : "no shim needed");

  // Images pulled from registries: blobs, unpacked layers and references (image/).
  image::ImageStore image_store(config.state_dir + "/image-store");
  if (Status st = image_store.Init(); !st.ok()) return Fail(st);
  core::ImageCatalog images(config.images_dir, &image_store);
  core::EventBus bus;
  boost::asio::thread_pool workers(static_cast<size_t>(config.worker_threads));
  core::SandboxLifecycle lifecycle(**store, runtime, images, bus);
  lifecycle.Reconcile();
  core::SandboxService sandboxes(**store, runtime, lifecycle, images, workers,
                                 config.default_image);
  core::ImageService image_service(**store, image_store, workers);
  image_service.Reconcile();
  sandboxes.set_image_service(&image_service);
  core::CommandService commands(**store, runtime, images);
  commands.Reconcile();
  core::SandboxMonitor monitor(**store, lifecycle, sandboxes, workers);
  monitor.Start();

  api::Router router(auth);
  api::AddHealthRoutes(router);
  api::AddOrgRoutes(router, auth);
  api::AddSandboxRoutes(router, sandboxes);
  api::AddCommandRoutes(router, commands);
  api::AddImageRoutes(router, image_service);
  api::AddEnvironmentRoutes(router, images);
  api::AddEventRoutes(router, **store, bus, sandboxes, workers);
  api::HttpServerOptions http{listen->host, listen->port, config.io_threads, config.max_body_bytes};
  api::HttpServer server(
      http, [&router](const api::HttpRequest& r) { return router.Handle(r); }, workers);
  if (Status st = server.Start(); !st.ok()) return Fail(st);

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
  server.Stop();
  monitor.Stop();
  workers.join();
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

  auto config = adapt::daemon::LoadConfig(argc, argv);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 2;
  }
  return adapt::daemon::Run(*config);
}
