// StateWatcher: hears at once that a sandbox's shim wrote a new state file (its workload
// ended, say), so that adaptd need not wait for its next poll to notice. One inotify
// descriptor and one thread serve every sandbox; a directory that goes ends its watch.
// Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "os/inotify.h"

namespace adapt::runtime {

class StateWatcher {
 public:
  using Listener = std::function<void(const std::string& sandbox_id)>;
  // `state_file`: the file name the shim renames into a sandbox's directory.
  explicit StateWatcher(std::string state_file);
  ~StateWatcher();
  StateWatcher(const StateWatcher&) = delete;
  StateWatcher& operator=(const StateWatcher&) = delete;

  // Called on the watcher's thread; nullptr stops the calls (once this returns, none runs).
  void SetListener(Listener listener);
  // Watches sandbox `id`'s directory; again for a watched id: nothing.
  void Watch(const std::string& id, const std::string& dir);
  void Unwatch(const std::string& id);

 private:
  void Loop();

  std::string state_file_;
  std::optional<os::Inotify> inotify_;  // empty when inotify is unavailable: polls only
  std::mutex mu_;
  std::map<int, std::string> ids_;      // watch -> sandbox id; mu_
  std::map<std::string, int> watches_;  // sandbox id -> watch; mu_
  std::mutex listener_mu_;
  Listener listener_;  // listener_mu_
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace adapt::runtime
