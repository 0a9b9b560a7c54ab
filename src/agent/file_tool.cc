#include "agent/file_tool.h"

#include <cstdio>

namespace adapt::agent {

int RunFileTool(int argc, char** argv) {
  std::fprintf(stderr, "adapt-agent file: unknown operation '%s'\n", argc > 0 ? argv[0] : "");
  return 2;
}

}  // namespace adapt::agent
