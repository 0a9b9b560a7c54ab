#include "os/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "os/errno_status.h"
#include "os/files.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs in the vfork child, which shares adaptd's memory (and the calling thread's stack)
// until it executes: raw system calls only, no allocation, no lock, nothing returned.
[[noreturn]] void ExecChild(char** argv, char** envp, const SpawnOptions& o, int devnull) {
  // Handlers are adaptd's code on adaptd's memory: none may run here. All signals are blocked
  // (the parent blocked them for the vfork); each caught one goes back to its default.
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) != 0 || sa.sa_handler == SIG_IGN || sa.sa_handler == SIG_DFL)
      continue;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    ::sigaction(sig, &sa, nullptr);
  }
  if (o.new_session) ::setsid();
  if (o.hide_proc_sys_net) {
    if (::unshare(CLONE_NEWNS) != 0) ::_exit(126);
    // A slave, not private: what the host unmounts below a shared mount (a sandbox's disk,
    // see mount_propagation.h) goes from this copy too, where a private one would hold it.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) ::_exit(126);
    if (::mount("tmpfs", "/proc/sys/net", "tmpfs", 0, nullptr) != 0) ::_exit(126);
  }
  int fds[3] = {o.stdin_fd, o.stdout_fd, o.stderr_fd};
  for (int i = 0; i < 3; ++i) {
    int src = fds[i] >= 0 ? fds[i] : devnull;
    if (src == i) {
      ::fcntl(i, F_SETFD, 0);
    } else if (::dup2(src, i) < 0) {
      ::_exit(126);
    }
  }
  // Only stdio crosses into the child: an inherited listening socket or database handle
  // would outlive adaptd in every long-lived child (shims, runsc sandboxes).
  ::close_range(3, ~0U, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (envp) {
    ::execvpe(argv[0], argv, envp);
  } else {
    ::execvp(argv[0], argv);
  }
  ::_exit(127);
}

}  // namespace

Result<pid_t> Spawn(const std::vector<std::string>& argv_in, const SpawnOptions& options) {
  if (argv_in.empty()) return InvalidArgument("argv", "empty command");
  std::vector<std::string> argv = argv_in;
  auto cargv = CStrings(argv);
  std::vector<std::string> env = options.env.value_or(std::vector<std::string>{});
  auto cenv = CStrings(env);
  UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull) return ErrnoStatus("opening /dev/null");
  // vfork, not fork: a fork copies adaptd's page tables and then pays a copy-on-write fault
  // for every page any of its threads writes, 2-7 ms a spawn and more for the child's exec,
  // which tears the copy down (`ip` runs took 10-16 ms from adaptd against 4 ms from a small
  // process; bench/README.md, create_latency). posix_spawn works the same way but cannot
  // make the child's mount namespace (hide_proc_sys_net) nor exit 127 on a missing program.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = ::vfork();
  if (pid == 0)
    ExecChild(cargv.data(), options.env ? cenv.data() : nullptr, options, devnull.get());
  int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) return ErrnoStatus("fork for " + argv[0], fork_errno);
  return pid;
}

Result<ExitStatus> Wait(pid_t pid) {
  int st = 0;
  for (;;) {
    if (::waitpid(pid, &st, 0) >= 0) break;
    if (errno != EINTR) return ErrnoStatus("waiting for process " + std::to_string(pid));
  }
  ExitStatus out;
  if (WIFSIGNALED(st)) {
    out.signal = WTERMSIG(st);
  } else {
    out.exit_code = WEXITSTATUS(st);
  }
  return out;
}

namespace {

// A program started with its stdout and stderr into one pipe, whose read end this holds.
struct Captured {
  pid_t pid;
  UniqueFd output;
};

Result<Captured> SpawnCapturingOutput(const std::vector<std::string>& argv,
                                      const SpawnOptions& opts) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoStatus("pipe");
  UniqueFd rd(p[0]), wr(p[1]);
  SpawnOptions o = opts;
  o.stdout_fd = wr.get();
  o.stderr_fd = wr.get();
  ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, o));
  return Captured{pid, std::move(rd)};  // the write end closes here: only the program's stays
}

// One read of the program's output into `out`, which keeps its last 64 KiB; false at the end.
bool ReadOutputSome(int fd, std::string& out) {
  char buf[8192];
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out.append(buf, static_cast<size_t>(got));
    if (out.size() > 65536) out.erase(0, out.size() - 65536);
    return true;
  }
}

}  // namespace

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const SpawnOptions& opts) {
  ASSIGN_OR_RETURN(Captured run, SpawnCapturingOutput(argv, opts));
  CommandResult result;
  while (ReadOutputSome(run.output.get(), result.output)) {
  }
  ASSIGN_OR_RETURN(result.status, Wait(run.pid));
  return result;
}

Result<CommandResult> RunCommandWithin(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds limit, const SpawnOptions& opts) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  ASSIGN_OR_RETURN(Captured run, SpawnCapturingOutput(argv, opts));
  const pid_t pid = run.pid;
  const UniqueFd& rd = run.output;
  // Readable once the program has exited (not yet reaped): the end of the wait even when a
  // child it left keeps the pipe open.
  UniqueFd exited(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!exited) {
    Status st = ErrnoStatus("watching process " + std::to_string(pid));
    ::kill(pid, SIGKILL);
    (void)Wait(pid);
    return st;
  }
  CommandResult result;
  // Reads what the pipe has now; false at its end.
  auto read_some = [&] { return ReadOutputSome(rd.get(), result.output); };
  bool output_open = true;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2] = {{exited.get(), POLLIN, 0}, {rd.get(), POLLIN, 0}};
    int n =
        ::poll(fds, output_open ? 2 : 1, static_cast<int>(std::min<int64_t>(left.count(), 60000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result.timed_out = true;  // it cannot be waited on: killed rather than left running
      break;
    }
    if (fds[0].revents != 0) {
      // Exited: what is in the pipe now is read, without waiting for a child's more.
      pollfd ready{rd.get(), POLLIN, 0};
      while (output_open && ::poll(&ready, 1, 0) > 0) output_open = read_some();
      break;
    }
    if (output_open && fds[1].revents != 0) output_open = read_some();
  }
  if (result.timed_out) ::kill(pid, SIGKILL);
  ASSIGN_OR_RETURN(result.status, Wait(pid));
  return result;
}

namespace {

Status CheckedResult(const std::vector<std::string>& argv, const CommandResult& r) {
  if (!r.status.signaled() && r.status.exit_code == 0) return Status::Ok();
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  auto nl = out.rfind('\n');
  std::string last = nl == std::string::npos ? out : out.substr(nl + 1);
  std::string how = r.status.signaled() ? "killed by signal " + std::to_string(r.status.signal)
                                        : "exit status " + std::to_string(r.status.exit_code);
  if (r.status.exit_code == 127) how = "could not be executed";
  return Internal(argv[0] + " " + (argv.size() > 1 ? argv[1] : "") + " failed (" + how + ")" +
                  (last.empty() ? "" : ": " + last));
}

}  // namespace

Status RunChecked(const std::vector<std::string>& argv, const SpawnOptions& options) {
  ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, options));
  return CheckedResult(argv, r);
}

Status RunCheckedWithin(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                        const SpawnOptions& options) {
  ASSIGN_OR_RETURN(CommandResult r, RunCommandWithin(argv, limit, options));
  if (r.timed_out)
    return Status(Code::kUnavailable,
                  argv[0] + " " + (argv.size() > 1 ? argv[1] : "") + " did not finish within " +
                      std::to_string(limit.count() / 1000) + " s; it was killed");
  return CheckedResult(argv, r);
}

Result<Pipe> MakePipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoStatus("pipe");
  return Pipe{UniqueFd(p[0]), UniqueFd(p[1])};
}

Result<std::vector<bool>> WaitReadable(const std::vector<int>& fds, int timeout_ms) {
  std::vector<pollfd> p;
  for (int fd : fds) p.push_back({fd, POLLIN, 0});
  std::vector<bool> ready(fds.size(), false);
  int n = ::poll(p.data(), p.size(), timeout_ms);
  if (n < 0 && errno == EINTR) return ready;
  if (n < 0) return ErrnoStatus("poll");
  for (size_t i = 0; i < p.size(); ++i) ready[i] = p[i].revents != 0;
  return ready;
}

Result<size_t> ReadSome(int fd, char* buffer, size_t capacity) {
  for (;;) {
    ssize_t n = ::read(fd, buffer, capacity);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EINTR) return ErrnoStatus("read");
  }
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

bool ProcessMatches(pid_t pid, const std::string& needle) {
  if (pid <= 0) return false;
  auto cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  if (!cmdline.ok()) return false;
  for (char& c : *cmdline) {
    if (c == '\0') c = ' ';
  }
  return cmdline->find(needle) != std::string::npos;
}

Status Signal(pid_t pid, int sig) {
  if (::kill(pid, sig) != 0 && errno != ESRCH)
    return ErrnoStatus("signalling " + std::to_string(pid));
  return Status::Ok();
}

}  // namespace adapt::os
