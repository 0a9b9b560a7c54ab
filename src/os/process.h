// Child processes: spawning, waiting, and running a helper program to completion.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::os {

struct SpawnOptions {
  // File descriptors for the child's stdin/stdout/stderr; -1 means /dev/null.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Start the child in a new session, so that it outlives its parent's process group.
  bool new_session = false;
  // Run the child in a mount namespace of its own (a slave of the host's: see
  // mount_propagation.h) with a tmpfs over /proc/sys/net. Debian's
  // runsc 20221219 refuses a sandbox network namespace on kernels where
  // /proc/sys/net/core/rmem_default exists in every netns; hiding it makes runsc proceed.
  bool hide_proc_sys_net = false;
  // Replaces the environment when set.
  std::optional<std::vector<std::string>> env;
};

// Starts argv[0] (looked up in PATH) with `argv`. Returns the child's pid.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const SpawnOptions& options);

struct ExitStatus {
  int exit_code = -1;  // valid when !signaled
  int signal = 0;      // the terminating signal, when signaled
  bool signaled() const { return signal != 0; }
};

// Waits for `pid` (a child of this process).
Result<ExitStatus> Wait(pid_t pid);

struct CommandResult {
  ExitStatus status;
  std::string output;  // stdout and stderr together, bounded to the last 64 KiB
  // RunCommandWithin only: the program outlived its limit and was killed (status: SIGKILL).
  bool timed_out = false;
};

// Runs argv to completion, capturing its output. Fails only when it cannot be started;
// a non-zero exit is reported in the result.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const SpawnOptions& options = {});

// RunCommand for a program that may hang (runsc talking to a stuck sandbox): one still running
// `limit` after its start is killed with SIGKILL and reaped, and the result says timed_out,
// with what it printed until then. Only the program itself is killed, not children it left;
// once it has exited, a child still holding its output open is not waited for.
Result<CommandResult> RunCommandWithin(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds limit,
                                       const SpawnOptions& options = {});

// Like RunCommand, but a non-zero exit becomes an error carrying the program's last output line.
Status RunChecked(const std::vector<std::string>& argv, const SpawnOptions& options = {});
// RunChecked within `limit` (RunCommandWithin): Unavailable, naming the limit, when killed.
Status RunCheckedWithin(const std::vector<std::string>& argv, std::chrono::milliseconds limit,
                        const SpawnOptions& options = {});

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
// A close-on-exec pipe.
Result<Pipe> MakePipe();

// Waits up to `timeout_ms` (-1: forever) until one of `fds` is readable or hung up;
// returns, per fd, whether it is. Interrupted waits return all false.
Result<std::vector<bool>> WaitReadable(const std::vector<int>& fds, int timeout_ms);
// Reads what is there (at most `capacity` bytes); 0 at end of file.
Result<size_t> ReadSome(int fd, char* buffer, size_t capacity);
// Writes all of `data`; a reader that has gone is an error.
Status WriteAll(int fd, std::string_view data);

// True when `pid` exists and its command line contains `needle`.
bool ProcessMatches(pid_t pid, const std::string& needle);

// Sends `sig` to `pid`; a process already gone is not an error.
Status Signal(pid_t pid, int sig);

}  // namespace adapt::os
