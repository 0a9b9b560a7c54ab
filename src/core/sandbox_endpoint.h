// A public route to a sandbox port, as every edge shows it (EndpointService makes them; the
// sandbox view lists its own).
#pragma once

#include <cstdint>
#include <string>

namespace adapt::core {

struct Endpoint {
  std::string id;
  std::string sandbox_id;
  int port = 0;
  std::string hostname;
  std::string url;       // https://<hostname>[:port]
  std::string http_url;  // http://<hostname>[:port]
  int64_t created_at_ms = 0;
};

}  // namespace adapt::core
