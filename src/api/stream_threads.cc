#include "api/stream_threads.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/background_work.h"

namespace adapt::api {
namespace {

struct Counter {
  std::mutex mu;
  std::condition_variable done;
  size_t running = 0;
};

// Never destroyed: a thread still running at exit must not find it gone.
Counter& Threads() {
  static Counter* counter = new Counter;
  return *counter;
}

}  // namespace

void StartStreamThread(std::function<void()> fn) {
  Counter& c = Threads();
  {
    std::lock_guard lock(c.mu);
    ++c.running;
  }
  auto finished = [&c] {
    std::lock_guard lock(c.mu);
    --c.running;
    c.done.notify_all();
  };
  try {
    // Counted out also when fn threw: shutdown waits for the count.
    std::thread(Guarded("response stream", [fn = std::move(fn), finished]() mutable {
      RunGuarded("response stream", fn);
      fn = nullptr;  // what it captured (the stream, its sink) goes before the count drops
      finished();
    })).detach();
  } catch (...) {
    // No thread (the host's task limit): not counted, or shutdown would wait for it in vain.
    finished();
    throw;
  }
}

size_t RunningStreamThreads() {
  Counter& c = Threads();
  std::lock_guard lock(c.mu);
  return c.running;
}

bool WaitForStreamThreads(std::chrono::milliseconds timeout) {
  Counter& c = Threads();
  std::unique_lock lock(c.mu);
  return c.done.wait_for(lock, timeout, [&] { return c.running == 0; });
}

}  // namespace adapt::api
