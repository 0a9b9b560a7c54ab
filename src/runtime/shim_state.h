// The files through which a sandbox's shim (adapt-shim) reports to adaptd. The shim
// outlives adaptd, so these files, not a pipe, are the channel: adaptd reads them after a
// restart exactly as before it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::runtime {

// What the shim is told to do, written by adaptd before it starts the shim.
struct ShimConfig {
  std::string runsc;                      // path of the runsc binary
  std::vector<std::string> global_flags;  // --root, --platform, --network, ...
  std::string container_id;
  std::string bundle;              // directory holding config.json
  bool hide_proc_sys_net = false;  // the netns shim for old runsc (see os::SpawnOptions)
  // The in-sandbox agent, started with `runsc exec` once the workload runs (or by the init,
  // agent_in_init). Empty: none.
  std::vector<std::string> agent_argv;
  // Non-empty: `runsc restore` from this checkpoint image directory instead of create +
  // start. The restored sandbox holds its agent already, so none is started.
  std::string restore_image;
  // The agent's capabilities ("CAP_..."): the workload's plus what switching to a command's
  // user takes. Empty (a config written before profiles): the restricted set of then.
  std::vector<std::string> agent_caps;
  // > 0: config.json leaves the CPU limit out, and the shim sets this quota per
  // cpu_period_us on the sandbox's cgroup once gVisor has booted (its boot under a one-core
  // quota takes 60-110 ms longer here) and before any of the workload runs: after `runsc run
  // --detach` when the init is idle (adapt-pause), else between `runsc create` and `start`.
  // The init (adapt-pause) starts the agent as its child: the shim hands the agent's key to
  // it on the init's stdin, and starts no agent itself.
  bool agent_in_init = false;
  int64_t cpu_quota_us = 0;
  int64_t cpu_period_us = 0;
  bool idle_init = false;
};

enum class ShimPhase { kStarting, kRunning, kExited, kLaunchFailed };

struct ShimState {
  ShimPhase phase = ShimPhase::kStarting;
  int64_t shim_pid = 0;
  int64_t sandbox_pid = 0;
  int64_t started_at = 0;  // ms since epoch, when the workload began
  int64_t finished_at = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;  // set when the exit status says the process was killed
  std::string error;          // launch failure, in runsc's words
  // The kernel's out-of-memory killer killed a process of the sandbox's cgroup (its memory
  // limit was reached) before it exited: why a sandbox died of SIGKILL.
  bool oom_killed = false;
};

// File names inside a sandbox's directory.
inline constexpr const char* kShimConfigFile = "shim-config.json";
inline constexpr const char* kShimStateFile = "shim-state.json";
inline constexpr const char* kShimOutputFile = "output.bin";
// The agent's key (AgentHub): adaptd writes a fresh one for every boot (0600, in the
// sandbox's 0700 directory, never mounted into the sandbox), the shim hands it to the agent
// on its stdin; a second line is the key the hub is handing over to the agent.
inline constexpr const char* kAgentKeyFile = "agent.key";

Status WriteShimConfig(const std::string& sandbox_dir, const ShimConfig& config);
Result<ShimConfig> ReadShimConfig(const std::string& sandbox_dir);
Status WriteShimState(const std::string& sandbox_dir, const ShimState& state);
// NotFound when the shim has not written a state yet.
Result<ShimState> ReadShimState(const std::string& sandbox_dir);

}  // namespace adapt::runtime
