#include "net/conntrack.h"

#include <vector>

#include "os/process.h"

namespace adapt::net {

Status ForgetConnections(const std::string& address, const std::string& address6) {
  for (const auto& [family, addr] :
       std::vector<std::pair<std::string, std::string>>{{"ipv4", address}, {"ipv6", address6}}) {
    if (addr.empty()) continue;
    for (const char* direction : {"--src", "--dst"}) {
      ASSIGN_OR_RETURN(os::CommandResult r,
                       os::RunCommand({"conntrack", "-f", family, "-D", direction, addr}));
      // conntrack exits 1 when it deleted nothing, saying so.
      bool none = r.status.exit_code == 1 &&
                  r.output.find(" 0 flow entries have been deleted") != std::string::npos;
      if (r.status.signaled() || (r.status.exit_code != 0 && !none))
        return Status(Code::kUnavailable, "forgetting the tracked connections of " + addr +
                                              ": conntrack failed: " + r.output);
    }
  }
  return Status::Ok();
}

}  // namespace adapt::net
