// Threads that move a streamed response's bytes (file downloads, object downloads, command
// output). Each runs apart from its request, so that a slow client holds no shared worker;
// they are counted so that adaptd's shutdown waits for them, once the servers have closed
// their connections (which ends every pump), before it destroys what they read from.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

namespace adapt::api {

// Runs `fn` on a thread of its own, counted until `fn` and what it captured are gone. Throws
// std::system_error, counting nothing, when no thread can be started.
void StartStreamThread(std::function<void()> fn);

// How many stream threads are running.
size_t RunningStreamThreads();

// Waits until no stream thread runs or `timeout` passes; true when none runs.
bool WaitForStreamThreads(std::chrono::milliseconds timeout);

}  // namespace adapt::api
