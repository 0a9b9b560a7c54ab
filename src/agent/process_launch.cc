#include "agent/process_launch.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace adapt::agent {
namespace {

// Code run by the child on its borrowed stack is not instrumented by the sanitizers of a
// sanitizer build (their runtimes do not know that stack).
#define ADAPT_CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

void CloseBoth(int p[2]) {
  if (p[0] >= 0) ::close(p[0]);
  if (p[1] >= 0) ::close(p[1]);
}

std::vector<int>& DroppedForRoot() {
  static std::vector<int> caps = {CAP_SETUID, CAP_SETGID, CAP_SETPCAP};
  return caps;
}

// Everything the child does, decided before it exists: it shares the agent's memory until
// it executes (clone with CLONE_VM|CLONE_VFORK, as posix_spawn does; a fork copies the
// agent's address space, which gVisor makes costly), so it may not allocate, take a lock or
// call a libc function that touches the other threads (setuid's broadcast): raw system calls
// and the stack only.
struct ChildPlan {
  int stdin_fd = -1;  // -1: /dev/null
  int stdout_fd = -1;
  int stderr_fd = -1;
  uint32_t uid = 0, gid = 0;
  bool drop_caps = false;
  const int* caps = nullptr;
  size_t ncaps = 0;
  const char* cwd = nullptr;
  char* const* envp = nullptr;
  // The paths to try in order (the argv[0] itself, or each PATH entry's), execvp's search.
  const char* const* candidates = nullptr;
  size_t ncandidates = 0;
  char* const* argv = nullptr;
  // "/bin/sh" "<candidate>" argv[1..]: what execvp runs for a file without a #! line; slot 1
  // is set to the candidate in the child (this launch's own memory).
  char** sh_argv = nullptr;
  // Messages, complete but for ": <reason>\n".
  std::string groups_msg, gid_msg, uid_msg, caps_msg, cwd_msg, run_msg;
};

ADAPT_CHILD_CODE void Say(const ChildPlan& plan, const std::string& msg, int err) {
  const char* reason = ::strerrordesc_np(err);
  if (!reason) reason = "unknown error";
  iovec parts[3] = {{const_cast<char*>(msg.data()), msg.size()},
                    {const_cast<char*>(": "), 2},
                    {const_cast<char*>(reason), std::strlen(reason)}};
  (void)!::writev(plan.stderr_fd, parts, 3);
  (void)!::write(plan.stderr_fd, "\n", 1);
}

[[noreturn]] ADAPT_CHILD_CODE void Die(const ChildPlan& plan, int code, const std::string& msg,
                                       int err) {
  Say(plan, msg, err);
  ::syscall(SYS_exit_group, code);
  __builtin_unreachable();
}

// The agent holds CAP_SETUID, CAP_SETGID and CAP_SETPCAP to start commands as their users;
// a command run as root gets the workload's capabilities, not those the workload lacks. (A
// command run as another user loses every capability in setuid.)
ADAPT_CHILD_CODE bool DropUserSwitchCaps(const ChildPlan& plan) {
  for (size_t i = 0; i < plan.ncaps; ++i) {
    if (::syscall(SYS_prctl, PR_CAPBSET_DROP, plan.caps[i], 0, 0, 0) != 0 && errno != EINVAL)
      return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  for (size_t i = 0; i < plan.ncaps; ++i) {
    const int cap = plan.caps[i];
    uint32_t bit = 1u << (cap % 32);
    data[cap / 32].effective &= ~bit;
    data[cap / 32].permitted &= ~bit;
    data[cap / 32].inheritable &= ~bit;
  }
  return ::syscall(SYS_capset, &header, data) == 0;
}

ADAPT_CHILD_CODE int Child(void* arg) {
  ChildPlan& plan = *static_cast<ChildPlan*>(arg);
  ::syscall(SYS_setsid);
  // The agent's dispositions (src/agent/agent_server.cc: SIGPIPE and SIGHUP ignored, a SIGCHLD
  // handler; the file tool's) are not the command's; every signal stays blocked until then,
  // so that no handler of the agent's runs on this stack. (Few system calls: each one is
  // costly under gVisor.)
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP}) ::sigaction(s, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int in = plan.stdin_fd >= 0 ? plan.stdin_fd : ::open("/dev/null", O_RDONLY);
  ::dup2(in, 0);
  ::dup2(plan.stdout_fd, 1);
  ::dup2(plan.stderr_fd, 2);
  if (::syscall(SYS_setgroups, 0, nullptr) != 0 && plan.uid != 0)
    Die(plan, 126, plan.groups_msg, errno);
  if (::syscall(SYS_setgid, plan.gid) != 0) Die(plan, 126, plan.gid_msg, errno);
  if (::syscall(SYS_setuid, plan.uid) != 0) Die(plan, 126, plan.uid_msg, errno);
  if (plan.drop_caps && !DropUserSwitchCaps(plan)) Die(plan, 126, plan.caps_msg, errno);
  if (::chdir(plan.cwd) != 0) Die(plan, 127, plan.cwd_msg, errno);
  // execvp's search: the first candidate that runs; a permission error is remembered (and
  // answered if nothing else runs), a missing one is not.
  int err = ENOENT;
  bool denied = false;
  for (size_t i = 0; i < plan.ncandidates; ++i) {
    const char* path = plan.candidates[i];
    ::execve(path, plan.argv, plan.envp);
    if (errno == ENOEXEC) {
      plan.sh_argv[1] = const_cast<char*>(path);
      ::execve("/bin/sh", plan.sh_argv, plan.envp);
    }
    if (errno == EACCES) denied = true;
    if (errno != ENOENT && errno != ENOTDIR && errno != EACCES && errno != ESTALE &&
        errno != ENODEV && errno != ETIMEDOUT) {
      err = errno;
      denied = false;
      break;
    }
  }
  if (denied) err = EACCES;
  Die(plan, err == ENOENT ? 127 : 126, plan.run_msg, err);
}

// execvp's candidates for `file` under the command's own PATH (glibc's default without one).
std::vector<std::string> Candidates(const std::string& file, const std::vector<std::string>& env) {
  if (file.empty()) return {};
  if (file.find('/') != std::string::npos) return {file};
  std::string path = "/bin:/usr/bin";
  for (const auto& kv : env)
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t end = path.find(':', start);
    std::string dir =
        path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + file);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
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
  std::vector<char*> argv, envp;
  for (const auto& a : req.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& kv : req.env) envp.push_back(const_cast<char*>(kv.c_str()));
  envp.push_back(nullptr);
  const std::string cwd = req.cwd.empty() ? "/" : req.cwd;
  const std::string program = req.argv.empty() ? std::string() : req.argv[0];

  ChildPlan plan;
  plan.stdin_fd = data ? data_fd : has_stdin ? in[0] : -1;
  plan.stdout_fd = data ? data_fd : o[1];
  plan.stderr_fd = e[1];
  plan.uid = req.uid;
  plan.gid = req.gid;
  plan.drop_caps = req.uid == 0;
  plan.caps = DroppedForRoot().data();
  plan.ncaps = DroppedForRoot().size();
  plan.cwd = cwd.c_str();
  plan.envp = envp.data();
  plan.argv = argv.data();
  const std::vector<std::string> candidates = Candidates(program, req.env);
  std::vector<const char*> candidate_ptrs;
  for (const auto& c : candidates) candidate_ptrs.push_back(c.c_str());
  plan.candidates = candidate_ptrs.data();
  plan.ncandidates = candidate_ptrs.size();
  std::vector<char*> sh_argv{const_cast<char*>("/bin/sh"), nullptr};
  for (size_t i = 1; i + 1 < argv.size(); ++i) sh_argv.push_back(argv[i]);
  sh_argv.push_back(nullptr);
  plan.sh_argv = sh_argv.data();
  plan.groups_msg = "adapt-agent: cannot drop groups";
  plan.gid_msg = "adapt-agent: cannot set group " + std::to_string(req.gid);
  plan.uid_msg = "adapt-agent: cannot set user " + std::to_string(req.uid);
  plan.caps_msg = "adapt-agent: cannot drop capabilities";
  plan.cwd_msg = "adapt-agent: cannot change directory to " + cwd;
  plan.run_msg = "adapt-agent: cannot run " + program;

  // The child's own stack; every signal blocked until it has reset their handlers, so that
  // none of the agent's handlers runs on it.
  constexpr size_t kStack = 256 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    int err = errno;
    CloseBoth(in), CloseBoth(o), CloseBoth(e);
    errno = err;
    return false;
  }
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid =
      ::clone(Child, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  int clone_err = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::munmap(stack, kStack);
  if (pid < 0) {
    CloseBoth(in), CloseBoth(o), CloseBoth(e);
    errno = clone_err;
    return false;
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
