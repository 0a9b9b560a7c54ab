// adapt-agent: runs inside a sandbox. `adapt-agent file <op> ...` performs one file
// operation and exits; `adapt-agent serve SOCKET` is the long-running agent that runs
// commands for adaptd (see agent_server.h).
#include <cstdio>
#include <cstring>

#include "agent/agent_server.h"
#include "agent/file_tool.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "file") == 0)
    return adapt::agent::RunFileTool(argc - 2, argv + 2);
  if (argc == 3 && std::strcmp(argv[1], "serve") == 0) return adapt::agent::Serve(argv[2]);
  std::fprintf(stderr, "usage: adapt-agent file <op> ... | adapt-agent serve SOCKET\n");
  return 2;
}
