// Starting one command's process inside the sandbox, for `adapt-agent serve`.
#pragma once

#include <sys/types.h>

#include <vector>

#include "agent/protocol.h"

namespace adapt::agent {

struct LaunchedProcess {
  pid_t pid = -1;
  int stdin_fd = -1;  // -1 when the request has no stdin
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// The capabilities (numbers) a command run as root gives up: the agent's user-switching ones
// (CAP_SETUID, CAP_SETGID, CAP_SETPCAP by default) that the workload does not hold, so that
// such a command has exactly the workload's set. Call before the first launch.
void SetCapsDroppedForRoot(std::vector<int> caps);

// Starts `request` (clone with CLONE_VM|CLONE_VFORK, as posix_spawn does: no copy of the
// agent's address space) in a new session (so that its process group is the
// command's tree), as its uid:gid, in its cwd, with its environment. Failures in the
// child (no such program, bad cwd) become the process's own exit: a message on its stderr
// and status 127 (126 when it cannot be executed), as a shell would. The pipes are
// non-blocking and close-on-exec on this side. Returns false only when nothing could be
// started (errno set). With `data_fd` >= 0 (a data connection, see SpawnRequest::data_token)
// that fd is the process's stdin and stdout and no pipe is made for them; the caller still
// owns and closes it.
bool LaunchProcess(const SpawnRequest& request, LaunchedProcess& out, int data_fd = -1);

}  // namespace adapt::agent
