// adapt-agent: runs inside a sandbox. `adapt-agent file <op> ...` performs one file
// operation and exits.
#include <cstdio>
#include <cstring>

#include "agent/file_tool.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "file") == 0)
    return adapt::agent::RunFileTool(argc - 2, argv + 2);
  std::fprintf(stderr, "usage: adapt-agent file <op> ...\n");
  return 2;
}
