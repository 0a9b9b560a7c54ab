// GET /v1/sandboxes/{id}?waitSeconds=N (MCP's wait_for_sandbox, `adapt sandbox wait`) as a
// DeferredResponse: it parks on the sandbox's status (SandboxService::AwaitSettled, the core's
// Waiter) until the sandbox is no longer provisioning or N seconds have passed, then answers
// the record as it is. Only the read of the record runs on a worker, so any number of waits
// hold no API worker.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "core/sandbox_service.h"

namespace adapt::api {

// The most a sandbox read waits (the commands' waitSeconds bound too).
inline constexpr int kMaxSandboxWaitSeconds = 60;

std::shared_ptr<DeferredResponse> MakeSandboxSettledWait(core::SandboxService& sandboxes,
                                                         boost::asio::thread_pool& workers,
                                                         core::Principal who,
                                                         std::string sandbox_id,
                                                         std::chrono::seconds wait);

}  // namespace adapt::api
