// adaptd: reads its configuration, starts its parts (daemon.h) and serves until told to stop.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/log.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "os/open_file_limit.h"

namespace adapt::daemon {
namespace {

// ADAPT_STORAGE_MASTER_KEY, taken out of the environment before any thread or child starts.
std::string g_storage_master_key_env;

int Fail(const Status& st) {
  std::fprintf(stderr, "adaptd: %s\n", st.message().c_str());
  return 1;
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
  Daemon daemon(config, g_storage_master_key_env);
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
