#include "net/links.h"

#include <vector>

#include "os/files.h"
#include "os/process.h"

namespace adapt::net {
namespace {

Status Ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  return os::RunChecked(argv);
}

}  // namespace

std::string NetnsPath(const std::string& netns) { return "/run/netns/" + netns; }

bool LinkExists(const std::string& name) { return os::Exists("/sys/class/net/" + name); }

Status CreateLinks(const LinkPlan& p) {
  if (!os::Exists(NetnsPath(p.netns)))
    RETURN_IF_ERROR(Ip({"netns", "add", p.netns}).WithContext("creating the network namespace"));
  if (!LinkExists(p.host_if)) {
    RETURN_IF_ERROR(Ip({"link", "add", p.host_if, "type", "veth", "peer", "name", p.peer_if})
                        .WithContext("creating the sandbox's veth pair"));
    RETURN_IF_ERROR(Ip({"link", "set", p.peer_if, "netns", p.netns}));
    RETURN_IF_ERROR(Ip({"-n", p.netns, "link", "set", p.peer_if, "name", "eth0"}));
    RETURN_IF_ERROR(Ip({"-n", p.netns, "addr", "add", p.sandbox_address + "/30", "dev", "eth0"}));
    RETURN_IF_ERROR(Ip({"-n", p.netns, "link", "set", "eth0", "up"}));
    RETURN_IF_ERROR(Ip({"-n", p.netns, "link", "set", "lo", "up"}));
    RETURN_IF_ERROR(Ip({"-n", p.netns, "route", "add", "default", "via", p.host_address}));
    if (!p.sandbox_address6.empty()) {
      RETURN_IF_ERROR(Ip({"-n", p.netns, "-6", "addr", "add", p.sandbox_address6 + "/126", "dev",
                          "eth0", "nodad"}));
      RETURN_IF_ERROR(Ip({"-n", p.netns, "-6", "route", "add", "default", "via", p.host_address6}));
    }
    RETURN_IF_ERROR(Ip({"addr", "add", p.host_address + "/30", "dev", p.host_if}));
    if (!p.host_address6.empty())
      RETURN_IF_ERROR(
          Ip({"-6", "addr", "add", p.host_address6 + "/126", "dev", p.host_if, "nodad"}));
    RETURN_IF_ERROR(Ip({"link", "set", p.host_if, "up"}));
  }
  return Status::Ok();
}

Status ReaddressSandboxSide(const LinkPlan& p) {
  RETURN_IF_ERROR(Ip({"-n", p.netns, "addr", "replace", p.sandbox_address + "/30", "dev", "eth0"}));
  RETURN_IF_ERROR(Ip({"-n", p.netns, "link", "set", "eth0", "up"}));
  RETURN_IF_ERROR(Ip({"-n", p.netns, "link", "set", "lo", "up"}));
  RETURN_IF_ERROR(Ip({"-n", p.netns, "route", "replace", "default", "via", p.host_address}));
  if (p.sandbox_address6.empty()) return Status::Ok();
  // No duplicate address detection: the /126 is ours, and a tentative address would not
  // be taken by runsc.
  RETURN_IF_ERROR(Ip({"-n", p.netns, "-6", "addr", "replace", p.sandbox_address6 + "/126", "dev",
                      "eth0", "nodad"}));
  return Ip({"-n", p.netns, "-6", "route", "replace", "default", "via", p.host_address6});
}

Status RemoveLinks(const std::string& netns, const std::string& host_if) {
  if (!host_if.empty() && LinkExists(host_if))
    RETURN_IF_ERROR(Ip({"link", "del", host_if}).WithContext("removing the sandbox's veth"));
  if (!netns.empty() && os::Exists(NetnsPath(netns)))
    RETURN_IF_ERROR(Ip({"netns", "del", netns}).WithContext("removing the network namespace"));
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> HostRoutes() {
  ASSIGN_OR_RETURN(os::CommandResult r, os::RunCommand({"ip", "-4", "-o", "route", "show"}));
  if (r.status.exit_code != 0) return Internal("ip route show failed: " + r.output);
  std::vector<std::pair<std::string, std::string>> routes;
  size_t start = 0;
  while (start < r.output.size()) {
    size_t end = r.output.find('\n', start);
    if (end == std::string::npos) end = r.output.size();
    std::string line = r.output.substr(start, end - start);
    start = end + 1;
    std::string dest = line.substr(0, line.find(' '));
    std::string dev;
    auto at = line.find(" dev ");
    if (at != std::string::npos) {
      dev = line.substr(at + 5);
      dev = dev.substr(0, dev.find(' '));
    }
    if (!dest.empty()) routes.emplace_back(dest, dev);
  }
  return routes;
}

Status EnableForwarding(bool ipv6) {
  RETURN_IF_ERROR(os::WriteExistingFile("/proc/sys/net/ipv4/ip_forward", "1\n"));
  if (!ipv6) return Status::Ok();
  return os::WriteExistingFile("/proc/sys/net/ipv6/conf/all/forwarding", "1\n");
}

}  // namespace adapt::net
