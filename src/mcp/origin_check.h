// DNS-rebinding protection for /mcp and the OAuth pages: a browser page from another site
// must not reach a server that listens on loopback. A request passes when its Origin is
// absent or names a loopback host or the listen address, and, when adaptd listens on
// loopback, its Host names a loopback host too. Loopback is an address or `localhost`
// (IsLoopbackHost), never a name that merely starts with "127.".
#pragma once

#include <string>

#include "base/loopback_host.h"

namespace adapt::mcp {

// The host part of "host", "host:port" or "[v6]:port", lower-cased.
std::string HostPart(const std::string& authority);

class OriginCheck {
 public:
  explicit OriginCheck(std::string listen_host);
  // "" when allowed; otherwise why not.
  std::string Problem(const std::string& host_header, const std::string& origin_header) const;

 private:
  std::string listen_host_;
  bool loopback_only_;
};

}  // namespace adapt::mcp
