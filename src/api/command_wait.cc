#include "api/command_wait.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <mutex>

#include "api/command_mapping.h"
#include "api/errors.h"
#include "api/resource_responses.h"
#include "base/background_work.h"

namespace adapt::api {
namespace {

class CommandWait : public DeferredResponse, public std::enable_shared_from_this<CommandWait> {
 public:
  CommandWait(core::CommandService& commands, boost::asio::thread_pool& workers,
              core::Principal who, std::string sandbox_id, std::string command_id,
              std::chrono::steady_clock::time_point deadline, CommandWaitKind kind)
      : commands_(commands),
        workers_(workers),
        who_(std::move(who)),
        sandbox_id_(std::move(sandbox_id)),
        command_id_(std::move(command_id)),
        deadline_(deadline),
        kind_(kind) {}

  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }

  void Start(Reply reply) override {
    reply_ = std::move(reply);
    std::weak_ptr<CommandWait> weak = weak_from_this();
    auto handle = commands_.AwaitEnd(command_id_, deadline_, [weak](core::Waiter::End how) {
      if (how == core::Waiter::End::kCancelled) return;  // Cancel: nobody reads the answer
      if (auto self = weak.lock()) self->Answer();
    });
    std::lock_guard lock(mu_);
    wait_ = std::move(handle);
  }
  void Expire() override { Answer(); }
  void Cancel() override {
    answered_ = true;
    std::lock_guard lock(mu_);
    wait_.Cancel();
  }

 private:
  // Once: the outcome is read on a worker (the store), briefly.
  void Answer() {
    if (answered_.exchange(true)) return;
    auto self = shared_from_this();
    // A read that threw answers 500, as a handler's exception does: the request is not left
    // waiting.
    auto failed = [self](const std::string& /*logged*/) {
      self->reply_(ErrorResponse(Status(Code::kInternal, "internal error")));
    };
    boost::asio::post(
        workers_, Guarded(
                      "command wait",
                      [self] {
                        {
                          std::lock_guard lock(self->mu_);
                          self->wait_.Cancel();
                        }
                        CommandWait& w = *self;
                        auto outcome =
                            w.kind_ == CommandWaitKind::kPython
                                ? w.commands_.PythonOutcome(w.who_, w.sandbox_id_, w.command_id_)
                                : w.commands_.Outcome(w.who_, w.sandbox_id_, w.command_id_);
                        if (!outcome.ok()) return self->reply_(ErrorResponse(outcome.status()));
                        bool ok = outcome->finished || w.kind_ == CommandWaitKind::kKill;
                        self->reply_(JsonResponse(ok ? 200 : 202, CommandToJson(outcome->command)));
                      },
                      failed));
  }

  core::CommandService& commands_;
  boost::asio::thread_pool& workers_;
  const core::Principal who_;
  const std::string sandbox_id_, command_id_;
  const std::chrono::steady_clock::time_point deadline_;
  const CommandWaitKind kind_;
  Reply reply_;  // set by Start, before anything can call Answer
  std::mutex mu_;
  core::Waiter::Handle wait_;  // guarded by mu_
  std::atomic<bool> answered_{false};
};

}  // namespace

std::shared_ptr<DeferredResponse> MakeCommandWait(core::CommandService& commands,
                                                  boost::asio::thread_pool& workers,
                                                  core::Principal who, std::string sandbox_id,
                                                  std::string command_id,
                                                  std::chrono::steady_clock::time_point deadline,
                                                  CommandWaitKind kind) {
  return std::make_shared<CommandWait>(commands, workers, std::move(who), std::move(sandbox_id),
                                       std::move(command_id), deadline, kind);
}

}  // namespace adapt::api
