// IdleTracker: hibernates the sandboxes created with an idle timeout (idleTimeoutSeconds) once
// nothing used them for that long: no command running or started, no file transfer, no
// ingress request. One thread sleeps until the next deadline; activity is recorded in memory
// only (SandboxActivity), so a command or a download costs a map update, not a store write.
//
// After a restart of adaptd every running sandbox counts as used at the moment the tracker
// first sees it: idle time from before the restart is forgotten rather than persisted, so a
// restart never hibernates everything at once.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "core/sandbox_activity.h"
#include "store/sandbox_store.h"

namespace adapt::core {

class IdleTracker : public SandboxActivity {
 public:
  // Called (on the tracker's thread; it must not block) for a sandbox idle for `idle_ms`. False:
  // its hibernation cannot begin now (its organization holds every place for such work); the
  // sandbox is watched again and reported anew kRetryMs later, unless it is used meanwhile.
  using OnIdle = std::function<bool(const std::string& id, int64_t idle_ms)>;
  static constexpr int64_t kRetryMs = 10'000;
  // Milliseconds since the epoch; tests give a clock of their own.
  using Clock = std::function<int64_t()>;

  IdleTracker(store::SandboxStore& store, OnIdle on_idle, Clock clock = {});
  ~IdleTracker() override;

  // The thread that calls RunDue at each deadline. Without it, tests call RunDue themselves.
  void Start();
  void Stop();

  // Sandbox `id`'s status changed (or adaptd just started): it is looked up again, and
  // watched while it runs with an idle timeout. Cheap; the lookup happens on the thread.
  void Refresh(const std::string& id);

  void Touch(const std::string& id) override;
  void Begin(const std::string& id) override;
  void End(const std::string& id) override;

  // Looks up the refreshed sandboxes, calls on_idle for those whose deadline passed (they
  // are no longer watched: their stop refreshes them), and returns the next deadline (ms
  // since the epoch), if any sandbox is watched and not busy.
  std::optional<int64_t> RunDue();

  // When sandbox `id` was last used (ms since the epoch), while it is watched.
  std::optional<int64_t> LastActivity(const std::string& id);

 private:
  struct Watched {
    int64_t timeout_ms = 0;
    int64_t last_ms = 0;
    int64_t retry_ms = 0;  // after a hibernation that could not begin: not reported before
  };
  void Loop();
  int64_t Now() const;

  store::SandboxStore& store_;
  OnIdle on_idle_;
  Clock clock_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool woken_ = false;
  std::set<std::string> pending_;           // refreshed, to be looked up
  std::map<std::string, Watched> watched_;  // running sandboxes with an idle timeout
  std::map<std::string, int> busy_;         // sandbox id -> work in progress (Begin - End)
  std::thread thread_;
};

}  // namespace adapt::core
