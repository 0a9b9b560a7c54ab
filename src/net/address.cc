#include "net/address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace adapt::net {
namespace {

struct Range4 {
  uint32_t base;
  int len;
};

uint32_t V4(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

bool In4(uint32_t a, const Range4& r) {
  uint32_t mask = r.len == 0 ? 0 : ~uint32_t{0} << (32 - r.len);
  return (a & mask) == (r.base & mask);
}

const Range4 kBlocked4[] = {
    {0x00000000, 8},  {0x0A000000, 8},  {0x64400000, 10}, {0x7F000000, 8},
    {0xA9FE0000, 16}, {0xAC100000, 12}, {0xC0A80000, 16}, {0xE0000000, 4},
    {0xF0000000, 4},  {0xC0000000, 29},  // 192.0.0.0/29: IETF protocol assignments
};

bool Blocked4(uint32_t a) {
  for (const auto& r : kBlocked4)
    if (In4(a, r)) return true;
  return false;
}

bool Prefix(const std::array<uint8_t, 16>& b, std::initializer_list<uint8_t> p) {
  size_t i = 0;
  for (uint8_t v : p)
    if (b[i++] != v) return false;
  return true;
}

}  // namespace

std::optional<IpAddress> ParseIp(const std::string& text) {
  IpAddress ip;
  char buf[INET6_ADDRSTRLEN];
  if (text.find(':') == std::string::npos) {
    if (::inet_pton(AF_INET, text.c_str(), ip.bytes.data()) != 1) return std::nullopt;
    ::inet_ntop(AF_INET, ip.bytes.data(), buf, sizeof buf);
  } else {
    if (::inet_pton(AF_INET6, text.c_str(), ip.bytes.data()) != 1) return std::nullopt;
    ip.v6 = true;
    ::inet_ntop(AF_INET6, ip.bytes.data(), buf, sizeof buf);
  }
  ip.text = buf;
  return ip;
}

bool IsBlockedDestination(const IpAddress& ip) {
  const auto& b = ip.bytes;
  if (!ip.v6) return Blocked4(V4(b.data()));
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, incl. :: and ::1), 64:ff9b::a.b.c.d
  // (NAT64) and 64:ff9b:1::/48 (local NAT64) all carry an IPv4 address: judge it, and
  // refuse the translated forms outright since the sandbox has no IPv4 over IPv6 path.
  bool zero80 = true;
  for (int i = 0; i < 10; ++i) zero80 = zero80 && b[i] == 0;
  if (zero80 && ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0))) return true;
  if (Prefix(b, {0x00, 0x64, 0xff, 0x9b})) return true;
  if ((b[0] & 0xfe) == 0xfc) return true;                  // fc00::/7
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return true;  // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return true;  // fec0::/10 (site-local)
  if (b[0] == 0xff) return true;                           // multicast
  if (Prefix(b, {0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00})) return true;  // discard
  if (Prefix(b, {0x20, 0x02})) {  // 6to4 embeds an IPv4 address
    return Blocked4(V4(b.data() + 2));
  }
  if (Prefix(b, {0x20, 0x01, 0x00, 0x00})) return true;  // Teredo embeds one, obscured
  return false;
}

const std::vector<std::string>& BlockedIpv4Ranges() {
  static const std::vector<std::string> kRanges = {
      "0.0.0.0/8",     "10.0.0.0/8",   "100.64.0.0/10",  "127.0.0.0/8", "169.254.0.0/16",
      "172.16.0.0/12", "192.0.0.0/29", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4"};
  return kRanges;
}

const std::vector<std::string>& BlockedIpv6Ranges() {
  static const std::vector<std::string> kRanges = [] {
    std::vector<std::string> out = {"::/96",     "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48",
                                    "100::/64",  "2001::/32",     "fc00::/7",     "fe80::/10",
                                    "fec0::/10", "ff00::/8"};
    // The 6to4 form (2002:AABB:CCDD::/16+n) of each blocked IPv4 range, as
    // IsBlockedDestination judges a 6to4 address by the IPv4 address it carries: a host with
    // a 6to4 route would otherwise send the packet on to that IPv4 address.
    for (const auto& range : BlockedIpv4Ranges()) {
      auto slash = range.find('/');
      auto ip = ParseIp(range.substr(0, slash));
      const auto& b = ip->bytes;
      char text[64];
      std::snprintf(text, sizeof text, "2002:%02x%02x:%02x%02x::/%d", b[0], b[1], b[2], b[3],
                    16 + std::stoi(range.substr(slash + 1)));
      out.push_back(ParseIp(std::string(text, std::strchr(text, '/')))->text +
                    std::strchr(text, '/'));
    }
    return out;
  }();
  return kRanges;
}

Result<AddressPool> AddressPool::Parse(const std::string& cidr) {
  auto slash = cidr.find('/');
  auto bad = [&] {
    return InvalidArgument("networkPool", "the network pool '" + cidr +
                                              "' must be an IPv4 block such as 10.88.0.0/16 "
                                              "(prefix 8 to 28)");
  };
  if (slash == std::string::npos) return bad();
  auto ip = ParseIp(cidr.substr(0, slash));
  std::string len_text = cidr.substr(slash + 1);
  if (!ip || ip->v6 || len_text.empty() || len_text.size() > 2 ||
      len_text.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  int len = std::stoi(len_text);
  if (len < 8 || len > 28) return bad();
  AddressPool p;
  uint32_t mask = ~uint32_t{0} << (32 - len);
  p.base_ = V4(ip->bytes.data()) & mask;
  p.len_ = len;
  p.slots_ = (int64_t{1} << (32 - len)) / 4;
  p.cidr_ = p.Nth(0) + "/" + std::to_string(len);
  return p;
}

bool AddressPool::Overlaps(const std::string& cidr) const {
  auto slash = cidr.find('/');
  auto ip = ParseIp(cidr.substr(0, slash));
  if (!ip || ip->v6) return false;
  int len = 32;
  if (slash != std::string::npos) {
    std::string t = cidr.substr(slash + 1);
    if (t.empty() || t.size() > 2 || t.find_first_not_of("0123456789") != std::string::npos)
      return false;
    len = std::stoi(t);
    if (len > 32) return false;
  }
  // Two blocks overlap when they agree on the shorter prefix.
  Range4 shorter{base_, std::min(len, len_)};
  return In4(V4(ip->bytes.data()), shorter);
}

std::optional<int64_t> AddressPool::SandboxSlot(const std::string& address) const {
  auto ip = ParseIp(address);
  if (!ip || ip->v6) return std::nullopt;
  const uint32_t a = V4(ip->bytes.data());
  if (!In4(a, Range4{base_, len_})) return std::nullopt;
  const uint32_t offset = a - base_;
  if (offset % 4 != 2) return std::nullopt;
  return static_cast<int64_t>(offset / 4);
}

Result<AddressPool6> AddressPool6::Parse(const std::string& prefix, const AddressPool& v4) {
  auto bad = [&] {
    return InvalidArgument("networkPool6", "the IPv6 network pool '" + prefix +
                                               "' must be a unique-local /96 such as "
                                               "fd61:6461:7074::/96");
  };
  auto slash = prefix.find('/');
  if (slash == std::string::npos || prefix.substr(slash + 1) != "96") return bad();
  auto ip = ParseIp(prefix.substr(0, slash));
  if (!ip || !ip->v6 || (ip->bytes[0] & 0xfe) != 0xfc) return bad();
  for (int i = 12; i < 16; ++i)
    if (ip->bytes[i] != 0) return bad();
  AddressPool6 p;
  p.prefix_ = ip->bytes;
  const std::string v4_cidr = v4.cidr();
  const auto v4_slash = v4_cidr.find('/');
  p.cidr_ = p.Embed(v4_cidr.substr(0, v4_slash)) + "/" +
            std::to_string(96 + std::stoi(v4_cidr.substr(v4_slash + 1)));
  return p;
}

std::string AddressPool6::Embed(const std::string& v4) const {
  std::array<uint8_t, 16> b = prefix_;
  auto ip = ParseIp(v4);
  if (ip && !ip->v6) std::copy(ip->bytes.begin(), ip->bytes.begin() + 4, b.begin() + 12);
  char buf[INET6_ADDRSTRLEN];
  ::inet_ntop(AF_INET6, b.data(), buf, sizeof buf);
  return buf;
}

std::string AddressPool::Nth(int64_t n) const {
  uint32_t a = base_ + static_cast<uint32_t>(n);
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

}  // namespace adapt::net
