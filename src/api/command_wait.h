// The waits of POST /v1/sandboxes/{id}/commands and /python (waitSeconds) and of DELETE
// .../commands/{cid} (the kill's end) as a DeferredResponse: it parks on the command's end and
// its deadline (CommandService::AwaitEnd, the core's Waiter), and only the brief read of the
// outcome runs on a worker, so waiting requests hold no API worker.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "core/command_service.h"

namespace adapt::api {

enum class CommandWaitKind {
  kRun,     // 200 with the finished command, or 202 with it still running at the deadline
  kPython,  // as kRun; 422 when the image lacks python3
  kKill,    // 200 with the command as it is at its end or the deadline
};

std::shared_ptr<DeferredResponse> MakeCommandWait(core::CommandService& commands,
                                                  boost::asio::thread_pool& workers,
                                                  core::Principal who, std::string sandbox_id,
                                                  std::string command_id,
                                                  std::chrono::steady_clock::time_point deadline,
                                                  CommandWaitKind kind);

}  // namespace adapt::api
