// The waits of POST /v1/sandboxes/{id}/commands and /python (waitSeconds) and of DELETE
// .../commands/{cid} (the kill's end) as a DeferredResponse: it parks on the command's end and
// its deadline (CommandService::AwaitEnd, the core's Waiter), and only the brief read of the
// outcome runs on a worker, so waiting requests hold no API worker.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "core/command_service.h"
#include "core/sandbox_service.h"

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

// Starts the command once the sandbox can take it (a second start of what the request asked).
using CommandStart = std::function<Result<core::StartedCommand>()>;

// As MakeCommandWait, for a command whose sandbox was still provisioning when it came: waits
// for the boot first, then calls `start` and waits for the command, all within `deadline`, as
// the CLI's exec and MCP's run_command do. A sandbox still booting at the deadline is answered
// with `start`'s refusal (409: provisioning). (command_boot_wait.cc)
std::shared_ptr<DeferredResponse> MakeBootThenCommandWait(
    core::SandboxService& sandboxes, core::CommandService& commands,
    boost::asio::thread_pool& workers, core::Principal who, std::string sandbox_id,
    CommandStart start, std::chrono::steady_clock::time_point deadline, CommandWaitKind kind);

}  // namespace adapt::api
