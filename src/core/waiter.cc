#include "core/waiter.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/background_work.h"

namespace adapt::core {
namespace {

std::string KeyOf(const Change& c) { return std::to_string(static_cast<int>(c.kind)) + ":" + c.id; }

}  // namespace

// The waits in progress by what they wait on. Shared with every wait, so that a timer that
// fires after the Waiter went finds it.
struct Waiter::Registry {
  explicit Registry(size_t max) : max_waits(max) {}
  const size_t max_waits;
  mutable std::mutex mu;
  bool shut = false;
  uint64_t next = 1;
  size_t count = 0;
  std::map<std::string, std::map<uint64_t, std::weak_ptr<Wait>>> by_key;
};

class Waiter::Wait : public std::enable_shared_from_this<Wait> {
 public:
  Wait(boost::asio::thread_pool& pool, std::shared_ptr<Registry> registry, std::string key,
       Check check, Done done, Ticks ticks)
      : pool_(pool),
        registry_(std::move(registry)),
        key_(std::move(key)),
        check_(std::move(check)),
        done_(std::move(done)),
        ticks_(std::move(ticks)),
        deadline_(pool),
        tick_(pool) {}

  // Arms the timers (unless the wait already ended) and runs the first check.
  void Begin(Clock::time_point deadline) {
    {
      std::lock_guard lock(mu_);
      if (registered_ && !ended_) {
        deadline_.expires_at(deadline);
        deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
          if (!ec) RunGuarded("wait deadline", [&] { self->Finish(End::kDeadline); });
        });
        if (ticks_.fn && ticks_.every.count() > 0) ArmTickLocked(ticks_.first);
      }
    }
    boost::asio::post(pool_,
                      Guarded("wait check", [self = shared_from_this()] { self->RunCheck(); }));
  }

  // Runs the check on the pool; signals during a check run it once more afterwards.
  void RunCheck() {
    Check check;
    {
      std::lock_guard lock(mu_);
      if (ended_) return;
      if (checking_) {
        again_ = true;
        return;
      }
      checking_ = true;
      check = check_;
    }
    for (;;) {
      // A check that threw counts as not ready: the wait goes on to its deadline.
      bool ready = false;
      RunGuarded("wait check", [&] { ready = check(); });
      std::unique_lock lock(mu_);
      if (ended_ || ready || !again_) {
        checking_ = false;
        bool give_up = !registered_;  // a wait past the cap ends after its first check
        lock.unlock();
        if (ready)
          Finish(End::kReady);
        else if (give_up)
          Finish(End::kDeadline);
        return;
      }
      again_ = false;
    }
  }

  // Ends the wait once; Done runs on the pool.
  void Finish(End how) {
    {
      std::lock_guard lock(mu_);
      if (ended_) return;
      ended_ = true;
      deadline_.cancel();
      tick_.cancel();
    }
    if (registered_) {
      std::lock_guard lock(registry_->mu);
      auto it = registry_->by_key.find(key_);
      if (it != registry_->by_key.end()) {
        it->second.erase(token_);
        if (it->second.empty()) registry_->by_key.erase(it);
      }
      registry_->count -= 1;
    }
    boost::asio::post(pool_, Guarded("wait end", [self = shared_from_this(), how] {
                        Done done = std::move(self->done_);
                        {
                          // What the wait held (the caller's reply, its context) goes with its
                          // one call.
                          std::lock_guard lock(self->mu_);
                          self->check_ = nullptr;
                          self->ticks_.fn = nullptr;
                        }
                        done(how);
                      }));
  }

 private:
  void ArmTickLocked(std::chrono::milliseconds after) {
    tick_.expires_after(after);
    tick_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      std::function<void()> fn;
      {
        std::lock_guard lock(self->mu_);
        if (self->ended_) return;
        fn = self->ticks_.fn;
      }
      RunGuarded("wait tick", fn);  // the next tick comes also after one threw
      std::lock_guard lock(self->mu_);
      if (!self->ended_) self->ArmTickLocked(self->ticks_.every);
    });
  }

  boost::asio::thread_pool& pool_;
  const std::shared_ptr<Registry> registry_;
  const std::string key_;
  uint64_t token_ = 0;
  bool registered_ = false;
  Check check_;
  Done done_;
  Ticks ticks_;
  std::mutex mu_;  // guards the timers and the flags below
  boost::asio::steady_timer deadline_, tick_;
  bool ended_ = false, checking_ = false, again_ = false;

  friend class Waiter;
};

void Waiter::Handle::Cancel() const {
  if (wait_) wait_->Finish(End::kCancelled);
}

Waiter::Waiter(EventBus& bus, boost::asio::thread_pool& pool, size_t max_waits)
    : bus_(bus), pool_(pool), registry_(std::make_shared<Registry>(max_waits)) {
  subscription_ = bus_.Subscribe([registry = registry_, &pool](const Change& change) {
    std::vector<std::shared_ptr<Wait>> woken;
    {
      std::lock_guard lock(registry->mu);
      auto it = registry->by_key.find(KeyOf(change));
      if (it == registry->by_key.end()) return;
      for (const auto& [_, weak] : it->second)
        if (auto w = weak.lock()) woken.push_back(std::move(w));
    }
    for (auto& w : woken) boost::asio::post(pool, Guarded("wait check", [w] { w->RunCheck(); }));
  });
}

Waiter::~Waiter() {
  bus_.Unsubscribe(subscription_);
  Shutdown();
}

Waiter::Handle Waiter::Start(Change on, Clock::time_point deadline, Check check, Done done,
                             Ticks ticks) {
  std::string key = KeyOf(on);
  auto wait = std::make_shared<Wait>(pool_, registry_, key, std::move(check), std::move(done),
                                     std::move(ticks));
  bool shut = false;
  {
    std::lock_guard lock(registry_->mu);
    shut = registry_->shut;
    if (!shut && registry_->count < registry_->max_waits) {
      // Set before the wait can be found (a signal) or ended (Shutdown).
      wait->token_ = registry_->next++;
      wait->registered_ = true;
      registry_->by_key[key][wait->token_] = wait;
      registry_->count += 1;
    }
  }
  if (shut) {
    wait->Finish(End::kCancelled);
    return Handle(wait);
  }
  wait->Begin(deadline);
  return Handle(wait);
}

void Waiter::Shutdown() {
  std::vector<std::shared_ptr<Wait>> all;
  {
    std::lock_guard lock(registry_->mu);
    registry_->shut = true;
    for (const auto& [_, waits] : registry_->by_key)
      for (const auto& [__, weak] : waits)
        if (auto w = weak.lock()) all.push_back(std::move(w));
  }
  for (auto& w : all) w->Finish(End::kCancelled);
}

size_t Waiter::size() const {
  std::lock_guard lock(registry_->mu);
  return registry_->count;
}

}  // namespace adapt::core
