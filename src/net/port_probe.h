// Whether something accepts TCP connections at an address: a deployed app's replica counts as
// ready once its port does.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace adapt::net {

// Connects once and closes at once; false on refusal, a bad address or after `timeout`.
// Blocking.
bool PortAccepts(const std::string& address, uint16_t port, std::chrono::milliseconds timeout);

}  // namespace adapt::net
