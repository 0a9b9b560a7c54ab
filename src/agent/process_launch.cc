#include "agent/process_launch.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace adapt::agent {
namespace {

void CloseBoth(int p[2]) {
  if (p[0] >= 0) ::close(p[0]);
  if (p[1] >= 0) ::close(p[1]);
}

[[noreturn]] void Die(int code, const std::string& what) {
  std::string msg = "adapt-agent: " + what + ": " + std::strerror(errno) + "\n";
  (void)!::write(2, msg.data(), msg.size());
  ::_exit(code);
}

std::vector<int>& DroppedForRoot() {
  static std::vector<int> caps = {CAP_SETUID, CAP_SETGID, CAP_SETPCAP};
  return caps;
}

// The agent holds CAP_SETUID, CAP_SETGID and CAP_SETPCAP to start commands as their users;
// a command run as root gets the workload's capabilities, not those the workload lacks. (A
// command run as another user loses every capability in setuid.)
bool DropUserSwitchCaps() {
  const std::vector<int>& extra = DroppedForRoot();
  for (int cap : extra) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  for (int cap : extra) {
    uint32_t bit = 1u << (cap % 32);
    data[cap / 32].effective &= ~bit;
    data[cap / 32].permitted &= ~bit;
    data[cap / 32].inheritable &= ~bit;
  }
  return ::syscall(SYS_capset, &header, data) == 0;
}

}  // namespace

void SetCapsDroppedForRoot(std::vector<int> caps) { DroppedForRoot() = std::move(caps); }

bool LaunchProcess(const SpawnRequest& req, LaunchedProcess& out, int data_fd) {
  int in[2] = {-1, -1}, o[2] = {-1, -1}, e[2] = {-1, -1};
  bool data = data_fd >= 0;
  bool has_stdin = req.has_stdin && !data;
  if ((has_stdin && ::pipe2(in, O_CLOEXEC) != 0) || (!data && ::pipe2(o, O_CLOEXEC) != 0) ||
      ::pipe2(e, O_CLOEXEC) != 0) {
    int err = errno;
    CloseBoth(in), CloseBoth(o), CloseBoth(e);
    errno = err;
    return false;
  }
  // Everything the child needs is built before fork: only async-signal-safe calls after.
  std::vector<char*> argv, envp;
  for (const auto& a : req.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& kv : req.env) envp.push_back(const_cast<char*>(kv.c_str()));
  envp.push_back(nullptr);
  std::string cwd = req.cwd.empty() ? "/" : req.cwd;

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    CloseBoth(in), CloseBoth(o), CloseBoth(e);
    errno = err;
    return false;
  }
  if (pid == 0) {
    ::setsid();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP}) ::signal(s, SIG_DFL);
    int devnull = has_stdin || data ? -1 : ::open("/dev/null", O_RDONLY);
    ::dup2(data ? data_fd : has_stdin ? in[0] : devnull, 0);
    ::dup2(data ? data_fd : o[1], 1);
    ::dup2(e[1], 2);
    if (::setgroups(0, nullptr) != 0 && req.uid != 0) Die(126, "cannot drop groups");
    if (::setgid(req.gid) != 0) Die(126, "cannot set group " + std::to_string(req.gid));
    if (::setuid(req.uid) != 0) Die(126, "cannot set user " + std::to_string(req.uid));
    if (req.uid == 0 && !DropUserSwitchCaps()) Die(126, "cannot drop capabilities");
    if (::chdir(cwd.c_str()) != 0) Die(127, "cannot change directory to " + cwd);
    environ = envp.data();
    ::execvp(argv[0], argv.data());
    Die(errno == ENOENT ? 127 : 126, "cannot run " + req.argv[0]);
  }
  if (has_stdin) ::close(in[0]);
  if (!data) ::close(o[1]);
  ::close(e[1]);
  out.pid = pid;
  out.stdin_fd = has_stdin ? in[1] : -1;
  out.stdout_fd = data ? -1 : o[0];
  out.stderr_fd = e[0];
  for (int fd : {out.stdin_fd, out.stdout_fd, out.stderr_fd})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  // Bigger pipes mean fewer reads (each a costly syscall under gVisor) for a chatty command.
  for (int fd : {out.stdout_fd, out.stderr_fd})
    if (fd >= 0) ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
  return true;
}

}  // namespace adapt::agent
