// How a file operation (`adapt-agent file <op> ...`, see agent/file_tool.h) reaches the
// sandbox: over the agent's session, on a data connection of its own (fast: no process is
// started outside the sandbox, bytes move at socket speed), or through `runsc exec` when
// the agent is unavailable. Both run the same tool inside the sandbox, so paths resolve the
// same way whichever path serves.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "base/status.h"
#include "runtime/agent_session.h"
#include "runtime/runtime.h"

namespace adapt::core {

// One running file operation. Destroyed before Finish, it kills the operation.
class FileOp {
 public:
  virtual ~FileOp() = default;
  // Where an upload's bytes go (the tool's stdin).
  virtual int input_fd() const = 0;
  // The tool's stdout.
  virtual int output_fd() const = 0;
  // End of input: the tool reads end of file.
  virtual void CloseInput() = 0;
  // Waits for the tool's exit; its error (FileErrorFor) when it failed.
  virtual Status Finish() = 0;
  // "agent" or "runsc-exec", as commands say.
  virtual const char* served_by() const = 0;
  // Asks the tool to end now (SIGTERM: an upload removes its temp file, agent/file_tool.h),
  // from another thread while the operation is in use: its reads and writes then end or
  // fail. Whether the tool is known to have ended within `wait` (runsc exec's is not seen).
  virtual bool Abandon(std::chrono::milliseconds wait) = 0;
};

// `argv` is the tool's, after `adapt-agent file`.
Result<std::unique_ptr<FileOp>> StartExecFileOp(runtime::Runtime& runtime,
                                                const std::string& sandbox_id,
                                                const std::vector<std::string>& argv);
// kUnavailable when the agent could not take the operation (nothing ran: the caller may
// fall back to runsc exec); any other error is the operation's own.
Result<std::unique_ptr<FileOp>> StartAgentFileOp(std::shared_ptr<runtime::AgentSession> session,
                                                 agent::SpawnRequest spawn);

}  // namespace adapt::core
