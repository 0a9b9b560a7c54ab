// The files that a sandbox's runsc calls read. config.json: the init's process, the mounts
// and the limits. exec-process.json, when the init runs the agent (an interactive sandbox's
// adapt-pause starts it as its child): the workload's own process, which every command starts
// from, since the init's runs as root with the agent's capabilities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "runtime/oci_spec.h"
#include "runtime/runtime.h"

namespace adapt::runtime {

// The agent's capabilities: the workload's plus what switching to a command's user takes.
std::vector<std::string> AgentCaps(const std::vector<std::string>& workload);
// The agent's "--drop-caps=N,...": the capability numbers a root command must not keep.
std::string AgentDropCapsFlag(const std::vector<std::string>& workload);

// Writes config.json for `spec`; with `agent_argv`, the init runs it as its child (see above)
// and exec-process.json keeps the workload's process. Without, a stale exec-process.json goes.
Status WriteSpecFiles(const std::string& dir, const SandboxSpec& spec,
                      const std::vector<std::string>& agent_argv);

// The cwd, environment and user a command of sandbox `id` (directory `dir`) starts with.
Result<ExecDefaults> ReadExecDefaults(const std::string& dir, const std::string& id);

// The sandbox's memory limit in bytes, as its config.json gives it to runsc.
Result<uint64_t> ReadMemoryLimit(const std::string& dir, const std::string& id);

// The process file of `runsc exec --process` for `req`: the workload's process with the
// request applied.
Result<std::string> ExecProcessSpec(const std::string& dir, const ExecRequest& req);

}  // namespace adapt::runtime
