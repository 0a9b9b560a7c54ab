#include "mcp/origin_check.h"

#include <algorithm>

namespace adapt::mcp {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string HostPart(const std::string& authority) {
  std::string a = Lower(authority);
  if (!a.empty() && a[0] == '[') {
    size_t end = a.find(']');
    return end == std::string::npos ? a : a.substr(0, end + 1);
  }
  // A bare IPv6 address has several colons and no port.
  if (std::count(a.begin(), a.end(), ':') > 1) return "[" + a + "]";
  return a.substr(0, a.find(':'));
}

OriginCheck::OriginCheck(std::string listen_host)
    : listen_host_(HostPart(listen_host)), loopback_only_(IsLoopbackHost(HostPart(listen_host))) {}

std::string OriginCheck::Problem(const std::string& host_header,
                                 const std::string& origin_header) const {
  if (loopback_only_ && !IsLoopbackHost(HostPart(host_header)))
    return "Host " + host_header + " is not this server's loopback address";
  if (origin_header.empty()) return "";
  size_t scheme_end = origin_header.find("://");
  if (scheme_end == std::string::npos) return "Origin " + origin_header + " is not allowed";
  std::string scheme = Lower(origin_header.substr(0, scheme_end));
  std::string rest = origin_header.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('/'));
  std::string host = HostPart(rest);
  if ((scheme == "http" || scheme == "https") && (IsLoopbackHost(host) || host == listen_host_))
    return "";
  return "Origin " + origin_header + " is not allowed";
}

}  // namespace adapt::mcp
