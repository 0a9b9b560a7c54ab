#include "core/sandbox_monitor.h"

#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"

namespace adapt::core {
namespace {

constexpr auto kInterval = std::chrono::milliseconds(200);
constexpr int64_t kIdempotencyKeyLifetimeMs = 24LL * 3600 * 1000;

}  // namespace

SandboxMonitor::SandboxMonitor(store::Store& store, SandboxLifecycle& lifecycle,
                               SandboxService& service, boost::asio::thread_pool& workers)
    : store_(store), lifecycle_(lifecycle), service_(service), workers_(workers) {}

SandboxMonitor::~SandboxMonitor() { Stop(); }

void SandboxMonitor::Start() {
  thread_ = std::thread(Guarded("sandbox monitor", [this] { Loop(); }));
}

void SandboxMonitor::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SandboxMonitor::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    RunGuarded("sandbox monitor pass", [this] { Tick(); });
    lock.lock();
    cv_.wait_for(lock, kInterval, [this] { return stopping_; });
  }
}

void SandboxMonitor::Wake(const std::string& id) {
  Schedule(id, [this, id] { lifecycle_.CheckRunning(id); });
}

void SandboxMonitor::Schedule(const std::string& id, std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || !in_flight_.insert(id).second) return;
  }
  // Also after fn threw: a sandbox left in flight would never be looked at again.
  auto done = [this, id] {
    std::lock_guard lock(mu_);
    in_flight_.erase(id);
  };
  boost::asio::post(workers_, Guarded(
                                  "sandbox monitor check " + id,
                                  [fn = std::move(fn), done] {
                                    fn();
                                    done();
                                  },
                                  [done](const std::string&) { done(); }));
}

void SandboxMonitor::Tick() {
  int64_t now = NowMillis();
  lifecycle_.RetryUnrecordedFailures();
  if (auto running = store_.ListSandboxesWithStatus({"running"}); running.ok()) {
    for (const auto& r : *running) Wake(r.id);
  }
  if (auto expired = store_.ListExpired(now); expired.ok()) {
    for (const auto& r : *expired) {
      spdlog::info("sandbox {} expired", r.id);
      Schedule(r.id, [this, id = r.id] { service_.Expire(id); });
    }
  }
  // Deletions that failed or were interrupted are retried, but not in a hot loop.
  if (now - last_purge_ > 10000) {
    if (auto deleting = store_.ListSandboxesWithStatus({"deleting"}); deleting.ok()) {
      for (const auto& r : *deleting) {
        if (now - r.updated_at > 10000)
          Schedule(r.id, [this, id = r.id] { lifecycle_.FinishDelete(id); });
      }
    }
    WarnIfError(store_.PurgeIdempotencyKeys(now - kIdempotencyKeyLifetimeMs),
                "purging old idempotency keys (retried at the next purge)");
    last_purge_ = now;
  }
}

}  // namespace adapt::core
