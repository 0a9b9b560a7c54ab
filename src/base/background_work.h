// Work adaptd runs on its own threads (a thread pool's task, a std::thread's body, one pass of
// a long-lived thread's loop), guarded so that an exception leaving it is logged and the process
// goes on. Unguarded, such an exception calls std::terminate (boost::asio::thread_pool and
// std::thread both do), which ends adaptd with every sandbox unmanaged: one bad registry reply
// or sandbox frame must fail its own work, not the host.
//
// Every std::exception is caught, std::bad_alloc included: the allocations that fail here are
// mostly ones an input sized, and a host that is truly out of memory fails the next allocation
// anyway, which then ends only that work too. Exceptions are not an error path of adapt's own
// (errors are Status values); one that arrives here is a bug, logged as an error.
//
// src/base/background_sites_test.cc fails the build's tests when a thread or a post in src/
// bypasses these wrappers.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace adapt {

// The sentence for the exception being handled: "internal error: <what()>". Only inside a
// catch block. "internal error" alone when even that sentence cannot be allocated.
std::string DescribeCurrentException() noexcept;

// Logs "<work>: <error>" (or "<work>: <step>: <error>") as an error; never throws.
void LogBackgroundFault(std::string_view work, std::string_view error,
                        std::string_view step = {}) noexcept;

// The default on_fault: nothing to settle but the log line.
struct NoFaultHandler {
  void operator()(const std::string&) const noexcept {}
};

// Runs `work()`. An exception leaving it is logged as "<work_name>: internal error: <what>",
// then `on_fault(error)` gets that error sentence, so that work owning a record in a working
// state ("pulling", "running") can settle it as failed. An exception leaving on_fault is
// logged too. Never throws.
template <typename Work, typename OnFault = NoFaultHandler>
void RunGuarded(std::string_view work_name, Work&& work, OnFault&& on_fault = {}) noexcept {
  std::string error;
  try {
    std::forward<Work>(work)();
    return;
  } catch (...) {
    error = DescribeCurrentException();
  }
  LogBackgroundFault(work_name, error);
  try {
    std::forward<OnFault>(on_fault)(error);
  } catch (...) {
    LogBackgroundFault(work_name, DescribeCurrentException(), "settling its failure");
  }
}

// The callable to hand a thread pool (boost::asio::post) or std::thread: RunGuarded with
// `work_name`, `work` and `on_fault`, which it owns (moved in).
template <typename Work, typename OnFault = NoFaultHandler>
auto Guarded(std::string work_name, Work work, OnFault on_fault = {}) {
  return [work_name = std::move(work_name), work = std::move(work),
          on_fault = std::move(on_fault)]() mutable noexcept {
    RunGuarded(work_name, work, on_fault);
  };
}

// Calls `work()` again each time an exception left it (logged as RunGuarded does) until it
// returns: an io_context's run(), which may be called again after a handler threw, so one bad
// handler does not end the thread that serves every other connection.
template <typename Work>
void RunGuardedUntilDone(std::string_view work_name, Work&& work) noexcept {
  bool done = false;
  while (!done) {
    RunGuarded(work_name, [&] {
      work();
      done = true;
    });
  }
}

// The body of a thread that serves an io_context: RunGuardedUntilDone over `io.run()`.
template <typename Io>
auto GuardedRun(std::string work_name, Io& io) {
  return [work_name = std::move(work_name), &io]() noexcept {
    RunGuardedUntilDone(work_name, [&io] { io.run(); });
  };
}

}  // namespace adapt
