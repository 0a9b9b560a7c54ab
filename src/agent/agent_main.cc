// adapt-agent: runs inside a sandbox. `adapt-agent file <op> ...` performs one file
// operation and exits; `adapt-agent sync` writes back the sandbox kernel's cached file data
// (before adaptd copies the writable layer: a commit); `adapt-agent fetch-release ...` is a
// deployed app's replica downloading its release (file_tool.h); `adapt-agent serve SOCKET` is the
// long-running agent that runs commands for adaptd (see agent_server.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "agent/agent_server.h"
#include "agent/file_tool.h"
#include "agent/process_launch.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "file") == 0)
    return adapt::agent::RunFileTool(argc - 2, argv + 2);
  if (argc == 5 && std::strcmp(argv[1], "fetch-release") == 0)
    return adapt::agent::FetchRelease(argv[2], argv[3], argv[4]);
  if (argc == 2 && std::strcmp(argv[1], "sync") == 0) {
    ::sync();
    return 0;
  }
  if ((argc == 3 || argc == 4) && std::strcmp(argv[1], "serve") == 0) {
    // --drop-caps=N,...: what a root command gives up (process_launch.h); absent: the
    // user-switching capabilities.
    if (argc == 4) {
      const char* flag = "--drop-caps=";
      if (std::strncmp(argv[3], flag, std::strlen(flag)) != 0) {
        std::fprintf(stderr, "adapt-agent: unknown option %s\n", argv[3]);
        return 2;
      }
      std::vector<int> caps;
      for (const char* p = argv[3] + std::strlen(flag); *p;) {
        char* end = nullptr;
        long cap = std::strtol(p, &end, 10);
        if (end == p || cap < 0 || cap > 63 || (*end != ',' && *end != '\0')) {
          std::fprintf(stderr, "adapt-agent: bad %s\n", argv[3]);
          return 2;
        }
        caps.push_back(static_cast<int>(cap));
        p = *end ? end + 1 : end;
      }
      adapt::agent::SetCapsDroppedForRoot(std::move(caps));
    }
    return adapt::agent::Serve(argv[2]);
  }
  std::fprintf(stderr,
               "usage: adapt-agent file <op> ... | adapt-agent sync | adapt-agent fetch-release "
               "URL_FILE DIR MAX_UNPACKED | adapt-agent serve SOCKET\n");
  return 2;
}
