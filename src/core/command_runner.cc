#include "core/command_runner.h"

#include <signal.h>

#include <atomic>
#include <thread>

#include "base/log.h"
#include "base/text.h"
#include "base/time.h"
#include "os/process.h"

namespace adapt::core {

struct CommandRunner::Running {
  store::CommandRecord record;
  runtime::ExecProcess process;
  std::vector<std::string> secrets;
  std::chrono::steady_clock::time_point deadline;
  // Guarded by CommandRunner::mu_.
  std::string out, err;
  bool truncated = false;
  std::string kill_reason;  // "killed" or "timeout" once asked
  bool kill_sent = false;
  std::atomic<bool> exited{false};
  os::ExitStatus exit;
};

namespace {

// Appends to a stream's tail, keeping at least the latest kKeptBytesPerStream bytes while
// bounding memory to twice that.
void KeepTail(std::string& buffer, std::string_view data, bool& truncated) {
  constexpr size_t kKeep = CommandRunner::kKeptBytesPerStream;
  buffer.append(data);
  if (buffer.size() > 2 * kKeep) {
    buffer.erase(0, buffer.size() - kKeep);
    truncated = true;
  }
}

std::string Tail(const std::string& buffer, bool& truncated) {
  constexpr size_t kKeep = CommandRunner::kKeptBytesPerStream;
  if (buffer.size() <= kKeep) return buffer;
  truncated = true;
  return buffer.substr(buffer.size() - kKeep);
}

}  // namespace

void ApplyCommandOutput(const std::string& out, const std::string& err, bool truncated,
                        const std::vector<std::string>& secrets, nlohmann::json& data) {
  std::string o = Tail(out, truncated), e = Tail(err, truncated);
  data["stdout"] = Redact(SanitizeUtf8(o), secrets);
  data["stderr"] = Redact(SanitizeUtf8(e), secrets);
  data["truncated"] = truncated;
}

CommandRunner::CommandRunner(store::Store& store, runtime::Runtime& runtime)
    : store_(store), runtime_(runtime) {}

CommandRunner::~CommandRunner() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  for (auto& [_, c] : running_) os::Signal(c->process.pid, SIGKILL);
  changed_.wait(lock, [&] { return threads_ == 0; });
}

void CommandRunner::Start(store::CommandRecord record, runtime::ExecProcess process,
                          std::string stdin_data, int timeout_seconds,
                          std::vector<std::string> secrets) {
  auto c = std::make_shared<Running>();
  c->record = std::move(record);
  c->process = std::move(process);
  c->secrets = std::move(secrets);
  c->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  {
    std::lock_guard lock(mu_);
    running_[c->record.id] = c;
    threads_ += 1;
  }
  // The process may never read its stdin: a writer of its own keeps the watcher free.
  auto in = std::make_shared<os::UniqueFd>(std::move(c->process.stdin_fd));
  if (stdin_data.empty()) {
    in->reset();
  } else {
    std::thread([in, data = std::move(stdin_data)] {
      os::WriteAll(in->get(), data);
      in->reset();
    }).detach();
  }
  std::thread([this, c] { Watch(c); }).detach();
}

void CommandRunner::Watch(std::shared_ptr<Running> c) {
  std::thread waiter([c] {
    auto st = os::Wait(c->process.pid);
    if (st.ok()) c->exit = *st;
    c->exited = true;
  });
  std::vector<os::UniqueFd*> fds = {&c->process.stdout_fd, &c->process.stderr_fd};
  char buf[65536];
  bool drained_after_exit = false;
  while (!drained_after_exit) {
    bool exited = c->exited;
    std::vector<int> open;
    for (auto* f : fds) open.push_back(f->get());
    // After the exit, read what is already there: a background child may keep the pipes open.
    auto ready = os::WaitReadable(open, exited ? 0 : 100);
    bool any = false;
    for (size_t i = 0; ready.ok() && i < fds.size(); ++i) {
      if (open[i] < 0 || !(*ready)[i]) continue;
      auto n = os::ReadSome(open[i], buf, sizeof buf);
      if (!n.ok() || *n == 0) {
        fds[i]->reset();
        continue;
      }
      any = true;
      std::lock_guard lock(mu_);
      KeepTail(i == 0 ? c->out : c->err, std::string_view(buf, *n), c->truncated);
    }
    if (exited && !any) drained_after_exit = true;
    bool kill = false;
    {
      std::lock_guard lock(mu_);
      if (c->kill_reason.empty() && std::chrono::steady_clock::now() >= c->deadline)
        c->kill_reason = "timeout";
      kill = !c->kill_reason.empty() && !c->kill_sent && !exited;
      if (kill) c->kill_sent = true;
      if (stopping_) break;
    }
    if (kill) {
      Status st = runtime_.KillExec(c->record.sandbox_id, c->process.tree_id);
      if (!st.ok()) {
        spdlog::warn("command {}: {}", c->record.id, st.message());
        os::Signal(c->process.pid, SIGKILL);
      }
    }
    if (!exited && fds[0]->get() < 0 && fds[1]->get() < 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!c->exited) os::Signal(c->process.pid, SIGKILL);
  waiter.join();
  Finish(*c);
}

void CommandRunner::Finish(Running& c) {
  std::unique_lock lock(mu_);
  if (!stopping_) {
    auto& d = c.record.data;
    std::string reason = c.kill_reason.empty() ? "exited" : c.kill_reason;
    c.record.status = reason;
    d["status"] = reason;
    d["terminationReason"] = reason;
    d["finishedAt"] = FormatRfc3339(NowMillis());
    const os::ExitStatus& e = c.exit;
    // runsc exec reports a process killed by signal N as exit status 128+N.
    int sig = e.signaled() ? e.signal : 0;
    if (!sig && !c.kill_reason.empty() && e.exit_code > 128 && e.exit_code < 128 + 65)
      sig = e.exit_code - 128;
    d["exitCode"] = sig ? nlohmann::json(nullptr) : nlohmann::json(e.exit_code);
    d["signal"] = sig ? nlohmann::json(sig) : nlohmann::json(nullptr);
    ApplyCommandOutput(c.out, c.err, c.truncated, c.secrets, d);
    lock.unlock();
    Status st = store_.PutCommand(c.record);
    if (!st.ok()) spdlog::error("command {}: {}", c.record.id, st.message());
    runtime_.ForgetExec(c.record.sandbox_id, c.process.tree_id);
    lock.lock();
  }
  running_.erase(c.record.id);
  threads_ -= 1;
  changed_.notify_all();
}

std::optional<store::CommandRecord> CommandRunner::Snapshot(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = running_.find(id);
  if (it == running_.end()) return std::nullopt;
  store::CommandRecord r = it->second->record;
  ApplyCommandOutput(it->second->out, it->second->err, it->second->truncated, it->second->secrets,
                     r.data);
  return r;
}

bool CommandRunner::Kill(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = running_.find(id);
  if (it == running_.end()) return false;
  if (it->second->kill_reason.empty()) it->second->kill_reason = "killed";
  return true;
}

bool CommandRunner::WaitFor(const std::string& id, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return !running_.count(id); });
}

}  // namespace adapt::core
