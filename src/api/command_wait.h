// The wait of POST /v1/sandboxes/{id}/commands (waitSeconds) as a DeferredResponse: it parks
// on the command's end and its deadline (CommandService::AwaitEnd, the core's Waiter), and
// only the brief read of the outcome runs on a worker, so waiting requests hold no API worker.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "core/command_service.h"

namespace adapt::api {

// Answers 200 with the finished command, or 202 with it still running at the deadline.
// `python`: the command is a Python run (/python), whose image may lack python3 (422).
std::shared_ptr<DeferredResponse> MakeCommandWait(core::CommandService& commands,
                                                  boost::asio::thread_pool& workers,
                                                  core::Principal who, std::string sandbox_id,
                                                  std::string command_id,
                                                  std::chrono::steady_clock::time_point deadline,
                                                  bool python = false);

}  // namespace adapt::api
