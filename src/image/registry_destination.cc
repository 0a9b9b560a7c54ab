#include "image/registry_destination.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace adapt::image {
namespace {

bool InV4(uint32_t a, uint32_t net, int bits) {
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (a & mask) == (net & mask);
}

uint32_t V4(int a, int b, int c, int d) {
  return static_cast<uint32_t>(a) << 24 | static_cast<uint32_t>(b) << 16 |
         static_cast<uint32_t>(c) << 8 | static_cast<uint32_t>(d);
}

// `a` in host byte order.
std::string V4Kind(uint32_t a) {
  if (InV4(a, V4(127, 0, 0, 0), 8)) return "loopback";
  if (InV4(a, V4(0, 0, 0, 0), 8)) return "unspecified";
  if (InV4(a, V4(169, 254, 0, 0), 16)) return "link-local";
  if (InV4(a, V4(10, 0, 0, 0), 8) || InV4(a, V4(172, 16, 0, 0), 12) ||
      InV4(a, V4(192, 168, 0, 0), 16))
    return "private";
  if (InV4(a, V4(100, 64, 0, 0), 10)) return "shared (carrier-grade NAT)";
  if (InV4(a, V4(192, 0, 0, 0), 24) || InV4(a, V4(198, 18, 0, 0), 15) ||
      InV4(a, V4(240, 0, 0, 0), 4))
    return "reserved";
  if (InV4(a, V4(224, 0, 0, 0), 4)) return "multicast";
  return "";
}

std::string V6Kind(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  auto zero = [&](int from, int to) {
    for (int i = from; i < to; ++i)
      if (b[i] != 0) return false;
    return true;
  };
  auto embedded_v4 = [&] { return V4(b[12], b[13], b[14], b[15]); };
  if (zero(0, 15) && b[15] == 1) return "loopback";
  if (zero(0, 16)) return "unspecified";
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64): the IPv4 one.
  if (zero(0, 10) && b[10] == 0xff && b[11] == 0xff) return V4Kind(embedded_v4());
  if (zero(0, 12)) return V4Kind(embedded_v4());
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12))
    return V4Kind(embedded_v4());
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "site-local";
  if ((b[0] & 0xfe) == 0xfc) return "private (unique local)";
  if (b[0] == 0xff) return "multicast";
  return "";
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The address as text ("127.0.0.1", "::1") and its port.
std::pair<std::string, int> AddressText(const sockaddr* address) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    return {buf, ntohs(in->sin_port)};
  }
  if (address->sa_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof(buf));
    return {buf, ntohs(in->sin6_port)};
  }
  return {"", 0};
}

}  // namespace

std::string SpecialAddressKind(const sockaddr* address) {
  if (address->sa_family == AF_INET)
    return V4Kind(ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr));
  if (address->sa_family == AF_INET6)
    return V6Kind(reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  return "non-IP";
}

Result<RegistryDestinations> RegistryDestinations::Parse(const std::vector<std::string>& allowed) {
  RegistryDestinations out;
  for (const auto& text : allowed) {
    auto bad = [&](const std::string& why) {
      return InvalidArgument("allow-registry",
                             "--allow-registry '" + text + "' is not HOST or HOST:PORT: " + why);
    };
    Entry e;
    std::string port;
    if (text.starts_with("[")) {
      auto close = text.find(']');
      if (close == std::string::npos) return bad("the IPv6 address has no closing ']'");
      e.host = text.substr(1, close - 1);
      std::string rest = text.substr(close + 1);
      if (!rest.empty() && rest[0] != ':') return bad("text after the ']'");
      if (!rest.empty()) port = rest.substr(1);
      in6_addr a6;
      if (inet_pton(AF_INET6, e.host.c_str(), &a6) != 1) return bad("not an IPv6 address");
    } else if (in6_addr a6; inet_pton(AF_INET6, text.c_str(), &a6) == 1) {
      e.host = text;  // a bare IPv6 address: every port (CLI11 strips "[::1]" to this)
    } else {
      auto colon = text.find(':');
      e.host = text.substr(0, colon);
      if (colon != std::string::npos) {
        port = text.substr(colon + 1);
        if (port.empty()) return bad("the port is missing after ':'");
      }
    }
    if (e.host.empty() ||
        e.host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                                 "WXYZ0123456789.-:") != std::string::npos)
      return bad("the host is empty or has characters a host cannot have");
    if (!port.empty()) {
      if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(port) < 1 || std::stoi(port) > 65535)
        return bad("the port must be 1 to 65535");
      e.port = std::stoi(port);
    }
    e.host = Lower(e.host);
    out.allowed_.push_back(e);
  }
  return out;
}

bool RegistryDestinations::Allows(const std::string& host, int port) const {
  std::string h = Lower(host);
  if (h.starts_with("[") && h.ends_with("]")) h = h.substr(1, h.size() - 2);
  for (const auto& e : allowed_)
    if (e.host == h && (e.port == 0 || e.port == port)) return true;
  return false;
}

Status RegistryDestinations::Check(const std::string& host, int port,
                                   const sockaddr* address) const {
  std::string kind = SpecialAddressKind(address);
  if (kind.empty()) return Status::Ok();
  auto [ip, ip_port] = AddressText(address);
  // Allowed by the name the request used, or by the address it connects to.
  if (Allows(host, port) || (!ip.empty() && Allows(ip, ip_port))) return Status::Ok();
  std::string bare = Lower(host);
  if (bare.starts_with("[") && bare.ends_with("]")) bare = bare.substr(1, bare.size() - 2);
  std::string where =
      (bare.find(':') != std::string::npos ? "[" + bare + "]" : bare) + ":" + std::to_string(port);
  if (ip != bare) where += " (" + ip + ")";
  return Status(Code::kPermissionDenied,
                "connecting to " + where + " was refused: it is a " + kind +
                    " address, which pulls do not reach unless an operator allows that registry "
                    "(adaptd --allow-registry)",
                "image");
}

}  // namespace adapt::image
