// A public route to a sandbox port, as the sandbox view shows it (EndpointService makes them).
#pragma once

#include <cstdint>
#include <string>

namespace adapt::core {

struct SandboxEndpoint {
  std::string id;
  std::string sandbox_id;
  int port = 0;
  std::string hostname;
  std::string url;       // https://hostname[:port]
  std::string http_url;  // http://hostname[:port]
  int64_t created_at = 0;
};

}  // namespace adapt::core
