#include "runtime/fake_runtime.h"

#include <algorithm>
#include <csignal>
#include <stdexcept>

#include "base/time.h"
#include "os/files.h"
#include "os/process.h"

namespace adapt::runtime {

std::optional<Status> FakeRuntime::TakeFailureLocked(Op op) {
  if (auto thrown = throws_.find(op); thrown != throws_.end() && !thrown->second.empty()) {
    std::string what = std::move(thrown->second.front());
    thrown->second.pop_front();
    throw std::runtime_error(what);
  }
  auto it = failures_.find(op);
  if (it == failures_.end() || it->second.empty()) return std::nullopt;
  Status st = it->second.front();
  it->second.pop_front();
  return st;
}

Status FakeRuntime::Launch(const LaunchRequest& request) {
  const std::string& id = request.spec.id;
  {
    std::lock_guard lock(mu_);
    calls_.push_back({Op::kLaunch, id, false, request.restore});
    if (auto failure = TakeFailureLocked(Op::kLaunch)) return *failure;
  }
  // Where RunscRuntime calls it: once the root filesystem would be made. Outside the lock:
  // the caller's completion may wait on its own work.
  LaunchRequest launched = request;
  if (launched.complete_spec) RETURN_IF_ERROR(launched.complete_spec(launched.spec));
  launched.complete_spec = nullptr;
  std::lock_guard lock(mu_);
  Sandbox& s = sandboxes_[id];
  s.request = std::move(launched);
  s.state = ShimState{};
  s.state.phase = ShimPhase::kRunning;
  s.state.started_at = NowMillis();
  s.monitor_alive = true;
  s.released = false;
  return Status::Ok();
}

Result<Observation> FakeRuntime::Observe(const std::string& id) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kObserve, id, false, false});
  if (auto failure = TakeFailureLocked(Op::kObserve)) return *failure;
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return NotFound("sandbox " + id + " has no runtime state");
  Observation obs;
  obs.state = it->second.state;
  obs.monitor_alive = it->second.monitor_alive;
  obs.output = it->second.output;
  return obs;
}

Status FakeRuntime::Destroy(const std::string& id, bool keep_disk) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kDestroy, id, keep_disk, false});
  if (auto failure = TakeFailureLocked(Op::kDestroy)) return *failure;
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return Status::Ok();  // idempotent, as the real one
  if (!keep_disk) {
    for (const auto& c : it->second.named)
      if (c.keep) kept_[id].push_back(c);
    sandboxes_.erase(it);
    return Status::Ok();
  }
  Sandbox& s = it->second;
  // The real runtime kills the sandbox; its shim records the kill as the exit.
  if (s.state.phase == ShimPhase::kRunning || s.state.phase == ShimPhase::kStarting) {
    s.state.phase = ShimPhase::kExited;
    s.state.signal = SIGKILL;
    s.state.finished_at = NowMillis();
  }
  s.monitor_alive = false;
  s.released = true;
  return Status::Ok();
}

Result<ExecProcess> FakeRuntime::Exec(const ExecRequest& request) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kExec, request.sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kExec)) return *failure;
  if (exec_stand_ins_.empty())
    return Status(Code::kUnsupported, "the fake runtime starts no processes");
  std::vector<std::string> argv = std::move(exec_stand_ins_.front());
  exec_stand_ins_.pop_front();
  ASSIGN_OR_RETURN(os::Pipe in, os::MakePipe());
  ASSIGN_OR_RETURN(os::Pipe out, os::MakePipe());
  ASSIGN_OR_RETURN(os::Pipe err, os::MakePipe());
  os::SpawnOptions options;
  options.stdin_fd = in.read.get();
  options.stdout_fd = out.write.get();
  options.stderr_fd = err.write.get();
  ASSIGN_OR_RETURN(pid_t pid, os::Spawn(argv, options));
  ExecProcess process;
  process.pid = pid;
  process.stdin_fd = std::move(in.write);
  process.stdout_fd = std::move(out.read);
  process.stderr_fd = std::move(err.read);
  process.tree_id = "fake-exec-" + std::to_string(pid);
  return process;
}

void FakeRuntime::ServeNextExec(std::vector<std::string> argv) {
  std::lock_guard lock(mu_);
  exec_stand_ins_.push_back(std::move(argv));
}

Status FakeRuntime::KillExec(const std::string& sandbox_id, const std::string& /*tree_id*/) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kKillExec, sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kKillExec)) return *failure;
  return Status::Ok();
}

Status FakeRuntime::TerminateExec(const std::string& /*sandbox_id*/,
                                  const std::string& /*tree_id*/) {
  return Status::Ok();
}

Status FakeRuntime::SignalExec(const std::string& /*sandbox_id*/, const std::string& tree_id,
                               int /*signal*/) {
  return NotFound("exec " + tree_id + " has no recorded pid");
}

void FakeRuntime::ForgetExec(const std::string& /*sandbox_id*/, const std::string& /*tree_id*/) {}

std::vector<std::string> FakeRuntime::List() {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, _] : sandboxes_) ids.push_back(id);
  return ids;
}

void FakeRuntime::PauseIfHeldLocked(std::unique_lock<std::mutex>& lock, Op op) {
  if (!hold_next_.erase(op)) return;
  holding_.insert(op);
  held_changed_.notify_all();
  held_changed_.wait(lock, [&] { return !holding_.count(op); });
}

void FakeRuntime::HoldNext(Op op) {
  std::lock_guard lock(mu_);
  hold_next_.insert(op);
}

void FakeRuntime::WaitUntilHeld(Op op) {
  std::unique_lock lock(mu_);
  held_changed_.wait(lock, [&] { return holding_.count(op) > 0; });
}

void FakeRuntime::ReleaseHeld(Op op) {
  std::lock_guard lock(mu_);
  holding_.erase(op);
  held_changed_.notify_all();
}

Status FakeRuntime::Checkpoint(const std::string& sandbox_id) {
  std::unique_lock lock(mu_);
  calls_.push_back({Op::kCheckpoint, sandbox_id, false, false});
  PauseIfHeldLocked(lock, Op::kCheckpoint);
  if (auto failure = TakeFailureLocked(Op::kCheckpoint)) return *failure;
  auto it = sandboxes_.find(sandbox_id);
  if (it == sandboxes_.end() || !it->second.monitor_alive)
    return Status(Code::kConflict, "sandbox " + sandbox_id + " is not running");
  it->second.checkpoint = true;
  it->second.state.phase = ShimPhase::kExited;
  it->second.monitor_alive = false;
  return Status::Ok();
}

bool FakeRuntime::HasCheckpoint(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(sandbox_id);
  return it != sandboxes_.end() && it->second.checkpoint;
}

void FakeRuntime::DiscardCheckpoint(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(sandbox_id);
  if (it != sandboxes_.end()) it->second.checkpoint = false;
}

Status FakeRuntime::ExportWritableLayer(const std::string& sandbox_id, const std::string& dest) {
  {
    std::lock_guard lock(mu_);
    calls_.push_back({Op::kExportLayer, sandbox_id, false, false});
    if (auto failure = TakeFailureLocked(Op::kExportLayer)) return *failure;
    if (!sandboxes_.count(sandbox_id))
      return Status(Code::kConflict, "sandbox " + sandbox_id + " has no writable layer");
  }
  RETURN_IF_ERROR(os::MakeDirs(dest, 0755));
  return os::WriteFileAtomic(dest + "/fake-layer", sandbox_id, 0644);
}

std::vector<NamedCheckpoint>* FakeRuntime::NamedLocked(const std::string& id) {
  auto it = sandboxes_.find(id);
  if (it != sandboxes_.end()) return &it->second.named;
  auto kept = kept_.find(id);
  return kept == kept_.end() ? nullptr : &kept->second;
}

std::vector<std::string> FakeRuntime::SandboxesWithKeptCheckpoints() {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, named] : kept_)
    if (!named.empty()) ids.push_back(id);
  return ids;
}

Status FakeRuntime::KeepCheckpoint(const std::string& sandbox_id, const std::string& name,
                                   bool keep) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kKeepCheckpoint, sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kKeepCheckpoint)) return *failure;
  auto it = sandboxes_.find(sandbox_id);
  if (it == sandboxes_.end() || !it->second.checkpoint)
    return NotFound("sandbox " + sandbox_id + " has no checkpoint to keep");
  for (const auto& c : it->second.named)
    if (c.name == name) return Conflict("checkpoint '" + name + "' exists");
  NamedCheckpoint c;
  c.name = name;
  c.bytes = named_bytes_;
  c.created_at = static_cast<int64_t>(it->second.named.size());
  c.keep = keep;
  it->second.named.push_back(c);
  return Status::Ok();
}

Status FakeRuntime::ReinstateCheckpoint(const std::string& sandbox_id, const std::string& name) {
  std::unique_lock lock(mu_);
  calls_.push_back({Op::kReinstateCheckpoint, sandbox_id, false, false});
  PauseIfHeldLocked(lock, Op::kReinstateCheckpoint);
  if (auto failure = TakeFailureLocked(Op::kReinstateCheckpoint)) return *failure;
  auto it = sandboxes_.find(sandbox_id);
  if (it != sandboxes_.end())
    for (const auto& c : it->second.named)
      if (c.name == name) {
        if (!c.incompatibility.empty()) return Status(Code::kUnsupported, c.incompatibility);
        it->second.checkpoint = true;
        it->second.reinstated = name;
        return Status::Ok();
      }
  return NotFound("sandbox " + sandbox_id + " has no checkpoint '" + name + "'");
}

Status FakeRuntime::SeedFromCheckpoint(const std::string& sandbox_id, const std::string& source_id,
                                       const std::string& name) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kSeedCheckpoint, sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kSeedCheckpoint)) return *failure;
  if (sandboxes_.count(sandbox_id)) return Status::Ok();  // seeded (and launched) before
  if (auto* named = NamedLocked(source_id))
    for (const auto& c : *named)
      if (c.name == name) {
        if (!c.incompatibility.empty()) return Status(Code::kUnsupported, c.incompatibility);
        Sandbox& s = sandboxes_[sandbox_id];
        s.released = true;
        s.checkpoint = true;
        s.seeded_from = source_id + "/" + name;
        return Status::Ok();
      }
  return NotFound("sandbox " + source_id + " has no checkpoint '" + name + "'");
}

void FakeRuntime::MarkIncompatible(const std::string& sandbox_id, const std::string& name,
                                   const std::string& why) {
  std::lock_guard lock(mu_);
  if (auto* named = NamedLocked(sandbox_id))
    for (auto& c : *named)
      if (c.name == name) c.incompatibility = why;
}

Result<std::shared_ptr<void>> FakeRuntime::ReserveRoomToCheckpoint(const std::string& sandbox_id,
                                                                   uint64_t /*memory_bytes*/) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kReserveRoom, sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kReserveRoom)) return *failure;
  return std::shared_ptr<void>();
}

Result<std::shared_ptr<void>> FakeRuntime::ReserveRoomToReinstate(const std::string& sandbox_id,
                                                                  const std::string& /*name*/) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kReserveRoom, sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kReserveRoom)) return *failure;
  return std::shared_ptr<void>();
}

Result<std::shared_ptr<void>> FakeRuntime::ReserveRoomToHibernate(const std::string& sandbox_id,
                                                                  uint64_t /*memory_bytes*/) {
  std::lock_guard lock(mu_);
  calls_.push_back({Op::kReserveRoom, sandbox_id, false, false});
  if (auto failure = TakeFailureLocked(Op::kReserveRoom)) return *failure;
  return std::shared_ptr<void>();
}

Status FakeRuntime::DeleteNamedCheckpoint(const std::string& sandbox_id, const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto* named = NamedLocked(sandbox_id))
    for (auto c = named->begin(); c != named->end(); ++c)
      if (c->name == name) {
        named->erase(c);
        return Status::Ok();
      }
  return NotFound("sandbox " + sandbox_id + " has no checkpoint '" + name + "'");
}

std::vector<NamedCheckpoint> FakeRuntime::ListNamedCheckpoints(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  auto* named = NamedLocked(sandbox_id);
  return named ? *named : std::vector<NamedCheckpoint>{};
}

void FakeRuntime::SetNamedCheckpointBytes(uint64_t bytes) {
  std::lock_guard lock(mu_);
  named_bytes_ = bytes;
}

void FakeRuntime::FailNext(Op op, Status status) {
  std::lock_guard lock(mu_);
  failures_[op].push_back(std::move(status));
}

void FakeRuntime::ThrowNext(Op op, std::string what) {
  std::lock_guard lock(mu_);
  throws_[op].push_back(std::move(what));
}

void FakeRuntime::AddRunning(const std::string& id) {
  std::lock_guard lock(mu_);
  Sandbox& s = sandboxes_[id];
  s.state = ShimState{};
  s.state.phase = ShimPhase::kRunning;
  s.state.started_at = NowMillis();
  s.monitor_alive = true;
  s.released = false;
}

void FakeRuntime::AddStopped(const std::string& id) {
  std::lock_guard lock(mu_);
  Sandbox& s = sandboxes_[id];
  s.state = ShimState{};
  s.state.phase = ShimPhase::kStarting;
  s.monitor_alive = false;
}

void FakeRuntime::Print(const std::string& id, Stream stream, std::string_view data) {
  std::lock_guard lock(mu_);
  sandboxes_[id].output.Append(stream, data);
}

void FakeRuntime::Exit(const std::string& id, int exit_code, std::optional<int> signal,
                       bool oom_killed) {
  std::lock_guard lock(mu_);
  Sandbox& s = sandboxes_[id];
  s.state.phase = ShimPhase::kExited;
  s.state.exit_code = signal ? std::nullopt : std::optional<int>(exit_code);
  s.state.signal = signal;
  s.state.oom_killed = oom_killed;
  s.state.finished_at = NowMillis();
  s.monitor_alive = false;
}

void FakeRuntime::LoseMonitor(const std::string& id) {
  std::lock_guard lock(mu_);
  sandboxes_[id].monitor_alive = false;
}

std::vector<FakeRuntime::Call> FakeRuntime::calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

int FakeRuntime::CountCalls(Op op, const std::string& id) {
  std::lock_guard lock(mu_);
  return static_cast<int>(std::count_if(calls_.begin(), calls_.end(), [&](const Call& c) {
    return c.op == op && (id.empty() || c.sandbox_id == id);
  }));
}

bool FakeRuntime::Has(const std::string& id) {
  std::lock_guard lock(mu_);
  return sandboxes_.count(id) > 0;
}

bool FakeRuntime::Running(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(id);
  return it != sandboxes_.end() && !it->second.released && it->second.monitor_alive &&
         it->second.state.phase == ShimPhase::kRunning;
}

std::optional<FakeRuntime::Sandbox> FakeRuntime::Get(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace adapt::runtime
