// The agent's one-shot file operations (`adapt-agent file <op> ...`), run by adaptd through
// `runsc exec` inside the sandbox, so every path resolves in the sandbox's own filesystem.
#pragma once

namespace adapt::agent {

// argv[0] is the operation. Returns the process exit code.
int RunFileTool(int argc, char** argv);

}  // namespace adapt::agent
