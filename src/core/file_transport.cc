#include "core/file_transport.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "core/file_service.h"
#include "os/process.h"
#include "os/timed_io.h"
#include "os/unix_socket.h"

namespace adapt::core {
namespace {

constexpr size_t kMaxStderrBytes = 64 * 1024;
// The agent opens the data connection right after the spawn frame: this only bounds a
// wedged agent.
constexpr auto kDataWait = std::chrono::seconds(10);
// The exit frame follows the end of the data stream at once.
constexpr auto kExitWait = std::chrono::seconds(30);
// An abandoned operation gets SIGTERM first, its input still open: an upload removes its
// temp file and exits (agent/file_tool.h). SIGKILL follows when it has not within this.
constexpr auto kTermGrace = std::chrono::seconds(5);

class ExecFileOp final : public FileOp {
 public:
  ExecFileOp(runtime::Runtime& runtime, std::string sandbox_id, runtime::ExecProcess process)
      : runtime_(runtime), sandbox_id_(std::move(sandbox_id)), process_(std::move(process)) {}

  ~ExecFileOp() override {
    if (finished_) return;
    Status st = runtime_.SignalExec(sandbox_id_, process_.tree_id, SIGTERM);
    if (!st.ok() || !ExitedWithin(kTermGrace))
      st = runtime_.KillExec(sandbox_id_, process_.tree_id);
    if (!st.ok()) spdlog::warn("file operation in {}: {}", sandbox_id_, st.message());
    IgnoreError(os::Signal(process_.pid, SIGKILL), "the process may have just exited");
    (void)os::Wait(process_.pid);
    runtime_.ForgetExec(sandbox_id_, process_.tree_id);
  }

  int input_fd() const override { return process_.stdin_fd.get(); }
  int output_fd() const override { return process_.stdout_fd.get(); }
  void CloseInput() override { process_.stdin_fd.reset(); }
  const char* served_by() const override { return "runsc-exec"; }
  bool Abandon(std::chrono::milliseconds) override {
    IgnoreError(runtime_.SignalExec(sandbox_id_, process_.tree_id, SIGTERM),
                "the tool may have ended already");
    return false;
  }

  Status Finish() override {
    CloseInput();
    process_.stdout_fd.reset();
    std::string err;
    std::vector<char> buf(8192);
    // The sandbox's root can hold the tool's stderr open: its end is waited for kExitWait at
    // most, and a tool that does not end is killed by the destructor (not finished_).
    const auto deadline = std::chrono::steady_clock::now() + kExitWait;
    for (;;) {
      auto n = os::ReadSomeBefore(process_.stderr_fd.get(), buf.data(), buf.size(), deadline);
      if (!n.ok() && n.status().code() == Code::kUnavailable)
        return Status(Code::kUnavailable, "the sandbox's file tool did not end within " +
                                              std::to_string(kExitWait.count()) +
                                              " s of its reply");
      if (!n.ok() || *n == 0) break;
      if (err.size() < kMaxStderrBytes) err.append(buf.data(), *n);
    }
    finished_ = true;
    auto exit = os::Wait(process_.pid);
    runtime_.ForgetExec(sandbox_id_, process_.tree_id);
    if (!exit.ok()) return exit.status().WithContext("waiting for the file operation");
    if (exit->signaled()) return FileSignalError(exit->signal);
    if (exit->exit_code == 0) return Status::Ok();
    return FileErrorFor(exit->exit_code, err);
  }

 private:
  // Whether runsc exec ended (its stderr reached end of file) within `wait`.
  bool ExitedWithin(std::chrono::seconds wait) {
    auto deadline = std::chrono::steady_clock::now() + wait;
    std::vector<char> buf(8192);
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      auto ready = os::WaitReadable({process_.stderr_fd.get()}, static_cast<int>(left.count()));
      if (!ready.ok()) return false;
      if (!(*ready)[0]) continue;
      auto n = os::ReadSome(process_.stderr_fd.get(), buf.data(), buf.size());
      if (!n.ok() || *n == 0) return true;
    }
  }

  runtime::Runtime& runtime_;
  std::string sandbox_id_;
  runtime::ExecProcess process_;
  bool finished_ = false;
};

// What the agent session reports for one operation's channel.
struct AgentOpState {
  std::mutex mu;
  std::condition_variable cv;
  std::string err;  // the tool's stderr, bounded
  bool exited = false;
  runtime::AgentExit exit;

  runtime::AgentCallbacks Callbacks(const std::shared_ptr<AgentOpState>& self) {
    runtime::AgentCallbacks cb;
    cb.output = [self](int stream, std::string_view data) {
      std::lock_guard lock(self->mu);
      if (stream == 2 && self->err.size() < kMaxStderrBytes) self->err.append(data);
    };
    cb.exit = [self](const runtime::AgentExit& e) {
      std::lock_guard lock(self->mu);
      self->exit = e;
      self->exited = true;
      self->cv.notify_all();
    };
    return cb;
  }

  bool ExitedWithin(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, wait, [&] { return exited; });
  }

  // The operation's outcome once it exited; kUnavailable when it did not within `wait`.
  Status Outcome(std::chrono::seconds wait) {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, wait, [&] { return exited; }))
      return Status(Code::kUnavailable,
                    "the sandbox agent did not report the file operation's end");
    if (exit.lost)
      return Status(Code::kUnavailable, "the sandbox agent disconnected during the file operation");
    if (exit.signal != 0) return FileSignalError(exit.signal);
    if (exit.exit_code == 0) return Status::Ok();
    return FileErrorFor(exit.exit_code, err);
  }
};

class AgentFileOp final : public FileOp {
 public:
  AgentFileOp(std::shared_ptr<runtime::AgentSession> session, uint32_t channel, os::UniqueFd data,
              std::shared_ptr<AgentOpState> state)
      : session_(std::move(session)),
        channel_(channel),
        data_(std::move(data)),
        state_(std::move(state)) {}

  ~AgentFileOp() override {
    if (finished_) return;
    // SIGTERM, then SIGKILL, to the tool's process group. The connection stays open until
    // the tool is dead: an end of file before that would let an upload's tool rename a
    // partial file into place.
    Status st = session_->Signal(channel_, SIGTERM);
    if (!st.ok() || !state_->ExitedWithin(kTermGrace)) st = session_->Signal(channel_, SIGKILL);
    if (!st.ok()) spdlog::warn("file operation: {}", st.message());
    (void)state_->Outcome(kExitWait);
  }

  int input_fd() const override { return data_.get(); }
  int output_fd() const override { return data_.get(); }
  void CloseInput() override {
    if (!input_closed_) os::ShutdownSocketWrite(data_.get());
    input_closed_ = true;
  }
  const char* served_by() const override { return "agent"; }
  // As the destructor, within `wait`: SIGTERM, SIGKILL half way. The agent's exit frame
  // follows the tool's end, its data connection closed with it.
  // The signals' sends count against `wait` too: an agent that reads nothing would hold each
  // for the session's send limit.
  bool Abandon(std::chrono::milliseconds wait) override {
    const auto until = std::chrono::steady_clock::now() + wait;
    if (!session_->SignalBefore(channel_, SIGTERM, until).ok()) return false;
    if (state_->ExitedWithin(wait / 2)) return true;
    if (!session_->SignalBefore(channel_, SIGKILL, until).ok()) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    return state_->ExitedWithin(std::max(left, std::chrono::milliseconds(0)));
  }

  Status Finish() override {
    finished_ = true;
    CloseInput();
    data_.reset();
    return state_->Outcome(kExitWait);
  }

 private:
  std::shared_ptr<runtime::AgentSession> session_;
  uint32_t channel_;
  os::UniqueFd data_;
  std::shared_ptr<AgentOpState> state_;
  bool input_closed_ = false;
  bool finished_ = false;
};

}  // namespace

Result<std::unique_ptr<FileOp>> StartExecFileOp(runtime::Runtime& runtime,
                                                const std::string& sandbox_id,
                                                const std::vector<std::string>& argv) {
  runtime::ExecRequest exec;
  exec.sandbox_id = sandbox_id;
  exec.argv = {kAgentPath, "file"};
  exec.argv.insert(exec.argv.end(), argv.begin(), argv.end());
  auto process = runtime.Exec(exec);
  if (!process.ok()) return process.status().WithContext("starting the file operation");
  return std::unique_ptr<FileOp>(
      std::make_unique<ExecFileOp>(runtime, sandbox_id, std::move(*process)));
}

Result<std::unique_ptr<FileOp>> StartAgentFileOp(std::shared_ptr<runtime::AgentSession> session,
                                                 agent::SpawnRequest spawn) {
  auto state = std::make_shared<AgentOpState>();
  // Only the agent, which got the token over its session, can announce this connection.
  spawn.data_token = RandomToken(24);
  ASSIGN_OR_RETURN(uint32_t channel, session->Spawn(spawn, state->Callbacks(state)));
  auto data = session->TakeData(channel, kDataWait);
  if (data.ok())
    return std::unique_ptr<FileOp>(
        std::make_unique<AgentFileOp>(session, channel, std::move(*data), state));
  // No connection, so the tool never ran (the agent dials before it starts the tool): the
  // agent could not take the operation, and runsc exec may still serve it.
  (void)session->Signal(channel, SIGKILL);
  Status outcome = state->Outcome(std::chrono::seconds(1));
  if (!outcome.ok() && outcome.code() == Code::kInternal && outcome.client_message().empty())
    outcome = outcome.WithClientMessage("the sandbox's agent could not start the file operation");
  if (!outcome.ok() && outcome.code() != Code::kUnavailable)
    return outcome.WithCode(Code::kUnavailable);
  return data.status();
}

}  // namespace adapt::core
