// Whether something answers at an address: a deployed app's replica counts as ready once its
// port accepts connections, or once an HTTP GET of its readiness path answers 2xx or 3xx.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace adapt::net {

// Connects once and closes at once; false on refusal, a bad address or after `timeout`.
// Blocking.
bool PortAccepts(const std::string& address, uint16_t port, std::chrono::milliseconds timeout);

// Sends `GET path HTTP/1.1` (Host: `host`, Connection: close) and reads the status line.
// Returns "" when it is 2xx or 3xx, else why not ("answered 503", "refused the connection",
// "did not answer within 1000 ms"), for the app's status. Blocking, bounded by `timeout`.
std::string HttpReadinessFailure(const std::string& address, uint16_t port, const std::string& path,
                                 const std::string& host, std::chrono::milliseconds timeout);

}  // namespace adapt::net
