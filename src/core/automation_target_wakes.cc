#include "core/automation_target_wakes.h"

#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>

#include "base/background_work.h"

namespace adapt::core {

struct AutomationTargetWakes::Target {
  int executing = 0;
  bool woken = false;                                // a run started it; the last one out stops it
  std::shared_ptr<boost::asio::steady_timer> retry;  // a refused stop waiting its turn
};

AutomationTargetWakes::AutomationTargetWakes(boost::asio::thread_pool& pool, StopTarget stop,
                                             std::chrono::milliseconds retry_after)
    : pool_(pool), stop_(std::move(stop)), retry_after_(retry_after) {}

AutomationTargetWakes::~AutomationTargetWakes() { Shutdown(); }

void AutomationTargetWakes::Enter(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  auto& t = targets_[sandbox_id];
  if (!t) t = std::make_shared<Target>();
  ++t->executing;
}

void AutomationTargetWakes::Woke(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  auto it = targets_.find(sandbox_id);
  if (it != targets_.end()) it->second->woken = true;
}

void AutomationTargetWakes::Leave(const std::string& org_id, const std::string& sandbox_id) {
  {
    std::lock_guard lock(mu_);
    auto it = targets_.find(sandbox_id);
    if (it == targets_.end()) return;
    if (it->second->executing > 0) --it->second->executing;
    if (it->second->executing > 0 || !it->second->woken) {
      ForgetIfIdle(sandbox_id);
      return;
    }
  }
  StopIfIdle(org_id, sandbox_id);
}

void AutomationTargetWakes::StopIfIdle(const std::string& org_id, const std::string& sandbox_id) {
  {
    std::lock_guard lock(mu_);
    auto it = targets_.find(sandbox_id);
    if (stopping_ || it == targets_.end()) return;
    if (it->second->executing > 0 || !it->second->woken) return;
    // Cleared before the stop, so that a run leaving meanwhile does not stop it twice; a run
    // that finds it hibernated afterwards wakes it again and sets it.
    it->second->woken = false;
  }
  Status st = stop_(org_id, sandbox_id);
  std::lock_guard lock(mu_);
  if (st.code() == Code::kResourceExhausted && !stopping_) {
    auto& t = targets_[sandbox_id];
    if (!t) t = std::make_shared<Target>();
    t->woken = true;
    if (t->executing > 0 || t->retry) return;  // the last run out, or the pending retry, stops it
    auto timer = std::make_shared<boost::asio::steady_timer>(pool_, retry_after_);
    t->retry = timer;
    timer->async_wait([this, timer, org_id, sandbox_id](const boost::system::error_code& ec) {
      if (ec) return;
      {
        std::lock_guard lock(mu_);
        auto it = targets_.find(sandbox_id);
        if (it == targets_.end() || it->second->retry != timer) return;
        it->second->retry.reset();
      }
      RunGuarded("automations: stopping sandbox " + sandbox_id + " again",
                 [&] { StopIfIdle(org_id, sandbox_id); });
    });
    return;
  }
  if (!st.ok() && st.code() != Code::kNotFound)
    spdlog::warn("automations: stopping sandbox {} again: {}", sandbox_id, st.message());
  ForgetIfIdle(sandbox_id);
}

void AutomationTargetWakes::ForgetIfIdle(const std::string& sandbox_id) {
  auto it = targets_.find(sandbox_id);
  if (it == targets_.end()) return;
  const Target& t = *it->second;
  if (t.executing == 0 && !t.woken && !t.retry) targets_.erase(it);
}

int AutomationTargetWakes::Executing(const std::string& sandbox_id) const {
  std::lock_guard lock(mu_);
  auto it = targets_.find(sandbox_id);
  return it == targets_.end() ? 0 : it->second->executing;
}

void AutomationTargetWakes::Shutdown() {
  std::lock_guard lock(mu_);
  stopping_ = true;
  for (auto& [id, t] : targets_)
    if (t->retry) t->retry->cancel();
}

}  // namespace adapt::core
