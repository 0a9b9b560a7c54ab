#include "runtime/runsc_runtime.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "base/background_work.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "os/cgroup.h"
#include "os/durable_file.h"
#include "os/file_in_root.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/process.h"
#include "runtime/checkpoint_refusal.h"
#include "runtime/checkpoint_time_limit.h"
#include "runtime/helpers_layout.h"
#include "runtime/rootfs.h"
#include "runtime/sandbox_spec_files.h"
#include "runtime/security_profile.h"
#include "runtime/statx_fix.h"

namespace adapt::runtime {
namespace {

// Releases up to this one refuse a sandbox netns on kernels where
// /proc/sys/net/core/rmem_default exists in every netns.
constexpr long kLastReleaseNeedingShim = 20221219;
// What runsc may take to delete a sandbox or deliver a signal before it is killed: a stuck
// sandbox must not hold the worker (or the sandbox's lock) that asked for ever.
constexpr std::chrono::milliseconds kRunscDeleteLimit = std::chrono::seconds(60);
constexpr std::chrono::milliseconds kRunscSignalLimit = std::chrono::seconds(30);

bool ShimAlive(const ShimState& s, const std::string& dir) {
  return s.shim_pid > 0 && os::ProcessMatches(static_cast<pid_t>(s.shim_pid), dir);
}

// runsc keeps "<id>_sandbox:<id>.state" (and a .lock) in its root directory.
std::string RunscStateOwner(const std::string& file) {
  auto pos = file.find("_sandbox:");
  return pos == std::string::npos ? "" : file.substr(0, pos);
}

// A lock file of container `id` without its state file: a runsc call that raced the
// container's deletion made it, and `runsc delete` no longer knows the container. Called once
// nothing of runsc runs for `id` any more (its shim and sandbox are gone).
void RemoveStaleRunscLocks(const std::string& state_dir, const std::string& id) {
  const std::string root = state_dir + "/runsc";
  for (const auto& f : os::ListDir(root)) {
    if (RunscStateOwner(f) != id || !f.ends_with(".lock")) continue;
    if (os::Exists(root + "/" + f.substr(0, f.size() - 5) + ".state")) continue;
    IgnoreError(os::RemoveFile(root + "/" + f), "a file left is only reported, not used");
  }
}

bool HasRunscState(const std::string& state_dir, const std::string& id) {
  for (const auto& f : os::ListDir(state_dir + "/runsc")) {
    if (RunscStateOwner(f) == id) return true;
  }
  return false;
}

// The agent's key file: a fresh key for every boot. A restored sandbox's agent comes back
// with the key it had (it lives in the checkpointed memory), so the file stays; the hub
// gives that agent a fresh key as soon as it connects (see AgentHub).
Status EnsureAgentKey(const std::string& dir, bool restore) {
  std::string path = dir + "/" + kAgentKeyFile;
  if (restore && os::Exists(path)) return Status::Ok();
  return os::WriteFileAtomic(path, RandomToken(32), 0600);
}

}  // namespace

RunscRuntime::RunscRuntime(RunscOptions options)
    : options_(std::move(options)),
      disks_(options_.state_dir + "/disk-templates"),
      room_([state_dir = options_.state_dir] { return CheckpointFreeBytes(state_dir); }),
      watcher_(std::make_unique<StateWatcher>(kShimStateFile)) {
  watcher_->SetListener([this](const std::string& id) { OnStateWritten(id); });
}

void RunscRuntime::SetStateListener(std::function<void(const std::string&)> listener) {
  std::lock_guard lock(listener_mu_);
  listener_ = std::move(listener);
}

void RunscRuntime::OnStateWritten(const std::string& id) {
  {
    std::lock_guard lock(state_mu_);
    state_generation_ += 1;
  }
  state_written_.notify_all();
  std::lock_guard lock(listener_mu_);
  if (listener_) listener_(id);
}

uint64_t RunscRuntime::StateGeneration() {
  std::lock_guard lock(state_mu_);
  return state_generation_;
}

Status RunscRuntime::Init() {
  auto r = os::RunCommand({options_.runsc, "--version"});
  if (!r.ok() || r->status.exit_code != 0)
    return Status(Code::kUnavailable,
                  "runsc is not usable at " + options_.runsc +
                      (r.ok() ? ": " + r->output : ": " + r.status().message()));
  std::smatch m;
  std::string out = r->output;
  if (std::regex_search(out, m, std::regex(R"(version\s+(\S+))"))) version_ = m[1];
  std::smatch date;
  if (std::regex_search(version_, date, std::regex(R"((20\d{6}))")))
    needs_netns_shim_ = std::stol(date[1]) <= kLastReleaseNeedingShim;
  RETURN_IF_ERROR(os::MakeDirs(options_.state_dir + "/sandboxes", 0700));
  disks_.RemoveUnfinished();
  RETURN_IF_ERROR(os::MakeDirs(options_.state_dir + "/runsc", 0700));
  OpenCheckpoints();
  RemoveCheckpointLeftovers();
  ResumeSandboxesLeftPaused();
  std::string preload = options_.helpers_dir + "/" + kStatxPreloadName;
  if (!os::Exists(preload)) {
    spdlog::warn("no {} among the helpers: no statx fix for sandboxes", kStatxPreloadName);
    return Status::Ok();
  }
  auto refuses = RunscRefusesNoAutomount(options_.runsc, options_.platform,
                                         options_.state_dir + "/runsc-probe", preload);
  // When the probe cannot tell, the fix stays on: it only ever retries a statx that failed
  // with EINVAL, so it is harmless where it is not needed.
  if (!refuses.ok()) spdlog::warn("{}; sandboxes get the statx fix", refuses.status().message());
  statx_fix_ = !refuses.ok() || *refuses;
  return Status::Ok();
}

Status RunscRuntime::AddStatxFix(const std::string& dir, SandboxSpec& spec) const {
  auto own = os::ReadFileInRoot(spec.rootfs, kLdSoPreloadInSandbox, 64 * 1024);
  if (!own.ok() && own.status().code() != Code::kNotFound)
    return own.status().WithContext("reading the image's " + std::string(kLdSoPreloadInSandbox));
  std::string path = dir + "/ld.so.preload";
  RETURN_IF_ERROR(os::WriteFileAtomic(path, PreloadListWithStatxFix(own.ok() ? *own : ""), 0644));
  spec.ld_so_preload = path;
  return Status::Ok();
}

std::string RunscRuntime::SandboxDir(const std::string& id) const {
  return options_.state_dir + "/sandboxes/" + id;
}

std::vector<std::string> RunscRuntime::GlobalFlags(bool network_none) const {
  // --host-uds=open lets the agent connect to its host socket (bind-mounted in); the flag
  // must be the same on every runsc call for a sandbox, so it is always there.
  return {"--root=" + options_.state_dir + "/runsc", "--platform=" + options_.platform,
          std::string("--network=") + (network_none ? "none" : "sandbox"), "--host-uds=open"};
}

Status RunscRuntime::Launch(const LaunchRequest& req) {
  const std::string& id = req.spec.id;
  std::string dir = SandboxDir(id);
  RETURN_IF_ERROR(os::MakeDirs(dir, 0700));
  std::vector<std::string> lowers(req.image_layers.rbegin(), req.image_layers.rend());
  if (lowers.empty()) lowers.push_back(req.image_rootfs);
  RETURN_IF_ERROR(
      MountRootfs(dir, lowers, req.disk_mib, disks_).WithContext("preparing the root filesystem"));
  SandboxSpec spec = req.spec;
  if (req.complete_spec) {
    Status completed = req.complete_spec(spec);
    if (!completed.ok()) {
      IgnoreError(UnmountRootfs(dir), "undoing a launch whose spec failed; that error is reported");
      return completed;
    }
  }
  ADAPT_FAULT_POINT("runtime.launch.after_rootfs");

  spec.rootfs = RootfsPaths(dir).rootfs;
  // Without storage, /workspace lives in the sandbox's own writable layer and goes with it.
  // The image may have made it a link: it is made inside the image's root, never the host's.
  if (spec.workspace_dir.empty()) {
    Status made = os::MakeDirsInRoot(spec.rootfs, kWorkspaceMount, 0777);
    if (!made.ok()) spdlog::warn("sandbox {}: no /workspace: {}", id, made.message());
  }
  Result<HelpersView> prepared = PrepareHelpers(
      dir, options_.helpers_dir,
      req.restore ? std::optional(RecordedHelpersLayout(CheckpointDir(id))) : std::nullopt);
  if (!prepared.ok()) {
    IgnoreError(UnmountRootfs(dir), "undoing a launch whose helpers failed; that is reported");
    return prepared.status().WithContext("starting sandbox " + id);
  }
  const HelpersView& helpers = *prepared;
  spec.helpers_dir = helpers.host_dir;
  // Only a plain directory is bound: a link there would name a path of the host.
  if (spec.security_profile != kDeveloperProfile) {
    for (const auto& db : PackageDatabaseDirs())
      if (os::PlainDirectoryInRoot(spec.rootfs, db)) spec.read_only_dirs.push_back(db);
  }
  if (statx_fix_) {
    // An image whose own /etc/ld.so.preload cannot be read (a directory, a device) runs
    // as it is, without the fix.
    Status fixed = AddStatxFix(dir, spec);
    if (!fixed.ok()) spdlog::warn("sandbox {}: no statx fix: {}", id, fixed.message());
  }
  std::vector<std::string> agent_argv;
  if (options_.agents && os::Exists(options_.helpers_dir + "/adapt-agent")) {
    // The socket exists before the sandbox starts, so the agent's first connect succeeds.
    Status listening =
        helpers.session_dir.empty() ? Status::Ok() : os::MakeDirs(helpers.session_dir, 0700);
    if (listening.ok()) listening = EnsureAgentKey(dir, req.restore);
    if (listening.ok())
      listening = options_.agents->Listen(id, helpers.host_socket, dir + "/" + kAgentKeyFile);
    if (listening.ok()) {
      spec.session_dir = helpers.session_dir;
      agent_argv = {kAgentBinaryInSandbox, "serve", helpers.socket_in_sandbox,
                    AgentDropCapsFlag(ProfileCapabilities(spec.security_profile))};
    } else {
      spdlog::warn("sandbox {}: no agent: {}", id, listening.message());
    }
  }
  // gVisor boots faster with every core; a restored workload resumes within runsc restore,
  // so its limit stays in the spec.
  spec.cpu_limit_by_shim = !req.restore;
  // An idle init starts the agent itself, as its child: no host-side `runsc exec` (a Go
  // start-up beside the boot) and no window after `running` without an agent.
  bool agent_in_init = spec.process.idle && !agent_argv.empty();
  Status st = WriteSpecFiles(dir, spec, agent_in_init ? agent_argv : std::vector<std::string>{});
  ShimConfig shim{options_.runsc,
                  GlobalFlags(req.network_none),
                  id,
                  dir,
                  needs_netns_shim_ && !req.network_none,
                  agent_argv,
                  req.restore ? CheckpointDir(id) : std::string(),
                  AgentCaps(ProfileCapabilities(spec.security_profile))};
  shim.agent_in_init = agent_in_init;
  if (spec.cpu_limit_by_shim) {
    shim.cpu_quota_us = CpuQuotaUs(spec.cpu);
    shim.cpu_period_us = kCpuPeriodUs;
    shim.idle_init = spec.process.idle;
  }
  if (req.restore && !HasCheckpoint(id)) st = NotFound("sandbox " + id + " has no checkpoint");
  if (st.ok()) st = WriteShimConfig(dir, shim);
  // A restarted sandbox's directory still holds its previous shim's final state, which
  // the wait below would take for this shim's.
  if (st.ok()) st = os::RemoveTree(dir + "/" + kShimStateFile);
  // Before the shim runs: a workload that ends at once is heard too.
  if (st.ok()) watcher_->Watch(id, dir);
  os::SpawnOptions detached;
  detached.new_session = true;
  Result<pid_t> pid =
      st.ok() ? os::Spawn({options_.shim_binary, dir}, detached) : Result<pid_t>(st);
  if (!pid.ok()) {
    if (options_.agents) options_.agents->Close(id);
    IgnoreError(UnmountRootfs(dir), "undoing a failed start; the spawn error is the one reported");
    return pid.status().WithContext("starting the sandbox monitor");
  }
  ADAPT_FAULT_POINT("runtime.launch.after_spawn");
  // The shim is our child until we exit; reap it so it leaves no zombie.
  std::thread(Guarded("sandbox " + id + ": reaping its monitor", [p = *pid] {
    IgnoreError(os::Wait(p), "reaping only; the shim state says how it ended");
  })).detach();

  // A restore reads the sandbox's memory back: its limit grows with it (never under a boot's).
  std::chrono::seconds limit =
      req.restore ? CheckpointTimeLimit(req.spec.memory_mib << 20) : std::chrono::seconds(120);
  auto deadline = std::chrono::steady_clock::now() + limit;
  bool monitor_gone = false;
  while (std::chrono::steady_clock::now() < deadline) {
    uint64_t seen = StateGeneration();
    auto state = ReadShimState(dir);
    if (state.ok() && state->phase != ShimPhase::kStarting) return Status::Ok();
    if (state.ok() && !ShimAlive(*state, dir)) {
      // A shim whose launch failed writes that and exits at once: maybe between the read
      // above and this check.
      auto last = ReadShimState(dir);
      if (last.ok() && last->phase != ShimPhase::kStarting) return Status::Ok();
      monitor_gone = true;
      break;
    }
    // Woken by the next state file any shim writes (sleeping 10 ms between reads cost a
    // create 5 ms on average); the bound covers a host without inotify.
    std::unique_lock lock(state_mu_);
    state_written_.wait_for(lock, std::chrono::milliseconds(10),
                            [&] { return state_generation_ != seen; });
  }
  // Destroy kills the sandbox and its shim, and with them a `runsc restore` that hangs.
  IgnoreError(Destroy(id, true), "undoing a start that failed, which is the error reported");
  if (monitor_gone) return Internal("the sandbox's monitor exited before the sandbox started");
  if (req.restore)
    return Status(Code::kUnavailable, "the sandbox was not restored within " +
                                          std::to_string(limit.count()) + " s (the limit for " +
                                          std::to_string(req.spec.memory_mib) +
                                          " MiB of memory); runsc was killed");
  return Internal("the sandbox did not start within 2 minutes");
}

Result<Observation> RunscRuntime::Observe(const std::string& id) {
  std::string dir = SandboxDir(id);
  Observation obs;
  ASSIGN_OR_RETURN(obs.state, ReadShimState(dir));
  // Sandboxes adopted after a restart get their watch here.
  if (obs.state.phase != ShimPhase::kExited) watcher_->Watch(id, dir);
  obs.monitor_alive = ShimAlive(obs.state, dir);
  auto output = os::ReadFile(dir + "/" + kShimOutputFile);
  if (output.ok()) {
    auto ring = OutputRing::Parse(*output);
    if (ring.ok()) obs.output = std::move(*ring);
  }
  return obs;
}

Status RunscRuntime::Destroy(const std::string& id, bool keep_disk) {
  std::string dir = SandboxDir(id);
  watcher_->Unwatch(id);
  if (options_.agents) options_.agents->Close(id);
  // runsc's global flags must match the ones the sandbox was created with.
  auto shim_config = ReadShimConfig(dir);
  auto flags = shim_config.ok() ? shim_config->global_flags : GlobalFlags(true);
  std::vector<std::string> del{options_.runsc};
  del.insert(del.end(), flags.begin(), flags.end());
  del.insert(del.end(), {"delete", "--force", id});
  auto state = ReadShimState(dir);
  if (state.ok() && ShimAlive(*state, dir)) {
    // Killing the sandbox process is immediate; `runsc delete` would first wait ~2 s for
    // it to stop. The shim then records the exit and runs `runsc delete` itself.
    auto pid = static_cast<pid_t>(state->sandbox_pid);
    if (pid > 0 && os::ProcessMatches(pid, "runsc-sandbox") && os::ProcessMatches(pid, id)) {
      IgnoreError(os::Signal(pid, SIGKILL), "the process may be gone; the wait below decides");
    } else if (pid <= 0 && state->phase != ShimPhase::kExited) {
      // No sandbox process yet (runsc is creating it): runsc delete stops the creation.
      IgnoreError(os::RunCommandWithin(del, kRunscDeleteLimit),
                  "the wait below decides whether the sandbox stopped");
    }
    // Else the sandbox process has ended and the shim, which saw it end, is deleting the
    // container itself: a second `runsc delete` beside it took runsc's lock after the first had
    // removed the container, and left the lock file behind for good.
    for (int i = 0; i < 200 && ShimAlive(*state, dir); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (ShimAlive(*state, dir))
      IgnoreError(os::Signal(static_cast<pid_t>(state->shim_pid), SIGKILL), "last resort");
  }
  ADAPT_FAULT_POINT("runtime.destroy.after_kill");
  if (HasRunscState(options_.state_dir, id))
    IgnoreError(os::RunCommandWithin(del, kRunscDeleteLimit),
                "runsc's own state; the unmount below is what must succeed");
  RemoveStaleRunscLocks(options_.state_dir, id);
  RETURN_IF_ERROR(UnmountRootfs(dir));
  ADAPT_FAULT_POINT("runtime.destroy.after_unmount");
  Status cg = os::RemoveSandboxCgroup(id);
  if (!cg.ok()) spdlog::warn("sandbox {}: {}", id, cg.message());
  if (!keep_disk) {
    RETURN_IF_ERROR(SaveKeptCheckpoints(id));
    // The checkpoints first: a crash between the two leaves the directory, and with it the
    // sandbox for the next Destroy; never a home without a sandbox to say whose it was.
    RETURN_IF_ERROR(os::RemoveTree(CheckpointHome(id)));
    RETURN_IF_ERROR(os::RemoveTree(dir));
  }
  return Status::Ok();
}

std::vector<std::string> RunscRuntime::List() {
  std::vector<std::string> ids = os::ListDir(options_.state_dir + "/sandboxes");
  for (const auto& file : os::ListDir(options_.state_dir + "/runsc")) {
    std::string id = RunscStateOwner(file);
    if (!id.empty() && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

Result<std::vector<std::string>> RunscRuntime::ExecPrefix(const std::string& id) const {
  ASSIGN_OR_RETURN(ShimConfig shim, ReadShimConfig(SandboxDir(id)));
  std::vector<std::string> argv{shim.runsc};
  argv.insert(argv.end(), shim.global_flags.begin(), shim.global_flags.end());
  argv.push_back("exec");
  return argv;
}

Result<std::vector<std::string>> RunscRuntime::RunscVerb(const std::string& id,
                                                         const std::string& verb) const {
  ASSIGN_OR_RETURN(std::vector<std::string> argv, ExecPrefix(id));
  argv.back() = verb;
  argv.push_back(id);
  return argv;
}

Result<ExecDefaults> RunscRuntime::GetExecDefaults(const std::string& sandbox_id) {
  return ReadExecDefaults(SandboxDir(sandbox_id), sandbox_id);
}

std::shared_ptr<AgentSession> RunscRuntime::Agent(const std::string& sandbox_id) {
  return options_.agents ? options_.agents->Session(sandbox_id) : nullptr;
}

std::shared_ptr<AgentSession> RunscRuntime::AgentAfterBoot(const std::string& sandbox_id) {
  return options_.agents ? options_.agents->AwaitFirstSession(sandbox_id) : nullptr;
}

void RunscRuntime::ResumeAgents() {
  if (!options_.agents) return;
  for (const auto& id : os::ListDir(options_.state_dir + "/sandboxes")) {
    std::string dir = SandboxDir(id);
    auto state = ReadShimState(dir);
    auto shim = ReadShimConfig(dir);
    if (!state.ok() || state->phase != ShimPhase::kRunning || !ShimAlive(*state, dir) ||
        !shim.ok() || shim->agent_argv.empty())
      continue;
    HelpersView helpers = ViewOf(RecordedHelpersLayout(dir), dir, options_.helpers_dir);
    Status st = options_.agents->Listen(id, helpers.host_socket, dir + "/" + kAgentKeyFile);
    if (!st.ok()) spdlog::warn("sandbox {}: no agent: {}", id, st.message());
  }
}

Result<ExecProcess> RunscRuntime::Exec(const ExecRequest& req) {
  std::string dir = SandboxDir(req.sandbox_id);
  ASSIGN_OR_RETURN(std::vector<std::string> argv, ExecPrefix(req.sandbox_id));
  ExecProcess proc;
  proc.tree_id = NewId("exec");
  std::string pid_file = dir + "/" + proc.tree_id + ".pid";
  // The process is described in a file (0600, in the sandbox's 0700 directory), not on
  // runsc's command line, which every host user reads in /proc: its environment may hold
  // secrets. ForgetExec removes it.
  std::string process_file = dir + "/" + proc.tree_id + ".process.json";
  ASSIGN_OR_RETURN(std::string process, ExecProcessSpec(dir, req));
  RETURN_IF_ERROR(os::WriteFileAtomic(process_file, process, 0600));
  argv.push_back("--internal-pid-file=" + pid_file);
  argv.push_back("--process=" + process_file);
  argv.push_back(req.sandbox_id);

  ASSIGN_OR_RETURN(os::Pipe in, os::MakePipe());
  ASSIGN_OR_RETURN(os::Pipe out, os::MakePipe());
  ASSIGN_OR_RETURN(os::Pipe err, os::MakePipe());
  os::SpawnOptions o;
  o.stdin_fd = in.read.get();
  o.stdout_fd = out.write.get();
  o.stderr_fd = err.write.get();
  ASSIGN_OR_RETURN(pid_t pid, os::Spawn(argv, o));
  proc.pid = pid;
  proc.stdin_fd = std::move(in.write);
  proc.stdout_fd = std::move(out.read);
  proc.stderr_fd = std::move(err.read);
  return proc;
}

Status RunscRuntime::KillExec(const std::string& sandbox_id, const std::string& tree_id) {
  return SendExecSignal(sandbox_id, tree_id, SIGKILL, true);
}

Status RunscRuntime::TerminateExec(const std::string& sandbox_id, const std::string& tree_id) {
  return SendExecSignal(sandbox_id, tree_id, SIGTERM, true);
}

Status RunscRuntime::SignalExec(const std::string& sandbox_id, const std::string& tree_id,
                                int signal) {
  return SendExecSignal(sandbox_id, tree_id, signal, false);
}

Status RunscRuntime::SendExecSignal(const std::string& sandbox_id, const std::string& tree_id,
                                    int signal, bool group) {
  if (!IsValidId(tree_id, "exec")) return InvalidArgument("tree_id", "not an exec id");
  std::string pid_file = SandboxDir(sandbox_id) + "/" + tree_id + ".pid";
  Result<std::string> text = NotFound("");
  for (int i = 0; i < 100; ++i) {
    text = os::ReadFile(pid_file);
    if (text.ok() && !text->empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!text.ok() || text->find_first_not_of("0123456789\n") != std::string::npos)
    return NotFound("the process has no recorded pid");
  std::string pid = text->substr(0, text->find('\n'));
  if (pid.empty() || pid == "0" || pid == "1") return NotFound("the process has no recorded pid");
  ASSIGN_OR_RETURN(std::vector<std::string> argv, ExecPrefix(sandbox_id));
  // Every runsc exec process leads its own process group inside the sandbox; killing the
  // group reaches the children it started in the background.
  std::string sig = std::to_string(signal);
  argv.insert(argv.end(),
              {"--user=0:0", sandbox_id, "/bin/sh", "-c",
               "kill -" + sig + " " + (group ? "-" + pid + " " : "") + pid + " 2>/dev/null; true"});
  // Bounded, as every runsc call that a stuck sandbox can hang: a signal is asked for on an
  // API worker.
  auto r = os::RunCommandWithin(argv, kRunscSignalLimit);
  if (!r.ok() || r->timed_out || r->status.exit_code != 0) {
    ASSIGN_OR_RETURN(ShimConfig shim, ReadShimConfig(SandboxDir(sandbox_id)));
    std::vector<std::string> kill{shim.runsc};
    kill.insert(kill.end(), shim.global_flags.begin(), shim.global_flags.end());
    kill.insert(kill.end(), {"kill", "--pid=" + pid, sandbox_id, sig});
    RETURN_IF_ERROR(os::RunCheckedWithin(kill, kRunscSignalLimit));
  }
  return Status::Ok();
}

Status RunscRuntime::Checkpoint(const std::string& id) {
  std::string dir = SandboxDir(id);
  ASSIGN_OR_RETURN(ShimState state, ReadShimState(dir));
  if (state.phase != ShimPhase::kRunning || !ShimAlive(state, dir))
    return Status(Code::kConflict, "sandbox " + id + " is not running");
  RETURN_IF_ERROR(CheckpointStoreReady().WithContext("checkpointing sandbox " + id));
  ASSIGN_OR_RETURN(ShimConfig shim, ReadShimConfig(dir));
  // The image is written beside the final one and renamed when complete, so that a crash
  // mid-way never leaves a partial image that HasCheckpoint would take for a good one.
  std::string image = CheckpointDir(id), partial = image + ".partial";
  RETURN_IF_ERROR(os::RemoveTree(image));
  RETURN_IF_ERROR(os::RemoveTree(partial));
  RETURN_IF_ERROR(os::MakeDirs(partial, 0700));
  ADAPT_FAULT_POINT("runtime.checkpoint.begin");
  std::vector<std::string> argv{shim.runsc};
  argv.insert(argv.end(), shim.global_flags.begin(), shim.global_flags.end());
  argv.insert(argv.end(), {"checkpoint", "--image-path=" + partial, id});
  // The agent's connection is closed first: the agent then waits to reconnect, which it
  // does to the listener that Launch makes when the sandbox is restored.
  // A checkpoint holding a connected host socket would restore a dead connection, so this
  // waits for the agent to drop its end; an agent that does not is waited on 300 ms at most.
  if (options_.agents) options_.agents->Hangup(id, std::chrono::milliseconds(300));
  auto memory = ReadMemoryLimit(dir, id);
  std::chrono::seconds limit = options_.checkpoint_time_limit.value_or(
      CheckpointTimeLimit(memory.ok() ? *memory : kCheckpointUnknownMemoryBytes));
  auto r = os::RunCommandWithin(argv, limit);
  if (!r.ok()) return r.status().WithContext("checkpointing sandbox " + id);
  if (r->timed_out) {
    IgnoreError(os::RemoveTree(partial), "a later checkpoint replaces the partial image");
    std::string whose = memory.ok() && !options_.checkpoint_time_limit
                            ? " (the limit for " + std::to_string(*memory >> 20) + " MiB of memory)"
                            : "";
    // The caller releases the sandbox, whatever state the killed save left it in.
    return Status(Code::kUnavailable, "checkpointing sandbox " + id + " did not finish within " +
                                          std::to_string(limit.count()) + " s" + whose +
                                          "; runsc was killed");
  }
  if (r->status.signaled() || r->status.exit_code != 0) {
    IgnoreError(os::RemoveTree(partial), "a later checkpoint replaces the partial image");
    std::string out = r->output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    // A refusal is not retried: this runsc tears the sandbox down when its save fails.
    if (auto refusal = ParseCheckpointRefusal(out))
      return Status(Code::kUnsupported, refusal->sentence);
    return Internal("checkpointing sandbox " + id + " failed: " + out);
  }
  ADAPT_FAULT_POINT("runtime.checkpoint.after_runsc");
  // Its restore needs the mounts the sandbox has now.
  RETURN_IF_ERROR(RecordHelpersLayout(partial, RecordedHelpersLayout(dir)));
  RETURN_IF_ERROR(os::Rename(partial, image));
  ADAPT_FAULT_POINT("runtime.checkpoint.after_rename");
  // runsc stops the sandbox after a checkpoint; its shim records that and exits.
  for (int i = 0; i < 1000 && ShimAlive(state, dir); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return Status::Ok();
}

bool RunscRuntime::HasCheckpoint(const std::string& id) {
  return os::Exists(CheckpointDir(id) + "/checkpoint.img");
}

uint64_t RunscRuntime::CheckpointBytes(const std::string& id) {
  return os::TreeBytes(CheckpointDir(id)) + os::TreeBytes(CheckpointDir(id) + ".partial");
}

void RunscRuntime::DiscardCheckpoint(const std::string& id) {
  // A leftover image is overwritten by the next checkpoint.
  IgnoreError(os::RemoveTree(CheckpointDir(id)), "discarding a checkpoint");
  IgnoreError(os::RemoveTree(CheckpointDir(id) + ".partial"), "discarding a checkpoint");
}

void RunscRuntime::ForgetExec(const std::string& sandbox_id, const std::string& tree_id) {
  if (!IsValidId(tree_id, "exec")) return;
  IgnoreError(os::RemoveTree(SandboxDir(sandbox_id) + "/" + tree_id + ".pid"),
              "forgetting an exec");
  IgnoreError(os::RemoveTree(SandboxDir(sandbox_id) + "/" + tree_id + ".process.json"),
              "forgetting an exec");
}

}  // namespace adapt::runtime
