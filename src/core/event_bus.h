// EventBus: says that something the store recorded changed: a sandbox's status, a command's
// end, a deployed app's event, a run's status (jobs and automations) or an account alert. The
// events themselves live in the store (so a client can resume after Last-Event-ID); the bus only
// says "look again", naming what changed so a listener can ignore the rest. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace adapt::core {

struct Change {
  // kAccountAlert: an 80% / 100% alert of the organization's credits or a plan limit.
  enum class Kind { kSandboxStatus, kCommandEnded, kAppEvent, kAccountAlert, kRunStatus };
  Kind kind = Kind::kSandboxStatus;
  // the sandbox's, the command's, the app's, (alerts) the organization's or the run's
  std::string id;
};

class EventBus {
 public:
  using Listener = std::function<void(const Change&)>;

  // Returns a token for Unsubscribe. `listener` must not block: it is called from the
  // thread that wrote the change. It may still be called once just after Unsubscribe.
  uint64_t Subscribe(Listener listener);
  void Unsubscribe(uint64_t token);
  void Notify(const Change& change);

 private:
  std::mutex mu_;
  uint64_t next_ = 1;
  std::map<uint64_t, Listener> listeners_;
};

}  // namespace adapt::core
