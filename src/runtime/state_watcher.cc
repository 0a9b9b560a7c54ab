#include "runtime/state_watcher.h"

#include "base/background_work.h"
#include "base/log.h"

namespace adapt::runtime {

StateWatcher::StateWatcher(std::string state_file) : state_file_(std::move(state_file)) {
  auto opened = os::Inotify::Open();
  if (!opened.ok()) {
    spdlog::warn("no inotify ({}): sandbox exits are noticed by polling only",
                 opened.status().message());
    return;
  }
  inotify_.emplace(std::move(*opened));
  thread_ = std::thread(Guarded("sandbox state watcher", [this] { Loop(); }));
}

StateWatcher::~StateWatcher() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void StateWatcher::SetListener(Listener listener) {
  std::lock_guard lock(listener_mu_);
  listener_ = std::move(listener);
}

void StateWatcher::Watch(const std::string& id, const std::string& dir) {
  if (!inotify_) return;
  std::lock_guard lock(mu_);
  if (watches_.count(id)) return;
  auto wd = inotify_->WatchRenamesInto(dir);
  if (!wd.ok()) return;  // the directory is gone: nothing left to hear
  // The kernel hands out the same descriptor for the same directory.
  watches_[id] = *wd;
  ids_[*wd] = id;
}

void StateWatcher::Unwatch(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  inotify_->Remove(it->second);
  ids_.erase(it->second);
  watches_.erase(it);
}

void StateWatcher::Loop() {
  while (!stopping_) {
    // A bounded wait, so that the destructor's stop is seen.
    auto events = inotify_->Read(500);
    if (!events.ok()) {
      spdlog::warn("sandbox state watcher stops: {}", events.status().message());
      return;
    }
    for (const auto& ev : *events) {
      std::string id;
      {
        std::lock_guard lock(mu_);
        auto it = ids_.find(ev.watch);
        if (it == ids_.end()) continue;
        id = it->second;
        if (ev.gone) {
          watches_.erase(id);
          ids_.erase(it);
          continue;
        }
      }
      if (ev.name != state_file_) continue;
      std::lock_guard lock(listener_mu_);
      // One sandbox's listener call that threw does not stop the others' exits being heard.
      if (listener_) RunGuarded("sandbox state watcher: " + id, [&] { listener_(id); });
    }
  }
}

}  // namespace adapt::runtime
