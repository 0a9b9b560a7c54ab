// AwaitAgent: a run's command (a job attempt's, an automation's) starts once its sandbox's
// agent is connected, so that the agent serves it and it outlives an adaptd restart (a
// command under `runsc exec` dies with adaptd). Nothing announces an agent's connection, so a
// timer on the pool looks every 50 ms; no thread is held meanwhile.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "runtime/runtime.h"

namespace adapt::core {

// How long a run waits for its sandbox's agent before its command goes to `runsc exec`.
inline constexpr std::chrono::seconds kRunAgentWait{10};

// Calls `done` once, on `pool`: true as soon as sandbox `sandbox_id`'s agent is connected,
// false once `wait` passed without it. Once `stopping` is true (adaptd stops) it looks no more
// and never calls `done`, so that the pool runs out of work and can be joined. `runtime`,
// `pool` and `stopping` must outlive the wait.
void AwaitAgent(runtime::Runtime& runtime, boost::asio::thread_pool& pool,
                const std::atomic<bool>& stopping, const std::string& sandbox_id,
                std::chrono::milliseconds wait, std::function<void(bool connected)> done);

}  // namespace adapt::core
