#include "api/command_wait.h"

#include <atomic>
#include <boost/asio/post.hpp>

#include "api/errors.h"
#include "api/resource_responses.h"

namespace adapt::api {
namespace {

class CommandWait : public DeferredResponse, public std::enable_shared_from_this<CommandWait> {
 public:
  CommandWait(core::CommandService& commands, boost::asio::thread_pool& workers,
              core::Principal who, std::string sandbox_id, std::string command_id,
              std::chrono::steady_clock::time_point deadline)
      : commands_(commands),
        workers_(workers),
        who_(std::move(who)),
        sandbox_id_(std::move(sandbox_id)),
        command_id_(std::move(command_id)),
        deadline_(deadline) {}

  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }

  void Start(Reply reply) override {
    reply_ = std::move(reply);
    std::weak_ptr<CommandWait> weak = weak_from_this();
    token_ = commands_.WhenEnded(command_id_, [weak] {
      if (auto self = weak.lock()) self->Answer();
    });
  }
  void Expire() override { Answer(); }
  void Cancel() override {
    answered_ = true;
    commands_.CancelWhenEnded(token_);
  }

 private:
  // Once: the outcome is read on a worker (the store), briefly.
  void Answer() {
    if (answered_.exchange(true)) return;
    boost::asio::post(workers_, [self = shared_from_this()] {
      self->commands_.CancelWhenEnded(self->token_);
      auto outcome = self->commands_.Outcome(self->who_, self->sandbox_id_, self->command_id_);
      if (!outcome.ok()) return self->reply_(ErrorResponse(outcome.status()));
      self->reply_(JsonResponse(outcome->finished ? 200 : 202, outcome->command));
    });
  }

  core::CommandService& commands_;
  boost::asio::thread_pool& workers_;
  const core::Principal who_;
  const std::string sandbox_id_, command_id_;
  const std::chrono::steady_clock::time_point deadline_;
  Reply reply_;                     // set by Start, before anything can call Answer
  std::atomic<uint64_t> token_{0};  // WhenEnded's
  std::atomic<bool> answered_{false};
};

}  // namespace

std::shared_ptr<DeferredResponse> MakeCommandWait(core::CommandService& commands,
                                                  boost::asio::thread_pool& workers,
                                                  core::Principal who, std::string sandbox_id,
                                                  std::string command_id,
                                                  std::chrono::steady_clock::time_point deadline) {
  return std::make_shared<CommandWait>(commands, workers, std::move(who), std::move(sandbox_id),
                                       std::move(command_id), deadline);
}

}  // namespace adapt::api
