#include "net/links.h"

#include <vector>

#include "os/files.h"
#include "os/process.h"

namespace adapt::net {
namespace {

// Runs `ip -batch`, in namespace `netns` when it is not empty: one program run for a whole
// set-up (each run of `ip` costs several milliseconds, and a sandbox needs a dozen steps).
// A failing line stops the batch; ip names it in the error.
Status IpBatch(const std::string& netns, const std::vector<std::string>& lines) {
  std::string input;
  for (const auto& l : lines) input += l + "\n";
  // The batch is far smaller than a pipe's buffer: written whole before ip starts.
  ASSIGN_OR_RETURN(os::Pipe in, os::MakePipe());
  RETURN_IF_ERROR(os::WriteAll(in.write.get(), input));
  in.write.reset();
  std::vector<std::string> argv{"ip"};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", netns});
  argv.insert(argv.end(), {"-batch", "-"});
  os::SpawnOptions options;
  options.stdin_fd = in.read.get();
  return os::RunChecked(argv, options);
}

// The sandbox end's addresses, link state and default routes; `verb`: add or replace.
std::vector<std::string> SandboxSide(const LinkPlan& p, const std::string& verb) {
  std::vector<std::string> lines{
      "addr " + verb + " " + p.sandbox_address + "/30 dev eth0",
      "link set eth0 up",
      "link set lo up",
      "route " + verb + " default via " + p.host_address,
  };
  if (!p.sandbox_address6.empty()) {
    // No duplicate address detection: the /126 is ours, and a tentative address would not
    // be taken by runsc.
    lines.push_back("addr " + verb + " " + p.sandbox_address6 + "/126 dev eth0 nodad");
    lines.push_back("route " + verb + " default via " + p.host_address6);
  }
  return lines;
}

}  // namespace

std::string NetnsPath(const std::string& netns) { return "/run/netns/" + netns; }

bool LinkExists(const std::string& name) { return os::Exists("/sys/class/net/" + name); }

Result<bool> CreateLinks(const LinkPlan& p) {
  if (LinkExists(p.host_if)) {
    if (os::Exists(NetnsPath(p.netns))) return false;
    // The namespace went and took the sandbox end with it: start again.
    RETURN_IF_ERROR(IpBatch("", {"link del " + p.host_if}));
  }
  // ip infers each address's family: the IPv6 lines need no -6.
  std::vector<std::string> host;
  if (!os::Exists(NetnsPath(p.netns))) host.push_back("netns add " + p.netns);
  // The sandbox end is made in its namespace: moving a device between namespaces costs
  // several times the whole set-up (the kernel waits for its grace periods).
  host.push_back("link add " + p.host_if + " type veth peer name eth0 netns " + p.netns);
  host.push_back("addr add " + p.host_address + "/30 dev " + p.host_if);
  if (!p.host_address6.empty())
    host.push_back("addr add " + p.host_address6 + "/126 dev " + p.host_if + " nodad");
  host.push_back("link set " + p.host_if + " up");
  RETURN_IF_ERROR(IpBatch("", host).WithContext("creating the sandbox's veth pair"));
  RETURN_IF_ERROR(IpBatch(p.netns, SandboxSide(p, "add"))
                      .WithContext("addressing the sandbox's end of its veth"));
  return true;
}

Status ReaddressSandboxSide(const LinkPlan& p) {
  return IpBatch(p.netns, SandboxSide(p, "replace"));
}

Status RemoveLinks(const std::string& netns, const std::string& host_if) {
  std::vector<std::string> lines;
  if (!host_if.empty() && LinkExists(host_if)) lines.push_back("link del " + host_if);
  if (!netns.empty() && os::Exists(NetnsPath(netns))) lines.push_back("netns del " + netns);
  if (lines.empty()) return Status::Ok();
  return IpBatch("", lines).WithContext("removing the sandbox's veth and network namespace");
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
