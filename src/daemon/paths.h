// Where adaptd finds its helper binaries and what it listens on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "daemon/config.h"

namespace adapt::daemon {

struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};

// "HOST:PORT" with a numeric port.
Result<ListenAddress> ParseListenAddress(const std::string& text);

struct Helpers {
  std::string shim;         // adapt-shim, run on the host
  std::string helpers_dir;  // holds adapt-pause, adapt-agent (and adapt-statx.so); mounted
                            // read-only into every sandbox
};

// Finds adapt-shim, adapt-pause and adapt-agent (libexec dir, beside adaptd, or ../libexec/adapt)
// and copies adapt-pause, adapt-agent and, when there, adapt-statx.so into <state>/helpers, which
// holds nothing else since every sandbox sees it.
Result<Helpers> InstallHelpers(const DaemonConfig& config);

// The host directories whose paths a tenant must never read in what is recorded of its work's
// failures (base/client_message.h): adaptd's state and images, where the helpers were found,
// and the cgroups, network namespaces and network claims adaptd makes for sandboxes.
std::vector<std::string> HostDirectoriesForMessages(const DaemonConfig& config,
                                                    const Helpers& helpers);

}  // namespace adapt::daemon
