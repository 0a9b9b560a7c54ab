// The wait of POST /v1/sandboxes/{id}/commands and /python for a sandbox still booting (created,
// started or given object storage a moment ago): it parks until the sandbox leaves
// provisioning (SandboxService::AwaitSettled), then starts the command and hands the rest of the
// same deadline to the command's own wait (MakeCommandWait). Nothing holds a worker meanwhile.
#include <boost/asio/post.hpp>
#include <mutex>

#include "api/command_wait.h"
#include "api/errors.h"
#include "base/background_work.h"

namespace adapt::api {
namespace {

class BootThenCommandWait : public DeferredResponse,
                            public std::enable_shared_from_this<BootThenCommandWait> {
 public:
  BootThenCommandWait(core::SandboxService& sandboxes, core::CommandService& commands,
                      boost::asio::thread_pool& workers, core::Principal who,
                      std::string sandbox_id, CommandStart start,
                      std::chrono::steady_clock::time_point deadline, CommandWaitKind kind)
      : sandboxes_(sandboxes),
        commands_(commands),
        workers_(workers),
        who_(std::move(who)),
        sandbox_id_(std::move(sandbox_id)),
        start_(std::move(start)),
        deadline_(deadline),
        kind_(kind) {}

  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }

  void Start(Reply reply) override {
    reply_ = std::move(reply);
    std::weak_ptr<BootThenCommandWait> weak = weak_from_this();
    // At the deadline too: the start then answers the sandbox's status (409, provisioning).
    auto handle =
        sandboxes_.AwaitSettled(who_, sandbox_id_, deadline_, [weak](core::Waiter::End how) {
          if (how == core::Waiter::End::kCancelled) return;
          if (auto self = weak.lock()) self->Begin();
        });
    std::lock_guard lock(mu_);
    boot_ = std::move(handle);
  }

  // Still booting: the start answers now (409) unless the boot wait's own deadline, the
  // same, already began it.
  void Expire() override {
    std::shared_ptr<DeferredResponse> command;
    {
      std::lock_guard lock(mu_);
      expired_ = true;
      command = command_;
    }
    if (command) return command->Expire();
    boost::asio::post(workers_,
                      Guarded("command boot wait", [self = shared_from_this()] { self->Begin(); }));
  }

  void Cancel() override {
    std::shared_ptr<DeferredResponse> command;
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      boot_.Cancel();
      command = command_;
    }
    if (command) command->Cancel();
  }

 private:
  // On a pool, once: the sandbox booted, or the deadline came.
  void Begin() {
    core::Waiter::Handle boot;
    {
      std::lock_guard lock(mu_);
      if (cancelled_ || begun_) return;
      begun_ = true;
      boot = boot_;
    }
    boot.Cancel();  // when the HTTP deadline came first
    // Begun, so no later call answers: an exception here answers 500 (as a handler's does)
    // instead of leaving the request open for good.
    RunGuarded(
        "command boot wait", [&] { StartCommand(); },
        [this](const std::string& /*logged*/) {
          reply_(ErrorResponse(Status(Code::kInternal, "internal error")));
        });
  }

  void StartCommand() {
    auto started = start_();
    if (!started.ok()) return reply_(ErrorResponse(started.status()));
    auto command =
        MakeCommandWait(commands_, workers_, who_, sandbox_id_, started->id, deadline_, kind_);
    // Started before it is published, so an Expire never reaches a wait without its reply.
    command->Start(reply_);
    bool expired = false, cancelled = false;
    {
      std::lock_guard lock(mu_);
      cancelled = cancelled_;
      if (!cancelled) command_ = command;
      expired = expired_;
    }
    if (cancelled) return command->Cancel();
    if (expired) command->Expire();
  }

  core::SandboxService& sandboxes_;
  core::CommandService& commands_;
  boost::asio::thread_pool& workers_;
  const core::Principal who_;
  const std::string sandbox_id_;
  const CommandStart start_;
  const std::chrono::steady_clock::time_point deadline_;
  const CommandWaitKind kind_;
  Reply reply_;  // set by Start, before the boot wait can call Begin
  std::mutex mu_;
  core::Waiter::Handle boot_;                                 // guarded by mu_
  std::shared_ptr<DeferredResponse> command_;                 // guarded by mu_; set once started
  bool begun_ = false, expired_ = false, cancelled_ = false;  // guarded by mu_
};

}  // namespace

std::shared_ptr<DeferredResponse> MakeBootThenCommandWait(
    core::SandboxService& sandboxes, core::CommandService& commands,
    boost::asio::thread_pool& workers, core::Principal who, std::string sandbox_id,
    CommandStart start, std::chrono::steady_clock::time_point deadline, CommandWaitKind kind) {
  return std::make_shared<BootThenCommandWait>(sandboxes, commands, workers, std::move(who),
                                               std::move(sandbox_id), std::move(start), deadline,
                                               kind);
}

}  // namespace adapt::api
