// adapt-pause: the init process of an interactive sandbox. It does nothing until it is
// told to stop, so that the sandbox lives until deletion or expiry. Built static, so it
// runs in any image.
#include <signal.h>
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
}  // namespace

int main() {
  // As PID 1 a process gets no default signal actions: install them.
  signal(SIGTERM, Stop);
  signal(SIGINT, Stop);
  signal(SIGCHLD, Reap);
  for (;;) pause();
}
