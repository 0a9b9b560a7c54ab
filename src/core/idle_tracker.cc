#include "core/idle_tracker.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/background_work.h"
#include "base/log.h"
#include "base/time.h"

namespace adapt::core {

IdleTracker::IdleTracker(store::SandboxStore& store, OnIdle on_idle, Clock clock)
    : store_(store), on_idle_(std::move(on_idle)), clock_(std::move(clock)) {}

IdleTracker::~IdleTracker() { Stop(); }

int64_t IdleTracker::Now() const { return clock_ ? clock_() : NowMillis(); }

void IdleTracker::Start() {
  thread_ = std::thread(Guarded("idle tracker", [this] { Loop(); }));
}

void IdleTracker::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {
constexpr int64_t kIdleRetryAfterFaultMs = 60 * 1000;
}  // namespace

void IdleTracker::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    woken_ = false;
    lock.unlock();
    // The next deadline, -1 for none. A pass that threw is tried again a minute later, not
    // only at the next activity.
    int64_t next_ms = -1;
    RunGuarded(
        "idle tracker pass", [&] { next_ms = RunDue().value_or(-1); },
        [&](const std::string&) { next_ms = Now() + kIdleRetryAfterFaultMs; });
    lock.lock();
    auto woken = [this] { return stopping_ || woken_; };
    if (next_ms < 0) {
      wake_.wait(lock, woken);
    } else {
      // Wall-clock deadlines, as the store's times are; a clock step only moves a check.
      wake_.wait_until(lock, adapt::Clock::time_point(std::chrono::milliseconds(next_ms)), woken);
    }
  }
}

void IdleTracker::Refresh(const std::string& id) {
  {
    std::lock_guard lock(mu_);
    pending_.insert(id);
    woken_ = true;
  }
  wake_.notify_all();
}

void IdleTracker::Touch(const std::string& id) {
  int64_t now = Now();
  std::lock_guard lock(mu_);
  auto it = watched_.find(id);
  if (it != watched_.end()) it->second.last_ms = std::max(it->second.last_ms, now);
}

void IdleTracker::Begin(const std::string& id) {
  Touch(id);
  std::lock_guard lock(mu_);
  busy_[id] += 1;
}

void IdleTracker::End(const std::string& id) {
  Touch(id);
  {
    std::lock_guard lock(mu_);
    auto it = busy_.find(id);
    if (it != busy_.end() && --it->second <= 0) busy_.erase(it);
    // Its deadline counts again from now: the thread may be sleeping without one.
    woken_ = true;
  }
  wake_.notify_all();
}

std::optional<int64_t> IdleTracker::RunDue() {
  std::set<std::string> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(pending_);
  }
  for (const auto& id : pending) {
    // The store is read without the lock: activity is never held up by it.
    auto r = store_.GetSandbox("", id);
    bool watch = r.ok() && r->status == "running" && r->config.idle_timeout_seconds;
    int64_t now = Now();
    std::lock_guard lock(mu_);
    if (!watch) {
      watched_.erase(id);
      continue;
    }
    auto [it, added] = watched_.try_emplace(id, Watched{0, now});
    it->second.timeout_ms = *r->config.idle_timeout_seconds * 1000;
    // A sandbox that (re)started counts as used when it did.
    it->second.last_ms = std::max(it->second.last_ms, std::min(r->updated_at, now));
  }
  std::vector<std::pair<std::string, Watched>> due;
  std::optional<int64_t> next;
  {
    int64_t now = Now();
    std::lock_guard lock(mu_);
    for (auto it = watched_.begin(); it != watched_.end();) {
      if (busy_.count(it->first)) {
        ++it;
        continue;
      }
      int64_t deadline = std::max(it->second.last_ms + it->second.timeout_ms, it->second.retry_ms);
      // Kept while reported: a use meanwhile (Touch) then counts if the report is refused.
      if (deadline <= now) {
        due.emplace_back(it->first, it->second);
        ++it;
        continue;
      }
      next = next ? std::min(*next, deadline) : deadline;
      ++it;
    }
  }
  for (auto& [id, watched] : due) {
    int64_t now = Now();
    int64_t idle_ms = now - watched.last_ms;
    if (watched.retry_ms == 0)
      spdlog::info("sandbox {}: idle for {} s, hibernating it", id, idle_ms / 1000);
    bool began = on_idle_(id, idle_ms);
    std::lock_guard lock(mu_);
    auto it = watched_.find(id);
    if (it == watched_.end()) continue;
    // Begun: no longer watched (its stop refreshes it).
    if (began) {
      watched_.erase(it);
      continue;
    }
    // Not now: asked for again kRetryMs later, or at its deadline if it was used meanwhile.
    it->second.retry_ms = now + kRetryMs;
    int64_t deadline = std::max(it->second.last_ms + it->second.timeout_ms, it->second.retry_ms);
    next = next ? std::min(*next, deadline) : deadline;
  }
  return next;
}

std::optional<int64_t> IdleTracker::LastActivity(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = watched_.find(id);
  if (it == watched_.end()) return std::nullopt;
  return it->second.last_ms;
}

}  // namespace adapt::core
