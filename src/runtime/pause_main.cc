// adapt-pause: the init process of an interactive sandbox. It does nothing until it is
// told to stop, so that the sandbox lives until deletion or expiry. Built static, so it
// runs in any image.
//
// `adapt-pause PROGRAM ARGS...` also starts PROGRAM (the sandbox's agent) as its child,
// with this process's stdin, which holds the agent's key: no host-side `runsc exec` is
// needed to start it. The init then lets go of that stdin at once.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {
void Stop(int) { _exit(0); }
// Processes that commands leave behind are reparented to init: reap them, or a killed one
// stays a zombie that `kill -0` still finds.
void Reap(int) {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

// Replaces `fd` with /dev/null (or closes it when there is none).
void Detach(int fd) {
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2(null, fd) < 0) close(fd);
  if (null >= 0 && null != fd) close(null);
}

void StartChild(char** argv) {
  pid_t pid = fork();
  if (pid == 0) {
    // The agent's output has no reader; its stdin (the key) is its own to read.
    Detach(1);
    Detach(2);
    execv(argv[0], argv);
    _exit(127);
  }
}
}  // namespace

int main(int argc, char** argv) {
  // As PID 1 a process gets no default signal actions: install them.
  signal(SIGTERM, Stop);
  signal(SIGINT, Stop);
  signal(SIGCHLD, Reap);
  if (argc > 1) {
    // Until its stdin is gone, no other process of the sandbox (root included, which lacks
    // CAP_SYS_PTRACE) may open it through /proc/1/fd.
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    StartChild(argv + 1);
    Detach(0);
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }
  for (;;) pause();
}
