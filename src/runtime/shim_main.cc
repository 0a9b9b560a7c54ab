// adapt-shim: holds one sandbox's standard output and error, and its exit status.
//
// adaptd starts one shim per sandbox in its own session, so the shim (and the sandbox)
// outlive an adaptd that is killed. The shim runs `runsc run --detach` (or `create` and
// `start`) with pipes as the workload's stdout/stderr, then keeps the latest output in an
// OutputRing that it persists to a file. It is a child subreaper: the runsc sandbox process becomes
// its child when `runsc run` exits, so its wait status (the workload's exit status) is
// the shim's to collect, which `runsc wait` cannot report once the sandbox has gone.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/ignore_error.h"
#include "base/time.h"
#include "os/cgroup.h"
#include "os/files.h"
#include "os/process.h"
#include "os/unique_fd.h"
#include "runtime/output_ring.h"
#include "runtime/shim_state.h"

namespace adapt::runtime {
namespace {

constexpr int64_t kPersistIntervalMs = 200;

struct Shim {
  std::string dir;
  ShimConfig config;
  ShimState state;
  OutputRing ring;
  bool ring_dirty = false;
  int64_t last_persist = 0;
  // The `runsc exec` that starts the agent, until it is let go (see ReleaseAgentExec).
  pid_t agent_exec = 0;

  std::vector<std::string> Runsc(std::vector<std::string> args) const {
    std::vector<std::string> argv{config.runsc};
    argv.insert(argv.end(), config.global_flags.begin(), config.global_flags.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  void PersistOutput() {
    IgnoreError(os::WriteFileAtomic(dir + "/" + kShimOutputFile, ring.Serialize(), 0600),
                "the output is persisted again at the next flush");
    ring_dirty = false;
    last_persist = NowMillis();
  }

  void Publish() {
    IgnoreError(WriteShimState(dir, state),
                "the shim has no one to tell; adaptd sees a stale state");
  }

  void ForceDelete() {
    auto pid = os::Spawn(Runsc({"delete", "--force", config.container_id}), {});
    if (!pid.ok()) return;
    // Every child is reaped meanwhile: the gofer (ours, the shim being a subreaper) exits
    // after the sandbox, and as a zombie it looks alive to `runsc delete`, which then waits
    // 5 s for it to go.
    for (;;) {
      int ws = 0;
      pid_t reaped = ::waitpid(-1, &ws, 0);
      if (reaped == *pid || (reaped < 0 && errno != EINTR)) return;
    }
  }

  int LaunchFailed(std::string error) {
    while (!error.empty() && (error.back() == '\n' || error.back() == ' ')) error.pop_back();
    state.phase = ShimPhase::kLaunchFailed;
    state.error = error.empty() ? "the sandbox could not be started" : error;
    state.finished_at = NowMillis();
    ForceDelete();
    PersistOutput();
    Publish();
    return 0;
  }

  // Reads whatever is available on `fd` into the ring; false on EOF or error.
  bool Drain(int fd, Stream stream) {
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    ring.Append(stream, std::string_view(buf, static_cast<size_t>(n)));
    ring_dirty = true;
    return true;
  }

  void RecordExit(int wait_status) {
    state.finished_at = NowMillis();
    if (WIFSIGNALED(wait_status)) {
      state.signal = WTERMSIG(wait_status);
      state.exit_code = 128 + *state.signal;
    } else {
      int code = WEXITSTATUS(wait_status);
      state.exit_code = code;
      // runsc's sandbox process exits 128+N when the workload died of signal N.
      if (code > 128 && code <= 128 + 64) state.signal = code - 128;
    }
    // Read before `runsc delete` removes the cgroup: the sandbox's sentry is a host process
    // in it, and the kernel kills it when the sandbox's memory reaches memoryMiB.
    state.oom_killed = os::SandboxOomKills(config.container_id) > 0;
  }

  // Starts the agent beside the workload, without waiting for it. The agent is not the
  // workload: its failure changes nothing of the sandbox, commands then fall back to
  // `runsc exec`.
  void StartAgent() {
    if (config.agent_argv.empty() || config.agent_in_init) return;
    // The workload's capabilities, plus what switching to a command's user takes; the
    // agent drops the extra ones in every command it starts.
    std::vector<std::string> caps = config.agent_caps;
    if (caps.empty())
      caps = {"CAP_AUDIT_WRITE", "CAP_KILL",   "CAP_NET_BIND_SERVICE",
              "CAP_SETUID",      "CAP_SETGID", "CAP_SETPCAP"};
    // runsc writes this file once the agent runs in the sandbox, before it waits for it.
    IgnoreError(os::RemoveTree(AgentExecPidFile()), "a stale file would only free it early");
    std::vector<std::string> args{"exec", "--user=0:0", "--cwd=/",
                                  "--pid-file=" + AgentExecPidFile()};
    for (const auto& cap : caps) args.push_back("--cap=" + cap);
    args.push_back(config.container_id);
    args.insert(args.end(), config.agent_argv.begin(), config.agent_argv.end());
    // The agent's key reaches it on its stdin (a pipe runsc passes in), read and closed
    // before it does anything: not in argv or the environment, where the sandbox sees them.
    os::UniqueFd key = AgentKeyPipe();
    if (!key) return;
    os::SpawnOptions opts;
    opts.stdin_fd = key.get();
    auto pid = os::Spawn(Runsc(args), opts);
    if (!pid.ok()) {
      std::fprintf(stderr, "adapt-shim: %s\n", pid.status().message().c_str());
      return;
    }
    agent_exec = *pid;
  }

  // The read end of a pipe that holds the agent's key and then ends, for the agent's stdin
  // (its `runsc exec`'s, or the init's that starts it); -1 without a key (no agent then, and
  // commands use `runsc exec`). A key is a few dozen bytes: the pipe's buffer takes it
  // without blocking.
  os::UniqueFd AgentKeyPipe() const {
    auto key = os::ReadFile(dir + "/" + kAgentKeyFile);
    auto pipe = os::MakePipe();
    if (!key.ok() || !pipe.ok()) {
      std::fprintf(stderr, "adapt-shim: no key for the agent\n");
      return os::UniqueFd();
    }
    // The file's first line (a second is a key the hub is handing over, see AgentHub).
    Status sent = os::WriteAll(pipe->write.get(), key->substr(0, key->find('\n')));
    if (!sent.ok()) std::fprintf(stderr, "adapt-shim: %s\n", sent.message().c_str());
    return std::move(pipe->read);
  }

  std::string AgentExecPidFile() const { return dir + "/agent-exec.pid"; }

  // A workload that ends before its agent has started leaves the agent's `runsc exec` running:
  // it would take runsc's lock on the container after `runsc delete` removed it, and leave the
  // lock file behind. Stopped and reaped before the delete (still our child: the pid is ours).
  void StopAgentExec() {
    if (agent_exec <= 0) return;
    IgnoreError(os::Signal(agent_exec, SIGKILL), "it may have just exited; reaped below");
    while (::waitpid(agent_exec, nullptr, 0) < 0 && errno == EINTR) {
    }
    agent_exec = 0;
  }

  // The agent, once started, lives in the sandbox on its own (as a restored one does): the
  // host-side `runsc exec` would only wait for it, holding some 4 MiB per sandbox. It is
  // killed (SIGKILL: it forwards the signals it can catch to the agent) once runsc says the
  // agent runs; the sandbox's own wait for the agent goes on inside it and reaps it.
  void ReleaseAgentExec() {
    if (agent_exec <= 0 || !os::Exists(AgentExecPidFile())) return;
    // Still our unreaped child (the loop forgets it when reaped): the pid is not reused.
    IgnoreError(os::Signal(agent_exec, SIGKILL), "it may have just exited; reaped either way");
    agent_exec = 0;
  }

  // Boots the sandbox with the workload's stdio the pipes: `runsc run --detach` (created and
  // started by one runsc; a second, `runsc start`, costs its own start-up), or, when the
  // shim sets the CPU limit and the workload is the tenant's, `runsc create`, the limit,
  // then `runsc start`, so nothing of the workload runs unlimited. Returns the failure in
  // runsc's words, empty on success.
  std::string CreateAndStart(os::UniqueFd& out_w, os::UniqueFd& err_w, int err_r,
                             const std::string& pid_file) {
    bool limit = config.cpu_quota_us > 0;
    bool split = limit && !config.idle_init;
    std::vector<std::string> args{split ? "create" : "run"};
    if (!split) args.push_back("--detach");
    args.insert(args.end(),
                {"--bundle", config.bundle, "--pid-file", pid_file, config.container_id});
    os::SpawnOptions run_opts;
    run_opts.stdout_fd = out_w.get();
    run_opts.stderr_fd = err_w.get();
    // runsc sets up the sandbox's network at start: the /proc/sys/net shim covers it.
    run_opts.hide_proc_sys_net = config.hide_proc_sys_net;
    os::UniqueFd key = config.agent_in_init ? AgentKeyPipe() : os::UniqueFd();
    run_opts.stdin_fd = key.get();
    auto run = os::Spawn(Runsc(args), run_opts);
    key.reset();
    if (!run.ok()) return run.status().message();
    auto ran = os::Wait(*run);
    if (!ran.ok() || ran->signaled() || ran->exit_code != 0) {
      out_w.reset();
      err_w.reset();
      // runsc destroys what it half-made, which closes the pipe; a sandbox process left
      // holding it (runsc killed) only costs the wait for its silence.
      ::fcntl(err_r, F_SETFL, O_NONBLOCK);
      for (;;) {
        struct pollfd readable = {err_r, POLLIN, 0};
        if (::poll(&readable, 1, 200) <= 0 || !Drain(err_r, Stream::kStderr)) break;
      }
      std::string msg = ring.Text(Stream::kStderr);
      ring = OutputRing();
      return msg.empty() ? "runsc " + args[0] + " failed" : msg;
    }
    ReadSandboxPid(pid_file);
    if (limit) {
      Status set =
          os::SetSandboxCpuLimit(config.container_id, config.cpu_quota_us, config.cpu_period_us);
      if (!set.ok()) return "setting the sandbox's CPU limit: " + set.message();
    }
    if (!split) return "";
    os::SpawnOptions start_opts;
    start_opts.hide_proc_sys_net = config.hide_proc_sys_net;
    auto started = os::RunCommand(Runsc({"start", config.container_id}), start_opts);
    if (!started.ok()) return started.status().message();
    if (started->status.signaled() || started->status.exit_code != 0)
      return started->output.empty() ? "runsc start failed" : started->output;
    return "";
  }

  // `runsc restore --detach`: the checkpointed processes continue, their stdio now the
  // pipes. Same flags and /proc/sys/net shim as create, so the same netns is accepted.
  std::string Restore(int out_w, int err_w, const std::string& pid_file) {
    os::SpawnOptions opts;
    opts.stdout_fd = out_w;
    opts.stderr_fd = err_w;
    opts.hide_proc_sys_net = config.hide_proc_sys_net;
    std::string log = dir + "/restore.log";
    IgnoreError(os::RemoveTree(log), "runsc overwrites an old log");
    auto restore = os::Spawn(
        Runsc({"restore", "--detach", "--bundle", config.bundle, "--pid-file", pid_file,
               "--image-path", config.restore_image, "--user-log", log, config.container_id}),
        opts);
    if (!restore.ok()) return restore.status().message();
    auto restored = os::Wait(*restore);
    if (!restored.ok() || restored->signaled() || restored->exit_code != 0) {
      auto text = os::ReadFile(log);
      return "restoring the checkpoint failed" +
             (text.ok() && !text->empty() ? ": " + *text : std::string());
    }
    ReadSandboxPid(pid_file);
    return "";
  }

  void ReadSandboxPid(const std::string& pid_file) {
    auto pid_text = os::ReadFile(pid_file);
    if (pid_text.ok()) state.sandbox_pid = std::atoll(pid_text->c_str());
  }

  int Run() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    state.shim_pid = ::getpid();
    Publish();

    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      return LaunchFailed("pipe failed");
    os::UniqueFd out_r(out[0]), out_w(out[1]), err_r(err[0]), err_w(err[1]);

    std::string pid_file = dir + "/sandbox.pid";
    if (!config.restore_image.empty()) {
      // A restored workload keeps writing to its stdout/stderr: keep what it printed before.
      auto kept = os::ReadFile(dir + "/" + kShimOutputFile);
      if (kept.ok()) {
        auto parsed = OutputRing::Parse(*kept);
        if (parsed.ok()) ring = std::move(*parsed);
      }
      std::string error = Restore(out_w.get(), err_w.get(), pid_file);
      if (!error.empty()) return LaunchFailed(error);
    } else {
      std::string error = CreateAndStart(out_w, err_w, err_r.get(), pid_file);
      if (!error.empty()) return LaunchFailed(error);
    }
    state.phase = ShimPhase::kRunning;
    state.started_at = NowMillis();
    Publish();
    // A restored sandbox brings its agent back with it; the agent reconnects by itself.
    if (config.restore_image.empty()) StartAgent();

    out_w.reset();
    err_w.reset();
    ::fcntl(out_r.get(), F_SETFL, O_NONBLOCK);
    ::fcntl(err_r.get(), F_SETFL, O_NONBLOCK);
    bool out_open = true, err_open = true, exited = false;
    int64_t exited_at = 0;
    while (out_open || err_open) {
      struct pollfd fds[2] = {{out_open ? out_r.get() : -1, POLLIN, 0},
                              {err_open ? err_r.get() : -1, POLLIN, 0}};
      ::poll(fds, 2, 100);
      if (fds[0].revents) out_open = Drain(out_r.get(), Stream::kStdout);
      if (fds[1].revents) err_open = Drain(err_r.get(), Stream::kStderr);
      for (;;) {
        int ws = 0;
        pid_t pid = ::waitpid(-1, &ws, WNOHANG);
        if (pid <= 0) break;
        if (pid == agent_exec) agent_exec = 0;
        if (pid == state.sandbox_pid && !exited) {
          RecordExit(ws);
          exited = true;
          exited_at = NowMillis();
        }
      }
      ReleaseAgentExec();
      int64_t now = NowMillis();
      if (ring_dirty && now - last_persist >= kPersistIntervalMs) PersistOutput();
      // A process that the workload left behind may hold the pipes open: stop waiting.
      if (exited && now - exited_at > 200) break;
    }
    while (!exited) {
      int ws = 0;
      pid_t pid = ::waitpid(-1, &ws, 0);
      if (pid < 0 && errno != EINTR) break;
      if (pid == agent_exec) agent_exec = 0;
      if (pid == state.sandbox_pid) {
        RecordExit(ws);
        exited = true;
      }
    }
    PersistOutput();
    // Report first: `runsc delete` takes a couple of seconds, and adaptd waits for this
    // process to exit before it unmounts anything.
    state.phase = ShimPhase::kExited;
    if (state.finished_at == 0) state.finished_at = NowMillis();
    Publish();
    StopAgentExec();
    ForceDelete();
    return 0;
  }
};

}  // namespace
}  // namespace adapt::runtime

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: adapt-shim SANDBOX_DIR\n");
    return 2;
  }
  // The shim must survive its parent going away and terminal signals.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  adapt::runtime::Shim shim;
  shim.dir = argv[1];
  auto config = adapt::runtime::ReadShimConfig(shim.dir);
  if (!config.ok()) {
    std::fprintf(stderr, "adapt-shim: %s\n", config.status().message().c_str());
    return 1;
  }
  shim.config = *config;
  return shim.Run();
}
