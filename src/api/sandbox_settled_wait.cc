#include "api/sandbox_settled_wait.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <mutex>

#include "api/errors.h"
#include "api/sandbox_json_text.h"
#include "base/background_work.h"

namespace adapt::api {
namespace {

// The HTTP deadline comes a little after the wait's own, which normally answers first.
constexpr auto kAnswerMargin = std::chrono::seconds(5);

class SandboxSettledWait : public DeferredResponse,
                           public std::enable_shared_from_this<SandboxSettledWait> {
 public:
  SandboxSettledWait(core::SandboxService& sandboxes, boost::asio::thread_pool& workers,
                     core::Principal who, std::string sandbox_id, std::chrono::seconds wait)
      : sandboxes_(sandboxes),
        workers_(workers),
        who_(std::move(who)),
        sandbox_id_(std::move(sandbox_id)),
        wait_until_(std::chrono::steady_clock::now() + wait) {}

  std::chrono::steady_clock::time_point deadline() const override {
    return wait_until_ + kAnswerMargin;
  }

  void Start(Reply reply) override {
    reply_ = std::move(reply);
    std::weak_ptr<SandboxSettledWait> weak = weak_from_this();
    auto handle =
        sandboxes_.AwaitSettled(who_, sandbox_id_, wait_until_, [weak](core::Waiter::End how) {
          if (how == core::Waiter::End::kCancelled) return;
          if (auto self = weak.lock()) self->Answer();
        });
    std::lock_guard lock(mu_);
    handle_ = std::move(handle);
  }

  void Expire() override {
    boost::asio::post(
        workers_, Guarded("sandbox settled wait", [self = shared_from_this()] { self->Answer(); }));
  }

  void Cancel() override {
    answered_ = true;
    std::lock_guard lock(mu_);
    handle_.Cancel();
  }

 private:
  // On a worker (the Waiter's), once: the record as it is now, or why it cannot be read (404
  // for an id of another organization, as a plain read).
  // An exception answers 500 (as a handler's does): answered_ is set, so nothing else would.
  void Answer() {
    if (answered_.exchange(true)) return;
    RunGuarded(
        "sandbox settled wait",
        [&] {
          auto sandbox = sandboxes_.Get(who_, sandbox_id_);
          if (!sandbox.ok()) return reply_(ErrorResponse(sandbox.status()));
          HttpResponse r;
          r.body = SandboxJsonText(*sandbox);
          reply_(std::move(r));
        },
        [this](const std::string& /*logged*/) {
          reply_(ErrorResponse(Status(Code::kInternal, "internal error")));
        });
  }

  core::SandboxService& sandboxes_;
  boost::asio::thread_pool& workers_;
  const core::Principal who_;
  const std::string sandbox_id_;
  const std::chrono::steady_clock::time_point wait_until_;
  Reply reply_;  // set by Start, before the wait can answer
  std::atomic<bool> answered_{false};
  std::mutex mu_;
  core::Waiter::Handle handle_;  // guarded by mu_
};

}  // namespace

std::shared_ptr<DeferredResponse> MakeSandboxSettledWait(core::SandboxService& sandboxes,
                                                         boost::asio::thread_pool& workers,
                                                         core::Principal who,
                                                         std::string sandbox_id,
                                                         std::chrono::seconds wait) {
  return std::make_shared<SandboxSettledWait>(sandboxes, workers, std::move(who),
                                              std::move(sandbox_id), wait);
}

}  // namespace adapt::api
